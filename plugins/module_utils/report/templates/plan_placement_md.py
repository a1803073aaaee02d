"""plan_placement.md: where the evicted pods land, in plan.md (``placement``, see report/placement_report.py)."""

NAME = "plan_placement.md"
TEMPLATE = """\
{% from "macros.md" import table %}
## Where the evicted pods land

{{ placement.intro|md }}

{% for fact in placement.facts %}
- {{ fact }}
{% endfor %}

{{ table(placement.spread_headers, placement.spread_rows) }}

{{ table(placement.headers, placement.rows, "No evictions.") }}

### Nodes that change (before → after evictions → after placement)

{{ table(("Node", "cpu", "memory"), placement.markdown_nodes, "No node changes.") }}
"""
