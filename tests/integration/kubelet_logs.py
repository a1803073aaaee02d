"""Container logs for the test control plane: the part of a kubelet that `kubectl logs` reaches.

A real kube-apiserver answers `GET /api/v1/namespaces/{ns}/pods/{pod}/log` by asking the kubelet of the pod's node:
it takes the node's address (`status.addresses`, InternalIP here) and `status.daemonEndpoints.kubeletEndpoint.Port`
and calls `https://<address>:<port>/containerLogs/{ns}/{pod}/{container}?tailLines=...` (pkg/registry/core/pod
strategy.go LogLocation; pkg/kubelet/client). Without `--kubelet-certificate-authority` it does not verify the
kubelet's certificate, and a loopback address is accepted for logs (only the proxy subresources refuse it).

- `ContainerLogServer`: that HTTPS endpoint on 127.0.0.1 (standins/httpserver.py). It has no
  container runtime: a container's log is the text a writer put in the pod's annotation
  `logs.kubelet-standin.descheduler.fleet/<container>`, read back from the API server at each request.
- `register_node`: what a kubelet reports about itself, so the API server finds the server above: the node's
  InternalIP 127.0.0.1 (only when the node reports no address: a test's own addresses are left alone) and the port.
- `write_pod_log(api_client, namespace, pod, container, text)`: how a stand-in process (the operator stand-in, a
  test) makes a container "print" text: a merge patch of the annotation over HTTP, nothing in-process.

Limits: a log is at most what fits in annotations (256 KiB per pod); `follow`, `previous`, `sinceSeconds` and
`timestamps` are not modelled (the collection reads with `tailLines` only).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from standins.httpserver import LOOPBACK, BackgroundServer

LOG_ANNOTATION_PREFIX = "logs.kubelet-standin.descheduler.fleet/"


def trim_log(text: str, tail_lines: str | None, limit_bytes: str | None) -> str:
    """The kubelet's order: the last `tailLines` lines, then at most `limitBytes` bytes of them."""
    if tail_lines is not None:
        count = int(tail_lines)
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-count:]) if count > 0 else ""
    if limit_bytes is not None:
        text = text.encode()[: int(limit_bytes)].decode(errors="ignore")
    return text


def log_annotation(container: str) -> str:
    return LOG_ANNOTATION_PREFIX + container


def has_pod_log(metadata: dict[str, Any]) -> bool:
    return any(key.startswith(LOG_ANNOTATION_PREFIX) for key in (metadata.get("annotations") or {}))


def _read_pod(api_client: Any, namespace: str, name: str) -> dict[str, Any] | None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    try:
        response = client.CoreV1Api(api_client).read_namespaced_pod(name, namespace, _preload_content=False)
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    return json.loads(response.data)


def write_pod_log(api_client: Any, namespace: str, pod: str, container: str | None, text: str) -> None:
    """Set the log of one container (the pod's only one when `container` is None), over HTTP."""
    from kubernetes import client

    if container is None:
        current = _read_pod(api_client, namespace, pod)
        names = [c["name"] for c in ((current or {}).get("spec") or {}).get("containers") or []]
        if len(names) != 1:
            raise ValueError(f"pod {namespace}/{pod} has containers {names}: name the one whose log this is")
        container = names[0]
    body = {"metadata": {"annotations": {log_annotation(container): text}}}
    client.CoreV1Api(api_client).patch_namespaced_pod(pod, namespace, body, _preload_content=False)


REACHABLE_ADDRESSES = [{"type": "InternalIP", "address": LOOPBACK}]


def register_node(api_client: Any, node_name: str, port: int) -> None:
    """Point the node at the log server, as its kubelet reports its address and port; no write when it does."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core = client.CoreV1Api(api_client)
    try:
        node = json.loads(core.read_node(node_name, _preload_content=False).data)
    except ApiException as error:
        if error.status == 404:
            return
        raise
    status = node.get("status") or {}
    reported_port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    # The API server reaches a kubelet at the node's first address of its preferred types (Hostname first): the
    # stand-in is every node's kubelet, so each node reports the loopback address only, replacing what a
    # generated node carries (a JSON patch: a strategic merge would keep the Hostname entry).
    operations = []
    if reported_port != port:
        operations.append({"op": "add", "path": "/status/daemonEndpoints",
                           "value": {"kubeletEndpoint": {"Port": port}}})
    if status.get("addresses") != REACHABLE_ADDRESSES:
        operations.append({"op": "add", "path": "/status/addresses", "value": REACHABLE_ADDRESSES})
    if operations:
        core.patch_node_status(node_name, operations, _preload_content=False)


class ContainerLogServer:
    """`start()`, `.port`, `stop()`; `.requests` lists the paths the API server asked for."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.requests: list[str] = []
        # the API server does not verify kubelets here: the certificate only makes the endpoint HTTPS
        self._server = BackgroundServer(self._handler(), "kubelet-standin-logs", tls=True)

    @property
    def port(self) -> int:
        return self._server.port

    def start(self) -> ContainerLogServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def container_log(self, namespace: str, pod: str, container: str) -> tuple[int, str]:
        found = _read_pod(self.api_client, namespace, pod)
        if found is None:
            return 404, f"pod {namespace}/{pod} not found\n"
        text = ((found.get("metadata") or {}).get("annotations") or {}).get(log_annotation(container))
        return 200, text or ""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                parts = urlsplit(self.path)
                server.requests.append(self.path)
                segments = [unquote(s) for s in parts.path.strip("/").split("/")]
                if len(segments) != 4 or segments[0] != "containerLogs":
                    self._send(404, "only /containerLogs/{namespace}/{pod}/{container} is served\n")
                    return
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                try:
                    status, text = server.container_log(*segments[1:])
                except Exception as error:  # noqa: BLE001 - the API server shows the kubelet's answer to the client
                    self._send(500, f"kubelet stand-in: {error!r}\n")
                    return
                if status == 200:
                    text = trim_log(text, query.get("tailLines"), query.get("limitBytes"))
                self._send(status, text)

            def _send(self, status: int, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
