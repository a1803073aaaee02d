"""The operator's Deployments (kubedescheduler/operand.py) against upstream's own expectations.

The expected values are copied from openshift/cluster-kube-descheduler-operator main at 945dcaa:
pkg/operator/target_config_reconciler_test.go (TestManageDeployment, TestManageSoftTainterDeployment, the TLS test)
and bindata/assets/kube-descheduler/{deployment,softtainterdeployment}.yaml; never from our own rendering.
"""

from __future__ import annotations

import copy

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operand import (
    deployment_drift,
    leftover_soft_taints,
    operand_drift,
    render_operand,
)

from kubedescheduler.policy_helpers import render

BASE_ARGS = ["--policy-config-file=/policy-dir/policy.yaml", "--logging-format=text",
             "--tls-cert-file=/certs-dir/tls.crt", "--tls-private-key-file=/certs-dir/tls.key"]
INTERMEDIATE_TWO = ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]


def _spec(profiles: list[str], **fields: object) -> dict:
    # as stored: the API server applied the CRD defaults (mode Predictive, logLevel Normal)
    return {"managementState": "Managed", "deschedulingIntervalSeconds": 10, "profiles": profiles,
            "mode": "Predictive", "logLevel": "Normal", "operatorLogLevel": "Normal", **fields}


def _container(deployment: dict) -> dict:
    return deployment["spec"]["template"]["spec"]["containers"][0]


def _args(spec: dict, **options: object) -> list[str]:
    return _container(render_operand(spec, **options)["descheduler"])["args"]


def test_no_feature_gates_automatic() -> None:
    # TestManageDeployment "NoFeatureGates": the whole container
    container = _container(render_operand(_spec(["LifecycleAndUtilization"], mode="Automatic"))["descheduler"])
    assert container == {
        "name": "openshift-descheduler",
        "command": ["/bin/descheduler"],
        "args": [*BASE_ARGS, "--descheduling-interval=10s", "-v=2"],
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
        "volumeMounts": [{"mountPath": "/policy-dir", "name": "policy-volume"},
                         {"mountPath": "/certs-dir", "name": "certs-dir"}],
    }


@pytest.mark.parametrize(("profiles", "customizations"), [
    (["LifecycleAndUtilization"], {"devEnableEvictionsInBackground": True}),  # "EvictionsInBackground"
    (["DevKubeVirtRelieveAndMigrate"], {}),  # "DevKubeVirtRelieveAndMigrate enables EvictionsInBackground by default"
    (["KubeVirtRelieveAndMigrate"], {"devEnableEvictionsInBackground": False}),
])
def test_evictions_in_background_feature_gate(profiles: list[str], customizations: dict) -> None:
    spec = _spec(profiles, mode="Automatic", profileCustomizations=customizations)
    assert _args(spec) == [*BASE_ARGS, "--descheduling-interval=10s", "--feature-gates=EvictionsInBackground=true",
                           "-v=2"]


def test_predictive_tls_and_log_level_in_the_operator_order() -> None:
    observed = {"servingInfo": {"cipherSuites": INTERMEDIATE_TWO, "minTLSVersion": "VersionTLS12"}}
    spec = _spec(["AffinityAndTaints"], logLevel="TraceAll", deschedulingIntervalSeconds=3600,
                 profileCustomizations={"devEnableEvictionsInBackground": True})
    assert _args(spec, observed_config=observed) == [
        *BASE_ARGS, "--descheduling-interval=3600s", "--feature-gates=EvictionsInBackground=true",
        "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "--tls-min-version=VersionTLS12", "--dry-run=true", "-v=8"]


@pytest.mark.parametrize(("log_level", "flag"), [("Normal", "-v=2"), ("Debug", "-v=4"), ("Trace", "-v=6"),
                                                 ("TraceAll", "-v=8"), ("", "-v=2"), (None, "-v=2")])
def test_log_level_sets_verbosity(log_level: object, flag: str) -> None:
    assert _args(_spec(["AffinityAndTaints"], logLevel=log_level))[-1] == flag


def test_empty_observed_tls_adds_no_flag() -> None:
    observed = {"servingInfo": {"cipherSuites": [], "minTLSVersion": ""}}
    assert _args(_spec(["AffinityAndTaints"], mode="Automatic"), observed_config=observed) == [
        *BASE_ARGS, "--descheduling-interval=10s", "-v=2"]


def test_descheduler_deployment_as_the_asset_and_manage_deployment_make_it() -> None:
    deployment = render_operand(_spec(["AffinityAndTaints"]))["descheduler"]
    assert deployment["metadata"] == {"name": "descheduler", "namespace": "openshift-kube-descheduler-operator",
                                      "labels": {"app": "descheduler"}}
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "openshift-descheduler-operand"
    assert pod["priorityClassName"] == "system-cluster-critical"
    # the asset names the ConfigMap "descheduler"; manageDeployment renames it after the CR
    assert pod["volumes"][0] == {"name": "policy-volume", "configMap": {"name": "cluster"}}
    assert "image" not in _container(deployment)


def test_soft_tainter_for_a_kubevirt_profile() -> None:
    # TestManageSoftTainterDeployment, expectedSoftTainterDeployment (its image aside)
    rendering = render_operand(_spec(["DevKubeVirtRelieveAndMigrate"], mode="Automatic"))
    softtainter = rendering["softtainter"]
    assert softtainter["metadata"]["name"] == "softtainter"
    assert softtainter["metadata"]["labels"] == {"app": "softtainer"}
    assert softtainter["spec"]["selector"] == {"matchLabels": {"app": "softtainer"}}
    assert softtainter["spec"]["template"]["metadata"] == {
        "labels": {"app": "softtainer"},
        "annotations": {"kubectl.kubernetes.io/default-container": "openshift-softtainer",
                        "openshift.io/required-scc": "restricted-v2"}}
    pod = softtainter["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "openshift-descheduler-softtainter"
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    container = pod["containers"][0]
    assert container["name"] == "openshift-softtainer"  # sic, as the asset spells it
    assert container["command"] == ["/usr/bin/soft-tainter"]
    assert container["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "-v=2"]
    assert container["livenessProbe"] == {"httpGet": {"path": "/livez", "port": 6060, "scheme": "HTTP"},
                                          "initialDelaySeconds": 30, "periodSeconds": 5, "failureThreshold": 1}
    assert container["readinessProbe"] == {"httpGet": {"path": "/readyz", "port": 6060, "scheme": "HTTP"},
                                           "initialDelaySeconds": 5, "periodSeconds": 5, "failureThreshold": 1}
    assert rendering["softtainter_why"] == "a KubeVirt profile is set"


def _node(name: str, taints: list[dict], kubevirt: bool = True) -> dict:
    labels = {"kubevirt.io/schedulable": "true"} if kubevirt else {}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints}}


def test_leftover_soft_taints_keep_the_soft_tainter() -> None:
    # the upstream cases: other taints keep nothing; a soft taint (matched on key and effect, whatever the value)
    # keeps the soft-tainter
    other = [_node("node1", [{"key": "extra1", "value": "extra1", "effect": "NoSchedule"}]),
             _node("node2", [{"key": "extra2", "value": "extra2", "effect": "PreferNoSchedule"}]), _node("node3", [])]
    assert leftover_soft_taints(other) == []
    spec = _spec(["LifecycleAndUtilization"])
    assert render_operand(spec, tainted_nodes=leftover_soft_taints(other))["softtainter"] is None
    key = "nodeutilization.descheduler.openshift.io/appropriate"
    tainted = [_node("node1", []), _node("node2", [{"key": key, "value": key, "effect": "PreferNoSchedule"}])]
    assert leftover_soft_taints(tainted) == ["node2"]
    rendering = render_operand(spec, tainted_nodes=leftover_soft_taints(tainted))
    assert rendering["softtainter"]["metadata"]["name"] == "softtainter"
    assert rendering["softtainter_why"] == "nodes node2 still have soft taints to clean up"
    # the operator lists only kubevirt.io/schedulable=true nodes
    assert leftover_soft_taints([_node("plain", [{"key": key, "effect": "PreferNoSchedule"}], kubevirt=False)]) == []


def test_kubevirt_default_eviction_limits_come_from_the_policy() -> None:
    spec = _spec(["KubeVirtRelieveAndMigrate"])
    assert render_operand(spec, policy=render(spec))["eviction_limits"] == {"total": 5, "node": 2}
    limited = _spec(["KubeVirtRelieveAndMigrate"], evictionLimits={"total": 1})
    assert render_operand(limited, policy=render(limited))["eviction_limits"] == {"total": 1, "node": 2}
    plain = _spec(["AffinityAndTaints"])
    assert render_operand(plain, policy=render(plain))["eviction_limits"] == {"total": None, "node": None}


def test_no_interval_renders_no_descheduler() -> None:
    spec = _spec(["AffinityAndTaints"])
    del spec["deschedulingIntervalSeconds"]
    assert render_operand(spec)["descheduler"] is None


# --- drift -----------------------------------------------------------------------------------------------------------


def _live(spec: dict) -> dict:
    """A live Deployment as the API server returns what the operator wrote: image, defaults, annotations added."""
    live = copy.deepcopy(render_operand(spec)["descheduler"])
    template = live["spec"]["template"]
    template["metadata"]["annotations"]["kubedeschedulers.operator.openshift.io/cluster"] = "3"
    template["spec"]["containers"][0]["image"] = "registry.example/descheduler:v5.4.0"
    template["spec"]["dnsPolicy"] = "ClusterFirst"
    live["status"] = {"readyReplicas": 1}
    return live


def test_no_drift_when_the_live_deployment_is_what_the_operator_writes() -> None:
    spec = _spec(["AffinityAndTaints"])
    assert operand_drift(render_operand(spec), _live(spec), None) == []


def test_drift_names_each_field_that_differs() -> None:
    spec = _spec(["AffinityAndTaints"])
    live = _live(spec)
    container = live["spec"]["template"]["spec"]["containers"][0]
    container["args"] = [a if a != "--descheduling-interval=10s" else "--descheduling-interval=60s"
                         for a in container["args"]]
    live["spec"]["replicas"] = 0
    assert operand_drift(render_operand(spec), live, None) == [
        {"deployment": "descheduler", "field": "spec.replicas", "live": 0, "expected": 1},
        {"deployment": "descheduler", "field": "container.args",
         "live": [*BASE_ARGS, "--descheduling-interval=60s", "--dry-run=true", "-v=2"],
         "expected": [*BASE_ARGS, "--descheduling-interval=10s", "--dry-run=true", "-v=2"]},
    ]


def test_drift_of_a_missing_or_extra_soft_tainter() -> None:
    kubevirt = _spec(["KubeVirtRelieveAndMigrate"])
    rendering = render_operand(kubevirt)
    assert operand_drift(rendering, _live(kubevirt), None) == [
        {"deployment": "softtainter", "field": "deployment", "live": "absent", "expected": "present"}]
    plain = _spec(["AffinityAndTaints"])
    assert deployment_drift(rendering["softtainter"], None, "openshift-softtainer") == [
        {"deployment": "softtainter", "field": "deployment", "live": "present", "expected": "absent"}]
    assert operand_drift(render_operand(plain), _live(plain), rendering["softtainter"])[0]["live"] == "present"
