"""How far a plan reaches: its share of the cluster's pods and nodes, and the eviction limits that held it back.

A limit counts as reached when the plan's summary.limits.hit says so or when pods were spared because of it: the
engine spares such a pod with the reason "<scope> eviction limit reached" (engine/framework.py, PluginHandle.evict).
Pure stdlib, tolerant of missing keys like the rest of the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import percent
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_bool,
    as_count,
    as_dict,
    as_number,
    as_text_list,
)

# (scope, policy field, what the limit is counted on), in the order the engine checks them
LIMITS = (("total", "maxNoOfPodsToEvictTotal", ""), ("node", "maxNoOfPodsToEvictPerNode", "node"),
          ("namespace", "maxNoOfPodsToEvictPerNamespace", "namespace"))
SPARED_REASON = "{scope} eviction limit reached"
LARGE_SHARE = 0.25  # evicting a quarter of the cluster's pods or more is flagged
NAMES_SHOWN = 5


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def name_list(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return f"{shown} and {len(names) - NAMES_SHOWN:,} more" if len(names) > NAMES_SHOWN else shown


@dataclass
class LimitReached:
    name: str  # the policy field, e.g. maxNoOfPodsToEvictPerNode
    value: Optional[int]  # as configured
    spared: int  # distinct pods the limit spared (and no later plugin evicted)
    unit: str = ""  # node | namespace: what the limit is counted on
    where: list[str] = field(default_factory=list)  # the nodes or namespaces it was reached on

    def describe(self) -> str:
        limit = self.name if self.value is None else f"{self.name} {self.value}"
        place = f" on {plural(len(self.where), self.unit)} ({name_list(self.where)})" if self.where else ""
        return f"{limit} reached{place}: {plural(self.spared, 'pod')} spared"


def limits_reached(limits: Any, spared_by_reason: Any) -> list[LimitReached]:
    """The limits that were hit or spared pods, from summary.limits and spared.by_reason."""
    limits, spared_by_reason = as_dict(limits), as_dict(spared_by_reason)
    hit = as_dict(limits.get("hit"))
    reached = []
    for scope, name, unit in LIMITS:
        spared = _spared_count(spared_by_reason.get(SPARED_REASON.format(scope=scope)))
        where = as_text_list(hit.get(scope)) if unit else []
        flagged = bool(where) if unit else as_bool(hit.get(scope))
        if spared or flagged:
            value = as_number(limits.get(name))
            reached.append(LimitReached(name, None if value is None else int(value), spared, unit, where))
    return reached


def _spared_count(detail: Any) -> int:
    return as_count(detail.get("count")) if isinstance(detail, dict) else as_count(detail)


def limits_text(configured: dict[str, int], reached: list[LimitReached]) -> str:
    """Each limit reached with the pods it spared, then the configured ones not reached; "no limit reached" only
    when no limit spared a pod."""
    if not reached:
        listed = ", ".join(f"{name} {value}" for name, value in configured.items())
        return f"{listed}; no limit reached" if listed else "none configured"
    names = {limit.name for limit in reached}
    idle = [f"{name} {value} not reached" for name, value in configured.items() if name not in names]
    return "; ".join([limit.describe() for limit in reached] + idle)


@dataclass
class Scale:
    evictions: int
    pods: int  # in the cluster's snapshot; 0 when the plan does not say
    nodes_touched: int  # nodes the plan evicts from
    nodes: int  # in the cluster; 0 when the plan does not say

    @property
    def share(self) -> Optional[float]:
        return self.evictions / self.pods if self.pods else None

    @property
    def large(self) -> bool:
        return self.evictions > 0 and self.share is not None and self.share >= LARGE_SHARE

    def describe(self) -> str:
        """E.g. "412 evictions = 22.9% of 1,800 pods, on 40 of 60 nodes"."""
        text = plural(self.evictions, "eviction")
        if self.share is not None:
            text += f" = {percent(self.share * 100)} of {plural(self.pods, 'pod')}"
        if self.nodes:
            return f"{text}, on {self.nodes_touched:,} of {plural(self.nodes, 'node')}"
        return f"{text}, on {plural(self.nodes_touched, 'node')}"

    def warning(self) -> str:
        share = percent((self.share or 0.0) * 100)
        return (f"this plan evicts {share} of the cluster's pods ({self.evictions:,} of {self.pods:,}), a quarter or "
                "more: check it, and the eviction limits, before running it.")


def plan_scale(evictions: int, snapshot: dict[str, int], by_node: dict[str, int], known_nodes: int) -> Scale:
    touched = sum(1 for count in by_node.values() if count > 0)
    return Scale(evictions, snapshot.get("pods", 0), touched, snapshot.get("nodes", 0) or known_nodes)
