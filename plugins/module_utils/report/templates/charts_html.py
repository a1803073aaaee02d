"""charts.html: the inline SVG charts, drawn from the geometry report/html.py computes (BeforeAfterChart,
PlacementChart) and report/scatter_chart.py (ScatterChart). Colours come from the classes (style.css)."""

NAME = "charts.html"
TEMPLATE = """\
{# One <svg> with a group per node: a row per resource with a light "before" and a dark "after" bar on a 0-100 %
   track, and the thresholds that apply as dashed lines. #}
{% macro before_after_chart(chart) %}
<svg class="chart" role="img" aria-label="{{ chart.label }}" viewBox="0 0 {{ chart.width }} {{ chart.height }}" \
width="{{ chart.width }}" height="{{ chart.height }}"><title>{{ chart.label }}</title>
<g aria-hidden="true">{% for x, text in chart.ticks %}\
<line x1="{{ x|number }}" x2="{{ x|number }}" y1="20" y2="{{ chart.height }}" class="grid"/>\
<text x="{{ x|number }}" y="16" text-anchor="middle" class="axis">{{ text }}</text>{% endfor %}</g>
{% for group in chart.groups %}
<g class="node" data-node="{{ group.name }}"><title>{{ group.description }}</title>\
<line x1="0" x2="{{ chart.width }}" y1="{{ group.separator_y|number }}" y2="{{ group.separator_y|number }}" \
class="separator"/><text x="0" y="{{ group.y + 15 }}" class="node-name">{{ group.label }}</text>
{% for badge in group.badges %}
<g class="tone-{{ badge.tone }}">{% if badge.title %}<title>{{ badge.title }}</title>{% endif %}\
<rect x="{{ badge.x }}" y="{{ badge.y }}" width="{{ badge.width }}" height="18" rx="9" class="badge-box"/>\
<text x="{{ badge.x + 7 }}" y="{{ badge.y + 13 }}" class="badge-text">{{ badge.text }}</text></g>
{% endfor %}
{% for row in group.rows %}
<g data-resource="{{ row.label }}"><text x="322" y="{{ row.y + 15 }}" text-anchor="end">{{ row.label }}</text>\
<rect x="332" y="{{ row.y + 3 }}" width="480" height="17" class="track"/>
{% for bar in row.bars %}
<rect x="332" y="{{ bar.y }}" width="{{ bar.width|number }}" height="8" \
class="bar bar-{{ bar.kind }} {{ row.resource_class }}" \
data-pct="{{ bar.pct }}" data-kind="{{ bar.kind }}"/>
{% endfor %}
{% for x, kind, value in row.thresholds %}
<line x1="{{ x|number }}" x2="{{ x|number }}" y1="{{ row.y + 1 }}" y2="{{ row.y + 22 }}" \
class="threshold threshold-{{ kind }}" data-threshold="{{ value }}"/>
{% endfor %}
<text x="824" y="{{ row.y + 15 }}" class="value">{{ row.value }}</text></g>
{% endfor %}
</g>
{% endfor %}
</svg>
{% endmacro %}

{# Per changed node and resource, three bars: before, after the evictions, after placement. #}
{% macro placement_chart(chart) %}
<figure><svg class="chart" role="img" aria-label="{{ chart.label }}" viewBox="0 0 720 {{ chart.height }}" width="720" \
height="{{ chart.height }}"><title>{{ chart.label }}</title>
{% for node in chart.nodes %}
<text x="0" y="{{ node.y + 14 }}" class="node-name">{{ node.label }}</text>
{% for row in node.rows %}
<g data-resource="{{ row.resource }}"><text x="202" y="{{ row.y + 14 }}" text-anchor="end">{{ row.resource }}</text>
{% for bar in row.bars %}
<rect x="210" y="{{ bar.y }}" width="{{ bar.width|number }}" height="6" class="bar r-{{ row.resource }}" \
fill-opacity="{{ bar.opacity }}" data-kind="{{ bar.kind }}" data-pct="{{ bar.pct }}"/>
{% endfor %}
<text x="638" y="{{ row.y + 14 }}" class="value">{{ row.value }}</text></g>
{% endfor %}
{% endfor %}
</svg><figcaption><p class="muted">Bars per resource, top to bottom: before (light), after the evictions (medium), \
after placement (solid).</p></figcaption></figure>
{% endmacro %}

{# Candidates as points, evictions (x) against final spread (y); the Pareto front as a line; the chosen point ringed.
   Every point has a <title> (its figures) and data-* attributes naming it. #}
{% macro scatter_chart(chart, caption=none) %}
<figure class="scatter"><svg class="chart" role="img" aria-label="{{ chart.label }}" \
viewBox="0 0 {{ chart.width }} {{ chart.height }}" width="{{ chart.width }}" height="{{ chart.height }}">\
<title>{{ chart.label }}</title>
<g aria-hidden="true">{% for y, text in chart.y_ticks %}\
<line x1="{{ chart.left }}" x2="{{ chart.right }}" y1="{{ y|number }}" y2="{{ y|number }}" class="grid"/>\
<text x="{{ chart.left - 6 }}" y="{{ (y + 4)|number }}" text-anchor="end" class="axis">{{ text }}</text>{% endfor %}
{% for x, text in chart.x_ticks %}\
<line x1="{{ x|number }}" x2="{{ x|number }}" y1="{{ chart.bottom }}" y2="{{ chart.bottom + 4 }}" class="grid"/>\
<text x="{{ x|number }}" y="{{ chart.bottom + 16 }}" text-anchor="middle" class="axis">{{ text }}</text>{% endfor %}
<text x="{{ ((chart.left + chart.right) / 2)|number }}" y="{{ chart.height - 4 }}" text-anchor="middle" \
class="axis-label">{{ chart.x_label }}</text>\
<text x="12" y="{{ ((chart.top + chart.bottom) / 2)|number }}" text-anchor="middle" class="axis-label" \
transform="rotate(-90 12 {{ ((chart.top + chart.bottom) / 2)|number }})">{{ chart.y_label }}</text></g>
{% if chart.front %}<polyline points="{{ chart.front }}" class="pareto-front" data-front="true"/>{% endif %}
{% for point in chart.points %}
<g class="point point-{{ point.kind }}{% if point.best %} chosen{% endif %}{% if point.on_front %} on-front{% endif %}\
{% if point.excluded %} excluded{% endif %}" data-candidate="{{ point.name }}" data-best="{{ point.best|lower }}" \
data-front="{{ point.on_front|lower }}"><title>{{ point.title }}</title>\
{% if point.best %}<circle cx="{{ point.x|number }}" cy="{{ point.y|number }}" r="10" class="chosen-ring"/>{% endif %}\
<circle cx="{{ point.x|number }}" cy="{{ point.y|number }}" r="5" class="dot"/>\
{% if point.label %}<text x="{{ point.label_x|number }}" y="{{ (point.y - 8)|number }}" \
text-anchor="{{ point.anchor }}" class="point-label">{{ point.label }}{% if point.best %} (chosen){% endif %}</text>\
{% endif %}</g>
{% endfor %}
</svg>{% if caption %}<figcaption>{{ caption }}</figcaption>{% endif %}</figure>
{% endmacro %}
"""
