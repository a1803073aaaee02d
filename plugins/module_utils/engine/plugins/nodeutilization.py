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
    """One node's usage snapshot; ``cap`` is its absolute target (avail_cap), set once the node is classified."""

    def __init__(self, node: Node, usage: dict[str, int], capacity: dict[str, int], pct: dict[str, float]) -> None:
        self.node = node
        self.usage = usage
        self.capacity = capacity
        self.pct = pct
        self.cap: dict[str, int] = {}


def node_infos(handle: PluginHandle, resources: list[str]) -> list[NodeInfo]:
    """The usage snapshot of every node of the cycle, taken once before classification."""
    infos = []
    for node in handle.nodes:
        capacity = node_capacity(node, resources)
        usage = node_usage(handle, node, resources)
        infos.append(NodeInfo(node, usage, capacity, percentages(usage, capacity)))
    return infos


def sort_by_usage(infos: list[NodeInfo], ascending: bool) -> list[NodeInfo]:
    """Order by the raw usage sum (cpu millis + memory bytes + pod count...: memory dominates), as upstream.

    Upstream's sort.Slice is unstable; a stable sort keeps ties in node-name order.
    """
    return sorted(infos, key=lambda i: sum(i.usage.values()), reverse=not ascending)


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


def metrics_problem(args: Mapping) -> Optional[str]:
    """Why a metrics-based run can't be simulated (upstream usageClientForMetrics), or None in requests mode.

    A metricsUtilization that is present at all (even ``{}``) leaves requests mode: an empty or unknown source
    makes upstream fail every run, and a real source needs live metrics we don't have offline.
    """
    metrics = args.get("metricsUtilization")
    if metrics is None:
        return None
    source = metrics.get("source") or ""
    if metrics.get("metricsServer") or source in ("KubernetesMetrics", "Prometheus"):
        mode = "Prometheus" if source == "Prometheus" else "KubernetesMetrics"
        return (f"{mode} utilization needs live metrics and is not simulated offline; the plugin was skipped "
                "(use request-based thresholds to preview it)")
    if source:
        return f"unrecognized metrics source {source!r}: upstream fails every run of the plugin"
    return "metricsUtilization has no source: upstream fails every run of the plugin with 'metrics source is empty'"


def fmt_pct(value: float) -> str:
    """A percentage to one decimal at most: 80 → "80%", 88.888 → "88.9%"."""
    text = f"{value:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"
