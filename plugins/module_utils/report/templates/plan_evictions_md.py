"""plan_evictions.md: the evictions table of plan.md: the first page of evictions, and how many more plan.json
holds (``evictions``, see report/evictions_table.py)."""

NAME = "plan_evictions.md"
TEMPLATE = """\
{% from "macros.md" import table %}
## Evictions

{% if evictions.with_frequency %}
{{ evictions.frequency_note }}

{% endif %}
{{ table(evictions.headers, evictions.markdown_rows, evictions.empty_text) }}
{% if evictions.rest %}

_The first {{ evictions.page_size }} of {{ "{:,}".format(evictions.count) }} evictions are listed; \
{{ "{:,}".format(evictions.rest|length) }} more are in plan.json._
{% endif %}
"""
