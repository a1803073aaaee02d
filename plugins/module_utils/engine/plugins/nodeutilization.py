"""Shared machinery of LowNodeUtilization and HighNodeUtilization (upstream nodeutilization.go), requests-based."""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import EVICTED, PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import tolerates_all
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled

BASIC = ("cpu", "memory", "pods")
METRIC_RESOURCE = "MetricResource"


def resources_for(thresholds: Mapping[str, float]) -> list[str]:
    return list(dict.fromkeys([*thresholds, *BASIC]))


def node_usage(handle: PluginHandle, node: Node, resources: Iterable[str]) -> dict[str, int]:
    """Requests of the node's live non-terminal pods, in upstream units (cpu millis, others Value())."""
    totals = handle.state.usage.used.get(node.name, {})
    usage = {r: scaled(r, totals.get(r, 0)) for r in resources if r != "pods"}
    usage["pods"] = handle.state.usage.count.get(node.name, 0)
    return usage


def node_capacity(node: Node, resources: Iterable[str]) -> dict[str, int]:
    return {r: scaled(r, node.allocatable[r]) for r in resources if r in node.allocatable}


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


def pod_usage(pod: Pod, resources: Iterable[str]) -> dict[str, int]:
    usage = {r: scaled(r, pod.requests.get(r, 0)) for r in resources if r != "pods"}
    usage["pods"] = 1
    return usage


def tolerates_some_node(pod: Pod, taints_by_node: list[list[dict]]) -> bool:
    """utils.PodToleratesTaints: tolerate every taint of one node; nodes with more taints than tolerations skipped."""
    for taints in taints_by_node:
        if len(pod.tolerations) >= len(taints):
            if not taints or tolerates_all(pod.tolerations, taints):
                return True
    return False


class NodeInfo:
    def __init__(self, node: Node, usage: dict[str, int], capacity: dict[str, int], pct: dict[str, float]) -> None:
        self.node = node
        self.usage = usage
        self.capacity = capacity
        self.pct = pct
        self.cap: dict[str, int] = {}
        self.high: dict[str, float] = {}


def evict_from_node(handle: PluginHandle, info: NodeInfo, pods: list[Pod], resources: list[str],
                    available: dict[str, int], destination_taints: list[list[dict]],
                    excluded_namespaces: frozenset, keep_going: Callable[[NodeInfo, dict[str, int]], bool],
                    reason: str, node_limit: Optional[int] = None) -> bool:
    """The evictPods loop. Returns False when the total limit ends the plugin."""
    evicted_here = 0
    if not keep_going(info, available):
        return True
    for pod in pods:
        if node_limit is not None and evicted_here >= node_limit:
            handle.spare(pod, "plugin evictionLimits.node reached")
            break
        if not tolerates_some_node(pod, destination_taints):
            handle.spare(pod, "no destination node whose taints it tolerates")
            continue
        if pod.namespace in excluded_namespaces:
            handle.spare(pod, "namespace excluded by evictableNamespaces")
            continue
        if not handle.pre_evict(pod):
            continue
        usage = pod_usage(pod, resources)
        try:
            result = handle.evict(pod, reason)
        except LimitError as exc:
            return exc.scope != "total"
        if result != EVICTED:
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


def metrics_mode(args: Mapping) -> Optional[str]:
    metrics = args.get("metricsUtilization") or {}
    if metrics.get("metricsServer"):
        return "KubernetesMetrics"
    if metrics.get("source") or metrics.get("prometheus"):
        return str(metrics.get("source") or "Prometheus")
    return None


def fmt_pct(value: float) -> str:
    return f"{value:.0f}%" if abs(value - round(value)) < 0.05 else f"{value:.1f}%"
