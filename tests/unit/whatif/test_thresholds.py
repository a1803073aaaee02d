"""The threshold search's grid, its operator equivalents and its Pareto front."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.thresholds import (
    ThresholdSearchError,
    added_evictions,
    operator_candidates,
    pareto_front,
    threshold_candidates,
)

# A complete spec, as plan and kubedescheduler take it: the operator scales the operand to 0 without an interval.
COMPLETE = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600}
BASE = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "balance", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}, "numberOfNodes": 2}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


def test_each_grid_point_with_low_under_high_is_a_policy_with_those_thresholds() -> None:
    found = threshold_candidates({"policy": BASE, "low": [10, 40], "high": [30, 50]})
    assert [c["name"] for c in found] == ["LowNodeUtilization-10-30", "LowNodeUtilization-10-50",
                                          "LowNodeUtilization-40-50"]
    args = found[1]["policy"]["profiles"][0]["pluginConfig"][0]["args"]
    assert args == {"thresholds": {"cpu": 10, "memory": 10, "pods": 10},
                    "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50}, "numberOfNodes": 2}
    assert BASE["profiles"][0]["pluginConfig"][0]["args"]["thresholds"] == {"cpu": 20}, "the base is not changed"
    assert found[0]["operator_spec"] == {**COMPLETE, "profiles": ["LifecycleAndUtilization"],
                                         "profileCustomizations": {"devLowNodeUtilizationThresholds": "Low"}}
    assert found[1]["operator_spec"] is None


def test_the_operator_cannot_express_thresholds_on_some_resources_only() -> None:
    found = threshold_candidates({"policy": BASE, "low": [20], "high": [50], "resources": ["cpu"]})
    assert found[0]["operator_spec"] is None


@pytest.mark.parametrize(("search", "message"), [
    ({"policy": BASE, "low": [50], "high": [30]}, "every low is at or above every high"),
    ({"policy": BASE, "low": [], "high": [30]}, "threshold_search.low"),
    ({"policy": BASE, "plugin": "HighNodeUtilization", "low": [10]}, "no profile configures HighNodeUtilization"),
    ({"policy": {"kind": "KubeDescheduler"}, "low": [10], "high": [30]}, "kind DeschedulerPolicy"),
])
def test_a_search_that_cannot_be_built_names_the_option(search: dict[str, Any], message: str) -> None:
    with pytest.raises(ThresholdSearchError, match=message):
        threshold_candidates(search)


def point(name: str, evictions: int, spread: float, skipped: bool = False) -> dict[str, Any]:
    return {"name": name, "evictions": evictions, "cycle_skipped": skipped,
            "spread": {"after_evictions": {"cpu": spread}, "after_placement": None}}


def test_the_front_keeps_the_points_nothing_beats_on_both_figures() -> None:
    points = [point("a", 0, 20.0), point("b", 5, 10.0), point("c", 5, 12.0), point("d", 9, 10.0),
              point("e", 12, 4.0), point("f", 5, 10.0), point("g", 0, 0.0, skipped=True)]
    assert pareto_front(points, "cpu") == ["a", "b", "e"]


DEVIATION_BASE = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "kubevirt", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "useDeviationThresholds": True, "thresholds": {"MetricResource": 0},
        "targetThresholds": {"MetricResource": 10}}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


def test_deviation_thresholds_on_measured_usage_are_the_kubevirt_profiles_presets() -> None:
    found = threshold_candidates({"policy": DEVIATION_BASE, "low": [0, 10], "high": [10, 20],
                                  "resources": ["MetricResource"]})
    by_name = {c["name"]: c["operator_spec"] for c in found}
    assert by_name["LowNodeUtilization-0-10"] == {**COMPLETE, "profiles": ["KubeVirtRelieveAndMigrate"],
                                                  "profileCustomizations": {"devDeviationThresholds": "AsymmetricLow"}}
    assert by_name["LowNodeUtilization-0-20"]["profileCustomizations"] == {"devDeviationThresholds": "AsymmetricMedium"}
    assert by_name["LowNodeUtilization-10-20"] is None  # no preset is 10/20


def test_deviation_thresholds_on_requests_have_no_operator_equivalent() -> None:
    policy = {**DEVIATION_BASE}
    found = threshold_candidates({"policy": policy, "low": [10], "high": [30]})  # cpu, memory and pods
    assert found[0]["operator_spec"] is None


@pytest.mark.parametrize("search", [
    {"policy": BASE, "low": [10, 20, 40], "high": [30, 50, 70]},
    {"policy": DEVIATION_BASE, "low": [0], "high": [10, 20, 30], "resources": ["MetricResource"]},
    {"policy": {**BASE, "profiles": [{"name": "compact", "pluginConfig": [
        {"name": "HighNodeUtilization", "args": {"thresholds": {"cpu": 20}}}],
        "plugins": {"balance": {"enabled": ["HighNodeUtilization"]}}}]},
     "plugin": "HighNodeUtilization", "low": [10, 20, 30]},
])
def test_the_operator_equivalent_is_a_complete_valid_spec_rendering_the_same_thresholds(
        search: dict[str, Any]) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import render_policy
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
        validate_kubedescheduler_spec,
    )

    plugin = search.get("plugin", "LowNodeUtilization")
    expressible = [c for c in threshold_candidates(search) if c["operator_spec"]]
    assert expressible, "the grid holds operator presets"
    for candidate in expressible:
        spec = candidate["operator_spec"]
        assert {key: spec[key] for key in COMPLETE} == COMPLETE
        findings = validate_kubedescheduler_spec(spec, namespaces=["default"])  # no cluster facts: spec rules
        assert [f for f in findings if f.severity == "error"] == [], (candidate["name"], findings)
        rendered = render_policy(spec, namespaces=["default"])
        args = next(config["args"] for profile in rendered["profiles"] for config in profile["pluginConfig"]
                    if config["name"] == plugin)
        wanted = candidate["policy"]["profiles"][0]["pluginConfig"][0]["args"]
        for key in ("thresholds", "targetThresholds", "useDeviationThresholds"):
            assert args.get(key) == wanted.get(key), (candidate["name"], key)


def test_each_expressible_point_has_its_operator_equivalent_as_a_candidate() -> None:
    searched = threshold_candidates({"policy": BASE, "low": [10, 20], "high": [30, 50]})
    equivalents = operator_candidates(searched)
    assert [(c["name"], c["kind"], c["operator_equivalent_of"]) for c in equivalents] == [
        ("LowNodeUtilization-10-30-operator", "KubeDescheduler", "LowNodeUtilization-10-30"),
        ("LowNodeUtilization-20-50-operator", "KubeDescheduler", "LowNodeUtilization-20-50")]
    assert equivalents[1]["policy"]["profileCustomizations"] == {"devLowNodeUtilizationThresholds": "Medium"}


def test_what_the_preset_adds_is_the_evictions_of_plugins_the_point_does_not_run() -> None:
    equivalent = {"by_plugin": {"LowNodeUtilization": 3, "PodLifeTime": 40, "RemovePodsHavingTooManyRestarts": 2}}
    assert added_evictions(BASE, equivalent) == {"PodLifeTime": 40, "RemovePodsHavingTooManyRestarts": 2}


def test_the_front_leaves_out_points_with_plugin_errors() -> None:
    points = [point("a", 0, 20.0), point("b", 5, 10.0), {**point("c", 1, 1.0), "plugin_errors": 1}]
    assert pareto_front(points, "cpu") == ["a", "b"]
