"""Is the metric source Trimaran will read reachable from here (``check_metric_provider: true``)?

Trimaran scores every node 0 when it gets no metrics (peers.md §4.2): a scheduler that runs, binds pods, and
ignores load entirely. Asking once before the install catches a wrong address or token. The check runs from the
control node, not from the scheduler's pod: an in-cluster service name is only reachable when the control node can
resolve it (use ``check_metric_provider: false`` otherwise).
"""

from __future__ import annotations

import json
import urllib.error
from typing import Any, Optional

from ansible.module_utils.urls import open_url
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.config import ConfigError

TIMEOUT_SECONDS = 5.0
METRICS_API = "/apis/metrics.k8s.io/v1beta1"


def check_sources(api_client: Any, sources: list[tuple[str, dict]]) -> list[dict]:
    """Probe each source; ConfigError on the first unreachable one. Returns what was checked."""
    checked = []
    for field, args in sources:
        checked.append(check_source(api_client, field, args))
    return checked


def check_source(api_client: Any, field: str, args: dict) -> dict:
    watcher = args.get("watcherAddress")
    if watcher:
        _http_get(f"{field}.watcherAddress", watcher, str(watcher).rstrip("/") + "/watcher", None, True)
        return {"field": f"{field}.watcherAddress", "address": watcher, "reachable": True}
    provider = args.get("metricProvider") or {}
    kind = provider.get("type") or "KubernetesMetricsServer"
    if kind == "KubernetesMetricsServer":
        return _check_metrics_server(api_client, f"{field}.metricProvider.type")
    address = str(provider.get("address"))
    # Trimaran's Prometheus client skips certificate checks unless told otherwise (insecureSkipVerify defaults true).
    insecure = provider.get("insecureSkipVerify", True) is not False
    url = address.rstrip("/") + ("/api/v1/status/buildinfo" if kind == "Prometheus" else "")
    body = _http_get(f"{field}.metricProvider.address", address, url, provider.get("token"), insecure)
    if kind == "Prometheus":
        try:
            ok = json.loads(body).get("status") == "success"
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            raise ConfigError(f"{field}.metricProvider.address", address, f"{url} answered, but not as the "
                              "Prometheus HTTP API does; point metricProvider.address at Prometheus itself")
    return {"field": f"{field}.metricProvider.address", "address": address, "reachable": True}


def _check_metrics_server(api_client: Any, field: str) -> dict:
    if get_raw(api_client, METRICS_API) is None:
        raise ConfigError(field, "KubernetesMetricsServer", f"{METRICS_API} is not served on this cluster: install "
                          "metrics-server, or use metricProvider type Prometheus with its address")
    return {"field": field, "address": METRICS_API, "reachable": True}


def _http_get(field: str, address: Any, url: str, token: Optional[str], insecure: bool) -> str:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        response = open_url(url, headers=headers, validate_certs=not insecure, timeout=TIMEOUT_SECONDS)
        with response:
            return response.read(1_000_000).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        hint = " (check metricProvider.token)" if error.code in (401, 403) else ""
        raise ConfigError(field, address, f"GET {url} answered HTTP {error.code}{hint}") from error
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise ConfigError(field, address, f"GET {url} failed ({reason}); check the address, or set "
                          "check_metric_provider: false when only the cluster can reach it") from error
