"""macros.md: what the Markdown reports share. ``table``: cells go through the ``md_cell`` filter (pipes, '<' and
backslashes escaped, one line, one space when empty), unless ``escaped`` says the report escaped them already (a cell
may hold a link). ``failed_clusters``: a fleet report's section naming each failed cluster and its error."""

NAME = "macros.md"
TEMPLATE = """\
{% macro table(headers, rows, empty_text="None.", escaped=false) %}
{% if rows %}
| {{ headers|map("md_cell" if escaped else "md")|join(" | ") }} |
| {{ (["---"] * headers|length)|join(" | ") }} |\
{% for row in rows %}{{ "\\n" }}| {{ (row if escaped else row|map("md_cell"))|join(" | ") }} |{% endfor %}
{% else %}
_{{ empty_text }}_{% endif %}
{% endmacro %}

{% macro failed_clusters(failed) %}
{% if failed %}

## Failed clusters

{% for row in failed %}
- **{{ row.cluster|md }}**: {{ row.error|md }}
{% endfor %}
{% endif %}
{% endmacro %}
"""
