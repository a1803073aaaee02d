"""fleet-summary.md: the fleet summary of a dry run in Markdown (``fleet``; ``markdown_rows``, each cluster's cells
already escaped, the cluster cell a link to its report)."""

NAME = "fleet.md"
TEMPLATE = """\
{% from "macros.md" import table, failed_clusters %}
# Descheduling fleet summary

{{ fleet_line|md }}

## Clusters

{{ table(("Cluster", "Status", "Evictions", "By plugin", "Top namespaces", "Top owners", "Limits reached",
                   "Errors / warnings"), markdown_rows, "No clusters.", escaped=true) }}

## Fleet totals

{{ table(("Plugin", "Evictions"), totals + [("**Total**", fleet.evictions_total)]) }}
{% if changed %}

## Since the previous run

{% for row in changed %}
- **{{ row.cluster|md }}** (since {{ row.since_previous.previous_now|md }}): {{ row.changes }}
{% endfor %}
{% endif %}
{{ failed_clusters(failed) }}
"""
