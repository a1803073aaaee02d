"""whatif-fleet.html: the what-if across a fleet as a page (``fleet``, from whatif/fleet.py; ``totals``, ``matrix``,
``best_rows`` and ``sections``, the tables' cells): each cluster's best candidate and why, the candidates over the
fleet, side by side per cluster, each cluster's full comparison linked to its whatif.html, the failed clusters."""

NAME = "whatif_fleet.html"
TEMPLATE = """\
{% extends "page.html" %}
{% from "macros.html" import table, badge, key_figure, bullet_list %}
{% from "charts.html" import scatter_chart %}
{% macro cluster_name(cluster, link) %}\
{% if link %}<a href="{{ link }}">{{ cluster }}</a>{% else %}{{ cluster }}{% endif %}\
{% endmacro %}
{% block title %}What-if across the fleet{% endblock %}
{% block main %}
<header><h1>What-if across the fleet</h1>
<p class="meta">{{ fleet_line }}</p>
<div class="figures">
{{ key_figure("Clusters", fleet.clusters_total) }}
{{ key_figure("Compared", fleet.clusters_ok, "green") }}
{{ key_figure("Failed", fleet.clusters_failed, "red" if fleet.clusters_failed else "neutral") }}
{{ key_figure("No candidate fits", fleet.clusters_without_best,
              "amber" if fleet.clusters_without_best else "neutral") }}
{{ key_figure("Candidates", fleet.candidates|length, "blue") }}
</div>
<nav><a href="#best">Best per cluster</a><a href="#fleet">Over the fleet</a><a href="#side-by-side">Side by side</a>\
{% for section in sections %}<a href="#{{ section.anchor }}">{{ section.cluster }}</a>{% endfor %}</nav>
</header>
{% if fleet.clusters_failed %}
<div class="notice tone-red" role="note"><strong>{{ fleet.clusters_failed }} cluster(s) failed: </strong>\
{{ failed_names|join(", ") }}. Their errors are below.</div>
{% endif %}

<section><h2 id="best">Best candidate per cluster</h2>
{% call(row) table(best_headers, best_rows, empty_text="No clusters.", whole_rows=true) %}
<tr{% if not row.ok %} class="failed"{% endif %}><th scope="row">{{ cluster_name(row.cluster, row.link) }}</th>\
{% if not row.ok %}\
<td>{{ badge("FAILED", "failed") }}</td><td><span class="error wrap-anywhere">Error: {{ row.error }}</span></td>\
{% else %}\
<td class="best-candidate">{% if row.best %}{{ badge(row.best, "green") }}{% else %}{{ badge("none", "amber") }}\
{% endif %}</td><td>{{ row.best_reason }}</td>\
{% endif %}\
<td>{% if row.link %}<a href="{{ row.link }}">whatif.html</a>{% else %}—{% endif %}</td></tr>
{% endcall %}
</section>

<section><h2 id="fleet">Candidates over the fleet</h2>
<p class="muted">Counts summed over the clusters that planned the candidate; the final spread (after placement when \
previewed, else after the evictions: the standard deviation of the nodes' requested percent) as its mean and worst \
value over those clusters.</p>
{{ table(total_headers, totals, numeric=range(2, 9), nowrap=(9, 10), empty_text="No candidate was planned.",
         css_class="wide") }}
</section>

<section><h2 id="side-by-side">Side by side</h2>
{% call(row) table(matrix_headers, matrix, empty_text="No cluster was compared.", whole_rows=true, css_class="wide") %}
<tr><th scope="row">{{ cluster_name(row[0].cluster, row[0].link) }}</th>\
{% for cell in row[1:] %}<td>{% if cell is none %}—{% else %}\
<span class="num">{{ cell.evictions }}</span> eviction{{ "" if cell.evictions == 1 else "s" }}, \
CPU spread <span class="num">{{ cell.spread }}</span>\
{% if cell.skipped %} {{ badge("cycle skipped", "amber") }}{% endif %}\
{% if cell.best %} {{ badge("best", "green") }}{% endif %}{% endif %}</td>{% endfor %}</tr>
{% endcall %}
{% if sections|selectattr("chart")|list %}
<h3 id="charts">Candidates per cluster</h3>
<p class="muted">Per cluster, each candidate's evictions against its final CPU spread; the ringed point is the \
cluster's best candidate, hollow points are excluded (cycle skipped or a plugin error).</p>
<div class="scatter-grid">
{% for section in sections if section.chart %}
{% set caption %}{{ cluster_name(section.cluster, section.link) }}{% if section.best %}: best \
{{ section.best }}{% else %}: no candidate meets the objective{% endif %}{% endset %}
{{ scatter_chart(section.chart, caption) }}
{% endfor %}
</div>
{% endif %}
</section>
{% for section in sections %}

<section><h2 id="{{ section.anchor }}">{{ cluster_name(section.cluster, section.link) }}</h2>
<p><strong>Best: </strong>{% if section.best %}{{ badge(section.best, "green") }} {% endif %}{{ section.best_reason }}\
</p>
{{ table(cluster_headers, section.rows, numeric=range(1, cluster_headers|length), css_class="wide") }}
</section>
{% endfor %}
{% if failed %}

<section><h2 id="failed">Failed clusters</h2>
<ul>{% for row in failed %}<li><strong>{{ row.cluster }}</strong>: \
<span class="error wrap-anywhere">{{ row.error }}</span></li>{% endfor %}</ul>
</section>
{% endif %}
{% endblock %}
"""
