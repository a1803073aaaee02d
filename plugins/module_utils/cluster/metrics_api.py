"""The metrics.k8s.io/v1beta1 API (metrics-server): NodeMetrics and PodMetrics, listed in pages as raw JSON.

Upstream's metrics collector reads NodeMetrics every 5 seconds and keeps an average; a plan reads them once, so it
sees the collector's first sample. PodMetrics are read when a pod is evicted upstream; here all are listed once.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import list_raw

METRICS_GROUP_VERSION = "metrics.k8s.io/v1beta1"
NODE_METRICS_PATH = f"/apis/{METRICS_GROUP_VERSION}/nodes"
POD_METRICS_PATH = f"/apis/{METRICS_GROUP_VERSION}/pods"


class MetricsApiUnavailable(Exception):
    """The metrics API cannot be read; the message says why and what to do."""


def read_metrics(api_client: Any, page_size: int = 500) -> list[dict]:
    """Every NodeMetrics and PodMetrics object as the API returns it (kind and apiVersion filled in)."""
    objects: list[dict] = []
    for path, kind in ((NODE_METRICS_PATH, "NodeMetrics"), (POD_METRICS_PATH, "PodMetrics")):
        try:
            items, _version = list_raw(api_client, path, page_size=page_size, kind=kind)
        except ClusterApiError as error:
            raise MetricsApiUnavailable(_explain(error, kind)) from error
        for item in items:
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", METRICS_GROUP_VERSION)
        objects.extend(items)
    return objects


def _explain(error: ClusterApiError, kind: str) -> str:
    fixes: dict[int, str] = {
        404: f"the {METRICS_GROUP_VERSION} API is not served: install metrics-server (or the platform's metrics "
             "adapter) and check `kubectl get apiservice v1beta1.metrics.k8s.io`; upstream's KubernetesMetrics mode "
             "fails the same way",
        503: f"the {METRICS_GROUP_VERSION} APIService is registered but unavailable: check the metrics-server pods "
             "and `kubectl get apiservice v1beta1.metrics.k8s.io`",
    }
    fix: Optional[str] = fixes.get(error.status)
    if fix is None:
        return f"cannot list {kind}: {error.describe()}"
    return f"cannot list {kind} ({error.status}): {fix}"
