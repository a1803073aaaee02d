"""plan.html: a cluster's descheduling plan as a page (report/plan_report.py gives it ``view``, a PlanView, and the
pieces below). The optional sections (sampling, actual utilization, placement) are their own templates."""

NAME = "plan.html"
TEMPLATE = """\
{% extends "page.html" %}
{% from "macros.html" import table, badge, key_figure, bullet_list %}
{% from "charts.html" import before_after_chart %}
{% block title %}{{ title }}{% endblock %}
{% block main %}
<header><h1>Descheduling plan{% if view.cluster %}<span class="muted"> · {{ view.cluster }}</span>{% endif %}</h1>
<p class="meta">{{ facts|join(" · ") }}</p>
<div class="figures">
{{ key_figure("Evictions", view.total, "blue" if view.total else "neutral") }}
{{ key_figure("Nodes in cycle", nodes_line) }}
{{ key_figure("Pods spared", view.spared_total) }}
{{ key_figure("Limits reached", "yes" if view.limits_reached else "no", "amber" if view.limits_reached else "") }}
{{ key_figure("Errors", view.errors|length, "red" if view.errors else "green") }}
{{ key_figure("Warnings", view.warnings|length, "amber" if view.warnings else "neutral") }}
</div>
<nav aria-label="Sections"><a href="#utilization">Utilization</a><a href="#summary">Summary</a>\
<a href="#evictions">Evictions</a><a href="#spared">Spared pods</a><a href="#nodes">Nodes</a>\
<a href="#problems">Errors and warnings</a></nav></header>
{% if view.skipped %}
<div class="notice" role="note"><strong>Cycle skipped: </strong>{{ view.skip_reason or "no reason given" }}. \
The descheduler would not run its plugins.</div>
{% endif %}
{% if view.errors %}
<div class="notice tone-red" role="note"><strong>{{ view.errors|length }} plugin error(s). </strong>The cycle went on \
without them; see <a href="#problems">Errors and warnings</a>.</div>
{% endif %}
{% if view.scale.large %}
<div class="notice" role="note"><strong>Large plan: </strong>{{ view.scale.warning() }}</div>
{% endif %}

<section><h2 id="utilization">Node utilization: before → after</h2>
{% if chart %}
<div class="legend"><span><span class="swatch before"></span>before</span>\
<span><span class="swatch after"></span>after the planned evictions</span>
{% if legend.low %}
<span><span class="swatch low"></span>low threshold (underutilized below)</span>
{% endif %}
{% if legend.high %}
<span><span class="swatch high"></span>target threshold (overutilized above)</span>
{% endif %}
{% if view.deviation_thresholds %}
<span>thresholds of {{ view.deviation_thresholds|join(", ") }} are deviations from the mean: not drawn</span>
{% endif %}
<span>requests as % of allocatable; overutilized nodes first, then by cpu</span>
{% if legend.domain %}
<span>node names end in <code>{{ legend.domain }}</code></span>
{% endif %}
</div>
{% if classes_notes %}
<p class="muted">{{ classes_notes|join(" ") }}</p>
{% endif %}
{{ before_after_chart(chart) }}
{% if legend.omitted %}
<p class="muted">{{ legend.omitted }} more nodes (least changed and least loaded) are not drawn; the node table lists \
all of them.</p>
{% endif %}
{% else %}
<p class="muted">No utilization data in this plan.</p>
{% endif %}
</section>

<section><h2 id="summary">Summary</h2>
<p class="scale{{ ' tone-amber' if view.scale.large else '' }}">Scale: <strong>{{ view.scale.describe() }}</strong></p>
<div class="columns">
{% for title, counts, header in (("By plugin", view.by_plugin, "Plugin"), ("By profile", view.by_profile, "Profile"),
                                 ("Top namespaces", view.by_namespace[:10], "Namespace")) %}
<div><h3>{{ title }}</h3>
{{ table((header, "Evictions"), counts, numeric=(1,), empty_text="No evictions.") }}
</div>
{% endfor %}
<div class="limits"><h3>Eviction limits</h3>
{{ bullet_list(limits or ["No limits configured."]) }}
{% if view.limits_reached %}
<div>Reached:<ul>\
{% for limit in view.limits_reached %}<li><strong>{{ limit.describe() }}</strong></li>{% endfor %}</ul></div>
{% else %}
<p><strong>No limit reached.</strong></p>
{% endif %}
</div>
</div>
</section>

{% include "plan_evictions.html" %}
{% if sampling %}{% include "plan_sampling.html" %}{% endif %}
{% if actual %}{% include "plan_actual.html" %}{% endif %}
{% if placement %}{% include "plan_placement.html" %}{% endif %}

<section><h2 id="spared">Spared pods</h2>
{% if view.spared %}
<p class="muted">{{ view.spared_total }} distinct pods were considered by a plugin and not evicted.</p>
{% endif %}
{{ table(("Reason", "Pods", "Examples"), spared_rows, numeric=(1,), empty_text="No pod was spared.") }}
</section>

<section><h2 id="nodes">Nodes ({{ view.nodes|length }})</h2>
<p class="muted">{{ (["Requests as a percentage of allocatable, before → after the planned evictions; all nodes."]
                     + classes_notes)|join(" ") }}</p>
{% call(cell, column) table(["Node"] + view.resources + ["Evicted", "Classes"], node_rows,
                            numeric=range(1, view.resources|length + 2), empty_text="No utilization data.") %}
{% if column == view.resources|length + 2 %}
{% if cell.classes or cell.notes %}
{% for value, title in cell.classes %}{{ badge(value, value, title) }}{% endfor %}\
{% for note in cell.notes %}{{ badge(note) }}{% endfor %}\
{% for key, seen in cell.seen %}<div class="muted">{{ key }}: {{ seen }}</div>{% endfor %}\
{% else %}—{% endif %}\
{% else %}{{ cell }}{% endif %}\
{% endcall %}
</section>

<section><h2 id="problems">Errors and warnings</h2>
<h3>Errors</h3>
{% if view.errors %}{{ bullet_list(view.errors) }}{% else %}<p class="muted">None.</p>{% endif %}

<h3>Warnings</h3>
{% if view.warnings %}{{ bullet_list(view.warnings) }}{% else %}<p class="muted">None.</p>{% endif %}

</section>
{% endblock %}
"""
