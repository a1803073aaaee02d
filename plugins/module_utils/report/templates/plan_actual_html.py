"""plan_actual.html: the actual utilization section of plan.html (``actual``, an ActualView of
report/usage_report.py): requested and actual utilization side by side, VMs to live-migrate, soft taints."""

NAME = "plan_actual.html"
TEMPLATE = """\
{% from "macros.html" import table, badge, key_figure, mini_bar %}
<section><h2 id="actual">Actual utilization</h2>
<div class="figures">
{{ key_figure("VMs to live-migrate", actual.vms|length, "amber" if actual.vms else "neutral") }}
</div>
{% for reading in actual.readings %}
<h3>{{ reading.plugin }}</h3>
<p class="muted">{{ reading.intro }}</p>
<ul>{% for resource, text in reading.thresholds %}<li>{{ resource }}: {{ text }}</li>{% endfor %}</ul>
{% call(cell, column) table(reading.headers, reading.rows, numeric=reading.numeric,
                            empty_text="No node was read.") %}\
{% if column == 1 and cell.bar is defined %}\
<span>{{ mini_bar(cell.bar, cell.label) }} {{ cell.text }}</span>\
{% elif column == reading.class_column and cell == "overutilized" %}{{ badge("overutilized", "red") }}\
{% else %}{{ cell }}{% endif %}\
{% endcall %}
{% endfor %}
{% if actual.vms %}
<h3>VMs to live-migrate ({{ actual.vms|length }})</h3>
{{ table(("VM", "virt-launcher pod", "From node"), actual.vms) }}
{% endif %}
{% if actual.taints_text %}
<p class="muted">{{ actual.taints_text }}</p>
{% endif %}
</section>
"""
