"""whatif-fleet.md: the what-if across a fleet in Markdown (the same context as whatif_fleet.html;
``markdown_best_rows`` and ``markdown_matrix``, cells already escaped, the cluster cell a link to its whatif.html)."""

NAME = "whatif_fleet.md"
TEMPLATE = """\
{% from "macros.md" import table %}
# What-if across the fleet

{{ fleet_line|md }}

## Best candidate per cluster

{% if markdown_best_rows %}
| Cluster | Best candidate | Why |
| --- | --- | --- |
{% for cells in markdown_best_rows %}
| {{ cells|join(" | ") }} |
{% endfor %}
{% else %}
_No clusters._
{% endif %}

## Candidates over the fleet

Counts summed over the clusters that planned the candidate; the final spread (after placement when previewed, else \
after the evictions: the standard deviation of the nodes' requested percent) as its mean and worst value.

{{ table(total_headers, totals, empty_text="No candidate was planned.") }}

## Side by side

{% if markdown_matrix %}
| {{ matrix_headers|map("md_cell")|join(" | ") }} |
| {{ (["---"] * matrix_headers|length)|join(" | ") }} |
{% for cells in markdown_matrix %}
| {{ cells|join(" | ") }} |
{% endfor %}
{% else %}
_No cluster was compared._
{% endif %}
{% for section in sections %}

## {{ section.cluster|md }}

**Best:** {{ section.best_reason|md }}{% if section.link %} ([whatif.html]({{ section.link }})){% endif %}


{{ table(cluster_headers, section.rows) }}
{% endfor %}
{% if failed %}

## Failed clusters

{% for row in failed %}
- **{{ row.cluster|md }}**: {{ row.error|md }}
{% endfor %}
{% endif %}
"""
