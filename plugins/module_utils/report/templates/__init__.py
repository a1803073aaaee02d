"""The reports' templates, shipped as Python string constants: AnsiballZ ships only the Python files of
module_utils to the host that runs a module. Each module holds one template: ``NAME`` (what a user's file of the
same name in the report template directory replaces) and ``TEMPLATE``."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.report.templates import (
    charts_html,
    evict_md,
    fleet_html,
    fleet_md,
    macros_html,
    macros_md,
    page_html,
    plan_actual_html,
    plan_actual_md,
    plan_evictions_html,
    plan_evictions_md,
    plan_html,
    plan_md,
    plan_placement_html,
    plan_placement_md,
    plan_sampling_html,
    plan_sampling_md,
    style_css,
    whatif_fleet_html,
    whatif_fleet_md,
    whatif_html,
    whatif_md,
)

TEMPLATES: dict[str, str] = {module.NAME: module.TEMPLATE for module in (
    charts_html, evict_md, fleet_html, fleet_md, macros_html, macros_md, page_html, plan_actual_html,
    plan_actual_md, plan_evictions_html, plan_evictions_md, plan_html, plan_md, plan_placement_html,
    plan_placement_md, plan_sampling_html, plan_sampling_md, style_css, whatif_html, whatif_md,
    whatif_fleet_html, whatif_fleet_md,
)}
