"""plan_placement.html: where the evicted pods land, in plan.html (``placement``, see report/placement_report.py):
the verdict, the spread of utilization, three bars per changed node and resource, each replacement's node."""

NAME = "plan_placement.html"
TEMPLATE = """\
{% from "macros.html" import table, badge, key_figure %}
{% from "charts.html" import placement_chart %}
<section><h2 id="placement">Where the evicted pods land</h2>
<p class="muted">{{ placement.intro }}</p>
<div class="figures">
{{ key_figure("placed", placement.verdict.get("placed", 0), "green") }}
{{ key_figure("back to the same node", placement.verdict.get("same_node", 0), "amber") }}
{{ key_figure("cannot be placed", placement.verdict.get("unplaced", 0),
              "red" if placement.verdict.get("unplaced") else "neutral") }}
{{ key_figure("ties", placement.verdict.get("ties", 0)) }}
</div>
<ul>{% for fact in placement.facts %}<li>{{ fact }}</li>{% endfor %}</ul>
{{ table(placement.spread_headers, placement.spread_rows, caption="Utilization spread across schedulable nodes") }}
{% if placement.chart.nodes %}
{{ placement_chart(placement.chart) }}
{% else %}
<p class="muted">No node's requests change.</p>
{% endif %}
{% if placement.more_nodes > 0 %}
<p class="muted">{{ placement.more_nodes }} more nodes change; see the nodes table.</p>
{% endif %}
{% call(cell, column) table(placement.headers, placement.rows, empty_text="No evictions.") %}\
{% if column == 3 and cell == "yes" %}{{ badge(cell, "amber") }}{% else %}{{ cell }}{% endif %}\
{% endcall %}
</section>
"""
