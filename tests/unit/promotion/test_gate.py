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


STARTED = "2026-11-22T10:59:00Z"  # the operand's container start, as the info module adds it to the parsed log


def cycle_lines(evictions: list[dict[str, Any]], total: int | None, minute: int, day: str = "1122") -> list[str]:
    """One Predictive cycle as the descheduler logs it, closing at 11:<minute>:59 on <day>."""
    lines = [f'I{day} 11:{minute:02d}:{index % 59:02d}.000001       1 evictions.go:607] "Evicted pod in dry run mode" '
             f'pod="{e["namespace"]}/{e["name"]}" reason="" strategy="{e["plugin"]}" node="{e["node"]}"'
             for index, e in enumerate(evictions)]
    lines.append(f'I{day} 11:{minute:02d}:59.000001       1 descheduler.go:252] "Number of evictions/requests" '
                 f'totalEvicted={len(evictions) if total is None else total} evictionRequests=0')
    return lines


def log_of(evictions: list[dict[str, Any]], total: int | None = None, *,
           first: list[dict[str, Any]] | None = None, started: str | None = STARTED) -> dict[str, Any]:
    """The log since the operand started: its first cycle (``first``: what it found on a partial view, by default
    nothing), then a cycle logging ``evictions``."""
    lines = cycle_lines(first or [], None, 0) + cycle_lines(evictions, total, 1)
    return {**parse_descheduler_log("\n".join(lines)), "container_started": started}


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
    verdict = compare_predictive_log(plan(), {**parse_descheduler_log(""), "container_started": STARTED})
    assert verdict["agrees"] is False
    assert verdict["reasons"][0].startswith("the log holds no completed Predictive cycle")


def test_during_a_soak_no_cycle_yet_and_a_smaller_cycle_agree() -> None:
    """The rollout's expected evictions gate: a soak before the first cycle ends, or an Automatic cycle that finds
    fewer pods left to evict, is no disagreement; a total above the plan's range still is."""
    planned = plan()
    soak = {"require_cycle": False, "check_minimum": False, "skip_initial_cycles": 0}
    assert compare_predictive_log(planned, parse_descheduler_log(""), **soak)["agrees"] is True
    assert compare_predictive_log(planned, log_of(planned["evictions"][:1], total=0), **soak)["agrees"] is True
    high = planned["sampling"]["evictions_per_cycle"]["max"]
    assert compare_predictive_log(planned, log_of(planned["evictions"], total=high + 1), **soak)["agrees"] is False


def test_the_first_cycle_after_the_start_is_left_out_with_what_it_logged_alone() -> None:
    """#47: on a large cluster the first dry-run cycle runs on part of the pods (fewer evictions, and others); the
    gate judges the cycles after it and says which it used and why."""
    planned = plan()
    stranger = {"namespace": "payments", "name": "ledger-0", "plugin": "RemoveDuplicates", "node": "node-00001"}
    log = log_of(planned["evictions"], first=[planned["evictions"][0], stranger])
    verdict = compare_predictive_log(planned, log)
    assert verdict["agrees"] is True, verdict["reasons"]
    assert verdict["unexpected"] == [] and verdict["left_out_evictions"] == 1
    first, second = verdict["cycles"]
    assert (first["index"], first["logged"], first["used"], first["within"]) == (1, 2, False, None)
    assert first["why"].startswith(f"left out: the 1st cycle since the operand's container started ({STARTED})")
    assert (second["index"], second["used"], second["within"]) == (2, True, True)
    assert second["why"] == f"compared: the 2nd cycle since the operand's container started ({STARTED})"

    judged_all = compare_predictive_log(planned, log, skip_initial_cycles=0)
    assert judged_all["agrees"] is False
    assert [u["pod"] for u in judged_all["unexpected"]] == ["payments/ledger-0"]
    assert "cycle 1 (1122 11:00:59.000001): 2" in judged_all["reasons"][-1]


def test_only_the_first_cycle_logged_is_not_enough() -> None:
    planned = plan()
    log = {**parse_descheduler_log("\n".join(cycle_lines(planned["evictions"], None, 0))), "container_started": STARTED}
    verdict = compare_predictive_log(planned, log)
    assert verdict["agrees"] is False
    assert verdict["reasons"] == ["the log holds no completed Predictive cycle to compare after the 1 left out as the "
                                  "first after the operand started (the descheduler may start them before its dry-run "
                                  "copy of the cluster is complete); wait for its next cycle"]


def test_a_restart_starts_the_count_again_and_cycles_before_it_are_an_earlier_runs() -> None:
    """A log holding an earlier run's cycle (closing before the container started), then the new run's two."""
    planned = plan()
    lines = (cycle_lines(planned["evictions"], 999, 0) + cycle_lines([], None, 2)
             + cycle_lines(planned["evictions"], None, 3))
    log = {**parse_descheduler_log("\n".join(lines)), "container_started": "2026-11-22T11:01:30Z"}
    verdict = compare_predictive_log(planned, log)
    assert verdict["agrees"] is True, verdict["reasons"]
    assert [(c["index"], c["used"]) for c in verdict["cycles"]] == [(1, False), (2, False), (3, True)]
    assert "in an earlier run of the operand" in verdict["cycles"][0]["why"]
    assert "the 1st cycle since" in verdict["cycles"][1]["why"]


def test_a_log_across_new_year_counts_from_the_start_of_december() -> None:
    planned = plan()
    lines = cycle_lines([], None, 0, day="1231") + cycle_lines(planned["evictions"], None, 0, day="0101")
    log = {**parse_descheduler_log("\n".join(lines)), "container_started": "2026-12-31T10:00:00Z"}
    verdict = compare_predictive_log(planned, log)
    assert verdict["agrees"] is True, verdict["reasons"]
    assert [c["used"] for c in verdict["cycles"]] == [False, True]


def test_without_the_start_time_the_cycles_are_counted_from_the_log() -> None:
    planned = plan()
    verdict = compare_predictive_log(planned, log_of(planned["evictions"], started=None))
    assert verdict["agrees"] is True, verdict["reasons"]
    assert "since the log's first cycle (the container's start time is not known)" in verdict["cycles"][0]["why"]


def test_the_cycles_option_compares_the_last_ones_of_those_not_left_out() -> None:
    planned = plan()
    lines = (cycle_lines([], None, 0) + cycle_lines(planned["evictions"], 999, 1)
             + cycle_lines(planned["evictions"], None, 2))
    log = {**parse_descheduler_log("\n".join(lines)), "container_started": STARTED}
    verdict = compare_predictive_log(planned, log, cycles=1)
    assert verdict["agrees"] is True, verdict["reasons"]
    assert [c["used"] for c in verdict["cycles"]] == [False, False, True]
    assert verdict["cycles"][1]["why"] == "left out: older than the last 1 cycle(s) compared (the cycles option)"
    assert compare_predictive_log(planned, log, cycles=2)["agrees"] is False
