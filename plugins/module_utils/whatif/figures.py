"""The figures a team compares candidate policies by, read from each candidate's plan (docs/plan-format.md).

Pure: a plan in, a flat dict out, so the same figures come from a what-if run and from a separate ``plan`` run of
the same candidate (the tests compare both). Spread is the population standard deviation of the nodes' requested
share (percent) over schedulable nodes, as the plan's placement preview computes it.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import spread

SPREAD_RESOURCES = ("cpu", "memory")
PDB_REASON_MARK = "PodDisruptionBudget"
SPREAD_STATES = ("before", "after_evictions", "after_placement")
# The fields of a candidate's entry (RV(candidates) of the whatif module documents each): what an objective's
# expression may name. by_plugin, by_namespace and by_owner are maps whose keys are the cluster's own names.
DOCUMENTED_FIGURES = ("name", "evictions", "by_plugin", "by_namespace", "by_owner", "workloads_touched",
                      "most_pods_one_workload_loses", "vms_to_migrate", "spared_by_pdb", "certain", "possible",
                      "likely", "spread", "unplaced", "cycle_skipped", "plugin_errors", "warnings", "thresholds",
                      "operator_equivalent_of")
OPEN_MAPS = ("by_plugin", "by_namespace", "by_owner")
NESTED_FIGURES = (*SPREAD_STATES, *SPREAD_RESOURCES, "low", "high", "resources")


def candidate_figures(plan: Mapping[str, Any]) -> dict[str, Any]:
    """What one candidate would do to one cluster."""
    summary = plan.get("summary") or {}
    by_owner: Mapping[str, int] = summary.get("by_owner") or {}
    sampling = plan.get("sampling") or {}
    placement = plan.get("placement")
    return {
        "evictions": int(summary.get("total") or 0),
        "by_plugin": dict(summary.get("by_plugin") or {}),
        "by_namespace": dict(summary.get("by_namespace") or {}),
        "by_owner": dict(by_owner),
        "workloads_touched": len(by_owner),
        "most_pods_one_workload_loses": max(by_owner.values(), default=0),
        "vms_to_migrate": int(summary.get("vms_to_migrate") or 0),
        "spared_by_pdb": _spared_by_pdb(plan.get("spared") or {}),
        "certain": sampling.get("certain"),
        "possible": sampling.get("possible"),
        "likely": sampling.get("likely"),
        "spread": _spread(plan, placement),
        "unplaced": None if placement is None else int(placement.get("unplaced") or 0),
        "cycle_skipped": bool((plan.get("cycle") or {}).get("skipped")),
        "plugin_errors": len(plan.get("errors") or []),
    }


def _spared_by_pdb(spared: Mapping[str, Any]) -> int:
    return sum(int((detail or {}).get("count") or 0) for reason, detail in (spared.get("by_reason") or {}).items()
               if PDB_REASON_MARK in reason)


def _spread(plan: Mapping[str, Any], placement: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """stddev per resource before the cycle, after the evictions and (with placement) after the replacements land."""
    if placement is not None and placement.get("spread"):
        measured = placement["spread"]
        states = {"before": measured.get("before"), "after_evictions": measured.get("after_evictions"),
                  "after_placement": measured.get("after_placement")}
    else:
        nodes = [n for n in (plan.get("utilization") or {}).get("nodes") or [] if not n.get("unschedulable")]
        states = {"before": spread(nodes, "before"), "after_evictions": spread(nodes, "after"),
                  "after_placement": None}
    return {state: None if measured is None else {r: (measured.get(r) or {}).get("stddev") for r in SPREAD_RESOURCES}
            for state, measured in states.items()}


def exclusion_reasons(figures: Mapping[str, Any]) -> list[str]:
    """Why a candidate cannot be the answer to any objective (empty when it can): a skipped cycle evicts nothing and
    a plugin error leaves the cycle's figures partial. (Unplaced replacements rank a candidate, objective.py.)"""
    reasons = []
    if figures.get("cycle_skipped"):
        reasons.append("its cycle is skipped")
    if figures.get("plugin_errors"):
        reasons.append(f"{figures['plugin_errors']} plugin error(s)")
    return reasons


def final_spread(figures: Mapping[str, Any], resource: str) -> Optional[float]:
    """The spread the cluster ends with: after placement when previewed, else after the evictions."""
    spread_figures = figures["spread"]
    final = spread_figures.get("after_placement") or spread_figures.get("after_evictions") or {}
    return final.get(resource)
