"""descheduler.fleet.info through real ansible-playbook runs: the flavors, the operator's facts, the operand's mode and
the evictions parsed from log lines in the operand's real klog format.

Denied reads come from a real ServiceAccount's RBAC rules (restricted_user.py). The logs are read as `pods/log`
from the API server. On the test control plane the kube-apiserver asks the kubelet
stand-in for them (tests/integration/kubelet_logs.py): a log is what a stand-in or the test wrote, over HTTP, as the
pod's log annotation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubelet_logs import write_pod_log
from operator_support import (
    BASE_SPEC,
    assert_succeeded,
    descheduler_operator,
    info_task,
    kd_task,
    node,
    operand_started,
    operator_for,
    run_ok,
)
from playbook import run_tasks
from restricted_user import restricted_kubeconfig, user_name
from standins.olm import Olm, csv_name
from standins.rest import Rest, path, wait_until


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    yield from operator_for(kube)


FIXTURES = Path(__file__).resolve().parents[1] / "unit" / "kubedescheduler" / "fixtures" / "descheduler_logs"
# Two Predictive cycles at -v=2 (descheduler/evictions.go and descheduler.go lines): three simulated evictions each
# (the same pods, restored after each cycle), a node limit and a total limit reached.
PREDICTIVE_LOG = (FIXTURES / "predictive_cycle.log").read_text()
TWO_CYCLES = PREDICTIVE_LOG + PREDICTIVE_LOG.replace("I0627 16:", "I0627 17:").replace("E0627 16:", "E0627 17:")
AUTOMATIC_LOG = (
    'I0701 09:00:01.000001       1 evictions.go:609] "Evicted pod" pod="shop/api-6c4d-9kq2w" reason="" '
    'strategy="RemoveDuplicates" node="worker-2"\n'
    'I0701 09:00:01.100000       1 descheduler.go:252] "Number of evictions/requests" totalEvicted=1 '
    'evictionRequests=0\n'
)


@pytest.fixture
def installed_by_olm(kube: Any) -> Iterator[Any]:
    """The operator installed through the OLM stand-in (a Subscription resolved to CSV 5.4.0), then running."""
    with kube.api_client() as client:
        olm = Olm(client).install()
        rest = Rest(client)
        namespace = "openshift-kube-descheduler-operator"
        rest.create(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": {"openshift.io/cluster-monitoring": "true"}}})
        rest.create(path("operators.coreos.com/v1alpha1", "subscriptions", namespace), {
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "cluster-kube-descheduler-operator", "namespace": namespace},
            "spec": {"name": "cluster-kube-descheduler-operator", "channel": "stable", "source": "redhat-operators",
                     "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Automatic"}})
        csv = path("operators.coreos.com/v1alpha1", "clusterserviceversions", namespace, csv_name("5.4.0"))
        wait_until(lambda: ((rest.get(csv) or {}).get("status") or {}).get("phase") == "Succeeded",
                   what="the CSV to succeed")
        try:
            with descheduler_operator(kube) as operator:
                yield operator
            olm.check()
        finally:
            olm.uninstall()


def test_operator_installed_by_olm(kube: Any, installed_by_olm: Any, tmp_path: Path) -> None:
    run_ok(tmp_path, [kd_task(kube, "kd", spec={**BASE_SPEC, "profiles": ["LifecycleAndUtilization"]})])
    process, results = run_tasks(tmp_path, [info_task(kube, "info", read_log=False)])
    assert_succeeded(process)
    assert_operator_facts(results["info"])
    assert results["info"]["evictions"] is None


def test_operator_installed_by_olm_with_predictive_evictions(kube: Any, installed_by_olm: Any,
                                                             tmp_path: Path) -> None:
    run_ok(tmp_path, [kd_task(kube, "kd", spec={**BASE_SPEC, "profiles": ["LifecycleAndUtilization"]})])
    installed_by_olm.set_operand_log(TWO_CYCLES)

    process, results = run_tasks(tmp_path, [info_task(kube, "info")])
    assert_succeeded(process)
    info = results["info"]
    assert_operator_facts(info)
    evictions = info["evictions"]
    assert info["log_source"]["container"] == "openshift-descheduler"
    assert [e["pod"] for e in evictions["evictions"]] == ["ns1/web-5d9c7", "shop/api-6c4d-9kq2w",
                                                          "shop/cart-7f8b9-x2x4q"]
    assert evictions["evictions"][0] == {
        "pod": "ns1/web-5d9c7", "namespace": "ns1", "name": "web-5d9c7", "strategy": "PodLifeTime",
        "profile": "LifecycleAndUtilization", "node": "worker-1", "reason": "", "dry_run": True,
        "first_seen": "0627 16:15:45.123456", "last_seen": "0627 17:15:45.123456", "times_reported": 2,
        "cycles_seen": 2, "cycle_indices": [1, 2],
    }
    # the container whose log this is: the Predictive gate counts cycles from its start (#47)
    assert (evictions["container_started"], evictions["container_restarts"]) == (
        operand_started(kube).strftime("%Y-%m-%dT%H:%M:%SZ"), 0)
    assert evictions["counts"] == {
        "total": 3, "pods": 3,
        "by_strategy": {"PodLifeTime": 1, "RemovePodsHavingTooManyRestarts": 1, "LowNodeUtilization": 1},
        "by_profile": {"LifecycleAndUtilization": 3},
        "by_namespace": {"ns1": 1, "shop": 2},
        "by_node": {"worker-1": 2, "worker-2": 1},
        "dry_run": 3, "real": 0,
    }
    assert [c["total_evicted"] for c in evictions["cycles"]] == [3, 3]
    assert evictions["limit_errors_by_kind"] == {"node": 2, "total": 2}


def assert_operator_facts(info: dict[str, Any]) -> None:
    assert info["changed"] is False
    assert info["flavor"] == "olm"
    assert info["operator"]["version"] == "5.4.0"
    assert info["operator"]["channel"] == "stable"
    assert info["operator"]["csv_phase"] == "Succeeded"
    assert info["operator"]["csv"]["name"] == "clusterkubedescheduleroperator.v5.4.0"
    assert info["operator"]["subscription"]["installed_csv"] == "clusterkubedescheduleroperator.v5.4.0"
    assert info["kubedescheduler"]["spec"]["profiles"] == ["LifecycleAndUtilization"]
    assert info["kubedescheduler"]["conditions"][0]["type"] == "TargetConfigControllerDegraded"
    assert info["kubedescheduler"]["degraded"] == []
    assert [p["name"] for p in info["policy"]["profiles"]] == ["LifecycleAndUtilization"]
    assert info["policy_source"] == "ConfigMap openshift-kube-descheduler-operator/cluster key policy.yaml"
    operand = info["operand"]
    assert operand["mode"] == "predictive"
    assert operand["log_level"] == "Normal"
    assert operand["interval"] == "3600s"
    assert operand["rolled_out"] is True
    assert len(operand["pods"]) == 1 and operand["pods"][0]["ready"] is True


def test_no_descheduler(kube: Any, tmp_path: Path) -> None:
    if getattr(kube, "is_external", False):
        pytest.skip("a tester's cluster may well run a descheduler")
    process, results = run_tasks(tmp_path, [info_task(kube, "info")])
    assert_succeeded(process)
    assert results["info"]["flavor"] == "none"
    assert results["info"]["evictions"] is None


def test_operator_without_olm_objects_and_automatic_mode(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    """A KubeDescheduler alone is enough to find the operator; Automatic mode logs real evictions."""
    run_ok(tmp_path, [kd_task(kube, "kd", spec={**BASE_SPEC, "mode": "Automatic",
                                                "profiles": ["TopologyAndDuplicates"]})])
    operator_standin.set_operand_log(AUTOMATIC_LOG)
    process, results = run_tasks(tmp_path, [info_task(kube, "info")])
    assert_succeeded(process)
    info = results["info"]
    assert info["flavor"] == "olm"
    assert info["operand"]["mode"] == "automatic"
    assert info["operator"]["subscription"] is None
    assert info["evictions"]["counts"]["real"] == 1
    assert info["evictions"]["evictions"][0]["profile"] is None  # pre-4.17 line: no profile key
    assert info["evictions"]["profile_key_logged"] is False


UPSTREAM_LABELS = {"app.kubernetes.io/name": "descheduler", "app.kubernetes.io/instance": "descheduler"}
UPSTREAM_POLICY = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"


def upstream_objects() -> list[dict[str, Any]]:
    """The Helm chart's ConfigMap and Deployment."""
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "descheduler", "namespace": "kube-system"},
        "spec": {"replicas": 1, "selector": {"matchLabels": UPSTREAM_LABELS}, "template": {
            "metadata": {"labels": UPSTREAM_LABELS},
            "spec": {"containers": [{"name": "descheduler", "image": "registry.k8s.io/descheduler/descheduler:v0.36.0",
                                     "command": ["/bin/descheduler"],
                                     "args": ["--policy-config-file=/policy-dir/policy.yaml",
                                              "--descheduling-interval=5m", "--dry-run", "--v=3"]}],
                     "volumes": [{"name": "policy-volume", "configMap": {"name": "descheduler"}}]}}}}
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "descheduler", "namespace": "kube-system"},
                 "data": {"policy.yaml": UPSTREAM_POLICY}}
    return [configmap, deployment]


def running_upstream_pod(kube: Any) -> str:
    """The name of the descheduler pod, once the kubelet stand-in runs the Deployment's."""
    selector = ",".join(f"{k}={v}" for k, v in UPSTREAM_LABELS.items())
    with kube.api_client() as client:
        rest = Rest(client)

        def ready() -> list[dict[str, Any]]:
            pods = rest.list(path("v1", "pods", "kube-system"), label_selector=selector)
            return [p for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                           for c in (p.get("status") or {}).get("conditions") or [])]

        wait_until(lambda: len(ready()) == 1, what="the descheduler pod to be ready")
        return ready()[0]["metadata"]["name"]


def set_pod_log(kube: Any, namespace: str, pod: str, container: str, text: str) -> None:
    """What the container printed: the kubelet stand-in's annotation, written over HTTP."""
    with kube.api_client() as client:
        write_pod_log(client, namespace, pod, container, text)


@pytest.fixture
def upstream_descheduler(kube: Any) -> Iterator[str]:
    """The upstream descheduler as its Helm chart installs it in kube-system (which outlives the test: removed at
    the end); yields its pod's name."""
    if getattr(kube, "is_external", False):
        pytest.skip("a tester's cluster may well run a descheduler in kube-system")
    kube.load([node("worker-1")])  # where the kubelet stand-in runs the descheduler pod
    try:
        kube.load(upstream_objects())
        yield running_upstream_pod(kube)
    finally:
        kube.delete("deployments", "kube-system", "descheduler", api_version="apps/v1")
        kube.delete("configmaps", "kube-system", "descheduler", api_version="v1")


def test_upstream_descheduler(kube: Any, upstream_descheduler: str, tmp_path: Path) -> None:
    set_pod_log(kube, "kube-system", upstream_descheduler, "descheduler", PREDICTIVE_LOG)
    process, results = run_tasks(tmp_path, [info_task(kube, "info")])
    assert_succeeded(process)
    info = results["info"]
    assert info["flavor"] == "upstream"
    assert info["operator"] is None
    assert info["operand"]["mode"] == "predictive"
    assert info["operand"]["interval"] == "5m"
    assert info["operand"]["log_level"] == "-v=3"
    assert info["policy"] == {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": []}
    assert info["policy_source"] == "ConfigMap kube-system/descheduler key policy.yaml"
    assert info["evictions"]["counts"]["total"] == 3
    assert [e["pod"] for e in info["evictions"]["evictions"]] == ["ns1/web-5d9c7", "shop/api-6c4d-9kq2w",
                                                                  "shop/cart-7f8b9-x2x4q"]
    assert info["log_source"] == {"pod": f"kube-system/{upstream_descheduler}", "container": "descheduler",
                                  "tail_lines": 10000}


# Everything info reads (the operators' objects, OLM's, workloads, pods and their logs, CRDs), but ConfigMaps.
READ_ALL_BUT_CONFIGMAPS = [{"apiGroups": ["*"], "verbs": ["get", "list", "watch"], "resources": [
    "kubedeschedulers", "subscriptions", "clusterserviceversions", "installplans", "customresourcedefinitions",
    "secondaryschedulers", "deployments", "replicasets", "cronjobs", "pods", "pods/log", "namespaces", "nodes",
    "services"]}]


def test_forbidden_reads_become_notes(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    """A user who may read everything info looks at but ConfigMaps: a real ServiceAccount with exactly those RBAC
    rules (restricted_user.py); the denial comes from the API server's authorizer."""
    run_ok(tmp_path, [kd_task(kube, "kd", spec=BASE_SPEC)])
    kubeconfig = restricted_kubeconfig(kube, tmp_path, "info-without-configmaps", rules=READ_ALL_BUT_CONFIGMAPS)
    process, results = run_tasks(tmp_path, [info_task(kube, "info", read_log=False, kubeconfig=str(kubeconfig))])
    assert_succeeded(process)
    info = results["info"]
    assert info["flavor"] == "olm"
    assert info["kubedescheduler"]["spec"]["profiles"] == ["AffinityAndTaints"]  # the allowed reads still happen
    assert info["policy"] is None
    assert any("could not read ConfigMap" in note and "cannot get" in note
               and user_name("info-without-configmaps") in note for note in info["notes"]), info["notes"]
    assert all("ConfigMap" in note for note in info["notes"]), info["notes"]  # nothing else was denied
    assert info["evictions"] is None
