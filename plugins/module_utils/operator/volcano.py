"""The Volcano descheduler (volcano-sh/descheduler, a fork of the upstream descheduler with the ``LoadAware`` plugin),
deployed as its installer manifest does (reference peers.md §1.5): namespace ``volcano-system``, ServiceAccount,
ClusterRole and binding, ConfigMap ``volcano-descheduler`` with ``policy.yaml``, and a one-replica Deployment running
``/vc-descheduler --descheduling-interval=...``.

Differences from the manifest, on purpose: the process logs to stderr (the manifest redirects to a hostPath file, so
``kubectl logs`` and our ``info`` module would see nothing), runs with ``--dry-run=true`` in predictive mode like the
other flavors, and the pod template carries a checksum of the policy so a policy change restarts it.

The namespace is shared with the Volcano scheduler: it is created when missing (and then labelled as ours) but only
deleted on removal when it carries that label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import descheduler_config as flavor
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import volcano_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.descheduler_config import (
    MANAGED_BY_LABEL,
    POLICY_FILE_ARG,
    check_policy,
    is_interval,
    policy_document,
    policy_text,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import MANAGED_BY, UPSTREAM_POLICY_DIR
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import wait_gone, wait_rolled_out

APP_NAME = "volcano-descheduler"
CONTAINER_NAME = "descheduler"
SCHEDULER_CONFIGMAP = "volcano-scheduler-configmap"  # the Volcano scheduler's, as its Helm chart names it

# The installer's example policy (thresholds cpu 30 / memory 30, targets cpu 80 / memory 85), used when none is
# given. Its metrics source is left empty as upstream ships it: LoadAware then evicts nothing (a warning says so).
DEFAULT_POLICY: dict[str, Any] = {
    "profiles": [{
        "name": "default",
        "pluginConfig": [
            {"name": "DefaultEvictor",
             "args": {"ignorePvcPods": True, "nodeFit": True, "priorityThreshold": {"value": 10000}}},
            {"name": "LoadAware", "args": {
                "evictableNamespaces": {"exclude": ["kube-system"]},
                "metrics": {"type": None, "address": None},
                "thresholds": {"cpu": 30, "memory": 30},
                "targetThresholds": {"cpu": 80, "memory": 85}}},
        ],
        "plugins": {"balance": {"enabled": ["LoadAware"]}},
    }],
}

# The installer's ClusterRole (installer/volcano-descheduler-development.yaml).
CLUSTER_ROLE_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "update"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list", "delete"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": ["metrics.k8s.io"], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
]
# With metrics.type prometheus_adaptor the node usage comes from the custom metrics API.
CUSTOM_METRICS_RULE = {"apiGroups": ["custom.metrics.k8s.io"], "resources": ["*"], "verbs": ["get", "list"]}


@dataclass
class VolcanoRequest:
    name: str
    namespace: str
    image: str
    version: str
    mode: str  # predictive | automatic
    interval: str
    policy: dict
    log_level: int
    extra_args: list[str] = field(default_factory=list)
    scheduler_config: Any = None  # the Volcano scheduler's configuration, for the pairing checks
    wait: bool = True
    waiter: Optional[Waiter] = None


# ---- validation -----------------------------------------------------------------------------------------------------

def validate(session: ClusterSession, request: VolcanoRequest) -> dict:
    """Check the request before any write; returns the DeschedulerPolicy document to deploy."""
    if not is_interval(request.interval):
        raise LifecycleError(f"volcano.interval: invalid value {request.interval!r}: a positive Go duration such as "
                             "10m, 1h or 90s is required (it becomes --descheduling-interval)",
                             field="volcano.interval", value=request.interval)
    flavor.refuse_dry_run_when_automatic(request, "volcano")
    flavor.refuse_other_installs_objects(session, request.name, "volcano")
    document = policy_document(request.policy, DEFAULT_POLICY)
    problems = volcano_policy.load_aware_problems(document)
    try:
        scheduler_config = volcano_policy.parse_scheduler_config(request.scheduler_config)
    except volcano_policy.SchedulerConfigError as error:
        raise LifecycleError(str(error), field="volcano_scheduler_config") from error
    if scheduler_config is not None:
        problems += volcano_policy.pairing_problems(document, scheduler_config)
    else:
        problems += _pairing_with_the_scheduler_found(session, request, document)
    errors, warnings = volcano_policy.split(problems)
    if errors:
        raise LifecycleError("the Volcano descheduler's policy cannot be deployed: " + "; ".join(map(str, errors)),
                             field=errors[0].field, problems=[{"field": p.field, "message": p.message}
                                                              for p in errors])
    session.warnings.extend(str(p) for p in warnings)
    check_policy(session, document, "volcano.policy")  # the engine knows Volcano's LoadAware too
    return document


def _pairing_with_the_scheduler_found(session: ClusterSession, request: VolcanoRequest,
                                      document: dict) -> list[volcano_policy.Problem]:
    """Without volcano_scheduler_config, the Volcano scheduler's ConfigMap in the same namespace (where its chart
    puts it) is checked too, but only to warn: the user did not ask for this pairing to block the install."""
    ref = Ref("ConfigMap", SCHEDULER_CONFIGMAP, request.namespace)
    found = session.read(ref)
    if found is None:
        return []
    try:
        scheduler_config = volcano_policy.parse_scheduler_config(found)
    except volcano_policy.SchedulerConfigError:
        return []
    problems = volcano_policy.pairing_problems(document, scheduler_config or {})
    return [volcano_policy.Problem(p.field, f"{p.message} (found in {ref}; pass it as volcano_scheduler_config to "
                                   "make this an error)", "warning") for p in problems]


# ---- manifests ------------------------------------------------------------------------------------------------------

def selector_labels(request: VolcanoRequest) -> dict[str, str]:
    return flavor.selector_labels(APP_NAME, request)


def labels(request: VolcanoRequest) -> dict[str, str]:
    return flavor.labels(APP_NAME, request)


def cluster_role(request: VolcanoRequest, document: dict) -> dict:
    rules = list(CLUSTER_ROLE_RULES)
    if "prometheus_adaptor" in _metrics_types(document):
        rules.append(CUSTOM_METRICS_RULE)
    return {"metadata": {"labels": labels(request)}, "rules": rules}


def _metrics_types(document: dict) -> set[str]:
    return {str(((entry.get("args") or {}).get("metrics") or {}).get("type"))
            for profile in document.get("profiles") or [] for entry in profile.get("pluginConfig") or []
            if isinstance(entry, dict)}


def container_args(request: VolcanoRequest) -> list[str]:
    args = [POLICY_FILE_ARG,
            f"--descheduling-interval={request.interval}",
            "--leader-elect=false",  # one replica, as the installer runs it
            f"--v={request.log_level}"]
    if request.mode == "predictive":
        args.append("--dry-run=true")
    return args + list(request.extra_args)


def deployment(request: VolcanoRequest, text: str) -> dict:
    checksum = flavor.policy_checksum(text)
    return {
        "metadata": {"labels": labels(request)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector_labels(request)},
            "template": {
                "metadata": {"labels": selector_labels(request), "annotations": {"checksum/config": checksum}},
                "spec": {
                    "serviceAccountName": request.name,
                    "containers": [{
                        "name": CONTAINER_NAME,
                        "image": f"{request.image}:{request.version}",
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["/vc-descheduler"],
                        "args": container_args(request),
                        "env": [{"name": "POD_NAMESPACE",
                                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
                        "volumeMounts": [{"mountPath": UPSTREAM_POLICY_DIR, "name": "policy-volume"}],
                    }],
                    "volumes": [{"name": "policy-volume", "configMap": {"name": request.name}}],
                },
            },
        },
    }


# ---- install / uninstall --------------------------------------------------------------------------------------------

def install(session: ClusterSession, request: VolcanoRequest) -> dict:
    document = validate(session, request)
    text = policy_text(document)
    namespace = Ref("Namespace", request.namespace)
    if session.read(namespace) is None:  # ours only when we create it: the Volcano scheduler may live there too
        session.ensure("namespace", namespace, {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY}}})
    else:
        session.record("namespace", str(namespace), "none", False, "exists")
    flavor.ensure_access_and_policy(session, request, labels(request), cluster_role(request, document), text)
    ref = Ref("Deployment", request.name, request.namespace)
    obj = session.ensure("workload", ref, deployment(request, text))
    if request.wait and not session.check_mode and request.waiter is not None:
        wait_rolled_out(session, ref, request.waiter, "check its pod: image pull, scheduling, the policy")
    return flavor.install_result(request, ref, obj, container_args(request), document)


def uninstall(session: ClusterSession, request: VolcanoRequest) -> dict:
    """Deployment first (its pod stops evicting), then what it used, then the namespace if it is ours."""
    removed = []
    workload = Ref("Deployment", request.name, request.namespace)
    if session.delete("workload", workload):
        removed.append(str(workload))
        if request.wait and not session.check_mode and request.waiter is not None:
            wait_gone(session, "workload", [workload], request.waiter)
    for step, ref in (("policy", Ref("ConfigMap", request.name, request.namespace)),
                      ("cluster_role_binding", Ref("ClusterRoleBinding", request.name)),
                      ("cluster_role", Ref("ClusterRole", request.name)),
                      ("service_account", Ref("ServiceAccount", request.name, request.namespace))):
        if session.delete(step, ref):
            removed.append(str(ref))
    namespace = Ref("Namespace", request.namespace)
    existing = session.read(namespace)
    if existing is not None and (existing.get("metadata") or {}).get("deletionTimestamp"):
        # a real API server keeps a namespace Terminating until its contents are gone: a re-run changes nothing
        session.record("namespace", str(namespace), "none", False, "already being deleted")
    elif existing is not None and ((existing.get("metadata") or {}).get("labels") or {}).get(
            MANAGED_BY_LABEL) == MANAGED_BY:
        session.delete("namespace", namespace, existing)
        removed.append(str(namespace))
        if request.wait and not session.check_mode and request.waiter is not None:
            wait_gone(session, "namespace", [namespace], request.waiter)
    elif existing is not None:
        session.record("namespace", str(namespace), "none", False, "kept: not created by descheduler.fleet")
    return {"namespace": request.namespace, "name": request.name, "removed": removed}
