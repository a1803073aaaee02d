"""Shared machinery of LowNodeUtilization and HighNodeUtilization (upstream nodeutilization.go), requests-based."""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import EVICTED, PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import UsageUnavailable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    LIMITS,
    NODE_LIMIT,
    evict_or_stop,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.nodeutilization_metrics import (
    UsageReader,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import tolerates_all
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.sampling import DETERMINISTIC, Order

BASIC = ("cpu", "memory", "pods")
METRIC_RESOURCE = "MetricResource"


def resources_for(thresholds: Mapping[str, float]) -> list[str]:
    return list(dict.fromkeys([*thresholds, *BASIC]))


def node_capacity(node: Node, resources: list[str]) -> dict[str, int]:
    """Allocatable (else capacity) in upstream units; upstream also gives every node MetricResource = 100."""
    capacity = {r: scaled(r, node.allocatable[r]) for r in resources if r in node.allocatable}
    if METRIC_RESOURCE in resources and METRIC_RESOURCE not in node.allocatable:
        capacity[METRIC_RESOURCE] = 100
    return capacity


def percentages(usage: Mapping[str, int], capacity: Mapping[str, int]) -> dict[str, float]:
    result = {}
    for resource, used in usage.items():
        if resource not in capacity:
            continue
        cap = capacity[resource]
        result[resource] = float(used) / float(cap) * 100 if cap else 0.0
    return result


def absolute_cap(high: Mapping[str, float], capacity: Mapping[str, int], resources: Iterable[str]) -> dict[str, int]:
    """int64((pct * 0.01) * capacity), truncated; resources without a threshold keep their full capacity."""
    cap = {}
    for resource in resources:
        full = capacity.get(resource, 0)
        cap[resource] = int(high[resource] * 0.01 * full) if resource in high else full
    return cap


def tolerates_some_node(pod: Pod, taints_by_node: list[list[dict]]) -> bool:
    """utils.PodToleratesTaints: tolerate every taint of one node; nodes with more taints than tolerations skipped."""
    for taints in taints_by_node:
        if len(pod.tolerations) >= len(taints):
            if not taints or tolerates_all(pod.tolerations, taints):
                return True
    return False


def may_evict(handle: PluginHandle, pod: Pod, destination_taints: list[list[dict]], excluded: Iterable[str]) -> bool:
    """evictPods' checks before an eviction, in upstream's order: a destination node whose taints the pod tolerates,
    its namespace not excluded, then the pre-eviction filters. A pod that fails one is spared with the reason."""
    if not tolerates_some_node(pod, destination_taints):
        handle.spare(pod, "no destination node whose taints it tolerates")
        return False
    if pod.namespace in excluded:
        handle.spare(pod, "namespace excluded by evictableNamespaces")
        return False
    return handle.pre_evict(pod)


class NodeInfo:
    """One node's usage snapshot; ``cap`` is its absolute target (avail_cap), set once the node is classified."""

    def __init__(self, node: Node, usage: dict[str, int], capacity: dict[str, int], pct: dict[str, float]) -> None:
        self.node = node
        self.usage = usage
        self.capacity = capacity
        self.pct = pct
        self.cap: dict[str, int] = {}


def node_infos(handle: PluginHandle, resources: list[str], reader: Optional[UsageReader] = None) -> list[NodeInfo]:
    """The usage snapshot of every node of the cycle, taken once before classification (requests by default)."""
    reader = reader or UsageReader(handle, resources)
    infos = []
    for node in handle.nodes:
        capacity = node_capacity(node, resources)
        usage = reader.node(node)
        infos.append(NodeInfo(node, usage, capacity, percentages(usage, capacity)))
    return infos


def sort_by_usage(infos: list[NodeInfo], ascending: bool, order: Order = DETERMINISTIC) -> list[NodeInfo]:
    """Order by the raw usage sum (cpu millis + memory bytes + pod count...: memory dominates), as upstream.

    Upstream's sort.Slice (strict comparator) is unstable: a sampled order gives ties where Go's leaves them, the
    deterministic one keeps them in node-name order.
    """
    return order.sort(infos, key=_usage_sum, reverse=not ascending)


def _usage_sum(info: NodeInfo) -> int:
    return sum(info.usage.values())


def evict_from_node(handle: PluginHandle, info: NodeInfo, pods: list[Pod], resources: list[str],
                    available: dict[str, int], destination_taints: list[list[dict]],
                    excluded_namespaces: frozenset, keep_going: Callable[[NodeInfo, dict[str, int]], bool],
                    reason: str, node_limit: Optional[int] = None, reader: Optional[UsageReader] = None) -> bool:
    """The evictPods loop. Returns False when the total limit ends the plugin."""
    reader = reader or UsageReader(handle, resources)
    evicted_here = 0
    if not keep_going(info, available):
        return True
    for pod in pods:
        if node_limit is not None and evicted_here >= node_limit:
            handle.spare(pod, "plugin evictionLimits.node reached")
            break
        if not may_evict(handle, pod, destination_taints, excluded_namespaces):
            continue
        try:
            usage = reader.pod(pod)
        except UsageUnavailable as exc:
            handle.spare(pod, f"no actual usage for the pod, upstream skips it: {exc}")
            continue
        result = evict_or_stop(handle, pod, reason)
        if result in LIMITS:
            return result == NODE_LIMIT  # a node limit: next node; the total limit ends the plugin
        if result != EVICTED:
            continue
        if usage is None:
            # the source can't say what the pod frees (Prometheus): one eviction per node, or up to the node limit
            if node_limit is None:
                break
            evicted_here += 1
            continue
        evicted_here += 1
        for resource in resources:
            info.usage[resource] = info.usage.get(resource, 0) - usage.get(resource, 0)
            available[resource] = available.get(resource, 0) - usage.get(resource, 0)
        if not keep_going(info, available):
            break
    return True


def all_available(available: Mapping[str, int]) -> bool:
    return all(amount > 0 for amount in available.values())


def fmt_pct(value: float) -> str:
    """A percentage to one decimal at most: 80 → "80%", 88.888 → "88.9%"."""
    text = f"{value:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"
