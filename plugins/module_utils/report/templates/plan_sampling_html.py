"""plan_sampling.html: the "how sure" section of plan.html when the plan was sampled (``sampling``, a SamplingView
of report/sampling_report.py)."""

NAME = "plan_sampling.html"
TEMPLATE = """\
{% from "macros.html" import table, badge, key_figure %}
<section><h2 id="sampling">How sure ({{ sampling.samples }} sampled cycles)</h2>
<p class="muted">{{ sampling.intro }}</p>
{% for note in sampling.notes %}
<p class="muted">{{ note }}</p>
{% endfor %}
<div class="figures">
{{ key_figure("certain evictions", sampling.certain|length, "green") }}
{{ key_figure("likely evictions", sampling.likely|length, "amber") }}
{{ key_figure("possible evictions (likely included)", sampling.possible|length, "amber") }}
{{ key_figure("evictions per cycle", sampling.per_cycle_text) }}
</div>
<h3>Evictions per plugin and cycle</h3>
{{ table(("Plugin", "Min", "Max", "Mean"), sampling.plugin_rows, numeric=(1, 2, 3), empty_text="No plugin ran.") }}
<h3>Certain evictions ({{ sampling.certain|length }})</h3>
{{ table(sampling.certain_headers, sampling.certain_rows, numeric=(3, 4), nowrap=(4,),
         empty_text="No eviction is certain.") }}
<h3>Possible evictions ({{ sampling.possible|length }})</h3>
{% call(cell, column) table(sampling.possible_headers, sampling.possible_rows, numeric=(4, 5), nowrap=(5,),
                            empty_text="Every eviction is certain.") %}\
{% if column == 4 %}{{ badge(cell, "amber") }}{% else %}{{ cell }}{% endif %}\
{% endcall %}
</section>
"""
