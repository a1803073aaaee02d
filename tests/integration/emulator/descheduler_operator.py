"""The Kube Descheduler Operator's own behaviour, as far as the collection's modules wait on it.

`install_descheduler_operator(emulator)` serves the `kubedeschedulers.operator.openshift.io` CRD (v1, namespaced, status
subresource), creates the operator namespace and an operator pod (`name=descheduler-operator`, whose log receives the
operator's error lines), and adds:

- admission as the API server does it for this CRD (4.21+): CRD defaults (mode Predictive, logLevel and
  operatorLogLevel Normal), the schema/CEL rejections (422) and the singleton name rule;
- `KubeDeschedulerOperator`, the TargetConfigReconciler: on every write of KubeDescheduler `cluster` it validates the
  spec like the operator (with the facts the operator sees: the namespaces that existed when it "started", priority
  classes, nodes, the namespace labels, `schedulers.config.openshift.io/cluster`, the prometheus-k8s route, PSI), then
  - "S" errors: scales Deployment `descheduler` to 0 and sets `TargetConfigControllerDegraded=True` (reason = the
    error), as scaleDownDeployment does;
  - "L" errors: logs `key failed with : <error>` in the operator pod log and changes nothing;
  - otherwise writes ConfigMap `cluster` (`policy.yaml`) and Deployment `descheduler` (args with
    `--descheduling-interval`, `--dry-run=true` for Predictive, `-v=N`, feature gates; pod template annotations
    `kubedeschedulers.operator.openshift.io/cluster: <generation>` and `configmaps/cluster: <rv>`), rolls its pod,
    and sets the condition to False.

The policy is rendered with the collection's engine (`render_policy`): tests must check policies against literal
values, never against this rendering. Simplifications: no ReplicaSet (the operand pod is owned by the Deployment),
the roll-out is immediate, no Service/RBAC/PrometheusRule/soft-tainter objects.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.findings import (
    KubeDeschedulerError,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import (
    render_policy,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.vocabulary import (
    ADMISSION_REJECTED,
    DEGRADED_SCALE_TO_ZERO,
    ERROR,
    KUBEVIRT_PROFILES,
    LOG_ONLY_IGNORED,
)

from . import errors
from .api import AdmissionRequest, DeleteOptions
from .controllers import Controller, running_ready_status
from .resources import ResourceType
from .store import clone

if TYPE_CHECKING:
    from .emulator import Emulator

OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
GROUP = "operator.openshift.io"
KUBEDESCHEDULERS = (GROUP, "kubedeschedulers")
DEPLOYMENTS = ("apps", "deployments")
CONFIGMAPS = ("", "configmaps")
PODS = ("", "pods")
OPERAND = "descheduler"
OPERAND_CONTAINER = "openshift-descheduler"
OPERATOR_POD = "descheduler-operator-7d9f8b6c5-x2x4q"
OPERAND_IMAGE = "registry.redhat.io/kube-descheduler-operator/descheduler-rhel9:v5.4.0"
GENERATION_ANNOTATION = "kubedeschedulers.operator.openshift.io/cluster"
DEGRADED = "TargetConfigControllerDegraded"
CRD_DEFAULTS = {"mode": "Predictive", "logLevel": "Normal", "operatorLogLevel": "Normal"}
SPEC_FIELDS = ("managementState", "logLevel", "operatorLogLevel", "observedConfig", "unsupportedConfigOverrides",
               "deschedulingIntervalSeconds", "profiles", "mode", "evictionLimits", "profileCustomizations")
VERBOSITY = {"Normal": 2, "Debug": 4, "Trace": 6, "TraceAll": 8}
DEFAULT_PROMETHEUS_HOST = "prometheus-k8s-openshift-monitoring.apps.emulated.example"

KUBEDESCHEDULER_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kubedeschedulers.operator.openshift.io"},
    "spec": {
        "group": GROUP,
        "names": {"kind": "KubeDescheduler", "listKind": "KubeDeschedulerList", "plural": "kubedeschedulers",
                  "singular": "kubedescheduler"},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }],
    },
}

# Types a test may need to create the objects the operator reads (OpenShift APIs a plain cluster lacks).
SCHEDULER_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "schedulers.config.openshift.io"},
    "spec": {"group": "config.openshift.io", "scope": "Cluster",
             "names": {"kind": "Scheduler", "plural": "schedulers", "singular": "scheduler"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}]},
}
ROUTE_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "routes.route.openshift.io"},
    "spec": {"group": "route.openshift.io", "scope": "Namespaced",
             "names": {"kind": "Route", "plural": "routes", "singular": "route"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}]},
}


def klog_line(severity: str, source: str, text: str) -> str:
    now = datetime.now(UTC)
    return f"{severity}{now:%m%d %H:%M:%S.%f}       1 {source}] {text}\n"


def _spec_hash(template: dict) -> str:
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


# --- admission -------------------------------------------------------------------------------------------------------


def _cause(finding: Any) -> dict[str, str]:
    return {"reason": "FieldValueInvalid", "field": finding.field,
            "message": finding.operator_message or finding.message}


def admit_kubedescheduler(request: AdmissionRequest) -> None:
    """Defaults, pruning and the CRD schema/CEL rules of KubeDescheduler (API server side)."""
    if request.resource_type.group_resource != KUBEDESCHEDULERS or request.object is None or request.subresource:
        return
    obj = request.object
    name = obj["metadata"].get("name", "")
    if name != "cluster":
        raise errors.invalid("KubeDescheduler", GROUP, name, [{
            "reason": "FieldValueInvalid", "field": "<nil>",
            "message": "Invalid value: \"object\": kubedescheduler is a singleton, .metadata.name must be 'cluster'"}])
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        for key in [k for k in spec if k not in SPEC_FIELDS]:
            del spec[key]  # structural schema: unknown fields are pruned
        for key, value in CRD_DEFAULTS.items():
            spec.setdefault(key, value)
    rejected = [f for f in validate_kubedescheduler_spec(spec) if f.severity == ERROR
                and f.operator_behaviour == ADMISSION_REJECTED]
    if rejected:
        raise errors.invalid("KubeDescheduler", GROUP, name, [_cause(f) for f in rejected])


# --- the operator ----------------------------------------------------------------------------------------------------


class KubeDeschedulerOperator(Controller):
    """TargetConfigReconciler.sync on every KubeDescheduler write (see the module docstring)."""

    name = "kube-descheduler-operator"
    watches = (KUBEDESCHEDULERS,)

    def __init__(self, emulator: Emulator, *, psi_enabled: bool = True, operand_ready: bool = True) -> None:
        self.emulator = emulator
        self.psi_enabled = psi_enabled
        self.operand_ready = operand_ready
        self.injected_errors: list[tuple[str, str]] = []
        self.operator_log: list[str] = []
        self.operand_log = ""
        self.syncs = 0
        self.restart()

    # -- test handles --

    def restart(self) -> None:
        """The operator pod (re)starts: the protected namespace list is taken now, as NewTargetConfigReconciler does."""
        self.started_namespaces = [ns["metadata"]["name"] for ns in self.emulator.list("namespaces")]

    def inject_error(self, message: str, outcome: str = LOG_ONLY_IGNORED) -> None:
        """Make the next syncs fail with `message` (log-only, or DEGRADED_SCALE_TO_ZERO), until `clear_errors()`."""
        self.injected_errors.append((outcome, message))

    def clear_errors(self) -> None:
        self.injected_errors.clear()

    def set_operand_log(self, text: str) -> None:
        """The operand's log (klog lines), for the current operand pod and the ones rolled out later."""
        self.operand_log = text
        for pod in self.emulator.list("pods", OPERATOR_NAMESPACE, label_selector=f"app={OPERAND}"):
            self.emulator.set_pod_log(OPERATOR_NAMESPACE, pod["metadata"]["name"], text, OPERAND_CONTAINER)

    def resync(self, emulator: Emulator, namespaces: set[str]) -> None:
        self.sync()

    # -- events --

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        self.sync()

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        if old.get("spec") != new.get("spec") or old["metadata"].get("generation") != new["metadata"].get(
                "generation"):
            self.sync()

    # -- reconcile --

    def _cluster(self) -> dict[str, Any] | None:
        return self.emulator.store.get(KUBEDESCHEDULERS, OPERATOR_NAMESPACE, "cluster")

    def sync(self) -> None:
        kubedescheduler = self._cluster()
        if kubedescheduler is None or kubedescheduler["metadata"].get("deletionTimestamp"):
            return
        self.syncs += 1
        spec = kubedescheduler.get("spec") or {}
        outcome, message = self._first_error(spec)
        if outcome == DEGRADED_SCALE_TO_ZERO:
            self._log("E", "target_config_reconciler.go:201", f'"descheduler sync failed" err="{message}"')
            self._scale_down(kubedescheduler, message)
        elif outcome == LOG_ONLY_IGNORED:
            self._log("E", "controller.go:154", f'"Unhandled Error" err="key failed with : {message}"')
        else:
            self._render(kubedescheduler, spec)

    def _facts(self) -> dict[str, Any]:
        namespace = self.emulator.get("namespaces", None, OPERATOR_NAMESPACE) or {"metadata": {}}
        scheduler = self._optional("schedulers.config.openshift.io", None, "cluster")
        return {
            "namespaces": self.started_namespaces,
            "priority_class_names": [p["metadata"]["name"] for p in self.emulator.list("priorityclasses")],
            "nodes": self.emulator.list("nodes"),
            "namespace_labels": namespace["metadata"].get("labels") or {},
            "scheduler_profile": ((scheduler or {}).get("spec") or {}).get("profile") or "",
        }

    def _optional(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        try:
            return self.emulator.get(kind, namespace, name)
        except KeyError:  # the type is not served
            return None

    def _prometheus_host(self) -> str | None:
        route = self._optional("routes.route.openshift.io", "openshift-monitoring", "prometheus-k8s")
        ingress = ((route or {}).get("status") or {}).get("ingress") or []
        return (ingress[0] or {}).get("host") if ingress else None

    def _needs_prometheus(self, spec: dict[str, Any]) -> bool:
        profiles = spec.get("profiles") or []
        utilization = (spec.get("profileCustomizations") or {}).get("devActualUtilizationProfile")
        return any(p in KUBEVIRT_PROFILES for p in profiles) or bool(utilization)

    def _first_error(self, spec: dict[str, Any]) -> tuple[str | None, str]:
        """The outcome of the first error in the operator's order: S checks before rendering, then the rest."""
        if self.injected_errors:
            return self.injected_errors[0]
        findings = [f for f in validate_kubedescheduler_spec(spec, **self._facts()) if f.severity == ERROR]
        degraded = [f for f in findings if f.operator_behaviour in (DEGRADED_SCALE_TO_ZERO, ADMISSION_REJECTED)]
        if degraded:
            first = degraded[0]
            prefix = "descheduler validation failed: " if first.operator_behaviour == ADMISSION_REJECTED else ""
            return DEGRADED_SCALE_TO_ZERO, prefix + (first.operator_message or first.message)
        if self._needs_prometheus(spec) and not self._prometheus_host():
            return DEGRADED_SCALE_TO_ZERO, "unable to get openshift-monitoring/prometheus-k8s route"
        kubevirt = [p for p in spec.get("profiles") or [] if p in KUBEVIRT_PROFILES]
        if kubevirt and not self.psi_enabled:
            return (DEGRADED_SCALE_TO_ZERO,
                    f"profile {kubevirt[0]} can only be used when PSI metrics are enabled for the worker nodes")
        logged = [f for f in findings if f.operator_behaviour == LOG_ONLY_IGNORED]
        if logged:
            return LOG_ONLY_IGNORED, logged[0].operator_message or logged[0].message
        return None, ""

    # -- writes --

    def _log(self, severity: str, source: str, text: str) -> None:
        """Append to the log of every operator pod (ours, or the one an OLM emulation created)."""
        self.operator_log.append(klog_line(severity, source, text))
        pods = self.emulator.list("pods", OPERATOR_NAMESPACE, label_selector="name=descheduler-operator")
        for name in [p["metadata"]["name"] for p in pods] or [OPERATOR_POD]:
            self.emulator.set_pod_log(OPERATOR_NAMESPACE, name, "".join(self.operator_log))

    def _type(self, group_resource: tuple[str, str]) -> ResourceType:
        resource_type = self.emulator.storage_type(group_resource)
        assert resource_type is not None
        return resource_type

    def _apply(self, group_resource: tuple[str, str], desired: dict[str, Any]) -> dict[str, Any]:
        """Create, or update what differs (labels, annotations, ownerReferences, data, spec); no-op when equal."""
        resource_type = self._type(group_resource)
        metadata = desired["metadata"]
        existing = self.emulator.store.get(group_resource, metadata["namespace"], metadata["name"])
        if existing is None:
            return self.emulator.api.create(resource_type, metadata["namespace"], desired, user="system:operator")
        updated = clone(existing)
        for key in ("labels", "annotations", "ownerReferences"):
            if key in metadata:
                updated["metadata"][key] = metadata[key]
        for key in ("data", "spec"):
            if key in desired:
                updated[key] = desired[key]
        if updated == existing:
            return existing
        if resource_type.tracks_generation and updated.get("spec") != existing.get("spec"):
            updated["metadata"]["generation"] = existing["metadata"].get("generation", 1) + 1
        return self.emulator.api.write(resource_type, updated, existing)

    def _owner(self, kubedescheduler: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"apiVersion": f"{GROUP}/v1", "kind": "KubeDescheduler", "name": "cluster",
                 "uid": kubedescheduler["metadata"]["uid"]}]

    def _render(self, kubedescheduler: dict[str, Any], spec: dict[str, Any]) -> None:
        try:
            policy = render_policy(spec, namespaces=self.started_namespaces,
                                   prometheus_url=self._prometheus_host() or DEFAULT_PROMETHEUS_HOST)
        except KubeDeschedulerError as error:  # operand-side failures: the operator renders, the pod fails
            self._log("E", "controller.go:154", f'"Unhandled Error" err="key failed with : {error}"')
            return
        configmap = self._apply(CONFIGMAPS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE,
                         "ownerReferences": self._owner(kubedescheduler)},
            "data": {"policy.yaml": yaml.safe_dump(policy, sort_keys=False, default_flow_style=False)},
        })
        annotations = {GENERATION_ANNOTATION: str(kubedescheduler["metadata"].get("generation", 1)),
                       "configmaps/cluster": configmap["metadata"]["resourceVersion"]}
        deployment = self._apply(DEPLOYMENTS, self._deployment(kubedescheduler, spec, annotations))
        self._roll_out(deployment, replicas=1)
        self._set_status(kubedescheduler, {"type": DEGRADED, "status": "False"}, deployment)

    def _args(self, spec: dict[str, Any]) -> list[str]:
        args = ["--policy-config-file=/policy-dir/policy.yaml", "--logging-format=text",
                "--tls-cert-file=/certs-dir/tls.crt", "--tls-private-key-file=/certs-dir/tls.key",
                f"--descheduling-interval={spec['deschedulingIntervalSeconds']}s"]
        customizations = spec.get("profileCustomizations") or {}
        if customizations.get("devEnableEvictionsInBackground") or any(
                p in KUBEVIRT_PROFILES for p in spec.get("profiles") or []):
            args.append("--feature-gates=EvictionsInBackground=true")
        if spec.get("mode") == "Predictive":
            args.append("--dry-run=true")
        args.append(f"-v={VERBOSITY.get(spec.get('logLevel') or '', 2)}")
        return args

    def _deployment(self, kubedescheduler: dict[str, Any], spec: dict[str, Any],
                    annotations: dict[str, str]) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": OPERAND, "namespace": OPERATOR_NAMESPACE, "labels": {"app": OPERAND},
                         "ownerReferences": self._owner(kubedescheduler)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": OPERAND}},
                "template": {
                    "metadata": {"labels": {"app": OPERAND},
                                 "annotations": {"kubectl.kubernetes.io/default-container": OPERAND_CONTAINER,
                                                 **annotations}},
                    "spec": {
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": "openshift-descheduler-operand",
                        "volumes": [{"name": "policy-volume", "configMap": {"name": "cluster"}},
                                    {"name": "certs-dir", "secret": {"secretName": "kube-descheduler-serving-cert"}}],
                        "containers": [{"name": OPERAND_CONTAINER, "image": OPERAND_IMAGE,
                                        "command": ["/bin/descheduler"], "args": self._args(spec),
                                        "volumeMounts": [{"mountPath": "/policy-dir", "name": "policy-volume"},
                                                         {"mountPath": "/certs-dir", "name": "certs-dir"}]}],
                    },
                },
            },
        }

    def _roll_out(self, deployment: dict[str, Any], replicas: int) -> None:
        """The deployment controller, at once: pods of the current template only, then the status."""
        template_hash = _spec_hash(deployment["spec"]["template"])
        pods_type = self._type(PODS)
        current = []
        for pod in self.emulator.list("pods", OPERATOR_NAMESPACE, label_selector=f"app={OPERAND}"):
            if pod["metadata"].get("labels", {}).get("pod-template-hash") == template_hash and len(current) < replicas:
                current.append(pod)
            else:
                self.emulator.api.delete_object(pods_type, pod, DeleteOptions())
        while len(current) < replicas:
            current.append(self._create_pod(deployment, template_hash))
        ready = len(current) if self.operand_ready else 0
        updated = clone(self.emulator.store.get(DEPLOYMENTS, OPERATOR_NAMESPACE, OPERAND))
        before = clone(updated)
        updated["status"] = {
            "observedGeneration": updated["metadata"].get("generation", 1), "replicas": len(current),
            "updatedReplicas": len(current), "readyReplicas": ready, "availableReplicas": ready,
        }
        if updated != before:
            self.emulator.api.write(self._type(DEPLOYMENTS), updated, before)

    def _create_pod(self, deployment: dict[str, Any], template_hash: str) -> dict[str, Any]:
        template = clone(deployment["spec"]["template"])
        template["metadata"]["labels"]["pod-template-hash"] = template_hash
        nodes = sorted(n["metadata"]["name"] for n in self.emulator.list("nodes"))
        pod = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {**template["metadata"], "generateName": f"{OPERAND}-{template_hash}-",
                         "namespace": OPERATOR_NAMESPACE,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": OPERAND,
                                              "uid": deployment["metadata"]["uid"], "controller": True}]},
            "spec": {**template["spec"], **({"nodeName": nodes[0]} if nodes else {})},
        }
        pods_type = self._type(PODS)
        created = self.emulator.api.create(pods_type, OPERATOR_NAMESPACE, pod, user="system:operator")
        started = clone(created)
        started["status"] = running_ready_status(created) if self.operand_ready else {
            "phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [{"name": OPERAND_CONTAINER, "ready": False, "restartCount": 3,
                                   "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        created = self.emulator.api.write(pods_type, started, created)
        if self.operand_log:
            self.emulator.set_pod_log(OPERATOR_NAMESPACE, created["metadata"]["name"], self.operand_log,
                                      OPERAND_CONTAINER)
        return created

    def _scale_down(self, kubedescheduler: dict[str, Any], message: str) -> None:
        deployment = self.emulator.store.get(DEPLOYMENTS, OPERATOR_NAMESPACE, OPERAND)
        if deployment is not None and deployment["spec"].get("replicas") != 0:
            scaled = clone(deployment)
            scaled["spec"]["replicas"] = 0
            deployment = self.emulator.api.write(self._type(DEPLOYMENTS), scaled, deployment)
        if deployment is not None:
            self._roll_out(deployment, replicas=0)
            deployment = self.emulator.store.get(DEPLOYMENTS, OPERATOR_NAMESPACE, OPERAND)
        self._set_status(kubedescheduler, {"type": DEGRADED, "status": "True", "reason": message}, deployment)

    def _set_status(self, kubedescheduler: dict[str, Any], condition: dict[str, Any],
                    deployment: dict[str, Any] | None) -> None:
        current = self._cluster()
        if current is None:
            return
        status = clone(current.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
        previous = next((c for c in status.get("conditions") or [] if c.get("type") == condition["type"]), None)
        since = (previous or {}).get("lastTransitionTime") if (previous or {}).get("status") == condition["status"] \
            else datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        status["conditions"] = conditions + [{**condition, "lastTransitionTime": since}]
        if deployment is not None:
            status["generations"] = [{"group": "apps", "resource": "deployments", "namespace": OPERATOR_NAMESPACE,
                                      "name": OPERAND, "lastGeneration": deployment["metadata"].get("generation", 1)}]
            status["readyReplicas"] = (deployment.get("status") or {}).get("readyReplicas", 0)
        if status != current.get("status"):
            updated = clone(current)
            updated["status"] = status
            self.emulator.api.write(self._type(KUBEDESCHEDULERS), updated, current)


# --- installation ----------------------------------------------------------------------------------------------------


def _operator_pod() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": OPERATOR_POD, "namespace": OPERATOR_NAMESPACE,
                         "labels": {"name": "descheduler-operator"}},
            "spec": {"containers": [{"name": "descheduler-operator", "image": "descheduler-operator:emulated"}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def install_descheduler_operator(emulator: Emulator, *, monitoring_label: bool = True, psi_enabled: bool = True,
                         operand_ready: bool = True) -> KubeDeschedulerOperator:
    """Serve the CRD and run the operator's reconciler (idempotent: an existing CRD or namespace is kept)."""
    if emulator.get("customresourcedefinitions", None, KUBEDESCHEDULER_CRD["metadata"]["name"]) is None:
        emulator.create(clone(KUBEDESCHEDULER_CRD))
    labels = {"openshift.io/cluster-monitoring": "true"} if monitoring_label else {}
    if emulator.get("namespaces", None, OPERATOR_NAMESPACE) is None:
        emulator.create({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": OPERATOR_NAMESPACE, "labels": labels}})
    if not emulator.list("pods", OPERATOR_NAMESPACE, label_selector="name=descheduler-operator"):
        emulator.load([_operator_pod()])
    if admit_kubedescheduler not in emulator.admission_hooks:
        emulator.add_admission(admit_kubedescheduler)
    existing = [c for c in emulator.controllers if isinstance(c, KubeDeschedulerOperator)]
    if existing:
        existing[0].restart()  # a reinstall restarts the operator pod: it takes the namespaces anew
        return existing[0]
    operator = KubeDeschedulerOperator(emulator, psi_enabled=psi_enabled, operand_ready=operand_ready)
    emulator.add_controller(operator)
    operator.sync()
    return operator
