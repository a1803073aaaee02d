"""The flavor options' defaults are written once (module_utils/operator/args.py): the operator module's argument spec
has the same, and the runner fills an omitted ``upstream`` or ``volcano`` option with them."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import (
    UPSTREAM_ARG_SPEC,
    VOLCANO_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.operator import (
    upstream_request,
    volcano_request,
)
from ansible_collections.descheduler.fleet.plugins.modules import operator as operator_module


@pytest.mark.parametrize(("option", "spec"), [("upstream", UPSTREAM_ARG_SPEC), ("volcano", VOLCANO_ARG_SPEC)])
def test_the_module_spec_has_the_defaults_of_module_utils(option: str, spec: dict) -> None:
    assert operator_module.ARGUMENT_SPEC[option]["options"] == spec


def test_an_omitted_option_gets_the_documented_defaults() -> None:
    params = {"wait": True, "volcano_scheduler_config": None}
    upstream = upstream_request({**params, "upstream": None}, waiter=None)
    assert (upstream.name, upstream.namespace, upstream.interval, upstream.schedule, upstream.log_level) == (
        "descheduler", "kube-system", "5m", "*/2 * * * *", 3)
    assert upstream.priority_class_name == "system-cluster-critical"
    volcano = volcano_request({**params, "volcano": None}, waiter=None)
    assert (volcano.name, volcano.namespace, volcano.interval, volcano.mode) == (
        "volcano-descheduler", "volcano-system", "10m", "predictive")
