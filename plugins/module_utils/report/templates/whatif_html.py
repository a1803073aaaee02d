"""whatif.html: a what-if as a page: the candidates side by side, the best one named (``result``, the whatif
module's result; ``rows`` and ``pareto_rows``, the tables' cells, from whatif/report.py)."""

NAME = "whatif.html"
TEMPLATE = """\
{% extends "page.html" %}
{% from "macros.html" import table %}
{% from "charts.html" import scatter_chart %}
{% block title %}{{ title }}{% endblock %}
{% block main %}
<h1>{{ title }}</h1>
<p><strong>Best: </strong>{{ verdict }}</p>
{{ table(headers, rows, numeric=range(1, headers|length), css_class="wide") }}
{% if chart %}
<h2 id="candidates-chart">Evictions against final spread</h2>
{% set caption %}Each point is a candidate{% if chart.front %}; the dashed line joins the threshold search&rsquo;s \
Pareto front (no other point has both fewer evictions and a lower spread){% endif %}; the ringed point is the \
chosen one{% if chart.not_drawn %}. Not drawn (no spread): {{ chart.not_drawn|join(", ") }}{% endif %}. \
Hollow points are excluded (cycle skipped or a plugin error); threshold points are violet, operator \
equivalents grey.{% endset %}
{{ scatter_chart(chart, caption) }}
{% endif %}
{% if pareto_rows %}
<h2>Threshold search: Pareto front</h2>
<p>A point's KubeDescheduler equivalent is planned as a candidate of its own: its profile brings more than the
thresholds, and &ldquo;its&rdquo; columns are what that spec would do.</p>
{{ table(pareto_headers, pareto_rows, numeric=(2, 3, 4, 5, 7, 8), css_class="wide") }}
{% endif %}
{% if warnings %}
<h2>Warnings</h2>
<ul>{% for warning in warnings %}<li>{{ warning }}</li>{% endfor %}</ul>
{% endif %}
{% endblock %}
"""
