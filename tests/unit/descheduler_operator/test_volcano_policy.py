"""The Volcano descheduler's policy checks and its pairing with the Volcano scheduler (operator/volcano_policy.py)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.volcano_policy import (
    SchedulerConfigError,
    load_aware_problems,
    pairing_problems,
    parse_scheduler_config,
    split,
)

PROMETHEUS = "http://prometheus.monitoring:9090"
LOAD_AWARE_POLICY = {
    "profiles": [{
        "name": "default",
        "pluginConfig": [
            {"name": "DefaultEvictor", "args": {"nodeFit": True}},
            {"name": "LoadAware", "args": {"metrics": {"type": "prometheus", "address": PROMETHEUS},
                                           "thresholds": {"cpu": 30, "memory": 30},
                                           "targetThresholds": {"cpu": 80, "memory": 85}}},
        ],
        "plugins": {"balance": {"enabled": ["LoadAware"]}},
    }],
}
HIGH_POLICY = {"profiles": [{"name": "pack", "pluginConfig": [
    {"name": "HighNodeUtilization", "args": {"thresholds": {"cpu": 20}}}],
    "plugins": {"balance": {"enabled": ["HighNodeUtilization"]}}}]}
SCHEDULER_CONF = f"""
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: usage
    enablePredicate: false
    arguments:
      usage.weight: 5
      thresholds:
        cpu: 80
        mem: 70
- plugins:
  - name: predicates
  - name: nodeorder
  - name: binpack
metrics:
  type: prometheus
  address: {PROMETHEUS}/
  interval: 30s
"""


def policy_with(**args: object) -> dict:
    policy = copy.deepcopy(LOAD_AWARE_POLICY)
    policy["profiles"][0]["pluginConfig"][1]["args"].update(args)
    return policy


def scheduler(**changes: object) -> dict:
    config = yaml.safe_load(SCHEDULER_CONF)
    config.update(changes)
    return config


def fields(problems: list) -> list[str]:
    return [p.field for p in problems]


# ---- LoadAware on its own -------------------------------------------------------------------------------------------

def test_a_complete_load_aware_policy_has_no_problem() -> None:
    assert load_aware_problems(LOAD_AWARE_POLICY) == []


def test_target_not_above_low_threshold_is_an_error_naming_both_values() -> None:
    problems = load_aware_problems(policy_with(thresholds={"cpu": 50, "memory": 30},
                                               targetThresholds={"cpu": 50, "memory": 85}))
    assert fields(problems) == ["volcano.policy.profiles[0].pluginConfig[1].args.targetThresholds.cpu"]
    assert "must be above thresholds.cpu (50)" in problems[0].message


def test_deviation_thresholds_allow_target_below_low() -> None:
    assert load_aware_problems(policy_with(useDeviationThresholds=True, thresholds={"cpu": 20, "memory": 20},
                                           targetThresholds={"cpu": 10, "memory": 10})) == []


def test_out_of_range_and_mismatched_resources() -> None:
    problems = load_aware_problems(policy_with(thresholds={"cpu": 130}, targetThresholds={"cpu": 80, "memory": 85}))
    messages = {p.field.rsplit(".", 2)[-2] + "." + p.field.rsplit(".", 1)[-1]: p.message for p in problems}
    assert "thresholds.cpu" in messages and "0 to 100" in messages["thresholds.cpu"]
    assert any("both must name the same resources" in p.message for p in problems)


def test_metrics_checks_prometheus_needs_an_address_and_empty_is_only_a_warning() -> None:
    no_address = load_aware_problems(policy_with(metrics={"type": "prometheus"}))
    assert fields(no_address) == ["volcano.policy.profiles[0].pluginConfig[1].args.metrics.address"]
    wrong = load_aware_problems(policy_with(metrics={"type": "influx"}))
    assert "invalid value 'influx'" in wrong[0].message
    errors, warnings = split(load_aware_problems(policy_with(metrics={"type": None, "address": None})))
    assert errors == [] and "evicts nothing" in warnings[0].message


def test_include_namespaces_are_rejected() -> None:
    problems = load_aware_problems(policy_with(evictableNamespaces={"include": ["apps"]}))
    assert fields(problems) == ["volcano.policy.profiles[0].pluginConfig[1].args.evictableNamespaces.include"]


# ---- reading the scheduler's configuration --------------------------------------------------------------------------

def test_every_form_of_the_scheduler_configuration_is_read_the_same() -> None:
    expected = yaml.safe_load(SCHEDULER_CONF)
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"volcano-scheduler.conf": SCHEDULER_CONF}}
    cce_addon = {"basic": {"swr_addr": "x"}, "custom": {"default_scheduler_conf": expected}}
    for given in (SCHEDULER_CONF, expected, configmap, configmap["data"], json.dumps(cce_addon),
                  {"default_scheduler_conf": json.dumps(expected)}):
        assert parse_scheduler_config(given) == expected
    assert parse_scheduler_config(None) is None


def test_something_without_tiers_is_rejected_with_what_to_give() -> None:
    with pytest.raises(SchedulerConfigError, match="volcano-scheduler-configmap"):
        parse_scheduler_config({"actions": "allocate"})


# ---- pairing --------------------------------------------------------------------------------------------------------

def test_matching_scheduler_passes_and_a_trailing_slash_does_not_matter() -> None:
    assert pairing_problems(LOAD_AWARE_POLICY, scheduler()) == []


def test_load_aware_without_usage_plugin_is_an_error() -> None:
    config = scheduler()
    config["tiers"][0]["plugins"] = [p for p in config["tiers"][0]["plugins"] if p["name"] != "usage"]
    problems = pairing_problems(LOAD_AWARE_POLICY, config)
    assert fields(problems) == ["volcano_scheduler_config.tiers"]
    assert "'- name: usage'" in problems[0].message


def test_load_aware_with_another_metrics_source_is_an_error() -> None:
    other_address = pairing_problems(LOAD_AWARE_POLICY, scheduler(metrics={"type": "prometheus",
                                                                           "address": "http://other:9090"}))
    assert fields(other_address) == ["volcano.policy.profiles[0].pluginConfig[1].args.metrics.address"]
    assert "http://other:9090" in other_address[0].message
    other_type = pairing_problems(LOAD_AWARE_POLICY, scheduler(metrics={"type": "prometheus_adapt"}))
    assert fields(other_type) == ["volcano.policy.profiles[0].pluginConfig[1].args.metrics.type"]
    no_metrics = pairing_problems(LOAD_AWARE_POLICY, scheduler(metrics=None))
    assert fields(no_metrics) == ["volcano_scheduler_config.metrics"]


def test_scheduler_type_defaults_to_prometheus_and_adaptor_needs_no_address() -> None:
    assert pairing_problems(LOAD_AWARE_POLICY, scheduler(metrics={"address": PROMETHEUS})) == []
    adaptor = policy_with(metrics={"type": "prometheus_adaptor"})
    assert pairing_problems(adaptor, scheduler(metrics={"type": "prometheus_adapt", "interval": "30s"})) == []


def test_usage_threshold_above_descheduler_target_is_a_warning() -> None:
    config = scheduler()
    config["tiers"][0]["plugins"][2]["arguments"]["thresholds"] = {"cpu": 90, "mem": 70}
    errors, warnings = split(pairing_problems(LOAD_AWARE_POLICY, config))
    assert errors == []
    assert [w.field for w in warnings] == ["volcano_scheduler_config.tiers[0].plugins[2].arguments.thresholds.cpu"]


def test_high_node_utilization_requires_binpack() -> None:
    assert pairing_problems(HIGH_POLICY, scheduler()) == []
    config = scheduler()
    config["tiers"][1]["plugins"] = [{"name": "predicates"}]
    problems = pairing_problems(HIGH_POLICY, config)
    assert len(problems) == 1 and "'- name: binpack'" in problems[0].message
