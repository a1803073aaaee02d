"""The options the plan and whatif modules share: the shared groups both take, and the planning inputs (where the
cluster's state, usage and time come from, and what the engine previews) that runner/plan.py reads for both.

Each module documents these inputs in its own words (whatif's refer to plan's), so there is no doc fragment."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    FIELD_VALIDATION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
    LISTING_ARG_SPEC,
    PROMETHEUS_ARG_SPEC,
    REPORT_ARG_SPEC,
)

PLAN_INPUT_ARG_SPEC: dict[str, dict] = {
    "snapshot": {"type": "path"},
    "now": {"type": "str"},
    "prometheus_url": {"type": "str"},
    "prometheus_result": {"type": "raw"},
    "metrics_file": {"type": "path"},
    "samples": {"type": "int", "default": 1},
    "seed": {"type": "int"},
    "placement": {"type": "bool", "default": False},
    "scheduler_config": {"type": "raw"},
}

# For module_support.argument_spec(*PLAN_ARG_GROUPS, ...the module's own options).
PLAN_ARG_GROUPS: tuple[dict[str, dict], ...] = (
    CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, PROMETHEUS_ARG_SPEC, FIELD_VALIDATION_ARG_SPEC, LISTING_ARG_SPEC,
    REPORT_ARG_SPEC, PLAN_INPUT_ARG_SPEC,
)

# whatif decides placement itself when it is unset (on for an objective that compares spreads): no default.
WHATIF_ARG_GROUPS: tuple[dict[str, dict], ...] = (
    *PLAN_ARG_GROUPS[:-1], {**PLAN_INPUT_ARG_SPEC, "placement": {"type": "bool"}},
)
