"""Requests per node before and after a cycle, as a plan's utilization reports them: CPU in millis, memory in
bytes and the pod count of the live (non-terminal) pods of each node of the snapshot."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import CycleState
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

Totals = tuple[int, int, int]  # cpu and memory requests in the quantity unit, and pods


def totals_before(snapshot: Snapshot) -> dict[str, Totals]:
    """Each node's totals before any eviction: one pass over every pod."""
    totals: dict[str, Totals] = {}
    for name in snapshot.nodes:
        cpu = memory = pods = 0
        for pod in snapshot.pods_by_node.get(name, ()):
            if not pod.terminal:
                cpu += pod.requests.get("cpu", 0)
                memory += pod.requests.get("memory", 0)
                pods += 1
        totals[name] = (cpu, memory, pods)
    return totals


def requested(totals: dict[str, Totals]) -> dict[str, dict[str, int]]:
    """The totals in the units the plan reports (CPU millis, memory bytes, pods)."""
    return {name: {"cpu": scaled("cpu", cpu), "memory": scaled("memory", memory), "pods": pods}
            for name, (cpu, memory, pods) in totals.items()}


def requested_after(snapshot: Snapshot, state: CycleState) -> dict[str, dict[str, int]]:
    """Once the cycle's evictions are gone: the cycle's own count of live requests per node, which each eviction
    updated (framework.PluginHandle.evict), so no pod is visited again."""
    used, count = state.usage.used, state.usage.count
    nothing: dict[str, int] = {}
    return requested({name: (used.get(name, nothing).get("cpu", 0), used.get(name, nothing).get("memory", 0),
                             count.get(name, 0)) for name in snapshot.nodes})
