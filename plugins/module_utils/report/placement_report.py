"""The "where the evicted pods land" section of a plan report (plan option ``placement``): the verdict, each
replacement's node, and per node the three utilization states - before, after the evictions, after placement.

Reads the plan's ``placement`` block, each eviction's ``placement`` and the utilization nodes'
``after_placement`` (docs/plan-format.md); a plan without them renders nothing. Tolerates missing keys. The templates
plan_placement.html and .md lay it out.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import number, percent
from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import (
    PLACEMENT_STATES,
    PlacementChart,
    placement_chart,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_dict, dicts_in

INTRO = ("Each evicted pod's replacement is scheduled in eviction order with the kube-scheduler's filters and scores "
         "(the profile its schedulerName names); a node with the best score wins, and when several tie the scheduler "
         "picks one of them at random.")
CHART_LIMIT = 40
CHART_LABEL = "Requests as a percentage of allocatable: before, after the evictions and after placement"


def _rows(plan: dict) -> list[tuple]:
    rows = []
    for eviction in dicts_in(plan.get("evictions")):
        placed = as_dict(eviction.get("placement"))
        if not placed:
            continue
        namespace = eviction.get("namespace") or ""
        pod = f"{namespace}/{eviction.get('name', '')}" if namespace else str(eviction.get("name", ""))
        tied = [str(n) for n in placed.get("tied_nodes") or []]
        rows.append((pod, str(eviction.get("node") or ""), str(placed.get("node") or "—"),
                     "yes" if placed.get("same_node") else "no", ", ".join(tied[:5]) + (" …" if len(tied) > 5 else ""),
                     str(placed.get("outcome") or ""), str(placed.get("reason") or "")))
    return rows


HEADERS = ("Pod", "Evicted from", "Lands on", "Same node", "Tied best nodes", "Outcome", "Why")


def _spread_rows(verdict: dict) -> list[tuple]:
    spread = as_dict(verdict.get("spread"))
    rows = []
    for resource in ("cpu", "memory", "pods"):
        cells = []
        for state in ("before", "after_evictions", "after_placement"):
            values = as_dict(as_dict(spread.get(state)).get(resource))
            stddev, width = values.get("stddev"), values.get("range")
            cells.append("—" if stddev is None else f"σ {number(stddev)} · range {number(width)}")
        rows.append((resource, *cells))
    return rows


SPREAD_HEADERS = ("Resource", "Before", "After evictions", "After placement")


def _facts(verdict: dict) -> list[str]:
    improved = as_dict(as_dict(verdict.get("spread")).get("improved"))
    better = [r for r, yes in improved.items() if yes]
    return [f"{verdict.get('placed', 0)} of {verdict.get('evictions', 0)} replacements placed",
            f"{verdict.get('same_node', 0)} come back to the node they were evicted from",
            f"{verdict.get('unplaced', 0)} cannot be placed, {verdict.get('not_replaced', 0)} are not recreated",
            f"{verdict.get('ties', 0)} land on one of several equally good nodes",
            "utilization spread improves for " + (", ".join(better) if better else "no resource")]


def _changed_nodes(plan: dict) -> list[dict]:
    nodes = dicts_in(as_dict(plan.get("utilization")).get("nodes"))
    return [n for n in nodes if any(as_dict(n.get("before")).get(r) != as_dict(n.get("after_placement")).get(r)
                                    for r in ("cpu", "memory"))]


def section(plan: Any) -> Optional[dict[str, Any]]:
    """What the placement templates show, or None for a plan without the placement option."""
    verdict = as_dict(plan.get("placement")) if isinstance(plan, dict) else {}
    if not verdict:
        return None
    changed = _changed_nodes(plan)
    nodes = [(n.get("name", ""), *(" → ".join(percent(as_dict(n.get(k)).get(r)) for k in PLACEMENT_STATES)
                                   for r in ("cpu", "memory")))
             for n in changed]
    chart: PlacementChart = placement_chart(changed[:CHART_LIMIT], ("cpu", "memory"), CHART_LABEL)
    return {"intro": INTRO, "verdict": verdict, "facts": _facts(verdict), "spread_headers": SPREAD_HEADERS,
            "spread_rows": _spread_rows(verdict), "headers": HEADERS, "rows": _rows(plan), "markdown_nodes": nodes,
            "chart": chart, "more_nodes": len(changed) - CHART_LIMIT}
