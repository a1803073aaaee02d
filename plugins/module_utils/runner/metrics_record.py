"""Record a cluster's actual utilization next to its snapshot, so a load-aware plan can be replayed offline.

Writes the NodeMetrics and PodMetrics the metrics API serves (``dest``, a ``kind: List`` the plan module reads as
``metrics_file`` or as part of a snapshot) and the Prometheus instant-query answers of the queries a policy uses, or
of the queries given (``prometheus_dest``, ``{query: answer}``, the plan module's ``prometheus_result``). Answers are
taken at ``now`` (default: the current time): record the snapshot at the same moment.

Volcano's LoadAware queries name each node and pod: they are built from the cluster's nodes (the policy's
nodeSelector) and the non-terminal pods on them, and sent where the plan sends them (``prometheus_url``, else
``metrics.address``; no token unless given, as Volcano sends none).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import prometheus as prom
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import list_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.metrics_api import (
    MetricsApiUnavailable,
    read_metrics,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import metrics_needs
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import moment_of
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware import (
    cycle_queries,
    prometheus_sources,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import unwrap_addon_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_if_changed
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import descheduler_policy


class RecordRequestError(FleetError, ValueError):
    """A bad combination of options (names them and the fix)."""


def run_record(params: Mapping[str, Any], check_mode: bool = False) -> dict:
    if not params.get("dest") and not params.get("prometheus_dest"):
        raise RecordRequestError("give dest (NodeMetrics/PodMetrics file), prometheus_dest (Prometheus answers "
                                 "file), or both")
    api_client, identity = connect_to_intended_cluster(params)
    require_rights(api_client, "metrics_record")
    queries = _queries(params)
    result: dict[str, Any] = {"changed": False, "files": {}, "queries": queries,
                              "cluster_identity": identity.as_dict()}
    if params.get("dest"):
        try:
            objects = read_metrics(api_client, params.get("page_size") or 500)
        except MetricsApiUnavailable as exc:
            raise RecordRequestError(f"dest: {exc}") from exc
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=1, sort_keys=True) + "\n"
        result["node_metrics"] = sum(1 for o in objects if o.get("kind") == "NodeMetrics")
        result["pod_metrics"] = len(objects) - result["node_metrics"]
        result["changed"] |= write_if_changed(params["dest"], text, check_mode)
        result["files"]["dest"] = params["dest"]
    if params.get("prometheus_dest"):
        answers = _query_all(queries, params, api_client) if queries else {}
        for query, answer in _query_loadaware(params, api_client).items():
            answers.setdefault(query, answer)
        result["queries"] = list(answers)
        text = json.dumps(answers, indent=1, sort_keys=True) + "\n"
        result["samples"] = {q: len((a.get("data") or {}).get("result") or []) for q, a in answers.items()}
        result["changed"] |= write_if_changed(params["prometheus_dest"], text, check_mode)
        result["files"]["prometheus_dest"] = params["prometheus_dest"]
    return result


def _queries(params: Mapping[str, Any]) -> list[str]:
    queries = [str(q) for q in params.get("queries") or []]
    document: Optional[Mapping[str, Any]] = None
    if params.get("policy") is not None:
        document = params["policy"]
    elif params.get("kubedescheduler") is not None:
        document = descheduler_policy(params["kubedescheduler"], "KubeDescheduler", Snapshot([]),
                                      params.get("prometheus_url"))
    if document is not None:
        queries += [q for q in metrics_needs(document)[1] if q not in queries]
    if params.get("prometheus_dest") and not queries and not (document and _loadaware_sources(document)):
        raise RecordRequestError("prometheus_dest: no query to record; give queries, or a policy/kubedescheduler "
                                 "whose LowNodeUtilization uses a Prometheus query (or whose LoadAware uses "
                                 "metrics.type prometheus)")
    return queries


def _loadaware_sources(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    try:
        return prometheus_sources(unwrap_addon_policy(document)[0])
    except EngineError:
        return []  # a broken CCE add-on policy: nothing of it can be recorded


def _query_loadaware(params: Mapping[str, Any], api_client: Any) -> dict:
    """Volcano LoadAware's queries for the cluster's nodes and the non-terminal pods on them, answered now."""
    document = params.get("policy")
    sources = _loadaware_sources(document) if isinstance(document, Mapping) else []
    if not sources:
        return {}
    inner = _unwrapped(document)
    page_size = params.get("page_size") or 500
    try:
        watch_list = params.get("watch_list", True)
        nodes, _version = list_raw(api_client, "/api/v1/nodes", page_size=page_size, kind="Node",
                                   label_selector=str(inner.get("nodeSelector") or "") or None, watch_list=watch_list)
        pods, _version = list_raw(api_client, "/api/v1/pods", page_size=page_size, kind="Pod",
                                  field_selector="status.phase!=Succeeded,status.phase!=Failed", watch_list=watch_list)
    except ClusterApiError as exc:
        raise RecordRequestError(f"cannot list the nodes and pods LoadAware's queries name: {exc.describe()}") from exc
    node_names = sorted(n["metadata"]["name"] for n in nodes)
    pod_names = sorted({p["metadata"]["name"] for p in pods if (p.get("spec") or {}).get("nodeName") in node_names})
    answers = {}
    try:
        token = params.get("prometheus_token")
        secret = params.get("prometheus_token_secret") or {}
        if not token and secret.get("name"):
            token = prom.token_from_secret(api_client, secret["namespace"], secret["name"])
        live = prom.LiveQueries(moment_of(params.get("now") or None), params.get("prometheus_url") or None, token,
                                params.get("prometheus_ca_cert"),
                                params.get("prometheus_validate_certs", True) is not False)
        for address, duration in sources:
            for query in cycle_queries(node_names, pod_names, duration):
                answers[query] = live(query, address)
    except prom.PrometheusError as exc:
        raise RecordRequestError(str(exc)) from exc
    return answers


def _unwrapped(document: Mapping[str, Any]) -> Mapping[str, Any]:
    return unwrap_addon_policy(document)[0]


def _query_all(queries: list[str], params: Mapping[str, Any], api_client: Any) -> dict:
    url = params.get("prometheus_url") or prom.monitoring_route_url(api_client)
    if not url:
        raise RecordRequestError("prometheus_url: not set and no openshift-monitoring/prometheus-k8s route found; "
                                 "give the Prometheus URL")
    token = params.get("prometheus_token")
    secret = params.get("prometheus_token_secret") or {}
    if not token and secret.get("name"):
        token = prom.token_from_secret(api_client, secret["namespace"], secret["name"])
    if not token:
        token = prom.connection_token(api_client)
    connection = prom.PrometheusConnection(url, token, params.get("prometheus_ca_cert"),
                                           params.get("prometheus_validate_certs", True) is not False)
    at = moment_of(params.get("now") or None)
    try:
        return {query: prom.query_instant(connection, query, at) for query in queries}
    except prom.PrometheusError as exc:
        raise RecordRequestError(str(exc)) from exc
