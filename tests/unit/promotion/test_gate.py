"""The Predictive gate on a real plan (compute_plan with sampled cycles) and a real parsed log (the klog lines the
descheduler writes in Predictive mode, parsed by the info module's parser)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import parse_descheduler_log
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind
from ansible_collections.descheduler.fleet.plugins.module_utils.promotion.gate import compare_predictive_log

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
SPEC = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
        "profiles": ["LifecycleAndUtilization", "TopologyAndDuplicates"]}


def plan() -> dict[str, Any]:
    return compute_plan_for_kind(build_cluster(10, 10, seed=4, now=NOW), SPEC, NOW, policy_kind="KubeDescheduler",
                                 samples=8, seed=1)


def log_of(evictions: list[dict[str, Any]], total: int | None = None) -> dict[str, Any]:
    lines = [f'I1122 11:00:{index % 60:02d}.000001       1 evictions.go:607] "Evicted pod in dry run mode" '
             f'pod="{e["namespace"]}/{e["name"]}" reason="" strategy="{e["plugin"]}" node="{e["node"]}"'
             for index, e in enumerate(evictions)]
    lines.append('I1122 11:01:00.000001       1 descheduler.go:252] "Number of evictions/requests" '
                 f'totalEvicted={len(evictions) if total is None else total} evictionRequests=0')
    return parse_descheduler_log("\n".join(lines))


def test_the_logged_cycle_of_the_plan_agrees() -> None:
    planned = plan()
    assert planned["evictions"], "a cluster where the configuration evicts"
    verdict = compare_predictive_log(planned, log_of(planned["evictions"]))
    assert verdict["agrees"] is True, verdict["reasons"]
    assert verdict["unexpected"] == [] and verdict["certain_not_logged"] == []


def test_a_pod_the_plan_does_not_find_possible_is_named() -> None:
    planned = plan()
    stranger = {"namespace": "payments", "name": "ledger-0", "plugin": "RemoveDuplicates", "node": "node-00001"}
    verdict = compare_predictive_log(planned, log_of([*planned["evictions"], stranger],
                                                     total=len(planned["evictions"])))
    assert verdict["agrees"] is False
    assert verdict["unexpected"] == [{"pod": "payments/ledger-0", "strategy": "RemoveDuplicates",
                                      "node": "node-00001", "times_reported": 1}]
    assert compare_predictive_log(planned, log_of([*planned["evictions"], stranger],
                                                  total=len(planned["evictions"])), max_unexpected=1)["agrees"]


def test_a_cycle_total_outside_the_plans_range_disagrees_beyond_the_tolerance() -> None:
    planned = plan()
    high = planned["sampling"]["evictions_per_cycle"]["max"]
    verdict = compare_predictive_log(planned, log_of(planned["evictions"], total=high + 2))
    assert verdict["agrees"] is False
    assert f"outside the plan's range {planned['sampling']['evictions_per_cycle']['min']}-{high}" in \
        verdict["reasons"][0]
    assert compare_predictive_log(planned, log_of(planned["evictions"], total=high + 2), count_tolerance=2)["agrees"]


def test_a_log_without_a_completed_cycle_never_agrees() -> None:
    verdict = compare_predictive_log(plan(), parse_descheduler_log(""))
    assert verdict["agrees"] is False
    assert verdict["reasons"][0].startswith("the log holds no completed Predictive cycle")


def test_during_a_soak_no_cycle_yet_and_a_smaller_cycle_agree() -> None:
    """The rollout's expected evictions gate: a soak before the first cycle ends, or an Automatic cycle that finds
    fewer pods left to evict, is no disagreement; a total above the plan's range still is."""
    planned = plan()
    soak = {"require_cycle": False, "check_minimum": False}
    assert compare_predictive_log(planned, parse_descheduler_log(""), **soak)["agrees"] is True
    assert compare_predictive_log(planned, log_of(planned["evictions"][:1], total=0), **soak)["agrees"] is True
    high = planned["sampling"]["evictions_per_cycle"]["max"]
    assert compare_predictive_log(planned, log_of(planned["evictions"], total=high + 1), **soak)["agrees"] is False
