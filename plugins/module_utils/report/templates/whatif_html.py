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
{{ table(pareto_headers, pareto_rows, numeric=(2, 3, 4, 5)) }}
{% endif %}
{% if warnings %}
<h2>Warnings</h2>
<ul>{% for warning in warnings %}<li>{{ warning }}</li>{% endfor %}</ul>
{% endif %}
{% endblock %}
"""
