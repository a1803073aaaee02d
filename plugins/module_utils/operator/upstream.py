"""The upstream descheduler on plain Kubernetes, as the kubernetes-sigs/descheduler Helm chart (0.36) deploys it.

ServiceAccount, ClusterRole (the chart's rules) and binding, the policy ConfigMap, and either a Deployment running
the descheduling loop (``--descheduling-interval``) or a CronJob (``schedule``); ``--dry-run`` for predictive mode.
The policy is validated (as the descheduler would, against the cluster's PriorityClasses) before anything is
written, and the pod template carries a checksum of it so a policy change restarts the descheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import descheduler_config as flavor
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.descheduler_config import (
    POLICY_FILE_ARG,
    check_policy,
    is_interval,
    policy_document,
    policy_text,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import UPSTREAM_POLICY_DIR
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import wait_rolled_out

CONTAINER_NAME = "descheduler"
APP_NAME = "descheduler"
METRICS_PORT = 10258
CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")

# The chart's default policy (values.yaml deschedulerPolicy), used when none is given.
DEFAULT_POLICY: dict[str, Any] = {
    "profiles": [{
        "name": "default",
        "pluginConfig": [
            {"name": "DefaultEvictor", "args": {"podProtections": {"defaultDisabled": ["PodsWithLocalStorage"],
                                                                   "extraEnabled": ["PodsWithPVC"]}}},
            {"name": "RemoveDuplicates"},
            {"name": "RemovePodsHavingTooManyRestarts",
             "args": {"podRestartThreshold": 100, "includingInitContainers": True}},
            {"name": "RemovePodsViolatingNodeAffinity",
             "args": {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}},
            {"name": "RemovePodsViolatingNodeTaints"},
            {"name": "RemovePodsViolatingInterPodAntiAffinity"},
            {"name": "RemovePodsViolatingTopologySpreadConstraint"},
            {"name": "LowNodeUtilization", "args": {
                "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
                "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50}}},
        ],
        "plugins": {
            "balance": {"enabled": ["RemoveDuplicates", "RemovePodsViolatingTopologySpreadConstraint",
                                    "LowNodeUtilization"]},
            "deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts", "RemovePodsViolatingNodeTaints",
                                       "RemovePodsViolatingNodeAffinity",
                                       "RemovePodsViolatingInterPodAntiAffinity"]},
        },
    }],
}

# The chart's ClusterRole (templates/clusterrole.yaml), without leader election (one replica, never with --dry-run).
CLUSTER_ROLE_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "update"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "watch", "list"]},
]
METRICS_RULE = {"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list"]}
CONTAINER_SECURITY_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "privileged": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "runAsUser": 1000,
}
RESOURCES = {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}


@dataclass
class UpstreamRequest:
    name: str
    namespace: str
    image: str
    version: str
    mode: str  # predictive | automatic
    kind: str  # deployment | cronjob
    interval: str
    schedule: str
    policy: dict
    priority_class_name: Optional[str]
    log_level: int
    extra_args: list[str] = field(default_factory=list)
    wait: bool = True
    waiter: Optional[Waiter] = None


# ---- validation -----------------------------------------------------------------------------------------------------

def validate(session: ClusterSession, request: UpstreamRequest) -> dict:
    """Check the request before any write; returns the full DeschedulerPolicy document to deploy."""
    if request.kind == "deployment" and not is_interval(request.interval):
        raise LifecycleError(f"upstream.interval: invalid value {request.interval!r}: a positive Go duration "
                             "such as 5m, 1h or 90s is required when upstream.kind is deployment",
                             field="upstream.interval")
    if request.kind == "cronjob" and not _is_cron(request.schedule):
        raise LifecycleError(f"upstream.schedule: invalid value {request.schedule!r}: a cron schedule with five "
                             "fields (for example '*/10 * * * *') or a macro such as @hourly",
                             field="upstream.schedule")
    flavor.refuse_dry_run_when_automatic(request, "upstream")
    flavor.refuse_other_installs_objects(session, request.name, "upstream")
    document = policy_document(request.policy, DEFAULT_POLICY)
    check_policy(session, document, "upstream.policy")
    return document


def _is_cron(schedule: str) -> bool:
    schedule = (schedule or "").strip()
    if schedule.startswith("@"):
        return schedule in CRON_MACROS or schedule.startswith("@every ")
    return len(schedule.split()) == 5


# ---- manifests ------------------------------------------------------------------------------------------------------

def labels(request: UpstreamRequest) -> dict[str, str]:
    return flavor.labels(APP_NAME, request)


def selector_labels(request: UpstreamRequest) -> dict[str, str]:
    return flavor.selector_labels(APP_NAME, request)


def cluster_role(request: UpstreamRequest, document: dict) -> dict:
    providers = document.get("metricsProviders") or []
    rules = list(CLUSTER_ROLE_RULES)
    if any(isinstance(p, dict) and p.get("source") == "KubernetesMetrics" for p in providers):
        rules.append(METRICS_RULE)  # LowNodeUtilization reads metrics.k8s.io only with this provider
    return {"metadata": {"labels": labels(request)}, "rules": rules}


def container_args(request: UpstreamRequest) -> list[str]:
    args = [POLICY_FILE_ARG]
    if request.kind == "deployment":
        args.append(f"--descheduling-interval={request.interval}")
    args.append(f"--v={request.log_level}")
    if request.mode == "predictive":
        args.append("--dry-run=true")  # evictions are only logged ("Evicted pod in dry run mode")
    return args + list(request.extra_args)


def container(request: UpstreamRequest) -> dict:
    spec: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": f"{request.image}:{request.version}",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/descheduler"],
        "args": container_args(request),
        "resources": RESOURCES,
        "securityContext": CONTAINER_SECURITY_CONTEXT,
        "volumeMounts": [{"mountPath": UPSTREAM_POLICY_DIR, "name": "policy-volume"}],
    }
    if request.kind == "deployment":
        spec["ports"] = [{"containerPort": METRICS_PORT, "protocol": "TCP"}]
        spec["livenessProbe"] = {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": METRICS_PORT,
                                                                    "scheme": "HTTPS"},
                                 "initialDelaySeconds": 5, "periodSeconds": 20, "timeoutSeconds": 5}
    return spec


def pod_template(request: UpstreamRequest, text: str) -> dict:
    spec: dict[str, Any] = {
        "serviceAccountName": request.name,
        "containers": [container(request)],
        "volumes": [{"name": "policy-volume", "configMap": {"name": request.name}}],
    }
    if request.priority_class_name:
        spec["priorityClassName"] = request.priority_class_name
    if request.kind == "cronjob":
        spec["restartPolicy"] = "Never"
    checksum = flavor.policy_checksum(text)
    return {"metadata": {"labels": selector_labels(request), "annotations": {"checksum/config": checksum}},
            "spec": spec}


def workload(request: UpstreamRequest, text: str) -> tuple[Ref, dict]:
    if request.kind == "deployment":
        return Ref("Deployment", request.name, request.namespace), {
            "metadata": {"labels": labels(request)},
            "spec": {"replicas": 1, "selector": {"matchLabels": selector_labels(request)},
                     "template": pod_template(request, text)},
        }
    return Ref("CronJob", request.name, request.namespace), {
        "metadata": {"labels": labels(request)},
        "spec": {"schedule": request.schedule, "concurrencyPolicy": "Forbid",
                 "jobTemplate": {"spec": {"template": pod_template(request, text)}}},
    }


# ---- install / uninstall --------------------------------------------------------------------------------------------

def install(session: ClusterSession, request: UpstreamRequest) -> dict:
    document = validate(session, request)
    text = policy_text(document)
    session.ensure("namespace", Ref("Namespace", request.namespace), {"metadata": {}})
    flavor.ensure_access_and_policy(session, request, labels(request), cluster_role(request, document), text)
    ref, desired = workload(request, text)
    remove_other_workload(session, request)
    obj = session.ensure("workload", ref, desired)
    if ref.kind == "Deployment" and request.wait and not session.check_mode and request.waiter is not None:
        wait_rolled_out(session, ref, request.waiter, "check its pods: image pull, scheduling, the policy")
    return flavor.install_result(request, ref, obj, container_args(request), document)


def remove_other_workload(session: ClusterSession, request: UpstreamRequest) -> None:
    """Switching between deployment and cronjob: the other kind of the same descheduler goes (never an object that
    is not this descheduler's, by its app labels)."""
    other = Ref("CronJob" if request.kind == "deployment" else "Deployment", request.name, request.namespace)
    existing = session.read(other)
    if existing is None:
        return
    found = existing["metadata"].get("labels") or {}
    if all(found.get(k) == v for k, v in selector_labels(request).items()):
        session.delete("workload", other, existing)
    else:
        session.warnings.append(f"{other} exists and is not this descheduler's (labels {found}); left alone")


def uninstall(session: ClusterSession, request: UpstreamRequest) -> dict:
    refs = [Ref("Deployment", request.name, request.namespace), Ref("CronJob", request.name, request.namespace),
            Ref("ConfigMap", request.name, request.namespace), Ref("ClusterRoleBinding", request.name),
            Ref("ClusterRole", request.name), Ref("ServiceAccount", request.name, request.namespace)]
    removed = [str(ref) for ref in refs if session.delete(_step_of(ref), ref)]
    return {"namespace": request.namespace, "name": request.name, "removed": removed}


def _step_of(ref: Ref) -> str:
    return {"Deployment": "workload", "CronJob": "workload", "ConfigMap": "policy",
            "ClusterRoleBinding": "cluster_role_binding", "ClusterRole": "cluster_role",
            "ServiceAccount": "service_account"}[ref.kind]
