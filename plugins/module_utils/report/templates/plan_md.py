"""plan.md: a cluster's descheduling plan in Markdown (the same ``view`` and pieces as plan.html). Sections are
separated by one blank line; the optional ones (sampling, actual utilization, placement) are their own templates."""

NAME = "plan.md"
TEMPLATE = """\
{% from "macros.md" import table %}
# {{ title|md }}

Dry run: no pod was evicted.{% if view.policy_source %} Policy: {{ view.policy_source|md }}.{% endif %} \
Nodes in the cycle: {{ nodes_line }}.
{% if view.skipped %}

> **Cycle skipped:** {{ (view.skip_reason or "no reason given")|md }}. The descheduler would not run its plugins.
{% endif %}
{% if view.scale.large %}

> **Warning:** {{ view.scale.warning()|md }}
{% endif %}

## Summary

| Evictions | Name | Count |
| --- | --- | ---: |
| **Total** |  | {{ view.total }} |
{% for name, count in view.by_plugin %}
| plugin | {{ name|md }} | {{ count }} |
{% endfor %}
{% for name, count in view.by_profile %}
| profile | {{ name|md }} | {{ count }} |
{% endfor %}

- Scale: {{ view.scale.describe()|md }}
- Pods spared: {{ view.spared_total }}
- Limits: {{ limits_line|md }}
- Errors: {{ view.errors|length }}, warnings: {{ view.warnings|length }}

{% include "plan_evictions.md" %}

{% if sampling %}
{% include "plan_sampling.md" %}

{% endif %}
{% if actual %}
{% include "plan_actual.md" %}

{% endif %}
{% if placement %}
{% include "plan_placement.md" %}

{% endif %}
## Spared pods

{% if view.spared %}
{{ view.spared_total }} distinct pods were considered by a plugin and not evicted.

{% endif %}
{{ table(("Reason", "Pods", "Examples"), spared_rows, "No pod was spared.") }}

## Node utilization

{{ (["Requests as a percentage of allocatable, before → after the planned evictions."]
    + classes_notes|map("md")|list)|join(" ") }}

{{ table(markdown_node_headers, markdown_node_rows, "No utilization data.") }}

## Errors

{% for error in view.errors %}
- {{ error|md }}
{% else %}
_None._
{% endfor %}

## Warnings

{% for warning in view.warnings %}
- {{ warning|md }}
{% else %}
_None._
{% endfor %}
"""
