"""Never the wrong cluster, never a silent no-op: plans and journals carry the identity of the cluster they were made
on (its kube-system UID and server), `evict` refuses another cluster's before its first eviction, an inventory can
pin a host's cluster, and a run that cannot reach its API server, may not evict, or loses the server mid-run fails
with one error that says so.

Two clusters are two control planes sharing one etcd under their own prefixes (`fleet_clusters`): each has its own
kube-system namespace, so its own UID, as two real clusters would. Both hold the same namespace and workload names,
the case where a plan of one would otherwise find "its" pods on the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evict_helpers import (
    journal_entries,
    namespace_object,
    node,
    plan_of,
    ready_replicas,
    replicaset,
    sealed,
    wait_until_pods_are_older_than,
)
from playbook import run_tasks
from restricted_user import restricted_kubeconfig

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}
AGED_OUT = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "aged", "pluginConfig": [{"name": "PodLifeTime", "args": {
        "maxPodLifeTimeSeconds": 1, "namespaces": {"include": ["shop"]}}}],
    "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def evict_task(kube: Any, register: str = "result", **options: Any) -> dict[str, Any]:
    if isinstance(options.get("plan"), dict):  # as the plan module writes it: sealed, with its cluster
        options["plan"] = sealed(kube, options["plan"])
    return {"name": "Evict", "descheduler.fleet.evict": {**connection(kube), **FAST, **options},
            "register": register, "ignore_errors": True}


def shop(kube: Any, replicas: int = 2) -> list[dict[str, Any]]:
    """Namespace shop with a ReplicaSet web of `replicas` running pods (the same names on every cluster)."""
    kube.load([namespace_object("shop"), node("worker-1"), node("worker-2")])
    kube.create(replicaset("shop", "web", replicas))
    return ready_replicas(kube, "shop", "web", replicas)


def kube_system_uid(kube: Any) -> str:
    return kube.get("Namespace", None, "kube-system")["metadata"]["uid"]


def uids(kube: Any) -> set[str]:
    return {pod["metadata"]["uid"] for pod in kube.list("pods", "shop")}


def test_a_plan_of_another_cluster_is_refused_before_any_eviction(fleet_clusters: Any, tmp_path: Path) -> None:
    first, second = fleet_clusters(2)
    wait_until_pods_are_older_than(shop(first) + shop(second), 1)
    process, results = run_tasks(tmp_path, [{"descheduler.fleet.plan": {**connection(first), "policy": AGED_OUT},
                                             "register": "plan"}])
    assert process.returncode == 0, process.stdout[-3000:]
    plan = results["plan"]
    assert plan["cluster_identity"]["uid"] == kube_system_uid(first)
    assert plan["cluster_identity"]["server"].startswith("https://127.0.0.1:")
    assert len(plan["evictions"]) == 2
    before = uids(second)

    (tmp_path / "other").mkdir()
    _process, results = run_tasks(tmp_path / "other", [evict_task(second, plan=plan)])
    refused = results["result"]
    assert refused["failed"] is True
    assert f"made on another cluster (kube-system UID {kube_system_uid(first)}" in refused["msg"]
    assert f"than the one reached (kube-system UID {kube_system_uid(second)}" in refused["msg"]
    assert "nothing was done" in refused["msg"]
    assert uids(second) == before

    # on its own cluster the same plan goes through (check mode: the server-side dry run accepts both)
    (tmp_path / "own").mkdir()
    _process, results = run_tasks(tmp_path / "own", [{**evict_task(first, plan=plan), "check_mode": True}])
    accepted = results["result"]
    assert not accepted.get("failed"), accepted.get("msg")
    assert accepted["counts"]["would_evict"] == 2
    assert accepted["cluster_identity"] == plan["cluster_identity"]


def test_a_journal_of_another_cluster_is_refused(fleet_clusters: Any, tmp_path: Path) -> None:
    first, second = fleet_clusters(2)
    pods = shop(first)
    journal = tmp_path / "journal.jsonl"
    (tmp_path / "first").mkdir()
    process, results = run_tasks(tmp_path / "first", [evict_task(first, plan=plan_of(pods[:1]),
                                                                 journal=str(journal))])
    assert results["result"]["counts"]["evicted"] == 1, results["result"].get("msg")
    # the plan (sealed as the plan module writes it) records the first cluster, checked before the run
    assert results["result"]["input"]["plan_cluster_identity"]["uid"] == kube_system_uid(first)
    started = [e for e in journal_entries(journal) if e["event"] == "run_started"]
    assert started[0]["cluster"]["uid"] == kube_system_uid(first)

    other_pods = shop(second)
    before = uids(second)
    _process, results = run_tasks(tmp_path, [evict_task(second, pods=[
        {"namespace": "shop", "name": other_pods[0]["metadata"]["name"]}], journal=str(journal))])
    refused = results["result"]
    assert refused["failed"] is True
    assert f"the journal {journal} was made on another cluster" in refused["msg"]
    assert "Give each cluster its own journal" in refused["msg"]
    assert uids(second) == before
    assert len([e for e in journal_entries(journal) if e["event"] == "run_started"]) == 1, "nothing was appended"


def test_an_inventory_pins_the_cluster_of_a_host(fleet_clusters: Any, tmp_path: Path) -> None:
    first, second = fleet_clusters(2)
    pods = shop(first)
    wrong = kube_system_uid(second)
    tasks = [{"descheduler.fleet.plan": {**connection(first), "policy": AGED_OUT, "expected_cluster_uid": wrong},
              "register": "plan", "ignore_errors": True},
             evict_task(first, plan=plan_of(pods), expected_cluster_uid=wrong)]
    _process, results = run_tasks(tmp_path, tasks)
    for result in (results["plan"], results["result"]):
        assert result["failed"] is True
        assert result["msg"].startswith(f"expected_cluster_uid: this is not the intended cluster. Expected "
                                        f"kube-system UID {wrong}, but the cluster reached is kube-system UID "
                                        f"{kube_system_uid(first)}")
    assert {p["metadata"]["uid"] for p in pods} == uids(first)

    (tmp_path / "right").mkdir()
    right = kube_system_uid(first)
    _process, results = run_tasks(tmp_path / "right", [
        {"descheduler.fleet.plan": {**connection(first), "policy": AGED_OUT, "expected_cluster_uid": right},
         "register": "plan", "ignore_errors": True}])
    assert not results["plan"].get("failed"), results["plan"].get("msg")


def test_an_api_server_that_is_down_fails_the_run_at_once(kube: Any, tmp_path: Path) -> None:
    if kube.is_external:
        pytest.skip("stops an API server: needs the suite's own control plane")
    from controlplane import free_port, write_kubeconfig

    dead = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    kubeconfig = write_kubeconfig(tmp_path / "dead.kubeconfig", dead, None, None, "dead")
    pods = [{"namespace": "shop", "name": f"web-{index}"} for index in range(5)]
    task = {"name": "Evict", "register": "result", "ignore_errors": True, "descheduler.fleet.evict": {
        "kubeconfig": str(kubeconfig), "context": "dead", "validate_certs": False, "pods": pods, **FAST}}
    process, results = run_tasks(tmp_path, [task])
    result = results["result"]
    assert result["failed"] is True
    assert result["msg"].startswith(f"cannot reach {dead}"), result["msg"]
    assert "pods" not in result, "no pod was tried"
    assert result["msg"].count("cannot reach") == 1, "one error"
    assert "[WARNING]" not in process.stdout + process.stderr, "no warning per pod"


@pytest.mark.faults
def test_losing_the_api_server_mid_run_stops_at_the_first_failure(kube: Any, tmp_path: Path) -> None:
    pods = shop(kube, 4)
    kube.faults.drop(verb="create", path="/eviction$", times=None)
    _process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of(pods), max_in_flight=1)])
    result = results["result"]
    assert result["failed"] is True and result["stop_reason"] == "unreachable"
    assert result["msg"].startswith("the run stopped at its first connection failure: cannot reach "), result["msg"]
    assert result["counts"]["failed"] == 1 and result["skipped_by_reason"] == {"run_stopped": 3}


def test_a_user_who_may_not_evict_fails_before_the_first_eviction(kube: Any, namespace: str,
                                                                  tmp_path: Path) -> None:
    kube.load([node("worker-1")])
    kube.create(replicaset(namespace, "web", 2))
    pods = ready_replicas(kube, namespace, "web", 2)
    kubeconfig = restricted_kubeconfig(kube, tmp_path, "no-evict", [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}], namespace=namespace, cluster_rules=[
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"], "resourceNames": ["kube-system"]}])
    task = {"name": "Evict", "register": "result", "ignore_errors": True, "descheduler.fleet.evict": {
        "kubeconfig": str(kubeconfig), "context": kube.context, "plan": sealed(kube, plan_of(pods)), **FAST}}
    _process, results = run_tasks(tmp_path, [task])
    result = results["result"]
    assert result["failed"] is True
    assert "create pods/eviction (API group '') at the cluster scope" in result["msg"], result["msg"]
    # evict also plans (its plan_source compute): the account it names grants both jobs' rules
    assert "descheduler-fleet-planning, descheduler-fleet-executing" in result["msg"], result["msg"]
    assert "nothing was changed" in result["msg"]
    assert {p["metadata"]["uid"] for p in kube.list("pods", namespace)} == {p["metadata"]["uid"] for p in pods}


# Every module that talks to a cluster, with the fewest options that make it act (write, for the lifecycle ones).
def cluster_modules(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {
        "descheduler.fleet.info": {"read_log": False},
        "descheduler.fleet.kubedescheduler": {"spec": {"mode": "Predictive"}},
        "descheduler.fleet.operator": {"flavor": "upstream", "wait": False},
        "descheduler.fleet.secondary_scheduler": {"scheduler_image": "registry.example/scheduler:v1", "wait": False},
        "descheduler.fleet.metrics_record": {"dest": str(tmp_path / "metrics.json")},
    }


def test_every_cluster_module_refuses_another_cluster_before_reading_or_writing(kube: Any, tmp_path: Path) -> None:
    wrong = "00000000-0000-4000-8000-000000000000"
    modules = cluster_modules(tmp_path)
    tasks = [{"name": name, name: {**connection(kube), **options, "expected_cluster_uid": wrong},
              "register": name.rsplit(".", 1)[1], "ignore_errors": True} for name, options in modules.items()]
    _process, results = run_tasks(tmp_path, tasks)
    for name in modules:
        result = results[name.rsplit(".", 1)[1]]
        assert result["failed"] is True, name
        assert result["msg"].startswith(f"expected_cluster_uid: this is not the intended cluster. Expected "
                                        f"kube-system UID {wrong}, but the cluster reached is kube-system UID "
                                        f"{kube_system_uid(kube)}"), (name, result["msg"])
    assert kube.get("Deployment", "kube-system", "descheduler", api_version="apps/v1") is None
    assert not (tmp_path / "metrics.json").exists()


def test_cluster_modules_return_the_identity_of_the_cluster_they_reached(kube: Any, tmp_path: Path) -> None:
    tasks = [{"descheduler.fleet.info": {**connection(kube), "read_log": False,
                                         "expected_cluster_uid": kube_system_uid(kube)}, "register": "info"},
             {"descheduler.fleet.operator": {**connection(kube), "flavor": "upstream", "state": "absent"},
              "check_mode": True, "register": "operator"}]
    process, results = run_tasks(tmp_path, tasks)
    assert process.returncode == 0, process.stdout[-3000:]
    for result in results.values():
        assert result["cluster_identity"]["uid"] == kube_system_uid(kube)
        assert result["cluster_identity"]["server"].startswith("https://127.0.0.1:")
