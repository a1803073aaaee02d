"""plan_actual.md: the actual utilization section of plan.md (``actual``, see report/usage_report.py)."""

NAME = "plan_actual.md"
TEMPLATE = """\
{% from "macros.md" import table %}
## Actual utilization
{% for reading in actual.readings %}

### {{ reading.plugin|md }}

{{ reading.intro|md }}

{% for resource, text in reading.thresholds %}
- Thresholds ({{ resource|md }}): {{ text }}
{% endfor %}

{{ table(reading.headers, reading.markdown_rows, "No node was read.") }}
{% endfor %}
{% if actual.vms %}

### VMs to live-migrate ({{ actual.vms|length }})

{{ table(("VM", "virt-launcher pod", "From node"), actual.vms) }}
{% endif %}
{% if actual.taints_text %}

{{ actual.taints_text }}
{% endif %}
"""
