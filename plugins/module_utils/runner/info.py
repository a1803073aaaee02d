"""Read-only facts about one cluster's descheduler: which flavor runs it, its configuration, and what it evicted.

Flavors: ``olm`` (the Kube Descheduler Operator: a Subscription or CSV of package cluster-kube-descheduler-operator,
or a KubeDescheduler), ``upstream`` (a Deployment or CronJob ``descheduler`` as the Helm chart deploys it), ``none``.
The evictions come from the operand pod's log (``"Evicted pod in dry run mode"`` / ``"Evicted pod"``), parsed by
``logparse``. Every read that fails with 403, or whose API is not served, becomes a note, never a failure: info on a
half-installed cluster is exactly when it is needed.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    get_raw,
    get_text,
    list_raw,
    resource_path,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import parse_descheduler_log
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    CSV_PREFIX,
    KUBEDESCHEDULER_PATH,
    OLM_V1ALPHA1,
    OPERAND_CONTAINER,
    OPERAND_DEPLOYMENT_PATH,
    OPERAND_LABEL_SELECTOR,
    OPERATOR_NAMESPACE,
    PACKAGE,
    POLICY_CONFIGMAP_PATH,
    POLICY_KEY,
    SOFTTAINTER_DEPLOYMENT_PATH,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operand import (
    leftover_soft_taints,
    operand_drift,
    render_operand,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    KUBEVIRT_NODE_SELECTOR,
    LOG_LEVEL_VERBOSITY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.rollout import (
    applied_generation,
    condition_text,
    degraded_conditions,
    operand_rolled_out,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.scheduler_info import (
    secondary_scheduler_facts,
    volcano_facts,
)

VERBOSITY = {level: name for name, level in LOG_LEVEL_VERBOSITY.items()}
_VERBOSITY_ARG = re.compile(r"^--?v=(\d+)$")


class _Reader:
    """API reads that turn 403/404-of-a-missing-API into None plus a note."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.notes: list[str] = []

    def get(self, path: str, kind: str) -> Optional[dict]:
        try:
            return get_raw(self.api_client, path, kind=kind)
        except ClusterApiError as error:
            return self._skip(error, f"{kind} {path}")

    def list(self, path: str, kind: str, label_selector: Optional[str] = None) -> list[dict]:
        try:
            return list_raw(self.api_client, path, kind=kind, label_selector=label_selector)[0]
        except ClusterApiError as error:
            if error.status == 404:
                return []  # the API is not served: nothing of this kind
            self._skip(error, f"{kind} list {path}")
            return []

    def text(self, path: str, query: list, kind: str) -> Optional[str]:
        try:
            return get_text(self.api_client, path, query=query, kind=kind)
        except ClusterApiError as error:
            return self._skip(error, f"log {path}")

    def _skip(self, error: ClusterApiError, what: str) -> None:
        if error.status not in (403, 404):
            raise error
        if error.status == 403:
            self.notes.append(f"could not read {what}: {error.describe()}")
        return None


# --- OLM -----------------------------------------------------------------------------------------------------------


def _subscription(reader: _Reader) -> Optional[dict]:
    path = resource_path(OLM_V1ALPHA1, "subscriptions", OPERATOR_NAMESPACE)
    matching = [s for s in reader.list(path, "Subscription") if (s.get("spec") or {}).get("name") == PACKAGE]
    return matching[0] if matching else None


def _csv(reader: _Reader, subscription: Optional[dict]) -> Optional[dict]:
    status = (subscription or {}).get("status") or {}
    name = status.get("installedCSV") or status.get("currentCSV")
    if name:
        return reader.get(resource_path(OLM_V1ALPHA1, "clusterserviceversions", OPERATOR_NAMESPACE, name),
                          "ClusterServiceVersion")
    path = resource_path(OLM_V1ALPHA1, "clusterserviceversions", OPERATOR_NAMESPACE)
    found = [c for c in reader.list(path, "ClusterServiceVersion") if c["metadata"]["name"].startswith(CSV_PREFIX)]
    return found[-1] if found else None


def _operator_facts(subscription: Optional[dict], csv: Optional[dict]) -> dict[str, Any]:
    spec = (subscription or {}).get("spec") or {}
    sub_status = (subscription or {}).get("status") or {}
    csv_status = (csv or {}).get("status") or {}
    return {
        "package": PACKAGE,
        "namespace": OPERATOR_NAMESPACE,
        "subscription": None if subscription is None else {
            "name": subscription["metadata"]["name"], "channel": spec.get("channel"), "source": spec.get("source"),
            "source_namespace": spec.get("sourceNamespace"), "starting_csv": spec.get("startingCSV"),
            "install_plan_approval": spec.get("installPlanApproval"), "state": sub_status.get("state"),
            "installed_csv": sub_status.get("installedCSV"), "current_csv": sub_status.get("currentCSV"),
        },
        "channel": spec.get("channel"),
        "csv": None if csv is None else {
            "name": csv["metadata"]["name"], "version": (csv.get("spec") or {}).get("version"),
            "phase": csv_status.get("phase"), "reason": csv_status.get("reason"),
            "message": csv_status.get("message"),
        },
        "version": ((csv or {}).get("spec") or {}).get("version"),
        "csv_phase": csv_status.get("phase"),
    }


# --- the operand -----------------------------------------------------------------------------------------------------


def _container(workload_spec: dict, name: Optional[str]) -> dict:
    containers = (workload_spec.get("template") or {}).get("spec", {}).get("containers") or []
    chosen = [c for c in containers if c.get("name") == name] or containers[:1]
    return chosen[0] if chosen else {}


def _arg_value(args: list[str], flag: str) -> Optional[str]:
    for arg in args:
        if arg == flag:
            return "true"
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def mode_from_args(args: list[str]) -> str:
    """predictive with --dry-run (or --dry-run=true), else automatic (the operator adds no flag for Automatic)."""
    dry_run = _arg_value(args, "--dry-run")
    return "predictive" if dry_run is not None and dry_run.lower() in ("true", "1", "t") else "automatic"


def _log_level(args: list[str]) -> Optional[str]:
    for arg in args:
        match = _VERBOSITY_ARG.match(arg)
        if match:
            return VERBOSITY.get(int(match.group(1)), f"-v={match.group(1)}")
    return None


def _pod_summary(pod: dict, container_name: Optional[str]) -> dict[str, Any]:
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    container = [c for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name") == container_name]
    return {"name": pod["metadata"]["name"], "node": (pod.get("spec") or {}).get("nodeName"),
            "phase": status.get("phase"), "ready": ready, "created": pod["metadata"].get("creationTimestamp"),
            "args": (container[0] if container else {}).get("args") or []}


def _operand_facts(workload: dict, kind: str, pods: list[dict], container_name: str) -> dict[str, Any]:
    spec = workload.get("spec") or {}
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    container = _container(spec, container_name)
    args = list(container.get("args") or []) + list(container.get("command") or [])[1:]
    return {
        "kind": kind,
        "name": workload["metadata"]["name"],
        "namespace": workload["metadata"].get("namespace"),
        "container": container.get("name"),
        "image": container.get("image"),
        "args": args,
        "mode": mode_from_args(args),
        "log_level": _log_level(args),
        "interval": _arg_value(args, "--descheduling-interval"),
        "schedule": (workload.get("spec") or {}).get("schedule") if kind == "CronJob" else None,
        "replicas": (workload.get("spec") or {}).get("replicas") if kind == "Deployment" else None,
        "rolled_out": operand_rolled_out(workload) if kind == "Deployment" else None,
        "rendered_generation": applied_generation(workload) if kind == "Deployment" else None,
        "pods": [_pod_summary(p, container.get("name")) for p in pods],
    }


def _newest_running(pods: list[dict]) -> Optional[dict]:
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"] or pods
    return max(running, key=lambda p: p["metadata"].get("creationTimestamp") or "") if running else None


def _evictions(reader: _Reader, namespace: str, pods: list[dict], container: Optional[str],
               params: Mapping[str, Any]) -> tuple[Optional[dict], Optional[dict]]:
    pod = _newest_running(pods)
    if pod is None or not params.get("read_log", True):
        return None, None
    query: list = [("tailLines", params.get("log_lines") or 10000)]
    if container:
        query.append(("container", container))
    path = resource_path("v1", "pods", namespace, pod["metadata"]["name"], "log")
    text = reader.text(path, query, "Pod")
    if text is None:
        return None, None
    source = {"pod": f"{namespace}/{pod['metadata']['name']}", "container": container, "tail_lines": query[0][1]}
    return {**parse_descheduler_log(text), **_container_start(pod, container)}, source


def _container_start(pod: dict, container: Optional[str]) -> dict[str, Any]:
    """When the container whose log was read started, and its restarts: the log is that start's only, and the
    Predictive gate leaves out the cycles the operand ran before its view of the cluster was complete."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    chosen = [s for s in statuses if s.get("name") == container] or statuses[:1]
    status = chosen[0] if chosen else {}
    running = (status.get("state") or {}).get("running") or {}
    return {"container_started": running.get("startedAt"), "container_restarts": status.get("restartCount")}


def _policy(reader: _Reader, path: str, key: str) -> Optional[dict]:
    import yaml

    configmap = reader.get(path, "ConfigMap")
    text = ((configmap or {}).get("data") or {}).get(key)
    if not text:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        reader.notes.append(f"ConfigMap {path} key {key} is not valid YAML: {error}")
        return None


# --- flavors ---------------------------------------------------------------------------------------------------------


def _kubedescheduler_facts(kubedescheduler: Optional[dict]) -> Optional[dict]:
    if kubedescheduler is None:
        return None
    status = kubedescheduler.get("status") or {}
    return {
        "spec": kubedescheduler.get("spec") or {},
        "generation": kubedescheduler["metadata"].get("generation"),
        "conditions": status.get("conditions") or [],
        "degraded": [{"type": c.get("type"), "reason": condition_text(c)}
                     for c in degraded_conditions(kubedescheduler)],
    }


def _olm_info(reader: _Reader, params: Mapping[str, Any], subscription: Optional[dict],
              kubedescheduler: Optional[dict]) -> dict[str, Any]:
    csv = _csv(reader, subscription)
    info: dict[str, Any] = {"flavor": "olm", "operator": _operator_facts(subscription, csv),
                            "kubedescheduler": _kubedescheduler_facts(kubedescheduler),
                            "policy": _policy(reader, POLICY_CONFIGMAP_PATH, POLICY_KEY),
                            "policy_source": f"ConfigMap {OPERATOR_NAMESPACE}/cluster key {POLICY_KEY}"}
    deployment = reader.get(OPERAND_DEPLOYMENT_PATH, "Deployment")
    pods = reader.list(resource_path("v1", "pods", OPERATOR_NAMESPACE), "Pod", OPERAND_LABEL_SELECTOR)
    info["operand"] = _operand_facts(deployment, "Deployment", pods, OPERAND_CONTAINER) if deployment else None
    info["expected_operand"], info["operand_drift"] = _drift(reader, kubedescheduler, deployment, info["policy"])
    info["evictions"], info["log_source"] = _evictions(reader, OPERATOR_NAMESPACE, pods, OPERAND_CONTAINER, params)
    return info


def _drift(reader: _Reader, kubedescheduler: Optional[dict], deployment: Optional[dict],
           policy: Optional[dict]) -> tuple[Optional[dict], Optional[list[dict]]]:
    """The Deployments the operator writes for the live spec (with the TLS settings it observed and the soft taints
    left on nodes), and each field where the live ones differ; (None, None) without a KubeDescheduler."""
    if kubedescheduler is None:
        return None, None
    spec = kubedescheduler.get("spec") or {}
    nodes = reader.list("/api/v1/nodes", "Node", KUBEVIRT_NODE_SELECTOR)
    expected = render_operand(spec, observed_config=spec.get("observedConfig"),
                              tainted_nodes=leftover_soft_taints(nodes), policy=policy)
    softtainter = reader.get(SOFTTAINTER_DEPLOYMENT_PATH, "Deployment")
    return expected, operand_drift(expected, deployment, softtainter)


def _upstream_workload(reader: _Reader, namespace: str, name: str) -> tuple[Optional[dict], str]:
    deployment = reader.get(resource_path("apps/v1", "deployments", namespace, name), "Deployment")
    if deployment is not None:
        return deployment, "Deployment"
    return reader.get(resource_path("batch/v1", "cronjobs", namespace, name), "CronJob"), "CronJob"


def _selector(workload: dict, kind: str) -> Optional[str]:
    spec = workload.get("spec") or {}
    template = spec.get("template") if kind == "Deployment" else (
        ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template"))
    labels = ((template or {}).get("metadata") or {}).get("labels") or {}
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items())) or None


def _upstream_policy_configmap(workload: dict, kind: str) -> Optional[str]:
    spec = workload.get("spec") or {}
    pod_spec = ((spec.get("template") if kind == "Deployment" else
                 ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")) or {}).get("spec") or {}
    for volume in pod_spec.get("volumes") or []:
        if (volume.get("configMap") or {}).get("name"):
            return volume["configMap"]["name"]
    return None


def _upstream_info(reader: _Reader, params: Mapping[str, Any], workload: dict, kind: str) -> dict[str, Any]:
    namespace = workload["metadata"]["namespace"]
    pods = reader.list(resource_path("v1", "pods", namespace), "Pod", _selector(workload, kind))
    operand = _operand_facts(workload, kind, pods, params.get("upstream_container") or "")
    configmap = _upstream_policy_configmap(workload, kind)
    path = resource_path("v1", "configmaps", namespace, configmap) if configmap else None
    info: dict[str, Any] = {"flavor": "upstream", "operator": None, "kubedescheduler": None, "operand": operand,
                            "policy": _policy(reader, path, POLICY_KEY) if path else None,
                            "policy_source": f"ConfigMap {namespace}/{configmap} key {POLICY_KEY}" if path else None}
    info["evictions"], info["log_source"] = _evictions(reader, namespace, pods, operand["container"], params)
    return info


def gather_info(api_client: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    reader = _Reader(api_client)
    subscription = _subscription(reader)
    kubedescheduler = reader.get(KUBEDESCHEDULER_PATH, "KubeDescheduler")
    csv_found = subscription is None and _csv(reader, None) is not None
    if subscription is not None or kubedescheduler is not None or csv_found:
        info = _olm_info(reader, params, subscription, kubedescheduler)
    else:
        workload, kind = _upstream_workload(reader, params.get("upstream_namespace") or "kube-system",
                                            params.get("upstream_name") or "descheduler")
        info = _upstream_info(reader, params, workload, kind) if workload else {
            "flavor": "none", "operator": None, "kubedescheduler": None, "operand": None, "policy": None,
            "policy_source": None, "evictions": None, "log_source": None}
    info["secondary_scheduler"] = secondary_scheduler_facts(reader)
    info["volcano"] = volcano_facts(reader)
    info["notes"] = reader.notes
    return info


def run_info(params: Mapping[str, Any]) -> dict[str, Any]:
    api_client, identity = connect_to_intended_cluster(params)
    return {**gather_info(api_client, params), "cluster_identity": identity.as_dict()}
