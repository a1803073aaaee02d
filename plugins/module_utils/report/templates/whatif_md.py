"""whatif.md: a what-if in Markdown (the same context as whatif.html)."""

NAME = "whatif.md"
TEMPLATE = """\
{% from "macros.md" import table %}
# {{ title }}

**Best:** {{ verdict }}

Spread: the standard deviation of the nodes' requested share (percent) over schedulable nodes; "after" is after \
placement when previewed, else after the evictions.

{{ table(headers, rows) }}
{% if pareto_rows %}

## Threshold search: Pareto front

No other point of the search is at least as good on both evictions and final spread and better on one. A point's \
KubeDescheduler equivalent is planned as a candidate of its own: its profile brings more than the thresholds, and \
"its" columns are what that spec would do.

{{ table(pareto_headers, pareto_rows) }}
{% endif %}
{% if warnings %}

## Warnings

{% for warning in warnings %}
- {{ warning }}
{% endfor %}
{% endif %}
"""
