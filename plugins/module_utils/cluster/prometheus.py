"""Prometheus instant queries, as upstream's Prometheus client sends them (``GET /api/v1/query?query=...&time=...``).

The bearer token comes, in this order, from ``prometheus_token``, from a Secret like upstream's
``authToken.secretReference`` (key ``prometheusAuthToken``), or from the cluster connection's own token (upstream's
in-cluster mode sends the service account token). The answer is returned as the parsed JSON body so it can be
recorded and replayed offline; engine/metrics.py reads it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import urlencode

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw

TOKEN_KEY = "prometheusAuthToken"  # upstream prom_client_controller.go
ROUTE_PATH = "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/prometheus-k8s"
DEFAULT_TIMEOUT = 30.0


class PrometheusError(Exception):
    """Prometheus could not answer; the message names the URL, the query and what to do."""


@dataclass
class PrometheusConnection:
    url: str
    token: Optional[str] = None
    ca_cert: Optional[str] = None
    validate_certs: bool = True
    timeout: float = DEFAULT_TIMEOUT


def query_instant(connection: PrometheusConnection, query: str, at: float) -> dict:
    """The JSON body of one instant query evaluated at ``at`` (seconds since the epoch)."""
    import urllib3  # a dependency of the kubernetes client

    if not connection.url.startswith(("http://", "https://")):
        raise PrometheusError(f"prometheus_url {connection.url!r} is not an http(s) URL; give e.g. "
                              "https://prometheus-k8s-openshift-monitoring.apps.example.com")
    pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if connection.validate_certs else "CERT_NONE",
                               ca_certs=connection.ca_cert or None)
    if not connection.validate_certs:
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    url = connection.url.rstrip("/") + "/api/v1/query?" + urlencode({"query": query, "time": f"{at:.3f}"})
    headers = {"Accept": "application/json"}
    if connection.token:
        headers["Authorization"] = f"Bearer {connection.token}"
    try:
        response = pool.request("GET", url, headers=headers, timeout=connection.timeout, retries=False)
    except urllib3.exceptions.HTTPError as exc:
        hint = ("check prometheus_ca_cert or prometheus_validate_certs" if "ssl" in str(exc).lower()
                or "certificate" in str(exc).lower() else "check prometheus_url and that it is reachable from here")
        message = f"cannot reach Prometheus at {connection.url} for query {query!r}: {exc} ({hint})"
        raise PrometheusError(message) from exc
    return _answer(connection, query, response.status, response.data)


def _answer(connection: PrometheusConnection, query: str, status: int, data: bytes) -> dict:
    if status in (401, 403):
        raise PrometheusError(
            f"Prometheus at {connection.url} refused query {query!r} ({status} "
            f"{'Unauthorized' if status == 401 else 'Forbidden'}): give prometheus_token, a Secret with key "
            f"{TOKEN_KEY} (prometheus_token_secret or the policy's authToken.secretReference), or connect with a "
            "token allowed to read metrics (on OpenShift: the cluster-monitoring-view role)")
    try:
        body = json.loads(data.decode("utf-8") or "null")
    except (UnicodeDecodeError, ValueError):
        body = None
    if isinstance(body, dict) and "status" in body:
        return body  # errors too ({status: error, errorType: bad_data...}): the engine reports them as upstream
    raise PrometheusError(f"Prometheus at {connection.url} answered query {query!r} with HTTP {status} and no "
                          "Prometheus JSON body; check prometheus_url points at the Prometheus API (not a console)")


def token_from_secret(api_client: Any, namespace: str, name: str) -> str:
    """The token in a Secret as upstream's authToken.secretReference reads it."""
    try:
        secret = get_raw(api_client, f"/api/v1/namespaces/{namespace}/secrets/{name}", kind="Secret")
    except ClusterApiError as error:
        message = f"cannot read the Prometheus token Secret {namespace}/{name}: {error.describe()}"
        raise PrometheusError(message) from error
    if secret is None:
        raise PrometheusError(f"the Prometheus token Secret {namespace}/{name} does not exist; create it with key "
                              f"{TOKEN_KEY}, or give prometheus_token")
    encoded = (secret.get("data") or {}).get(TOKEN_KEY) or ""
    try:
        token = base64.b64decode(encoded).decode("utf-8").strip()
    except (ValueError, UnicodeDecodeError):
        token = ""
    if not token:
        raise PrometheusError(f"prometheus authentication token secret missing {TOKEN_KEY!r} data or empty "
                              f"(Secret {namespace}/{name})")
    return token


def connection_token(api_client: Any) -> Optional[str]:
    """The bearer token the cluster connection sends, if it uses one (not client certificates)."""
    configuration = getattr(api_client, "configuration", None)
    if configuration is None:
        return None
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is not None:
        hook(configuration)
    value = (getattr(configuration, "api_key", None) or {}).get("authorization") or ""
    prefix = (getattr(configuration, "api_key_prefix", None) or {}).get("authorization") or ""
    text = f"{prefix} {value}".strip() if prefix else value
    return text[len("Bearer "):] if text.startswith("Bearer ") else None


def monitoring_route_url(api_client: Any) -> Optional[str]:
    """https://<host> of the openshift-monitoring/prometheus-k8s route, as the operator finds it; None if absent."""
    try:
        route = get_raw(api_client, ROUTE_PATH, kind="Route")
    except ClusterApiError:
        return None
    host = ((route or {}).get("spec") or {}).get("host")
    return f"https://{host}" if host else None
