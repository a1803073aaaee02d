"""The Predictive→Automatic gate: does what the operator logged in Predictive mode agree with the plan?

In Predictive mode the descheduler logs every eviction it would perform ("Evicted pod in dry run mode") and closes
each cycle with its total. Before real evictions are switched on, each logged eviction must be one the plan finds
possible (planned, or seen in one of its sampled cycles), and each compared cycle's total must lie in the plan's
range of evictions per cycle. Pure: the plan (M(descheduler.fleet.plan), ideally with samples) and the parsed log
(M(descheduler.fleet.info)'s ``evictions``) in, the verdict out. The first ``skip_initial_cycles`` cycles after the
operand's container started, and the evictions logged only in them, are not judged (cycles.py says why).

The rollout's ``expected_evictions`` gate asks the same question of a soak in progress (``require_cycle=False``:
no completed cycle yet is no breach; ``check_minimum=False``: a later Automatic cycle finds fewer pods to evict
because the first one evicted them, so only totals above the plan's range count; ``skip_initial_cycles=0``: an
Automatic operand runs on its synced informers, with no sandbox to fill).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.promotion.cycles import (
    CycleChoice,
    choose_cycles,
    judged_evictions,
)


def compare_predictive_log(plan: Mapping[str, Any], log: Mapping[str, Any], *, cycles: Optional[int] = None,
                           max_unexpected: int = 0, count_tolerance: int = 0, require_cycle: bool = True,
                           check_minimum: bool = True, skip_initial_cycles: int = 1) -> dict[str, Any]:
    possible = _possible(plan)
    choice = choose_cycles(log, skip_initial=skip_initial_cycles, last=cycles)
    logged, left_out = judged_evictions(log, choice)
    unexpected = [{"pod": _pod(entry), "strategy": entry.get("strategy"), "node": entry.get("node"),
                   "times_reported": entry.get("times_reported")}
                  for entry in logged if _key(entry) not in possible]
    low, high = _plan_range(plan)
    floor = low - count_tolerance if check_minimum else 0
    for cycle in choice.judged:
        cycle["within"] = floor <= cycle["logged"] <= high + count_tolerance
    reasons = _reasons(unexpected, max_unexpected, choice, low, high, count_tolerance, require_cycle)
    logged_pods = {_key(entry) for entry in logged}
    return {
        "agrees": not reasons,
        "reasons": reasons,
        "unexpected": unexpected,
        "cycles": choice.cycles,
        "plan_range": {"min": low, "max": high},
        "logged_evictions": len(logged),
        "left_out_evictions": left_out,
        "possible_evictions": len(possible),
        "certain_not_logged": sorted(f"{e['namespace']}/{e['name']}" for e in plan.get("evictions") or []
                                     if e.get("certain", True) and (e["namespace"], e["name"]) not in logged_pods),
    }


def _possible(plan: Mapping[str, Any]) -> set[tuple[str, str]]:
    others = ((plan.get("sampling") or {}).get("other_possible_evictions")) or []
    return {(e["namespace"], e["name"]) for e in list(plan.get("evictions") or []) + list(others)}


def _key(entry: Mapping[str, Any]) -> tuple[str, str]:
    if entry.get("namespace") and entry.get("name"):
        return str(entry["namespace"]), str(entry["name"])
    namespace, _separator, name = str(entry.get("pod") or "").partition("/")
    return namespace, name


def _pod(entry: Mapping[str, Any]) -> str:
    return "/".join(_key(entry))


def _plan_range(plan: Mapping[str, Any]) -> tuple[int, int]:
    """Evictions per cycle: the sampled range, else the one planned cycle's total."""
    spread = (plan.get("sampling") or {}).get("evictions_per_cycle") or {}
    total = int((plan.get("summary") or {}).get("total") or 0)
    return int(spread.get("min", total)), int(spread.get("max", total))


def _reasons(unexpected: list[dict], max_unexpected: int, choice: CycleChoice, low: int, high: int,
             tolerance: int, require_cycle: bool) -> list[str]:
    reasons = []
    checked = choice.judged
    if not checked and require_cycle and choice.early_count:
        reasons.append(f"the log holds no completed Predictive cycle to compare after the {choice.early_count} left "
                       "out as the first after the operand started (the descheduler may start them before its dry-run "
                       "copy of the cluster is complete); wait for its next cycle")
    elif not checked and require_cycle:
        reasons.append("the log holds no completed Predictive cycle to compare (the operand has not run a cycle in "
                       "Predictive mode yet, or its log was not read)")
    if len(unexpected) > max_unexpected:
        pods = ", ".join(f"{u['pod']} ({u['strategy']})" for u in unexpected[:10])
        more = f" and {len(unexpected) - 10} more" if len(unexpected) > 10 else ""
        reasons.append(f"{len(unexpected)} logged eviction(s) the plan does not find possible (at most "
                       f"{max_unexpected} allowed): {pods}{more}")
    outside = [c for c in checked if not c["within"]]
    if outside:
        listed = ", ".join(f"cycle {c['index']} ({c['time']}): {c['logged']}" for c in outside)
        reasons.append(f"{len(outside)} cycle(s) logged a total outside the plan's range {low}-{high} "
                       f"(tolerance {tolerance}): {listed}")
    return reasons
