"""plan_sampling.md: the "how sure" section of plan.md when the plan was sampled (``sampling``, see
report/sampling_report.py)."""

NAME = "plan_sampling.md"
TEMPLATE = """\
{% from "macros.md" import table %}
## How sure ({{ sampling.samples }} sampled cycles)

{{ sampling.intro|md }}
{% for note in sampling.notes %}

{{ note|md }}
{% endfor %}

- Evictions per cycle: {{ sampling.per_cycle_text }}
- Certain evictions: {{ sampling.certain|length }}; possible evictions: {{ sampling.possible|length }} \
(likely: {{ sampling.likely|length }})
{% for name, text in sampling.plugin_ranges %}
- {{ name|md }}: {{ text }} per cycle
{% endfor %}

### Certain evictions

{{ table(sampling.certain_headers, sampling.certain_rows, "No eviction is certain.") }}

### Possible evictions

{{ table(sampling.possible_headers, sampling.possible_rows, "Every eviction is certain.") }}
"""
