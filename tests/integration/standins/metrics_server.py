"""The metrics.k8s.io/v1beta1 API (NodeMetrics, PodMetrics) on any API server, without metrics-server.

    with MetricsServer(api_client) as metrics:      # installs the API; removes it (and every object) at the end
        metrics.load([{"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", ...}, ...])

On a real cluster metrics-server serves this group behind the aggregator (APIService v1beta1.metrics.k8s.io). The
aggregator proxies to a Service's endpoints, and Endpoints/EndpointSlices may not point at a loopback address, while
the machine running the tests may have no other address the API server could reach (a CI container's interfaces are
unknown). So this stand-in serves the group from two CRDs instead, `nodes.metrics.k8s.io` (cluster-scoped,
NodeMetrics) and `pods.metrics.k8s.io` (namespaced, PodMetrics), whose objects have exactly the shape metrics-server
returns (`timestamp`, `window`, `usage` / `containers[].usage`). A `k8s.io` group needs the
`api-approved.kubernetes.io` annotation; "unapproved, ..." is accepted and only sets a condition.

What a client sees is what it sees with metrics-server: discovery lists metrics.k8s.io/v1beta1 with `nodes` and
`pods`, `GET /apis/metrics.k8s.io/v1beta1/nodes` (and `namespaces/{ns}/pods`) return NodeMetricsList/PodMetricsList,
paged with `limit`/`continue`. Limits: the objects carry the metadata of stored objects (uid, resourceVersion,
managedFields), the CRDs also accept writes (metrics-server serves get and list only), and usage is whatever was
loaded, never measured.
"""

from __future__ import annotations

from typing import Any

from .rest import Rest, install_crds, path, remove_crds

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
APPROVAL = "unapproved, a test stand-in for metrics-server (tests/integration/standins/metrics_server.py)"

QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
USAGE = {"type": "object", "additionalProperties": QUANTITY}
COMMON = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
          "timestamp": {"type": "string", "format": "date-time"}, "window": {"type": "string"}}


def metrics_crd(plural: str, kind: str, scope: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": {**COMMON, **properties}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}", "annotations": {"api-approved.kubernetes.io": APPROVAL}},
        "spec": {"group": GROUP, "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                 "versions": [{"name": VERSION, "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema}}]},
    }


NODE_METRICS_CRD = metrics_crd("nodes", "NodeMetrics", "Cluster", {"usage": USAGE})
POD_METRICS_CRD = metrics_crd("pods", "PodMetrics", "Namespaced", {"containers": {
    "type": "array", "items": {"type": "object", "required": ["name", "usage"],
                               "properties": {"name": {"type": "string"}, "usage": USAGE}}}})
CRDS = (NODE_METRICS_CRD, POD_METRICS_CRD)
PLURALS = {"NodeMetrics": "nodes", "PodMetrics": "pods"}


class MetricsServer:
    def __init__(self, api_client: Any) -> None:
        self.rest = Rest(api_client)
        self._created: list[str] = []

    def install(self) -> MetricsServer:
        self._created = install_crds(self.rest, CRDS)
        return self

    def load(self, objects: list[dict[str, Any]]) -> None:
        """Create NodeMetrics/PodMetrics objects as given (a PodMetrics' namespace must exist)."""
        for obj in objects:
            namespace = obj["metadata"].get("namespace") if obj["kind"] == "PodMetrics" else None
            self.rest.create(path(API_VERSION, PLURALS[obj["kind"]], namespace), obj)

    def remove(self) -> None:
        """Remove the API this stand-in installed and wait until it is no longer served."""
        remove_crds(self.rest, self._created)
        self._created = []

    def __enter__(self) -> MetricsServer:
        return self.install()

    def __exit__(self, *exc_info: object) -> None:
        self.remove()
