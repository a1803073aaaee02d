"""The suite's own control plane (tests/controlplane), its kubelet stand-in and the fault proxy, checked the way the
other tests rely on them: real controllers act, pods run and terminate, PDBs are kept, faults reach the client."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
import urllib3
from evict_helpers import bare_pod, create, node, pdb, pods_of, ready_replicas, replicaset
from standins.rest import wait_until

pytestmark = pytest.mark.skipif(bool(os.environ.get("TEST_KUBECONFIG")), reason="checks the suite's own control plane")


def core(api_client: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api_client)


def test_it_is_a_real_kube_apiserver_with_rbac(kube: Any, api_client: Any) -> None:
    from kubernetes import client

    version = client.VersionApi(api_client).get_code()
    assert version.git_version.startswith("v1.") and version.platform.startswith("linux/")
    roles = {r.metadata.name for r in client.RbacAuthorizationV1Api(api_client).list_cluster_role().items}
    assert {"cluster-admin", "system:controller:disruption-controller"} <= roles


def test_new_namespaces_get_what_controllers_give_them(kube: Any, api_client: Any, namespace: str) -> None:
    def root_ca() -> list[str]:
        return [c.metadata.name for c in core(api_client).list_namespaced_config_map(namespace).items
                if c.metadata.name == "kube-root-ca.crt"]

    assert wait_until(root_ca, what="kube-root-ca.crt") == ["kube-root-ca.crt"]
    assert core(api_client).read_namespaced_service_account("default", namespace).metadata.name == "default"


def test_replicaset_pods_are_placed_run_and_are_replaced(kube: Any, namespace: str) -> None:
    # Nodes of this test only (and a nodeSelector for them): the stand-in spreads by the pods on each node, and
    # pods of earlier tests' namespaces that are still being deleted may be on shared node names.
    group = {"spread-test": namespace}
    first, second, tainted, cordoned = (f"{namespace}-{suffix}" for suffix in ("a", "b", "tainted", "cordoned"))
    kube.load([node(first, group), node(second, group), node(tainted, group), node(cordoned, group)])
    kube.patch("Node", None, tainted, {"spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}})
    kube.patch("Node", None, cordoned, {"spec": {"unschedulable": True}})
    web = replicaset(namespace, "web", 4)
    web["spec"]["template"]["spec"]["nodeSelector"] = group
    create(kube, web)
    pods = ready_replicas(kube, namespace, "web", 4)
    assert sorted(p["spec"]["nodeName"] for p in pods) == [first, first, second, second]
    assert all(p["status"]["phase"] == "Running" and p["status"]["containerStatuses"][0]["ready"] for p in pods)

    victim = pods[0]["metadata"]["name"]
    kube.delete("Pod", namespace, victim)  # graceful: the stand-in finishes it as a kubelet would
    wait_until(lambda: kube.get("Pod", namespace, victim) is None, what=f"{victim} to be gone")
    replaced = ready_replicas(kube, namespace, "web", 4)
    assert victim not in {p["metadata"]["name"] for p in replaced}


def test_the_kubelet_stand_in_serves_container_logs(kube: Any, api_client: Any, namespace: str) -> None:
    """`kubectl logs` on the control plane: kube-apiserver asks the stand-in's HTTPS endpoint (kubelet_logs.py), which
    answers what was written as the pod's log annotation, trimmed to tailLines as a kubelet does."""
    from kubelet_logs import write_pod_log

    kube.load([node("worker-1")])
    kube.load([bare_pod(namespace, "talker", "worker-1")])
    write_pod_log(api_client, namespace, "talker", "main", "one\ntwo\nthree\n")

    def log(**options: Any) -> str | None:
        from kubernetes import client

        try:
            return core(api_client).read_namespaced_pod_log("talker", namespace, **options)
        except client.exceptions.ApiException:
            return None  # until the node reports where its kubelet listens

    wait_until(lambda: log() == "one\ntwo\nthree\n", what="the pod's log")
    assert log(tail_lines=1) == "three\n"
    assert log(container="main", limit_bytes=3) == "one"


def test_a_pod_whose_status_the_test_writes_keeps_it(kube: Any, namespace: str) -> None:
    kube.load([node("worker-1")])
    pending = bare_pod(namespace, "waiting", "worker-1")
    pending["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    kube.load([pending, bare_pod(namespace, "running", "worker-1")])
    # the stand-in handles pod events in the order the API server wrote them: once it marked the later pod
    # Running, it has handled the test's pod, and one that ignored hands_off would have marked that one too
    wait_until(lambda: kube.get("Pod", namespace, "running")["status"].get("phase") == "Running",
               what="the stand-in to mark the later pod Running")
    assert kube.get("Pod", namespace, "waiting")["status"]["phase"] == "Pending"


def test_the_disruption_controller_keeps_pdbs(kube: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    kube.load([node("worker-1")])
    create(kube, replicaset(namespace, "db", 2), pdb(namespace, "db", "db", min_available=2))
    ready_replicas(kube, namespace, "db", 2)
    policy = client.PolicyV1Api(api_client)
    status = wait_until(lambda: (s := policy.read_namespaced_pod_disruption_budget("db", namespace).status)
                        and s.current_healthy == 2 and s, what="the PDB status")
    assert status.disruptions_allowed == 0
    victim = pods_of(kube, namespace, "db")[0]["metadata"]["name"]
    with pytest.raises(client.exceptions.ApiException) as refused:
        core(api_client).create_namespaced_pod_eviction(victim, namespace, {
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": victim, "namespace": namespace}})
    assert refused.value.status == 429 and "disruption budget" in refused.value.body


def test_namespaces_and_nodes_of_a_test_are_removed_after_it(kube: Any, api_client: Any) -> None:
    # The previous tests made worker-1 and their namespaces: the node is gone, the namespaces are being deleted
    # (random names are not waited for; fixed ones like "shop" are, see ControlPlaneCluster.cleanup).
    assert kube.get("Node", None, "worker-1") is None
    left = [n for n in core(api_client).list_namespace().items if n.metadata.name.startswith("it-")]
    assert all(n.metadata.deletion_timestamp for n in left)


@pytest.fixture(scope="module")
def scheduler_crd_before_the_tests(control_plane: Any) -> Any:
    """A cluster-scoped CRD that is there before the next two tests start (as one an earlier test left would be)."""
    from real_cluster import RealCluster
    from standins.kubedescheduler_types import SCHEDULER_CRD
    from standins.rest import Rest, install_crds, remove_crds

    with RealCluster(control_plane.kubeconfig).api_client() as client:
        install_crds(Rest(client), [SCHEDULER_CRD])
    yield "/apis/config.openshift.io/v1/schedulers"
    with RealCluster(control_plane.kubeconfig).api_client() as client:
        remove_crds(Rest(client), [SCHEDULER_CRD["metadata"]["name"]])


def test_a_test_makes_a_cluster_scoped_custom_object(scheduler_crd_before_the_tests: str, api_client: Any) -> None:
    from standins.rest import Rest

    Rest(api_client).create(scheduler_crd_before_the_tests, {
        "apiVersion": "config.openshift.io/v1", "kind": "Scheduler", "metadata": {"name": "cluster"},
        "spec": {"profile": "HighNodeUtilization"}})


def test_cluster_scoped_custom_objects_of_a_test_are_removed_after_it(scheduler_crd_before_the_tests: str,
                                                                      api_client: Any) -> None:
    # The CRD stays (it was there before), the previous test's Scheduler "cluster" does not: it once leaked a
    # HighNodeUtilization scheduler profile into every later KubeDescheduler test of the session.
    from standins.rest import Rest

    assert Rest(api_client).get(f"{scheduler_crd_before_the_tests}/cluster") is None


@pytest.mark.faults
def test_the_fault_proxy_injects_429_storms_errors_drops_and_delays(kube: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    # urllib3 under the kubernetes client waits out a 429 that carries Retry-After (up to 3 times) by itself
    storm = kube.faults.fail(429, verb="list", path="/configmaps$", times=2, retry_after=1)
    started = time.monotonic()
    assert core(api_client).list_namespaced_config_map(namespace).items is not None
    assert storm.hits == 2 and time.monotonic() - started >= 2.0
    kube.faults.fail(429, verb="list", path="/configmaps$", message="too many requests, please try again later")
    with pytest.raises(client.exceptions.ApiException) as throttled:
        core(api_client).list_namespaced_config_map(namespace)
    assert throttled.value.status == 429 and json.loads(throttled.value.body)["reason"] == "TooManyRequests"

    kube.faults.fail(500, verb="get", path=f"/namespaces/{namespace}$", message="etcdserver: request timed out")
    with pytest.raises(client.exceptions.ApiException) as failed:
        core(api_client).read_namespace(namespace)
    assert failed.value.status == 500 and json.loads(failed.value.body)["message"] == "etcdserver: request timed out"

    dropped = kube.faults.drop(verb="get", path=f"/namespaces/{namespace}$", times=None)  # urllib3 retries GETs
    with pytest.raises(urllib3.exceptions.HTTPError):
        core(api_client).read_namespace(namespace, _request_timeout=5)
    assert dropped.hits >= 1
    kube.faults.clear()

    kube.faults.delay(0.5, verb="get", path=f"/namespaces/{namespace}$", times=1)
    started = time.monotonic()
    assert core(api_client).read_namespace(namespace).metadata.name == namespace
    assert time.monotonic() - started >= 0.5


@pytest.mark.faults
def test_the_fault_proxy_expires_a_chunked_list_after_some_pages(kube: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    for index in range(5):
        core(api_client).create_namespaced_config_map(namespace, {"metadata": {"name": f"c{index}"}})
    kube.faults.expire_continue_after(2)
    first = core(api_client).list_namespaced_config_map(namespace, limit=2)
    second = core(api_client).list_namespaced_config_map(namespace, limit=2, _continue=first.metadata._continue)
    with pytest.raises(client.exceptions.ApiException) as expired:
        core(api_client).list_namespaced_config_map(namespace, limit=2, _continue=second.metadata._continue)
    assert expired.value.status == 410 and json.loads(expired.value.body)["reason"] == "Expired"
    assert kube.faults.continues_expired == 1
