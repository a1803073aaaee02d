"""fleet-summary.md: the fleet summary of a dry run in Markdown (``fleet``; ``markdown_rows``, each cluster's cells
already escaped, the cluster cell a link to its report)."""

NAME = "fleet.md"
TEMPLATE = """\
{% from "macros.md" import table %}
# Descheduling fleet summary

{{ fleet_line|md }}

## Clusters

{% if markdown_rows %}
| Cluster | Status | Evictions | By plugin | Top namespaces | Top owners | Limits reached | Errors / warnings |
| --- | --- | --- | --- | --- | --- | --- | --- |
{% for cells in markdown_rows %}
| {{ cells|join(" | ") }} |
{% endfor %}
{% else %}
_No clusters._
{% endif %}

## Fleet totals

{{ table(("Plugin", "Evictions"), totals + [("**Total**", fleet.evictions_total)]) }}
{% if changed %}

## Since the previous run

{% for row in changed %}
- **{{ row.cluster|md }}** (since {{ row.since_previous.previous_now|md }}): {{ row.changes }}
{% endfor %}
{% endif %}
{% if failed %}

## Failed clusters

{% for row in failed %}
- **{{ row.cluster|md }}**: {{ row.error|md }}
{% endfor %}
{% endif %}
"""
