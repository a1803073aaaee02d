"""LowNodeUtilization (Balance): move pods from nodes above the target thresholds to nodes below the low ones."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import sort_by_priority

NAME = "LowNodeUtilization"
EXTENSION_POINT = "balance"
ARG_FIELDS = (
    "useDeviationThresholds", "thresholds", "targetThresholds", "numberOfNodes", "evictableNamespaces",
    "metricsUtilization", "evictionLimits",
)


def validate_thresholds(thresholds: Any, field: str) -> dict[str, float]:
    if not isinstance(thresholds, dict) or not thresholds:
        raise PolicyError(field, thresholds, "no resource threshold is configured; set e.g. {cpu: 20, memory: 20}")
    for resource, percent in thresholds.items():
        if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 <= percent <= 100:
            raise PolicyError(f"{field}.{resource}", percent, "a percentage between 0 and 100")
    return {str(k): float(v) for k, v in thresholds.items()}


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    deviation = reader.boolean("useDeviationThresholds")
    low = validate_thresholds(args.get("thresholds"), f"{field}.thresholds")
    high = validate_thresholds(args.get("targetThresholds"), f"{field}.targetThresholds")
    if set(low) != set(high):
        raise PolicyError(f"{field}.targetThresholds", sorted(high),
                          f"thresholds and targetThresholds must name the same resources ({sorted(low)})")
    if not deviation:
        for resource, percent in low.items():
            if percent > high[resource]:
                raise PolicyError(f"{field}.thresholds.{resource}", percent,
                                  f"must not be greater than targetThresholds.{resource} ({high[resource]:g})")
    reader.uint("numberOfNodes")
    reader.namespaces("evictableNamespaces", include_allowed=False)
    limits = reader.mapping("evictionLimits")
    if limits is not None:
        ArgsReader(limits, f"{field}.evictionLimits", ("node",)).uint("node")
    _validate_metrics(args, field, low)


def _validate_metrics(args: dict, field: str, thresholds: dict) -> None:
    metrics = args.get("metricsUtilization")
    if metrics is None:
        return
    reader = ArgsReader(metrics, f"{field}.metricsUtilization", ("metricsServer", "source", "prometheus"))
    reader.boolean("metricsServer")
    source = reader.string("source")
    if source not in ("", "KubernetesMetrics", "Prometheus"):
        raise PolicyError(f"{field}.metricsUtilization.source", source, "must be KubernetesMetrics or Prometheus")
    if source == "Prometheus":
        query = ((metrics.get("prometheus") or {}).get("query")) or ""
        if not query:
            raise PolicyError(f"{field}.metricsUtilization.prometheus.query", query, "a Prometheus query is required")
        if set(thresholds) != {nu.METRIC_RESOURCE}:
            raise PolicyError(f"{field}.thresholds", sorted(thresholds),
                              f"with Prometheus the thresholds must name only {nu.METRIC_RESOURCE}")


def set_defaults(args: dict) -> dict:
    return args


def compute_thresholds(infos: list[nu.NodeInfo], low: dict, high: dict, deviation: bool) -> list[tuple[dict, dict]]:
    if not deviation:
        return [(low, high) for _ in infos]
    averages = {}
    for resource in low:
        values = [info.pct[resource] for info in infos if resource in info.capacity]
        averages[resource] = sum(values) / len(values) if values else 0.0
    clamp = lambda value: min(max(value, 0.0), 100.0)  # noqa: E731
    node_low = {r: clamp(averages[r] - low[r]) for r in low}
    node_high = {r: clamp(averages[r] + high[r]) for r in high}
    return [(node_low, node_high) for _ in infos]


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    mode = nu.metrics_mode(args)
    if mode is not None:
        handle.error(f"{mode} utilization needs live metrics and is not simulated offline; "
                     "the plugin was skipped (use request-based thresholds to preview it)")
        return
    low = {str(k): float(v) for k, v in args["thresholds"].items()}
    high = {str(k): float(v) for k, v in args["targetThresholds"].items()}
    resources = nu.resources_for(low)
    infos = []
    for node in handle.nodes:
        capacity = nu.node_capacity(node, resources)
        usage = nu.node_usage(handle, node, resources)
        infos.append(nu.NodeInfo(node, usage, capacity, nu.percentages(usage, capacity)))
    thresholds = compute_thresholds(infos, low, high, bool(args.get("useDeviationThresholds")))
    under, over = [], []
    for info, (node_low, node_high) in zip(infos, thresholds, strict=True):
        if not info.node.unschedulable and all(info.pct.get(r, 0.0) <= node_low[r] for r in node_low):
            under.append(info)
            handle.note(info.node.name, "underutilized")
        elif any(info.pct.get(r, 0.0) > node_high[r] for r in node_high):
            over.append(info)
            handle.note(info.node.name, "overutilized")
        else:
            handle.note(info.node.name, "appropriately utilized")
        info.cap = nu.absolute_cap(node_high, info.capacity, resources)
        info.high = node_high
    if not under or len(under) <= int(args.get("numberOfNodes") or 0) or len(under) == len(infos) or not over:
        return
    available = {r: sum(i.cap.get(r, 0) - i.usage.get(r, 0) for i in under) for r in resources}
    over.sort(key=lambda i: -sum(i.usage.get(r, 0) for r in resources))
    _, excluded = ArgsReader(args, NAME, ARG_FIELDS).namespaces("evictableNamespaces", include_allowed=False)
    node_limit = (args.get("evictionLimits") or {}).get("node")
    destination_taints = [i.node.taints for i in under]
    for info in over:
        removable = [p for p in handle.pods_on_node(info.node.name) if handle.filter(p)]
        if not removable:
            continue
        if not nu.evict_from_node(handle, info, sort_by_priority(removable), resources, available,
                                  destination_taints, excluded, _keep_going, _reason(info), node_limit):
            return


def _keep_going(info: nu.NodeInfo, available: dict[str, int]) -> bool:
    above = any(info.usage.get(r, 0) > info.cap.get(r, 0) for r in info.cap)
    return above and nu.all_available(available)


def _reason(info: nu.NodeInfo) -> str:
    over = [r for r in info.high if info.pct.get(r, 0.0) > info.high[r]]
    parts = [f"{r} {nu.fmt_pct(info.pct.get(r, 0.0))} > target {nu.fmt_pct(info.high[r])}" for r in over]
    return f"node {info.node.name} at " + ", ".join(parts)
