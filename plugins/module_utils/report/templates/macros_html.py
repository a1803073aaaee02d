"""macros.html: the pieces the HTML reports share: tables, badges, key figures, lists, notices and a small bar.

``table`` takes rows of cells; a cell prints as text (escaped) unless the call gives a body that renders it:
``{% call(cell, column) table(headers, rows) %}...{% endcall %}``. Rows too irregular for that (a cell spanning
columns, a link in the row header) take ``whole_rows=true``: the call body writes each whole ``<tr>``,
``{% call(row) table(headers, rows, whole_rows=true) %}<tr>...</tr>{% endcall %}``."""

NAME = "macros.html"
TEMPLATE = """\
{% macro class_attribute(name) %}{% if name %} class="{{ name }}"{% endif %}{% endmacro %}

{% macro cell_classes(column, numeric, nowrap) %}\
{{ class_attribute([("num" if column in numeric else ""), ("nowrap" if column in nowrap else "")]|select|join(" ")) }}\
{% endmacro %}

{# A table with <th scope="col"> headers; the first cell of a row is its <th scope="row"> when row_header.
   numeric and nowrap name the columns (by index) that are right-aligned or kept on one line; css_class "wide"
   sets a table of many columns tighter, so it fits the page. #}
{% macro table(headers, rows, caption=none, row_header=true, numeric=(), nowrap=(), row_classes=none,
               empty_text="None.", whole_rows=false, css_class=none) %}
{% if rows %}
<div class="table-wrap"><table{{ class_attribute(css_class) }}>
{% if caption %}
<caption>{{ caption }}</caption>
{% endif %}
<thead><tr>{% for header in headers %}<th scope="col"{{ class_attribute("num" if loop.index0 in numeric else "") }}>\
{{ header }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in rows %}
{% if whole_rows %}
{{ caller(row) }}\
{% else %}
{% set row_class = row_classes[loop.index0] if row_classes and loop.index0 < row_classes|length else "" %}
<tr{{ class_attribute(row_class) }}>{% for cell in row %}\
{% set tag = "th" if row_header and loop.first else "td" %}\
<{{ tag }}{% if tag == "th" %} scope="row"{% endif %}{{ cell_classes(loop.index0, numeric, nowrap) }}>\
{% if caller is defined %}{{ caller(cell, loop.index0) }}{% else %}{{ cell }}{% endif %}</{{ tag }}>{% endfor %}</tr>
{% endif %}
{% endfor %}
</tbody>
</table></div>
{% else %}
<p class="muted">{{ empty_text }}</p>
{% endif %}
{% endmacro %}

{% macro badge(text, tone="neutral", title=none) %}\
<span class="badge tone-{{ tone|css_token }}"{% if title is not none %} title="{{ title }}"{% endif %}>\
{{ text }}</span>\
{% endmacro %}

{% macro key_figure(label, value, tone="neutral") %}\
<div class="figure tone-{{ tone|css_token }}"><div class="figure-value">{{ value }}</div>\
<div class="figure-label">{{ label }}</div></div>
{% endmacro %}

{% macro bullet_list(items, css_class=none) %}\
{% if items %}<ul{{ class_attribute(css_class) }}>\
{% for item in items %}<li>{{ item }}</li>{% endfor %}</ul>{% endif %}\
{% endmacro %}

{# A small inline bar: value relative to the largest value shown. #}
{% macro mini_bar(fill, label, width=120, height=10) %}\
<svg role="img" aria-label="{{ label }}" width="{{ width }}" height="{{ height }}" \
viewBox="0 0 {{ width }} {{ height }}">\
<title>{{ label }}</title>\
<rect x="0" y="0" width="{{ width }}" height="{{ height }}" rx="2" class="minibar-track"/>\
<rect x="0" y="0" width="{{ fill|number }}" height="{{ height }}" rx="2" class="minibar"/></svg>\
{% endmacro %}
"""
