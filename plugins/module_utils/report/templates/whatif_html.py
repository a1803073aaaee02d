"""whatif.html: a what-if as a page: the candidates side by side, the best one named (``result``, the whatif
module's result; ``rows`` and ``pareto_rows``, the tables' cells, from whatif/report.py)."""

NAME = "whatif.html"
TEMPLATE = """\
{% extends "page.html" %}
{% from "macros.html" import table %}
{% block title %}{{ title }}{% endblock %}
{% block main %}
<h1>{{ title }}</h1>
<p><strong>Best: </strong>{{ verdict }}</p>
{{ table(headers, rows, numeric=range(1, headers|length)) }}
{% if pareto_rows %}
<h2>Threshold search: Pareto front</h2>
<p>A point's KubeDescheduler equivalent is planned as a candidate of its own: its profile brings more than the
thresholds, and &ldquo;its&rdquo; columns are what that spec would do.</p>
{{ table(pareto_headers, pareto_rows, numeric=(2, 3, 4, 5, 7, 8)) }}
{% endif %}
{% if warnings %}
<h2>Warnings</h2>
<ul>{% for warning in warnings %}<li>{{ warning }}</li>{% endfor %}</ul>
{% endif %}
{% endblock %}
"""
