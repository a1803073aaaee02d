"""Where LowNodeUtilization's usage comes from (upstream usageclients.go): requests, the metrics API or Prometheus.

Each ``UsageReader`` answers the two questions upstream's usageClient answers (engine/metrics_source.py
``UsageClient``): how much a node uses (read once per run, before classification) and how much evicting one pod
frees. The numbers come from engine/metrics.py. Each source is registered below, one line each (``SOURCES``).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    METRIC_RESOURCE,
    ActualUsage,
    UsageUnavailable,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics_source import (
    MetricsSource,
    MetricsSources,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled

REQUESTS, KUBERNETES_METRICS, PROMETHEUS = "Requests", "KubernetesMetrics", "Prometheus"
ACTUAL_RESOURCES = ("cpu", "memory", "pods")


def metrics_source(args: Mapping[str, Any]) -> tuple[str, Optional[str]]:
    """(mode, problem): upstream usageClientForMetrics; a problem fails every run of the plugin."""
    metrics = args.get("metricsUtilization")
    if metrics is None:
        return REQUESTS, None
    source = metrics.get("source") or ""
    if metrics.get("metricsServer"):
        return KUBERNETES_METRICS, None  # metricsServer: true is the deprecated spelling of KubernetesMetrics
    if source in SOURCES and source != REQUESTS:
        return source, None
    if source:
        return REQUESTS, (f"error initializing usage client: unrecognized metrics source {source!r}: upstream fails "
                          "every run of the plugin (use KubernetesMetrics or Prometheus)")
    return REQUESTS, ("error initializing usage client: metrics source is empty: upstream fails every run of the "
                      "plugin (set metricsUtilization.source to KubernetesMetrics or Prometheus)")


def actual_usage(handle: PluginHandle) -> ActualUsage:
    """The plan's ActualUsage; a snapshot planned without one reads the metrics objects it carries."""
    snapshot = handle.state.snapshot
    if snapshot.actual is None:
        snapshot.actual = ActualUsage.build(snapshot.metrics_objects, None, handle.now)
    return snapshot.actual


class UsageReader:
    """Requests-based usage (upstream requestedUsageClient): what the node's non-terminal pods request."""

    mode = REQUESTS

    def __init__(self, handle: PluginHandle, resources: list[str]) -> None:
        self.handle = handle
        self.resources = resources

    def node(self, node: Node) -> dict[str, int]:
        totals = dict(self.handle.state.usage.used.get(node.name, {}))
        still_listed = self.handle.still_listed_on(node.name)  # a lagging cycle counts them, as upstream's views do
        for pod in still_listed:
            for key, amount in pod.requests.items():
                totals[key] = totals.get(key, 0) + amount
        usage = {r: scaled(r, totals.get(r, 0)) for r in self.resources if r != "pods"}
        usage["pods"] = self.handle.state.usage.count.get(node.name, 0) + len(still_listed)
        return usage

    def pod(self, pod: Pod) -> Optional[dict[str, int]]:
        """What evicting the pod frees; None when the source cannot tell (upstream's notSupportedError)."""
        usage = {r: scaled(r, pod.requests.get(r, 0)) for r in self.resources if r != "pods"}
        usage["pods"] = 1
        return usage


class KubernetesMetricsReader(UsageReader):
    """upstream actualUsageClient: node cpu/memory from NodeMetrics, pods counted, pod usage from PodMetrics."""

    mode = KUBERNETES_METRICS

    def __init__(self, handle: PluginHandle, resources: list[str], actual: ActualUsage) -> None:
        super().__init__(handle, resources)
        self.actual = actual

    def node(self, node: Node) -> dict[str, int]:
        collected = dict(self.actual.node_usage(node.name))
        listed = self.handle.state.usage.count.get(node.name, 0) + len(self.handle.still_listed_on(node.name))
        collected["pods"] = listed
        usage = {}
        for resource in self.resources:
            if resource not in collected:
                raise UsageUnavailable(f'unable to find "{resource}" resource for collected "{node.name}" node '
                                       "metric (the metrics API only serves cpu and memory: threshold only cpu, "
                                       "memory and pods)")
            usage[resource] = collected[resource]
        return usage

    def pod(self, pod: Pod) -> Optional[dict[str, int]]:
        usage = self.actual.pod_usage(pod.namespace, pod.name, self.resources)
        usage["pods"] = 1
        return usage


class PrometheusReader(UsageReader):
    """upstream prometheusUsageClient: MetricResource = int(value*100) per node; no per-pod usage."""

    mode = PROMETHEUS

    def __init__(self, handle: PluginHandle, query: str, actual: ActualUsage) -> None:
        super().__init__(handle, [METRIC_RESOURCE])
        self.query = query
        self.percents = actual.prometheus_usage(query, [n.name for n in handle.nodes])

    def node(self, node: Node) -> dict[str, int]:
        return {METRIC_RESOURCE: self.percents[node.name]}

    def pod(self, pod: Pod) -> Optional[dict[str, int]]:
        return None


def usage_reader(handle: PluginHandle, mode: str, args: Mapping[str, Any], resources: list[str]) -> UsageReader:
    """The reader for this run; raises UsageUnavailable with upstream's message when the source is missing."""
    return SOURCES[mode].new(handle, args, resources)


def requests_reader(handle: PluginHandle, args: Mapping[str, Any], resources: list[str]) -> UsageReader:
    return UsageReader(handle, resources)


def kubernetes_metrics_reader(handle: PluginHandle, args: Mapping[str, Any], resources: list[str]) -> UsageReader:
    actual = actual_usage(handle)
    if actual.collector_enabled is False:
        raise UsageUnavailable("error initializing usage client: metrics client not initialized (add "
                               "metricsProviders: [{source: KubernetesMetrics}] to the policy)")
    if actual.metrics_api_problem:
        raise UsageUnavailable(f"error getting node usage: {actual.metrics_api_problem}")
    if not actual.kubernetes_metrics:
        raise UsageUnavailable("error getting node usage: no NodeMetrics: record the metrics.k8s.io/v1beta1 "
                               "NodeMetrics and PodMetrics next to the snapshot (metrics_record), or plan a "
                               "live cluster whose metrics API is served")
    return KubernetesMetricsReader(handle, resources, actual)


def prometheus_reader(handle: PluginHandle, args: Mapping[str, Any], resources: list[str]) -> UsageReader:
    actual = actual_usage(handle)
    if actual.prometheus_configured is False:
        raise UsageUnavailable("error initializing usage client: prometheus client not initialized (add "
                               "metricsProviders: [{source: Prometheus, prometheus: {url: ...}}] to the policy)")
    query = ((args.get("metricsUtilization") or {}).get("prometheus") or {}).get("query") or ""
    return PrometheusReader(handle, query, actual)


def with_basic_resources(thresholds: list[str]) -> list[str]:
    """The threshold resources, then cpu, memory and pods, which requests and the metrics API always compare."""
    return list(dict.fromkeys([*thresholds, *ACTUAL_RESOURCES]))


def metric_resource_only(thresholds: list[str]) -> list[str]:
    return [METRIC_RESOURCE]


SOURCES = MetricsSources()
SOURCES.register(MetricsSource(REQUESTS, requests_reader, with_basic_resources, records_reading=False))
SOURCES.register(MetricsSource(KUBERNETES_METRICS, kubernetes_metrics_reader, with_basic_resources))
SOURCES.register(MetricsSource(PROMETHEUS, prometheus_reader, metric_resource_only))
