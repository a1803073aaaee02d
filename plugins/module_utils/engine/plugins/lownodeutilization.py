"""LowNodeUtilization (Balance): move pods from nodes above the target thresholds to nodes below the low ones."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import UsageUnavailable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization_metrics as num

NAME = "LowNodeUtilization"
# node classes recorded in the plan (docs/plan-format.md)
UNDER, OVER, APPROPRIATE = "underutilized", "overutilized", "appropriate"
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
                                  f"thresholds' {resource} percentage is greater than targetThresholds' "
                                  f"({high[resource]:g}); lower it, or set useDeviationThresholds")
    reader.integer("numberOfNodes")  # a plain int upstream: negative values are accepted and act like 0
    reader.namespaces("evictableNamespaces", include_allowed=False)
    limits = reader.mapping("evictionLimits")
    if limits is not None:
        ArgsReader(limits, f"{field}.evictionLimits", ("node",)).uint("node")
    _validate_metrics(args, field, low)


def _validate_metrics(args: dict, field: str, thresholds: dict) -> None:
    """ValidateLowNodeUtilizationArgs plus the Prometheus checks upstream makes when it builds the plugin.

    Upstream doesn't check the source name itself: an unknown source makes every run fail instead (see balance).
    """
    metrics = args.get("metricsUtilization")
    if metrics is None:
        return
    where = f"{field}.metricsUtilization"
    reader = ArgsReader(metrics, where, ("metricsServer", "source", "prometheus"))
    server = reader.boolean("metricsServer")
    source = reader.string("source")
    prometheus = reader.mapping("prometheus")
    if prometheus is not None:
        ArgsReader(prometheus, f"{where}.prometheus", ("query",)).string("query")
    if source == "KubernetesMetrics" and server:
        raise PolicyError(where, metrics, 'it is not allowed to set both "KubernetesMetrics" source and '
                          "metricsServer (metricsServer is the deprecated spelling: drop it)")
    if source == "KubernetesMetrics" and prometheus is not None:
        raise PolicyError(f"{where}.prometheus", prometheus, "prometheus configuration is not allowed to set when "
                          'source is set to "KubernetesMetrics" (remove it, or use source: Prometheus)')
    if source == "Prometheus":
        query = (prometheus or {}).get("query") or ""
        if not query:
            raise PolicyError(f"{where}.prometheus.query", query, 'prometheus query is required when metrics source '
                              'is set to "Prometheus" (a query returning one 0-1 sample per node, labelled instance)')
        if set(thresholds) != {nu.METRIC_RESOURCE}:
            raise PolicyError(f"{field}.thresholds", sorted(thresholds),
                              f'thresholds are expected to specify a single instance of "{nu.METRIC_RESOURCE}" '
                              f"resource, got {sorted(thresholds)} instead (Prometheus mode compares the query's "
                              f"value only)")


def set_defaults(args: dict) -> dict:
    return args


class Thresholds:
    """The low/high percentages every node is classified against; ``average`` is set in deviation mode."""

    def __init__(self, low: dict[str, float], high: dict[str, float], average: Optional[dict[str, float]] = None,
                 deviation: Optional[dict[str, float]] = None) -> None:
        self.low = low
        self.high = high
        self.average = average
        self.deviation = deviation


def compute_thresholds(infos: list[nu.NodeInfo], low: dict, high: dict, deviation: bool) -> Thresholds:
    """Static thresholds, or average ± deviation clamped to [0, 100] (the average is over nodes having r)."""
    if not deviation:
        return Thresholds(low, high)
    averages = {}
    for resource in low:
        values = [info.pct[resource] for info in infos if resource in info.pct]
        averages[resource] = sum(values) / len(values) if values else 0.0
    node_low = {r: _clamp(averages[r] - low[r]) for r in low}
    node_high = {r: _clamp(averages[r] + high[r]) for r in high}
    return Thresholds(node_low, node_high, averages, high)


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 100.0)


def classify(handle: PluginHandle, infos: list[nu.NodeInfo],
             thresholds: Thresholds) -> tuple[list[nu.NodeInfo], list[nu.NodeInfo]]:
    """Under: schedulable and every r ≤ low (equality counts); over: not under and some r > high (strict)."""
    under, over = [], []
    for info in infos:
        if not info.node.unschedulable and all(info.pct.get(r, 0.0) <= thresholds.low[r] for r in thresholds.low):
            under.append(info)
            handle.note(info.node.name, UNDER)
        elif any(info.pct.get(r, 0.0) > thresholds.high[r] for r in thresholds.high):
            over.append(info)
            handle.note(info.node.name, OVER)
        else:
            handle.note(info.node.name, APPROPRIATE)
    return under, over


def balance(handle: PluginHandle, args: dict[str, Any]) -> None:
    mode, problem = num.metrics_source(args)
    if problem is not None:
        handle.error(problem)
        return
    low = {str(k): float(v) for k, v in args["thresholds"].items()}
    high = {str(k): float(v) for k, v in args["targetThresholds"].items()}
    # Prometheus mode reads only MetricResource; the other modes always add cpu, memory and pods
    source = num.SOURCES[mode]
    resources = source.resources(list(low))
    try:
        reader = num.usage_reader(handle, mode, args, resources)
        infos = nu.node_infos(handle, resources, reader)
    except UsageUnavailable as exc:
        handle.error(f"error getting node usage: {exc}")
        return
    thresholds = compute_thresholds(infos, low, high, bool(args.get("useDeviationThresholds")))
    under, over = classify(handle, infos, thresholds)
    if source.records_reading:
        _record_reading(handle, reader, infos, thresholds)
    if not under or len(under) <= int(args.get("numberOfNodes") or 0) or len(under) == len(infos) or not over:
        return
    for info in under + over:
        info.cap = nu.absolute_cap(thresholds.high, info.capacity, resources)  # low nodes too: capped at high
    available = {r: sum(i.cap.get(r, 0) - i.usage.get(r, 0) for i in under) for r in resources}
    _included, excluded = ArgsReader(args, NAME, ARG_FIELDS).namespaces("evictableNamespaces", include_allowed=False)
    node_limit = (args.get("evictionLimits") or {}).get("node")
    destination_taints = [i.node.taints for i in under]
    for info in nu.sort_by_usage(over, ascending=False, order=handle.order):
        removable = [p for p in handle.pods_on_node(info.node.name) if handle.filter(p)]
        if not removable:
            continue
        if not nu.evict_from_node(handle, info, handle.order.priority_sort(removable), resources, available,
                                  destination_taints, excluded, _keep_going, _reason(info, thresholds), node_limit,
                                  reader):
            return


def _record_reading(handle: PluginHandle, reader: num.UsageReader, infos: list[nu.NodeInfo],
                    thresholds: Thresholds) -> None:
    """What the plugin read, for the plan and its report: per node actual percentages, thresholds on that scale."""
    reading: dict[str, Any] = {
        "mode": reader.mode,
        "resources": list(thresholds.low),
        "thresholds": {"low": dict(thresholds.low), "high": dict(thresholds.high)},
        "nodes": {i.node.name: {r: round(i.pct.get(r, 0.0), 2) for r in thresholds.low} for i in infos},
    }
    if thresholds.average is not None:
        reading["thresholds"]["average"] = {r: round(v, 2) for r, v in thresholds.average.items()}
    if isinstance(reader, num.PrometheusReader):
        reading["query"] = reader.query
    num.actual_usage(handle).readings[f"{handle.profile}/{handle.plugin}"] = reading


def _keep_going(info: nu.NodeInfo, available: dict[str, int]) -> bool:
    """Still above the absolute target on some resource (unthresholded ones against full capacity), and room left."""
    above = any(info.usage.get(r, 0) > info.cap.get(r, 0) for r in info.cap)
    return above and nu.all_available(available)


def _reason(info: nu.NodeInfo, thresholds: Thresholds) -> str:
    """E.g. "node n1 at cpu 87% > target 50%"; in deviation mode "... > target 35% (average 30% + 5)"."""
    parts = []
    for resource, target in thresholds.high.items():
        used = info.pct.get(resource, 0.0)
        if used <= target:
            continue
        part = f"{resource} {nu.fmt_pct(used)} > target {nu.fmt_pct(target)}"
        if thresholds.average is not None and thresholds.deviation is not None:
            part += f" (average {nu.fmt_pct(thresholds.average[resource])} + {thresholds.deviation[resource]:g})"
        parts.append(part)
    return f"node {info.node.name} at " + ", ".join(parts)
