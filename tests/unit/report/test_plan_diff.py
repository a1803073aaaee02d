"""What changed between two plans of one cluster, on real plans (compute_plan) of a cluster before and after a
change."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_diff import diff_plans

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
SPEC = {"deschedulingIntervalSeconds": 3600, "profiles": ["LifecycleAndUtilization", "TopologyAndDuplicates"]}


def test_the_same_plan_changes_nothing() -> None:
    plan = compute_plan_for_kind(build_cluster(8, 8, seed=2, now=NOW), SPEC, NOW, policy_kind="KubeDescheduler")
    changes = diff_plans(plan, copy.deepcopy(plan))
    assert (changes["new"], changes["gone"], changes["moved"]) == ([], [], [])
    assert changes["utilization_drift"]["cpu"]["mean"] == 0 and changes["utilization_drift"]["cpu"]["largest"] == 0


def test_new_gone_and_moved_evictions_and_drift_are_named() -> None:
    objects = build_cluster(8, 8, seed=2, now=NOW)
    before = compute_plan_for_kind(objects, SPEC, NOW, policy_kind="KubeDescheduler")
    assert len(before["evictions"]) >= 2, "a cluster where the configuration evicts"
    after = copy.deepcopy(before)
    gone = after["evictions"].pop(0)
    after["evictions"][0]["plugin"] = "SomeOtherPlugin"
    after["evictions"].append({**gone, "name": "brand-new-pod"})
    after["utilization"]["nodes"][0]["before"]["cpu"] += 10
    changes = diff_plans(before, after)
    assert changes["gone"] == [f"{gone['namespace']}/{gone['name']}"]
    assert changes["new"] == [f"{gone['namespace']}/brand-new-pod"]
    moved = after["evictions"][0]
    assert changes["moved"] == [{"pod": f"{moved['namespace']}/{moved['name']}",
                                 "from": f"{moved['profile']}/{before['evictions'][1]['plugin']}",
                                 "to": f"{moved['profile']}/SomeOtherPlugin"}]
    drift = changes["utilization_drift"]["cpu"]
    assert drift["largest"] == 10 and drift["largest_node"] == after["utilization"]["nodes"][0]["name"]


def test_a_previous_plan_of_an_older_format_is_read_as_empty() -> None:
    plan = compute_plan_for_kind(build_cluster(4, 4, seed=1, now=NOW), SPEC, NOW, policy_kind="KubeDescheduler")
    changes = diff_plans({"format_version": 0}, plan)
    assert changes["gone"] == [] and len(changes["new"]) == len(plan["evictions"])
    assert changes["utilization_drift"] == {"cpu": None, "memory": None}
