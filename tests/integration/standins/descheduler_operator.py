"""The Kube Descheduler Operator's TargetConfigReconciler as a stand-in controller acting on any API server.

    operator = DeschedulerOperator(api_client).install()   # CRD, namespace, operator Deployment, loop
    operator.inject_error("...")        # next syncs fail with it (log-only, or DEGRADED_SCALE_TO_ZERO)
    operator.psi_enabled = False        # the PSI check fails: KubeVirt profiles degrade
    operator.set_operand_log(text)      # the operand pods' log, served by the API server as `pods/log`

Each pass reads KubeDescheduler `cluster` and validates it as the operator does, with the facts the operator sees
(the namespaces that existed when it started, frozen until `restart()`, priority classes, nodes, its namespace's
labels, `schedulers.config.openshift.io/cluster`, the prometheus-k8s route, PSI), then, as the real operator was seen
to do (reference operator-observed.md):
- "S" errors: scales Deployment `descheduler` to 0 and sets `TargetConfigControllerDegraded=True` (reason = the
  error), as scaleDownDeployment does; a missing `spec.managementState` also sets `ConfigObservationDegraded=True`
  ("spec.managementState in body should match ...");
- "L" errors: logs `"key" failed with : <error>` in the operator log (once per distinct error) and changes nothing;
- errors of the operand (a priority class that does not exist, a threshold above system-critical...): the operator
  renders and writes as usual, logs nothing, and the operand's pods never become Ready;
- otherwise writes ConfigMap `cluster` (`policy.yaml`) and Deployment `descheduler` as manageDeschedulerDeployment
  writes bindata/assets/kube-descheduler/deployment.yaml (upstream main at 945dcaa): args with
  `--descheduling-interval`, feature gates, the TLS flags from `spec.observedConfig.servingInfo`, `--dry-run=true` for
  Predictive, `-v=N`; pod template annotations `kubedeschedulers.operator.openshift.io/cluster: <generation>` and
  `configmaps/cluster: <resourceVersion>`), owned by the KubeDescheduler; for a KubeVirt profile, or while a
  `kubevirt.io/schedulable=true` node keeps a soft taint, also Deployment `softtainter` (softtainterdeployment.yaml,
  its args with the same `-v=N`) and its ServiceAccount, deleted once neither holds; and sets the three conditions it
  reports (`TargetConfigControllerDegraded`, `ConfigObservationDegraded`, `ResourceSyncControllerDegraded`) to False.
Rolling the Deployment out is the cluster's job (kube-controller-manager and the kubelet stand-in); with
`operand_ready=False` the operand's pods are annotated never to become Ready (kubelet_standin.NEVER_READY).

The policy is rendered with the collection's engine (`render_policy`): tests must check policies against literal
values, never against this rendering. The Deployments are written from the upstream assets here, never from the
collection's rendering. Not modelled: Service/RBAC/PrometheusRule objects, the soft-tainter's RBAC and admission
policy, the config observer (`spec.observedConfig` is what a test writes, as the observer would from the cluster's
APIServer TLS profile) and the resourceVersion annotations of the objects not modelled.
Pod logs come from kubelets: they are written over HTTP as the pod annotation the control plane's kubelet stand-in
serves (kubelet_logs.write_pod_log). The lines are also kept in `operator_log`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ADMISSION_REJECTED,
    DEGRADED_SCALE_TO_ZERO,
    ERROR,
    KUBEVIRT_PROFILES,
    LOG_ONLY_IGNORED,
    OPERAND_FAILS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import (
    render_policy,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from kubelet_logs import write_pod_log
from kubelet_standin import NEVER_READY

from .kubedescheduler_types import API_VERSION, KUBEDESCHEDULER_CRD
from .loop import StandIn
from .rest import install_crds, path

OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
OPERAND = "descheduler"
OPERAND_CONTAINER = "openshift-descheduler"
OPERATOR_DEPLOYMENT = "descheduler-operator"
OPERATOR_POD_SELECTOR = "name=descheduler-operator"  # the operator pods, whose log holds its refusals
OPERAND_SERVICE_ACCOUNT = "openshift-descheduler-operand"
OPERAND_IMAGE = "registry.redhat.io/kube-descheduler-operator/descheduler-rhel9:v5.4.0"
SOFTTAINTER = "softtainter"
SOFTTAINTER_SERVICE_ACCOUNT = "openshift-descheduler-softtainter"
SOFTTAINTER_IMAGE = "registry.redhat.io/kube-descheduler-operator/kube-descheduler-rhel9-operator:v5.4.0"
SOFT_TAINT_KEYS = ("nodeutilization.descheduler.openshift.io/overutilized",
                   "nodeutilization.descheduler.openshift.io/appropriate")
GENERATION_ANNOTATION = "kubedeschedulers.operator.openshift.io/cluster"
DEGRADED = "TargetConfigControllerDegraded"
CONFIG_OBSERVATION_DEGRADED = "ConfigObservationDegraded"
RESOURCE_SYNC_DEGRADED = "ResourceSyncControllerDegraded"
CONDITIONS = (DEGRADED, CONFIG_OBSERVATION_DEGRADED, RESOURCE_SYNC_DEGRADED)
VERBOSITY = {"Normal": 2, "Debug": 4, "Trace": 6, "TraceAll": 8}
DEFAULT_PROMETHEUS_HOST = "prometheus-k8s-openshift-monitoring.apps.emulated.example"
KD_PATH = path(API_VERSION, "kubedeschedulers", OPERATOR_NAMESPACE, "cluster")


def klog_line(severity: str, source: str, text: str) -> str:
    return f"{severity}{datetime.now(UTC):%m%d %H:%M:%S.%f}       1 {source}] {text}\n"


def operator_deployment_without_olm() -> dict[str, Any]:
    """The operator's own Deployment, as the CSV would install it (for clusters where OLM is not involved)."""
    labels = {"name": OPERATOR_DEPLOYMENT}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": OPERATOR_DEPLOYMENT, "namespace": OPERATOR_NAMESPACE, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": OPERATOR_DEPLOYMENT,
                                                           "image": "descheduler-operator:stand-in"}]}}}}


APPLY_ATTEMPTS = 5  # create-or-update rounds before an object that keeps vanishing is an error


class DeschedulerOperator(StandIn):
    name = "descheduler-operator-stand-in"
    # its inputs: the KubeDescheduler a module writes, the operand's Deployment and pods it reports on
    watches = (path(API_VERSION, "kubedeschedulers", OPERATOR_NAMESPACE),
               path("apps/v1", "deployments", OPERATOR_NAMESPACE), path("v1", "pods", OPERATOR_NAMESPACE))
    idle_interval = 5.0

    def __init__(self, api_client: Any, *, psi_enabled: bool = True, operand_ready: bool = True) -> None:
        super().__init__(api_client)
        self.psi_enabled = psi_enabled
        self.operand_ready = operand_ready
        self.injected_errors: list[tuple[str, str]] = []
        self.operator_log: list[str] = []
        self.operand_log = ""
        self.syncs = 0
        self.started_namespaces: list[str] = []
        self._logged: set[str] = set()
        self._pushed_logs: dict[tuple[str, str | None], str] = {}

    # -- setup and test handles --

    def install(self, monitoring_label: bool = True, operator_deployment: bool = True) -> DeschedulerOperator:
        """The CRD, the namespace and the operator Deployment when missing; (re)start the loop."""
        install_crds(self.rest, [KUBEDESCHEDULER_CRD])
        labels = {"openshift.io/cluster-monitoring": "true"} if monitoring_label else {}
        self.rest.create_if_absent(path("v1", "namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE, "labels": labels}})
        if operator_deployment:
            self.rest.create_if_absent(path("apps/v1", "deployments", OPERATOR_NAMESPACE),
                                       operator_deployment_without_olm())
        self.restart()
        self.start()
        return self

    def restart(self, pod: bool = False) -> None:
        """The operator (re)starts: the protected namespace list is taken now, as NewTargetConfigReconciler does.
        ``pod``: its pods are deleted too (their Deployment starts new ones), so that the pod's start time, which the
        collection reads, says when."""
        with self.lock:
            pods = path("v1", "pods", OPERATOR_NAMESPACE)
            for item in self.rest.list(pods, label_selector=OPERATOR_POD_SELECTOR) if pod else []:
                self.rest.delete(f"{pods}/{item['metadata']['name']}")
            self.started_namespaces = [ns["metadata"]["name"] for ns in self.rest.list(path("v1", "namespaces"))]

    def inject_error(self, message: str, outcome: str = LOG_ONLY_IGNORED) -> None:
        """Make the next syncs fail with `message` (log-only, or DEGRADED_SCALE_TO_ZERO), until `clear_errors()`."""
        with self.lock:
            self.injected_errors.append((outcome, message))

    def clear_errors(self) -> None:
        with self.lock:
            self.injected_errors.clear()

    def set_operand_log(self, text: str) -> None:
        """The operand's log (klog lines), for the current operand pods and the ones rolled out later."""
        with self.lock:
            self.operand_log = text
            self._push_logs()

    # -- the loop --

    def reconcile(self) -> None:
        kubedescheduler = self.rest.get(KD_PATH)
        if kubedescheduler is not None and not kubedescheduler["metadata"].get("deletionTimestamp"):
            self.syncs += 1
            self._sync(kubedescheduler)
        self._push_logs()

    def _sync(self, kubedescheduler: dict[str, Any]) -> None:
        spec = kubedescheduler.get("spec") or {}
        outcome, message = self._first_error(spec)
        if outcome == DEGRADED_SCALE_TO_ZERO:
            self._log_once("E", "target_config_reconciler.go:201",
                           f'"descheduler sync failed" err="{message}"')
            # the re-validation of the object against OperatorSpec fails the config observer too
            observation = message if message.startswith("spec.managementState") else None
            self._scale_down(kubedescheduler, message, observation)
        elif outcome == LOG_ONLY_IGNORED:
            self._log_once("E", "controller.go:154", f'"Unhandled Error" err="\\"key\\" failed with : '
                           f'{message}"')
        else:
            self._render(kubedescheduler, spec)

    def _facts(self) -> dict[str, Any]:
        namespace = self.rest.get(path("v1", "namespaces", name=OPERATOR_NAMESPACE)) or {"metadata": {}}
        scheduler = self.rest.get(path("config.openshift.io/v1", "schedulers", name="cluster"))
        return {
            "namespaces": self.started_namespaces,
            "priority_class_names": [p["metadata"]["name"]
                                     for p in self.rest.list(path("scheduling.k8s.io/v1", "priorityclasses"))],
            "nodes": self.rest.list(path("v1", "nodes")),
            "namespace_labels": namespace["metadata"].get("labels") or {},
            "scheduler_profile": ((scheduler or {}).get("spec") or {}).get("profile") or "",
        }

    def _prometheus_host(self) -> str | None:
        route = self.rest.get(path("route.openshift.io/v1", "routes", "openshift-monitoring", "prometheus-k8s"))
        ingress = ((route or {}).get("status") or {}).get("ingress") or []
        return (ingress[0] or {}).get("host") if ingress else None

    @staticmethod
    def _needs_prometheus(spec: dict[str, Any]) -> bool:
        utilization = (spec.get("profileCustomizations") or {}).get("devActualUtilizationProfile")
        return any(p in KUBEVIRT_PROFILES for p in spec.get("profiles") or []) or bool(utilization)

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

    def _operand_fails(self, spec: dict[str, Any]) -> bool:
        """An error only the operand meets (the operator renders it without a word): its pods never become Ready."""
        return any(f.severity == ERROR and f.operator_behaviour == OPERAND_FAILS
                   for f in validate_kubedescheduler_spec(spec, **self._facts()))

    # -- logs --

    def _log_once(self, severity: str, source: str, text: str) -> None:
        """One line per distinct error: a level-triggered pass repeats every 0.2 s, where the operator's rate-limited
        queue would log a retry now and then; tests count the distinct refusals."""
        if text not in self._logged:
            self._logged.add(text)
            self.operator_log.append(klog_line(severity, source, text))

    def _push_logs(self) -> None:
        wanted = [(OPERATOR_POD_SELECTOR, None, "".join(self.operator_log)),
                  (f"app={OPERAND}", OPERAND_CONTAINER, self.operand_log)]
        for selector, container, text in wanted:
            if not text:
                continue
            for pod in self.rest.list(path("v1", "pods", OPERATOR_NAMESPACE), label_selector=selector):
                key = (pod["metadata"]["name"], container)
                if self._pushed_logs.get(key) != text:
                    write_pod_log(self.rest.api_client, OPERATOR_NAMESPACE, pod["metadata"]["name"], container, text)
                    self._pushed_logs[key] = text

    # -- writes --

    def _apply(self, plural: str, desired: dict[str, Any]) -> dict[str, Any]:
        """Create, or update what differs (labels, annotations, ownerReferences, data, spec); no write when equal."""
        metadata = desired["metadata"]
        collection = path(desired["apiVersion"], plural, OPERATOR_NAMESPACE)

        def edit(current: dict[str, Any]) -> None:
            for key in ("labels", "annotations", "ownerReferences"):
                if key in metadata:
                    current["metadata"][key] = metadata[key]
            for key in ("data", "spec"):
                if key in desired:
                    current[key] = _merged(current.get(key), desired[key])

        # Read and update first: it exists on every pass but the first. It can vanish or appear between the calls
        # (the garbage collector removing it once its KubeDescheduler was deleted): start again, as a controller
        # requeues, and let a later sync settle it.
        for _attempt in range(APPLY_ATTEMPTS):
            result = self.rest.change(f"{collection}/{metadata['name']}", edit)  # None: absent
            if result is not None:
                return result
            created = self.rest.create_if_absent(collection, desired)
            if created is not None:
                return created
        raise AssertionError(f"{collection}/{metadata['name']} vanished {APPLY_ATTEMPTS} times while it was applied")

    @staticmethod
    def _owner(kubedescheduler: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"apiVersion": API_VERSION, "kind": "KubeDescheduler", "name": "cluster",
                 "uid": kubedescheduler["metadata"]["uid"]}]

    def _render(self, kubedescheduler: dict[str, Any], spec: dict[str, Any]) -> None:
        policy = render_policy(spec, namespaces=self.started_namespaces, validate=False,
                               prometheus_url=self._prometheus_host() or DEFAULT_PROMETHEUS_HOST)
        configmap = self._apply("configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE,
                         "ownerReferences": self._owner(kubedescheduler)},
            "data": {"policy.yaml": yaml.safe_dump(policy, sort_keys=False, default_flow_style=False)},
        })
        # the operand's ServiceAccount: a real API server refuses pods that name a missing one
        self._apply("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                        "metadata": {"name": OPERAND_SERVICE_ACCOUNT, "namespace": OPERATOR_NAMESPACE,
                                                     "ownerReferences": self._owner(kubedescheduler)}})
        annotations = {GENERATION_ANNOTATION: str(kubedescheduler["metadata"].get("generation", 1)),
                       "configmaps/cluster": configmap["metadata"]["resourceVersion"],
                       **({} if self.operand_ready and not self._operand_fails(spec) else {NEVER_READY: "true"})}
        deployment = self._apply("deployments", operand_deployment(self._owner(kubedescheduler), spec, annotations))
        self._manage_softtainter(kubedescheduler, spec, annotations)
        self._set_status([{"type": name, "status": "False"} for name in CONDITIONS], deployment)

    def _softtainter_needed(self, spec: dict[str, Any]) -> bool:
        """isSoftTainterNeeded: a KubeVirt profile, or a soft taint left on a KubeVirt-schedulable node."""
        if any(p in KUBEVIRT_PROFILES for p in spec.get("profiles") or []):
            return True
        nodes = self.rest.list(path("v1", "nodes"), label_selector="kubevirt.io/schedulable=true")
        taints = [t for node in nodes for t in (node.get("spec") or {}).get("taints") or []]
        # taints.TaintExists: key and effect, whatever the value
        return any(t.get("key") in SOFT_TAINT_KEYS and t.get("effect") == "PreferNoSchedule" for t in taints)

    def _manage_softtainter(self, kubedescheduler: dict[str, Any], spec: dict[str, Any],
                            annotations: dict[str, str]) -> None:
        deployments = path("apps/v1", "deployments", OPERATOR_NAMESPACE)
        if not self._softtainter_needed(spec):
            if self.rest.get(f"{deployments}/{SOFTTAINTER}") is not None:
                self.rest.delete(f"{deployments}/{SOFTTAINTER}")
            return
        self._apply("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                        "metadata": {"name": SOFTTAINTER_SERVICE_ACCOUNT,
                                                     "namespace": OPERATOR_NAMESPACE,
                                                     "ownerReferences": self._owner(kubedescheduler)}})
        self._apply("deployments", softtainter_deployment(self._owner(kubedescheduler), spec, annotations))

    def _scale_down(self, kubedescheduler: dict[str, Any], message: str, observation: str | None) -> None:
        url = path("apps/v1", "deployments", OPERATOR_NAMESPACE, OPERAND)
        deployment = self.rest.change(url, lambda d: d["spec"].update(replicas=0))
        observed = {"type": CONFIG_OBSERVATION_DEGRADED, "status": "False"} if observation is None else {
            "type": CONFIG_OBSERVATION_DEGRADED, "status": "True", "reason": observation}
        self._set_status([{"type": DEGRADED, "status": "True", "reason": message}, observed], deployment)

    def _set_status(self, conditions: list[dict[str, Any]], deployment: dict[str, Any] | None) -> None:
        def edit(current: dict[str, Any]) -> None:
            status = current.setdefault("status", {})
            status["conditions"] = _with_conditions(status.get("conditions") or [], conditions)
            if deployment is not None:
                status["generations"] = [{"group": "apps", "resource": "deployments", "namespace": OPERATOR_NAMESPACE,
                                          "name": OPERAND,
                                          "lastGeneration": deployment["metadata"].get("generation", 1)}]
                status["readyReplicas"] = (deployment.get("status") or {}).get("readyReplicas", 0)

        self.rest.change(KD_PATH + "/status", edit)


def _with_conditions(current: list[dict[str, Any]], changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``current`` with each of ``changes`` set, its lastTransitionTime kept while its status stays."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    changed = {c["type"] for c in changes}
    result = [c for c in current if c.get("type") not in changed]
    for condition in changes:
        previous = next((c for c in current if c.get("type") == condition["type"]), None) or {}
        since = previous.get("lastTransitionTime") if previous.get("status") == condition["status"] else now
        result.append({**condition, "lastTransitionTime": since})
    return result


def _merged(current: Any, desired: Any) -> Any:
    """`desired` over `current`, keeping fields the API server defaulted (as resourcemerge.EnsureObjectMeta and
    ApplyDeployment leave server defaults alone): without this every pass would rewrite a defaulted Deployment."""
    if isinstance(current, dict) and isinstance(desired, dict):
        return {**current, **{key: _merged(current.get(key), value) for key, value in desired.items()}}
    if isinstance(current, list) and isinstance(desired, list) and len(current) == len(desired):
        return [_merged(c, d) for c, d in zip(current, desired, strict=True)]
    return json.loads(json.dumps(desired))


def _verbosity(spec: dict[str, Any]) -> str:
    return f"-v={VERBOSITY.get(spec.get('logLevel') or '', 2)}"


def operand_args(spec: dict[str, Any]) -> list[str]:
    """manageDeschedulerDeployment's args, in its order, then manageDeployment's -v."""
    args = ["--policy-config-file=/policy-dir/policy.yaml", "--logging-format=text",
            "--tls-cert-file=/certs-dir/tls.crt", "--tls-private-key-file=/certs-dir/tls.key",
            f"--descheduling-interval={spec['deschedulingIntervalSeconds']}s"]
    customizations = spec.get("profileCustomizations") or {}
    if customizations.get("devEnableEvictionsInBackground") or any(
            p in KUBEVIRT_PROFILES for p in spec.get("profiles") or []):
        args.append("--feature-gates=EvictionsInBackground=true")
    serving = (spec.get("observedConfig") or {}).get("servingInfo") or {}
    if serving.get("cipherSuites"):
        args.append(f"--tls-cipher-suites={','.join(serving['cipherSuites'])}")
    if serving.get("minTLSVersion"):
        args.append(f"--tls-min-version={serving['minTLSVersion']}")
    if spec.get("mode") == "Predictive":
        args.append("--dry-run=true")
    args.append(_verbosity(spec))
    return args


def _asset_deployment(name: str, app: str, owner: list[dict[str, Any]], container: dict[str, Any],
                      service_account: str, annotations: dict[str, str]) -> dict[str, Any]:
    """deployment.yaml / softtainterdeployment.yaml as manageDeployment completes them: 1 replica, owned by the
    KubeDescheduler, the policy volume's ConfigMap renamed to the CR's name, the spec annotations merged."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": OPERATOR_NAMESPACE, "labels": {"app": app},
                     "ownerReferences": owner},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app},
                             "annotations": {"kubectl.kubernetes.io/default-container": container["name"],
                                             "openshift.io/required-scc": "restricted-v2", **annotations}},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "volumes": [{"name": "policy-volume", "configMap": {"name": "cluster"}},
                                {"name": "certs-dir", "secret": {"secretName": "kube-descheduler-serving-cert"}}],
                    "priorityClassName": "system-cluster-critical",
                    "restartPolicy": "Always",
                    "containers": [{**container,
                                    "securityContext": {"allowPrivilegeEscalation": False,
                                                        "readOnlyRootFilesystem": True,
                                                        "capabilities": {"drop": ["ALL"]}},
                                    "terminationMessagePolicy": "FallbackToLogsOnError",
                                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                                    "volumeMounts": [{"mountPath": "/policy-dir", "name": "policy-volume"},
                                                     {"mountPath": "/certs-dir", "name": "certs-dir"}]}],
                    "serviceAccountName": service_account,
                },
            },
        },
    }


def operand_deployment(owner: list[dict[str, Any]], spec: dict[str, Any],
                       annotations: dict[str, str]) -> dict[str, Any]:
    container = {"name": OPERAND_CONTAINER, "image": OPERAND_IMAGE, "command": ["/bin/descheduler"],
                 "args": operand_args(spec)}
    return _asset_deployment(OPERAND, OPERAND, owner, container, OPERAND_SERVICE_ACCOUNT, annotations)


def softtainter_deployment(owner: list[dict[str, Any]], spec: dict[str, Any],
                           annotations: dict[str, str]) -> dict[str, Any]:
    """The asset's labels say "softtainer" (sic); manageSoftTainterDeployment renames only the Deployment."""
    probe = {"failureThreshold": 1, "periodSeconds": 5}
    container = {"name": "openshift-softtainer", "image": SOFTTAINTER_IMAGE, "command": ["/usr/bin/soft-tainter"],
                 "args": ["--policy-config-file=/policy-dir/policy.yaml", _verbosity(spec)],
                 "livenessProbe": {**probe, "httpGet": {"path": "/livez", "port": 6060, "scheme": "HTTP"},
                                   "initialDelaySeconds": 30},
                 "readinessProbe": {**probe, "httpGet": {"path": "/readyz", "port": 6060, "scheme": "HTTP"},
                                    "initialDelaySeconds": 5}}
    return _asset_deployment(SOFTTAINTER, "softtainer", owner, container, SOFTTAINTER_SERVICE_ACCOUNT, annotations)
