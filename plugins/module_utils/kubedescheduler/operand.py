"""The Deployments the Kube Descheduler Operator writes for a KubeDescheduler: the descheduler (the operand) and, for
the KubeVirt profiles, the soft-tainter; and how a live Deployment differs from them (drift).

Behaviour follows openshift/cluster-kube-descheduler-operator ``main`` at 945dcaa: ``manageDeschedulerDeployment``,
``manageSoftTainterDeployment``, ``manageDeployment`` and ``isSoftTainterNeeded`` in
``pkg/operator/target_config_reconciler.go``, over ``bindata/assets/kube-descheduler/deployment.yaml`` and
``softtainterdeployment.yaml``. An independent re-implementation in pure Python.

Not rendered, because the spec does not decide them: the container images (the operator takes them from its own
environment, ``RELATED_IMAGE_OPERAND_IMAGE`` and ``RELATED_IMAGE_SOFTTAINTER_IMAGE``), the pod template annotations
holding the generation and the resourceVersions of the objects it applied just before, and the ownerReference (the
KubeDescheduler's uid). Drift compares what the spec decides (``DRIFT_FIELDS``), never the image.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    OPERAND_CONTAINER,
    OPERAND_NAME,
    OPERATOR_NAMESPACE,
    POLICY_CONFIGMAP,
    SOFTTAINTER_APP_LABEL,
    SOFTTAINTER_CONTAINER,
    SOFTTAINTER_NAME,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    KUBEVIRT_PROFILES,
    KUBEVIRT_SCHEDULABLE_LABEL,
    LOG_LEVEL_VERBOSITY,
    SOFT_TAINTS,
)

POLICY_FILE_ARG = "--policy-config-file=/policy-dir/policy.yaml"
# deployment.yaml's args, before those manageDeschedulerDeployment appends
DESCHEDULER_BASE_ARGS = (POLICY_FILE_ARG, "--logging-format=text", "--tls-cert-file=/certs-dir/tls.crt",
                         "--tls-private-key-file=/certs-dir/tls.key")
DEFAULT_VERBOSITY = 2  # manageDeployment's `default:` case
# What the spec decides on a Deployment, compared by drift (paths as info reports them).
DRIFT_FIELDS = ("spec.replicas", "container.name", "container.command", "container.args",
                "spec.template.spec.serviceAccountName", "spec.template.spec.priorityClassName",
                "policy volume configMap")


def _profiles(spec: dict) -> list:
    profiles = spec.get("profiles")
    return list(profiles) if isinstance(profiles, list) else []


def has_kubevirt_profile(spec: dict) -> bool:
    return any(profile in KUBEVIRT_PROFILES for profile in _profiles(spec))


def verbosity_arg(spec: dict) -> str:
    """``-v=N`` from ``logLevel``: Normal 2, Debug 4, Trace 6, TraceAll 8, anything else 2."""
    return f"-v={LOG_LEVEL_VERBOSITY.get(spec.get('logLevel'), DEFAULT_VERBOSITY)}"


def _feature_gates(spec: dict) -> list[str]:
    customizations = spec.get("profileCustomizations") or {}
    in_background = customizations.get("devEnableEvictionsInBackground") is True or has_kubevirt_profile(spec)
    return ["EvictionsInBackground=true"] if in_background else []


def _tls_args(observed_config: Optional[dict]) -> list[str]:
    """The TLS flags from ``spec.observedConfig.servingInfo``, which the operator's config observer fills from the
    cluster's APIServer TLS profile."""
    serving = ((observed_config or {}).get("servingInfo") or {}) if isinstance(observed_config, dict) else {}
    args = []
    suites = serving.get("cipherSuites")
    if isinstance(suites, list) and suites:
        args.append("--tls-cipher-suites=" + ",".join(str(suite) for suite in suites))
    if serving.get("minTLSVersion"):
        args.append(f"--tls-min-version={serving['minTLSVersion']}")
    return args


def descheduler_args(spec: dict, observed_config: Optional[dict] = None) -> list[str]:
    """The operand's arguments, in the operator's order."""
    args = list(DESCHEDULER_BASE_ARGS) + [f"--descheduling-interval={spec['deschedulingIntervalSeconds']}s"]
    gates = _feature_gates(spec)
    if gates:
        args.append("--feature-gates=" + ",".join(gates))
    args += _tls_args(observed_config)
    if spec.get("mode") == "Predictive":
        args.append("--dry-run=true")
    return args + [verbosity_arg(spec)]


def softtainter_args(spec: dict) -> list[str]:
    # manageDeployment appends -v to the first container of both Deployments
    return [POLICY_FILE_ARG, verbosity_arg(spec)]


def leftover_soft_taints(nodes: Iterable[dict]) -> list[str]:
    """KubeVirt-schedulable nodes still carrying a soft taint: the operator keeps the soft-tainter to clean them."""
    key, value = KUBEVIRT_SCHEDULABLE_LABEL
    tainted = []
    for node in nodes:
        metadata = node.get("metadata") or {}
        if (metadata.get("labels") or {}).get(key) != value:
            continue
        taints = {(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or []}
        if taints & set(SOFT_TAINTS):
            tainted.append(metadata.get("name"))
    return tainted


def _security_context() -> dict:
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def _volume_mounts() -> list[dict]:
    return [{"mountPath": "/policy-dir", "name": "policy-volume"}, {"mountPath": "/certs-dir", "name": "certs-dir"}]


def _deployment(name: str, app: str, container: dict, service_account: str) -> dict:
    """The asset's Deployment as manageDeployment completes it (1 replica, the ConfigMap named after the CR)."""
    labels = {"app": app}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": OPERATOR_NAMESPACE, "labels": dict(labels)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/default-container": container["name"],
                                             "openshift.io/required-scc": "restricted-v2"},
                             "labels": dict(labels)},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "volumes": [{"name": "policy-volume", "configMap": {"name": POLICY_CONFIGMAP}},
                                {"name": "certs-dir", "secret": {"secretName": "kube-descheduler-serving-cert"}}],
                    "priorityClassName": "system-cluster-critical",
                    "restartPolicy": "Always",
                    "containers": [{**container, "securityContext": _security_context(),
                                    "terminationMessagePolicy": "FallbackToLogsOnError",
                                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                                    "volumeMounts": _volume_mounts()}],
                    "serviceAccountName": service_account,
                },
            },
        },
    }


def render_descheduler_deployment(spec: dict, observed_config: Optional[dict] = None) -> dict:
    container = {"name": OPERAND_CONTAINER, "command": ["/bin/descheduler"],
                 "args": descheduler_args(spec, observed_config)}
    return _deployment(OPERAND_NAME, OPERAND_NAME, container, "openshift-descheduler-operand")


def render_softtainter_deployment(spec: dict) -> dict:
    probe = {"failureThreshold": 1, "httpGet": {"port": 6060, "scheme": "HTTP"}, "periodSeconds": 5}
    container = {"name": SOFTTAINTER_CONTAINER, "command": ["/usr/bin/soft-tainter"], "args": softtainter_args(spec),
                 "livenessProbe": {**probe, "httpGet": {**probe["httpGet"], "path": "/livez"},
                                   "initialDelaySeconds": 30},
                 "readinessProbe": {**probe, "httpGet": {**probe["httpGet"], "path": "/readyz"},
                                    "initialDelaySeconds": 5}}
    # the asset names it "softtainer" (sic); manageSoftTainterDeployment renames the Deployment, not its labels
    return _deployment(SOFTTAINTER_NAME, SOFTTAINTER_APP_LABEL, container, "openshift-descheduler-softtainter")


def _eviction_limits(policy: Optional[dict]) -> dict:
    policy = policy or {}
    return {"total": policy.get("maxNoOfPodsToEvictTotal"), "node": policy.get("maxNoOfPodsToEvictPerNode")}


def render_operand(spec: dict, *, observed_config: Optional[dict] = None, tainted_nodes: Iterable[str] = (),
                   policy: Optional[dict] = None) -> dict[str, Any]:
    """What the operator runs for ``spec`` (CRD defaults applied): ``descheduler`` and ``softtainter`` (None when it
    deletes it) Deployments, ``softtainter_why``, and the policy's ``eviction_limits`` (``policy``: the rendered
    DeschedulerPolicy; the KubeVirt profiles default them to 5 in total and 2 per node). ``descheduler`` is None for a
    spec without a positive interval: the operator renders nothing then, it scales the Deployment to 0."""
    interval = spec.get("deschedulingIntervalSeconds")
    valid_interval = isinstance(interval, int) and not isinstance(interval, bool) and interval > 0
    tainted = sorted(tainted_nodes)
    why = ("a KubeVirt profile is set" if has_kubevirt_profile(spec) else
           f"nodes {', '.join(tainted)} still have soft taints to clean up" if tainted else None)
    return {
        "descheduler": render_descheduler_deployment(spec, observed_config) if valid_interval else None,
        "softtainter": render_softtainter_deployment(spec) if why else None,
        "softtainter_why": why,
        "eviction_limits": _eviction_limits(policy),
    }


# --- drift -----------------------------------------------------------------------------------------------------------


def _container(deployment: dict, name: str) -> dict:
    containers = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
    return next((c for c in containers if c.get("name") == name), containers[0] if containers else {})


def _policy_configmap(deployment: dict) -> Optional[str]:
    volumes = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("volumes") or []
    volume = next((v for v in volumes if v.get("name") == "policy-volume"), {})
    return (volume.get("configMap") or {}).get("name")


def decided_fields(deployment: Optional[dict], container_name: str) -> Optional[dict]:
    """The fields of a Deployment the spec decides (``DRIFT_FIELDS``), for drift and for the module's diff."""
    if deployment is None:
        return None
    container = _container(deployment, container_name)
    pod_spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    replicas = (deployment.get("spec") or {}).get("replicas")
    decided = {
        "spec.replicas": 1 if replicas is None else replicas,
        "container.name": container.get("name"),
        "container.command": container.get("command"),
        "container.args": container.get("args"),
        "spec.template.spec.serviceAccountName": pod_spec.get("serviceAccountName"),
        "spec.template.spec.priorityClassName": pod_spec.get("priorityClassName"),
        "policy volume configMap": _policy_configmap(deployment),
    }
    return {name: decided[name] for name in DRIFT_FIELDS}


def deployment_drift(live: Optional[dict], expected: Optional[dict], container_name: str) -> list[dict]:
    """Each field where the live Deployment differs from the rendering: ``field``, ``live``, ``expected``; args are
    compared as a list, so a changed, missing or extra flag (or a new order) shows."""
    name = ((expected or live or {}).get("metadata") or {}).get("name")
    if live is None and expected is None:
        return []
    if live is None or expected is None:
        return [{"deployment": name, "field": "deployment", "live": "present" if live else "absent",
                 "expected": "present" if expected else "absent"}]
    live_fields = decided_fields(live, container_name) or {}
    expected_fields = decided_fields(expected, container_name) or {}
    return [{"deployment": name, "field": field, "live": live_fields[field], "expected": expected_fields[field]}
            for field in DRIFT_FIELDS if live_fields[field] != expected_fields[field]]


def operand_drift(rendering: dict, live_descheduler: Optional[dict], live_softtainter: Optional[dict]) -> list[dict]:
    """Drift of both Deployments. A descheduler the operator did not render (no valid interval) is not compared."""
    drift = []
    if rendering.get("descheduler") is not None:
        drift += deployment_drift(live_descheduler, rendering["descheduler"], OPERAND_CONTAINER)
    return drift + deployment_drift(live_softtainter, rendering.get("softtainter"), SOFTTAINTER_CONTAINER)
