"""whatif-fleet.md: the what-if across a fleet in Markdown (the same context as whatif_fleet.html;
``markdown_best_rows`` and ``markdown_matrix``, cells already escaped, the cluster cell a link to its whatif.html)."""

NAME = "whatif_fleet.md"
TEMPLATE = """\
{% from "macros.md" import table, failed_clusters %}
# What-if across the fleet

{{ fleet_line|md }}

## Best candidate per cluster

{{ table(("Cluster", "Best candidate", "Why"), markdown_best_rows, "No clusters.", escaped=true) }}

## Candidates over the fleet

Counts summed over the clusters that planned the candidate; the final spread (after placement when previewed, else \
after the evictions: the standard deviation of the nodes' requested percent) as its mean and worst value.

{{ table(total_headers, totals, empty_text="No candidate was planned.") }}

## Side by side

{{ table(matrix_headers, markdown_matrix, "No cluster was compared.", escaped=true) }}
{% for section in sections %}

## {{ section.cluster|md }}

**Best:** {{ section.best_reason|md }}{% if section.link %} ([whatif.html]({{ section.link }})){% endif %}


{{ table(cluster_headers, section.rows) }}
{% endfor %}
{{ failed_clusters(failed) }}
"""
