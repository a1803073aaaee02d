"""The plan module's metrics inputs: recorded (``prometheus_result``, ``metrics_file``, metrics in the snapshot) or
live (the metrics.k8s.io API and Prometheus), attached to the snapshot as the engine's ActualUsage.

Only what the policy needs is read live: NodeMetrics/PodMetrics when a LowNodeUtilization uses KubernetesMetrics
(or metricsServer), and each Prometheus query not already answered by ``prometheus_result``. Volcano's LoadAware
queries name each node and pod, so they are sent when the plugin first reads them (``ActualUsage.live_query``).
"""

from __future__ import annotations

import json
import os
from functools import partial
from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import prometheus as prom
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import list_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.metrics_api import (
    MetricsApiUnavailable,
    read_metrics,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.kubevirt_migration import NAME as MIGRATION_AWARE
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    ANY_QUERY,
    METRICS_KINDS,
    ActualUsage,
    LiveQuery,
    MetricsError,
    UsageUnavailable,
    attach,
    metrics_needs,
    provider_secret,
    provider_url,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import moment_of
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware import prometheus_addresses
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import unwrap_addon_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot, load_snapshot_file


def load_prometheus_result(value: Any) -> Optional[dict]:
    """``prometheus_result``: one /api/v1/query body (answers any query), {query: body}, or a JSON file of either."""
    if value is None or value == "":
        return None
    where = "prometheus_result"
    if isinstance(value, str):
        if not os.path.exists(value):
            raise MetricsError(f"prometheus_result: file {value!r} does not exist; give the JSON body /api/v1/query "
                               "returned (or {query: body}), or the path of a file holding it")
        where = f"prometheus_result file {value!r}"
        try:
            with open(value, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError) as exc:
            raise MetricsError(f"{where}: not readable JSON: {exc}") from exc
    if not isinstance(value, Mapping):
        raise MetricsError(f"{where}: expected a mapping (a Prometheus answer or {{query: answer}}), got "
                           f"{type(value).__name__}")
    if "status" in value:
        return {ANY_QUERY: value}
    return {str(query): body for query, body in value.items()}


def load_metrics_file(path: Optional[str]) -> list[dict]:
    if not path:
        return []
    if not os.path.exists(path):
        raise MetricsError(f"metrics_file: file {path!r} does not exist; give a file of NodeMetrics/PodMetrics "
                           "objects (as metrics_record writes it)")
    objects = load_snapshot_file(path)
    other = sorted({str(o.get("kind")) for o in objects if o.get("kind") not in METRICS_KINDS})
    if other:
        raise MetricsError(f"metrics_file {path!r}: holds {', '.join(other)}; only NodeMetrics and PodMetrics belong "
                           "there (put other objects in the snapshot)")
    return objects


class MetricsReads:
    """What the live metrics sources answered, kept for every policy planned on the same read of a cluster: the
    whatif module's candidates read the metrics API once and send each Prometheus query once (an unreachable
    Prometheus is asked once)."""

    def __init__(self) -> None:
        self._metrics_api: Optional[tuple[list[dict], Optional[str]]] = None
        # per Prometheus a policy names (its metricsProviders URL and token secret): answers by query, and why it
        # could not be queried
        self._answers: dict[Any, dict[str, Any]] = {}
        self._problems: dict[Any, Optional[str]] = {}

    def metrics_api(self, read: Callable[[], tuple[list[dict], Optional[str]]]) -> tuple[list[dict], Optional[str]]:
        if self._metrics_api is None:
            self._metrics_api = read()
        return self._metrics_api

    def prometheus(self, queries: list[str], document: Mapping[str, Any],
                   fetch: Callable[[list[str]], tuple[dict, Optional[str]]]) -> tuple[dict, Optional[str]]:
        source = (provider_url(document), provider_secret(document))
        answers = self._answers.setdefault(source, {})
        unasked = [q for q in queries if q not in answers]
        if unasked and self._problems.get(source) is None:
            fetched, self._problems[source] = fetch(unasked)
            answers.update(fetched)
        unanswered = any(q not in answers for q in queries)
        return {q: answers[q] for q in queries if q in answers}, self._problems.get(source) if unanswered else None


def attach_metrics(snapshot: Snapshot, params: Mapping[str, Any], document: Mapping[str, Any], api_client: Any,
                   client_factory: Callable[[], Any], reads: Optional[MetricsReads] = None) -> ActualUsage:
    """Build the snapshot's ActualUsage from recorded inputs, then read live whatever the DeschedulerPolicy
    ``document`` still needs (through ``reads``, when given: what an earlier policy's plan read live)."""
    now = moment_of(params.get("now") or None)
    results = load_prometheus_result(params.get("prometheus_result")) or {}
    extra = load_metrics_file(params.get("metrics_file"))
    kubernetes, queries = metrics_needs(document)
    live_objects: list[dict] = []
    problem = None
    if kubernetes and api_client is not None and not snapshot.metrics_objects and not extra:
        read = partial(_read_metrics_api, api_client, params.get("page_size") or 500)
        live_objects, problem = read() if reads is None else reads.metrics_api(read)
    missing = [q for q in queries if q not in results and ANY_QUERY not in results]
    unavailable = None
    if missing:
        fetch = partial(_query_prometheus, params=params, document=document, api_client=api_client,
                        client_factory=client_factory, now=now)
        fetched, unavailable = fetch(missing) if reads is None else reads.prometheus(missing, document, fetch)
        results.update(fetched)
    actual = attach(snapshot, results, now, extra_objects=extra + live_objects)
    actual.metrics_api_problem = problem
    actual.prometheus_unavailable = unavailable
    actual.live_query = _loadaware_queries(params, document, api_client, client_factory, now)
    if api_client is not None and _uses_migration_aware(document) and not snapshot.kubevirt_objects:
        snapshot.kubevirt_objects.extend(_read_kubevirt_state(api_client, params.get("page_size") or 500))
    return actual


def _uses_migration_aware(document: Mapping[str, Any]) -> bool:
    # the operator renders unused extension points as {"enabled": null}: null is an empty list here
    return any(MIGRATION_AWARE in ((((profile or {}).get("plugins") or {}).get(point) or {}).get("enabled") or [])
               for profile in document.get("profiles") or [] for point in ("filter", "preevictionfilter"))


def _read_kubevirt_state(api_client: Any, page_size: int) -> list[dict]:
    """The VMIs and VMIMs KubevirtMigrationAware reads; none when KubeVirt is not installed (the plan warns)."""
    objects: list[dict] = []
    for plural, kind in (("virtualmachineinstances", "VirtualMachineInstance"),
                         ("virtualmachineinstancemigrations", "VirtualMachineInstanceMigration")):
        try:
            items, _version = list_raw(api_client, f"/apis/kubevirt.io/v1/{plural}", page_size=page_size, kind=kind)
        except ClusterApiError:
            return []  # not served or not allowed: the plan's warning says the VMs are treated as evictable
        for item in items:
            item.setdefault("kind", kind)
        objects.extend(items)
    return objects


def _read_metrics_api(api_client: Any, page_size: int) -> tuple[list[dict], Optional[str]]:
    try:
        return read_metrics(api_client, page_size), None
    except MetricsApiUnavailable as exc:
        return [], str(exc)


def _query_prometheus(queries: list[str], params: Mapping[str, Any], document: Mapping[str, Any], api_client: Any,
                      client_factory: Callable[[], Any], now: float) -> tuple[dict, Optional[str]]:
    """Each query at ``now``; a connection problem is returned as the message the plugins will report."""
    url = params.get("prometheus_url") or None
    if url is None and api_client is None:
        return {}, None  # an offline plan never asks a live Prometheus unless told where: the plugin says what to give
    if url is None:
        url = prom.monitoring_route_url(api_client)
    url = url or provider_url(document)
    if not url or url.endswith(".invalid"):
        return {}, ("no Prometheus to query: give prometheus_result (a recorded /api/v1/query answer) or "
                    "prometheus_url")
    try:
        token = _token(params, document, api_client, client_factory, prom)
        connection = prom.PrometheusConnection(url, token, params.get("prometheus_ca_cert"),
                                               params.get("prometheus_validate_certs", True) is not False)
        return {q: prom.query_instant(connection, q, now) for q in queries}, None
    except prom.PrometheusError as exc:
        return {}, str(exc)


def _loadaware_queries(params: Mapping[str, Any], document: Mapping[str, Any], api_client: Any,
                       client_factory: Callable[[], Any], now: float) -> Optional[LiveQuery]:
    """Sends Volcano LoadAware's queries to its metrics.address (or prometheus_url, which replaces it), at ``now``.

    An offline plan sends them only when prometheus_url is given. Volcano's client sends no token, so none is sent
    unless prometheus_token or prometheus_token_secret is given (the connection's own token is not handed to
    whatever metrics.address names).
    """
    try:
        addresses = prometheus_addresses(unwrap_addon_policy(document)[0])
    except EngineError:
        return None  # a broken CCE add-on policy: load_policy reports it
    url = params.get("prometheus_url") or None
    if not addresses or (url is None and api_client is None):
        return None
    token, problem = params.get("prometheus_token") or None, None
    secret = params.get("prometheus_token_secret") or {}
    if token is None and secret.get("name"):
        try:
            token = prom.token_from_secret(api_client or client_factory(), secret.get("namespace"), secret["name"])
        except prom.PrometheusError as exc:
            problem = str(exc)  # every query reports it, as an unreachable Prometheus would be
    live = prom.LiveQueries(now, url, token, params.get("prometheus_ca_cert"),
                            params.get("prometheus_validate_certs", True) is not False, problem)

    def query(text: str, address: str) -> Any:
        try:
            return live(text, address)
        except prom.PrometheusError as exc:
            raise UsageUnavailable(str(exc)) from exc

    return query


def _token(params: Mapping[str, Any], document: Mapping[str, Any], api_client: Any,
           client_factory: Callable[[], Any], prom: Any) -> Optional[str]:
    if params.get("prometheus_token"):
        return str(params["prometheus_token"])
    secret = params.get("prometheus_token_secret") or {}
    reference = (secret.get("namespace"), secret.get("name")) if secret.get("name") else provider_secret(document)
    if reference and reference[0] and reference[1]:
        return prom.token_from_secret(api_client or client_factory(), reference[0], reference[1])
    return prom.connection_token(api_client) if api_client is not None else None
