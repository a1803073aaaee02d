"""Prometheus instant queries, as upstream's Prometheus client (client_golang api/prometheus/v1) sends them: a form
``POST /api/v1/query`` (``query=...&time=...``), and the same parameters as ``GET /api/v1/query?...`` when the server
answers the POST with 405 Method Not Allowed or 501 Not Implemented (a read-only proxy, an old Prometheus).

The bearer token comes, in this order, from ``prometheus_token``, from a Secret like upstream's
``authToken.secretReference`` (key ``prometheusAuthToken``), or from the cluster connection's own token (upstream's
in-cluster mode sends the service account token). The answer is returned as the parsed JSON body so it can be
recorded and replayed offline; engine/metrics.py reads it.

``LiveQueries`` answers queries on demand, one Prometheus per address (Volcano's LoadAware sends one query per node
and pod to its ``metrics.address``): a Prometheus that cannot be reached or refuses the token is asked once, and
every later query to it gets the same error instead of another timeout.
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
    return PrometheusClient(connection).query(query, at)


# client_golang's DoGetFallback: these answers to the POST mean "this server only takes GET"
GET_FALLBACK_STATUSES = (405, 501)


class PrometheusClient:
    """One Prometheus, its connections kept open across queries (a plan may send thousands)."""

    def __init__(self, connection: PrometheusConnection) -> None:
        import urllib3  # a dependency of the kubernetes client

        if not connection.url.startswith(("http://", "https://")):
            raise PrometheusError(f"prometheus_url {connection.url!r} is not an http(s) URL; give e.g. "
                                  "https://prometheus-k8s-openshift-monitoring.apps.example.com")
        self.connection = connection
        self._pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if connection.validate_certs else "CERT_NONE",
                                         ca_certs=connection.ca_cert or None)
        if not connection.validate_certs:
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def query(self, query: str, at: float) -> dict:
        """POST the form; on 405/501 send the same parameters as a GET, as client_golang does."""
        form = urlencode({"query": query, "time": f"{at:.3f}"})
        endpoint = self.connection.url.rstrip("/") + "/api/v1/query"
        headers = {"Accept": "application/json"}
        if self.connection.token:
            headers["Authorization"] = f"Bearer {self.connection.token}"
        status, data = self._send("POST", endpoint, query, form,
                                  {**headers, "Content-Type": "application/x-www-form-urlencoded"})
        if status in GET_FALLBACK_STATUSES:
            status, data = self._send("GET", f"{endpoint}?{form}", query, None, headers)
        return _answer(self.connection, query, status, data)

    def _send(self, method: str, url: str, query: str, body: Optional[str],
              headers: dict[str, str]) -> tuple[int, bytes]:
        import urllib3

        try:
            response = self._pool.request(method, url, body=body, headers=headers, timeout=self.connection.timeout,
                                          retries=False)
        except urllib3.exceptions.HTTPError as exc:
            text = str(exc).lower()
            hint = ("check prometheus_ca_cert or prometheus_validate_certs" if "ssl" in text or "certificate" in text
                    else "check prometheus_url and that it is reachable from here")
            message = f"cannot reach Prometheus at {self.connection.url} for query {query!r}: {exc} ({hint})"
            raise PrometheusError(message) from exc
        return response.status, response.data


class LiveQueries:
    """Instant queries at one moment, sent on demand to the Prometheus at an address (or to ``url`` when given,
    which then replaces every address: a route or port-forward to the in-cluster Prometheus)."""

    def __init__(self, at: float, url: Optional[str] = None, token: Optional[str] = None,
                 ca_cert: Optional[str] = None, validate_certs: bool = True, problem: Optional[str] = None) -> None:
        self.at = at
        self.url = url
        self.token = token
        self.ca_cert = ca_cert
        self.validate_certs = validate_certs
        self.problem = problem  # e.g. the token Secret could not be read: every query fails with it
        self.sent: list[str] = []
        self._clients: dict[str, PrometheusClient] = {}
        self._failures: dict[str, str] = {}

    def __call__(self, query: str, address: str) -> dict:
        """The answer's JSON body; PrometheusError (remembered for that Prometheus) when it cannot answer."""
        if self.problem:
            raise PrometheusError(self.problem)
        url = self.url or address
        if url in self._failures:
            raise PrometheusError(self._failures[url])
        try:
            client = self._clients.get(url)
            if client is None:
                client = self._clients[url] = PrometheusClient(
                    PrometheusConnection(url, self.token, self.ca_cert, self.validate_certs))
            self.sent.append(query)
            return client.query(query, self.at)
        except PrometheusError as exc:
            self._failures[url] = str(exc)
            raise


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


def route_host(route: Optional[dict]) -> str:
    """The host the operator takes from a Route: its first admitted ingress (status.ingress[0].host), "" if none."""
    ingress = ((route or {}).get("status") or {}).get("ingress") or []
    return str((ingress[0] or {}).get("host") or "") if ingress else ""


def monitoring_route_url(api_client: Any) -> Optional[str]:
    """https://<host> of the openshift-monitoring/prometheus-k8s route, as the operator builds it (from the admitted
    host, not spec.host); None if absent, not admitted or not readable."""
    try:
        route = get_raw(api_client, ROUTE_PATH, kind="Route")
    except ClusterApiError:
        return None
    host = route_host(route)
    return f"https://{host}" if host else None
