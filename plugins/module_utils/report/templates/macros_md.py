"""macros.md: the Markdown table the Markdown reports share. Cells go through the ``md_cell`` filter: pipes, '<'
and backslashes escaped, one line, one space when empty."""

NAME = "macros.md"
TEMPLATE = """\
{% macro table(headers, rows, empty_text="None.") %}
{% if rows %}
| {{ headers|map("md")|join(" | ") }} |
| {{ (["---"] * headers|length)|join(" | ") }} |\
{% for row in rows %}{{ "\\n" }}| {{ row|map("md_cell")|join(" | ") }} |{% endfor %}
{% else %}
_{{ empty_text }}_{% endif %}
{% endmacro %}
"""
