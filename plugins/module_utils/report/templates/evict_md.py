"""evict-result.md: a cluster's eviction result in Markdown (``result``, the evict module's result, ``cluster``
and the tables' rows, the details cut to one line; from executor/report.py)."""

NAME = "evict.md"
TEMPLATE = """\
# Eviction result{{ (": " ~ cluster) if cluster else "" }}

{% if result.get("check_mode") %}
*Check mode: server-side dry run, nothing was evicted.*

{% endif %}
{% if result.get("stopped") %}
**Stopped ({{ result.get("stop_reason") }}):** {{ result.get("stop_message") }}

{% endif %}
| Outcome | Pods |
| --- | ---: |
{% for status, count in outcomes %}
| {{ status }} | {{ count }} |
{% endfor %}
| **total** | {{ total }} |

{% if skipped_by_reason %}
## Skipped, by reason

{% for code, count in skipped_by_reason %}
- {{ code }}: {{ count }}
{% endfor %}

{% endif %}
{% if placements %}
## Where they went

{{ placements.moved }} moved to another node, {{ placements.same_node }} landed on the same node \
again.

| Namespace | Evicted | From | To | Same node |
| --- | --- | --- | --- | --- |
{% for row in placements.rows %}
| {{ row|join(" | ") }} |
{% endfor %}

{% endif %}
## Pods

| # | Pod | Node | Status | Detail |
| ---: | --- | --- | --- | --- |
{% for pod in pods %}
| {{ pod|join(" | ") }} |
{% endfor %}
{% if journal %}

Journal: `{{ journal.path }}` (run {{ journal.run_id }})
{% endif %}
"""
