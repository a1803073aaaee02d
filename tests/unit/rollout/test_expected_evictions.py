"""The expected evictions gate's pure parts: its option (plan files read and checked before anything changes) and
its verdict on a real plan (compute_plan with sampled cycles) and the klog lines the descheduler writes."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.expected_evictions import (
    ExpectedEvictions,
    log_since,
    unexpected_eviction_breaches,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import rollout_options

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
SPEC = {"mode": "Automatic", "deschedulingIntervalSeconds": 3600,
        "profiles": ["LifecycleAndUtilization", "TopologyAndDuplicates"]}


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    planned = compute_plan_for_kind(build_cluster(10, 10, seed=4, now=NOW), SPEC, NOW, policy_kind="KubeDescheduler",
                                    samples=8, seed=1)
    assert planned["evictions"], "a cluster where the configuration evicts"
    return {**planned, "cluster": "east"}


def klog(evictions: list[dict[str, Any]], total: int | None = None) -> list[str]:
    """Real (not dry-run) evictions, then the line closing the cycle when ``total`` is given."""
    lines = [f'I1122 11:00:{index % 60:02d}.000001       1 evictions.go:607] "Evicted pod" '
             f'pod="{e["namespace"]}/{e["name"]}" reason="" strategy="{e["plugin"]}" node="{e["node"]}"'
             for index, e in enumerate(evictions)]
    if total is not None:
        lines.append(f'I1122 11:01:00.000001       1 descheduler.go:252] "Number of evictions/requests" '
                     f'totalEvicted={total} evictionRequests=0')
    return lines


def options_with(gate: dict[str, Any]) -> ExpectedEvictions:
    return rollout_options({"gates": {"expected_evictions": gate}}).gates.expected_evictions


def write(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return str(path)


def test_the_plans_own_evictions_pass_even_before_a_cycle_ends(plan: dict[str, Any]) -> None:
    gate = ExpectedEvictions(plans={"east": plan})
    assert unexpected_eviction_breaches(plan, klog(plan["evictions"]), gate) == []
    assert unexpected_eviction_breaches(plan, klog(plan["evictions"], total=len(plan["evictions"])), gate) == []
    assert unexpected_eviction_breaches(plan, [], gate) == []


def test_a_pod_the_plan_never_evicts_is_named(plan: dict[str, Any]) -> None:
    stranger = {"namespace": "payments", "name": "ledger-0", "plugin": "RemoveDuplicates", "node": "node-00001"}
    breaches = unexpected_eviction_breaches(plan, klog([stranger]), ExpectedEvictions())
    assert len(breaches) == 1
    assert "payments/ledger-0 (RemoveDuplicates)" in breaches[0] and "at most 0 allowed" in breaches[0]
    assert unexpected_eviction_breaches(plan, klog([stranger]), ExpectedEvictions(max_unexpected=1)) == []


def test_a_cycle_total_beyond_the_plan_and_its_tolerance_breaches(plan: dict[str, Any]) -> None:
    high = plan["sampling"]["evictions_per_cycle"]["max"]
    breaches = unexpected_eviction_breaches(plan, klog(plan["evictions"], total=high + 2), ExpectedEvictions())
    assert len(breaches) == 1 and f"range {plan['sampling']['evictions_per_cycle']['min']}-{high}" in breaches[0]
    assert unexpected_eviction_breaches(plan, klog(plan["evictions"], total=high + 2),
                                        ExpectedEvictions(count_tolerance=2)) == []


def test_the_option_reads_each_plan_file(tmp_path: Path, plan: dict[str, Any]) -> None:
    gate = options_with({"plans": {"east": write(tmp_path, plan)}, "count_tolerance": 1})
    assert gate.plans["east"]["evictions"] == plan["evictions"] and gate.count_tolerance == 1
    assert rollout_options({}).gates.expected_evictions.plans == {}


def test_a_missing_plan_file_names_field_value_and_fix(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere.json")
    with pytest.raises(RolloutError) as raised:
        options_with({"plans": {"east": missing}})
    assert raised.value.field == "gates.expected_evictions.plans.east" and raised.value.value == missing
    assert "does not exist" in str(raised.value) and "dry_run role" in str(raised.value)


def test_the_plan_of_another_cluster_is_refused(tmp_path: Path, plan: dict[str, Any]) -> None:
    path = write(tmp_path, plan)
    with pytest.raises(RolloutError) as raised:
        options_with({"plans": {"west": path}})
    assert raised.value.field == "gates.expected_evictions.plans.west"
    assert "plan of cluster 'east', not 'west'" in str(raised.value)


@pytest.mark.parametrize(("gate", "field"), [({"plans": ["east"]}, "gates.expected_evictions.plans"),
                                             ({"max_unexpected": -1}, "gates.expected_evictions.max_unexpected"),
                                             ({"count_tolerance": "2"}, "gates.expected_evictions.count_tolerance")])
def test_bad_option_names_its_field(gate: dict[str, Any], field: str) -> None:
    with pytest.raises(RolloutError) as raised:
        options_with(gate)
    assert raised.value.field == field


def test_a_file_without_evictions_is_no_plan(tmp_path: Path) -> None:
    with pytest.raises(RolloutError, match="no 'evictions' list"):
        options_with({"plans": {"east": write(tmp_path, {"cluster": "east"})}})


def test_log_since_is_the_pod_log_apis_rfc3339_time() -> None:
    assert log_since(datetime(2026, 11, 26, 21, 5, 7, 900000, tzinfo=UTC)) == "2026-11-26T21:05:07Z"
