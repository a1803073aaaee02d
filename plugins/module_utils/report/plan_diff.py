"""What changed between two plans of the same cluster (a dry run against the previous run's plan.json): evictions
new, gone and moved to another plugin, and how far the nodes' requested share drifted. Pure, tolerant of a previous
plan of an older format (missing keys count as empty)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_dict, as_list

RESOURCES = ("cpu", "memory")


def diff_plans(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    before = _evictions(previous)
    after = _evictions(current)
    moved = [{"pod": pod, "from": before[pod], "to": after[pod]}
             for pod in sorted(before.keys() & after.keys()) if before[pod] != after[pod]]
    return {
        "previous_now": as_dict(previous).get("now"),
        "evictions_before": len(before),
        "evictions_after": len(after),
        "new": sorted(after.keys() - before.keys()),
        "gone": sorted(before.keys() - after.keys()),
        "moved": moved,
        "utilization_drift": {resource: _drift(previous, current, resource) for resource in RESOURCES},
    }


def _evictions(plan: Mapping[str, Any]) -> dict[str, str]:
    """namespace/name → profile/plugin of each planned eviction."""
    return {f"{e.get('namespace')}/{e.get('name')}": f"{e.get('profile')}/{e.get('plugin')}"
            for e in (as_dict(x) for x in as_list(as_dict(plan).get("evictions")))}


def _drift(previous: Mapping[str, Any], current: Mapping[str, Any], resource: str) -> Optional[dict[str, Any]]:
    """Mean and largest change of the nodes' requested share (percent, before the cycle) over nodes in both."""
    was = _shares(previous, resource)
    now = _shares(current, resource)
    changes = {name: round(now[name] - was[name], 2) for name in was.keys() & now.keys()}
    if not changes:
        return None
    largest = max(sorted(changes), key=lambda name: abs(changes[name]))
    return {"mean": round(sum(changes.values()) / len(changes), 2), "largest": changes[largest],
            "largest_node": largest, "nodes_compared": len(changes)}


def _shares(plan: Mapping[str, Any], resource: str) -> dict[str, float]:
    shares = {}
    for node in as_list(as_dict(as_dict(plan).get("utilization")).get("nodes")):
        value = as_dict(as_dict(node).get("before")).get(resource)
        if isinstance(value, (int, float)):
            shares[str(as_dict(node).get("name"))] = float(value)
    return shares
