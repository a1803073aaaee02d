"""The evict module through real ansible-playbook runs, against the suite's control plane or a cluster of the
tester's (TEST_KUBECONFIG).

Tests that inject faults or record the eviction requests are marked `faults` (the fault proxy in front of the
control plane). Replacements that never get ready: the kubelet stand-in's NEVER_READY pods.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import (
    bare_pod,
    create,
    eviction_recorder,
    namespace_object,
    node,
    pdb,
    plan_of,
    pods_of,
    ready_replicas,
    replicaset,
    sealed,
)
from kubelet_standin import NEVER_READY
from playbook import ansible_env, executable, run_tasks
from process_tree import kill_tree
from standins.rest import wait_until

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}
NODES = ("worker-1", "worker-2", "worker-3", "worker-4")


def evict_task(kube: Any, register: str = "result", **options: Any) -> dict[str, Any]:
    if isinstance(options.get("plan"), dict):  # as the plan module writes it: sealed, with its cluster
        options["plan"] = sealed(kube, options["plan"])
    return {"name": "Evict", "descheduler.fleet.evict": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                                         **FAST, **options}, "register": register}


def succeeded(process: Any) -> None:
    assert process.returncode == 0, process.stdout[-5000:] + process.stderr[-3000:]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {pod["name"]: pod for pod in result["pods"]}


@pytest.fixture
def cluster(kube: Any) -> Any:
    """Nodes for the control plane's kubelet stand-in (a tester's cluster has its own)."""
    if not kube.is_external:
        kube.load([node(name) for name in NODES])
    return kube


def wait_pdb_allowed(kube: Any, namespace: str, name: str, allowed: int) -> None:
    from kubernetes import client

    def settled() -> bool:
        with kube.api_client() as api_client:
            status = client.PolicyV1Api(api_client).read_namespaced_pod_disruption_budget(name, namespace).status
        return status is not None and status.disruptions_allowed == allowed and status.expected_pods is not None

    wait_until(settled, what=f"PDB {namespace}/{name} to allow {allowed}")


# ---- check mode, replacements, PDBs ----------------------------------------------------------------------------------


def test_check_mode_is_a_server_side_dry_run_that_changes_nothing(cluster: Any, namespace: str,
                                                                  tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 3), pdb(namespace, "web", "web", min_available=2),
           replicaset(namespace, "db", 2), pdb(namespace, "db", "db", min_available=2))
    web, db = ready_replicas(cluster, namespace, "web", 3), ready_replicas(cluster, namespace, "db", 2)
    wait_pdb_allowed(cluster, namespace, "db", 0)
    journal = tmp_path / "journal.jsonl"
    plan = plan_of(web[:2] + db[:1])
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, journal=str(journal))], check=True)
    succeeded(process)
    result = results["result"]
    assert result["check_mode"] is True
    assert result["changed"] is True  # what a real run would change
    # each pod is checked against the budget as it is now: both web pods would pass, the db pod would not
    assert [pod["status"] for pod in result["pods"]] == ["would_evict", "would_evict", "blocked_by_pdb"]
    assert "would block" in by_name(result)[db[0]["metadata"]["name"]]["reason"]
    assert result["counts"]["evicted"] == 0 and result["evicted_now"] == 0
    assert {p["metadata"]["uid"] for p in pods_of(cluster, namespace)} == {p["metadata"]["uid"] for p in web + db}
    assert not journal.exists(), "check mode writes no journal"


def test_evictions_wait_for_replacements_and_report_where_they_landed(cluster: Any, namespace: str,
                                                                      tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 3))
    before = ready_replicas(cluster, namespace, "web", 3)
    plan = plan_of(before[:2])
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, max_unavailable="1",
                                                       report_dir=str(tmp_path / "report"), cluster_name="c1")])
    succeeded(process)
    result = results["result"]
    assert result["changed"] is True
    assert result["counts"]["evicted"] == 2 and result["evicted_now"] == 2
    after = ready_replicas(cluster, namespace, "web", 3)
    remaining = {p["metadata"]["uid"] for p in after}
    for pod in result["pods"]:
        replacement = pod["replacement"]
        assert replacement["status"] == "ready", replacement
        assert replacement["uid"] in remaining and replacement["uid"] not in {p["metadata"]["uid"] for p in before}
        assert replacement["same_node"] == (replacement["node"] == pod["node"])
        assert pod["uid"] not in remaining
    placements = result["placements"]
    assert len(placements["items"]) == 2 and placements["moved"] + placements["same_node"] == 2
    assert result["durations"]["replacement_seconds"]["count"] == 2
    report = json.loads((tmp_path / "report" / "evict-result.json").read_text())
    assert report["counts"]["evicted"] == 2
    assert "| evicted | 2 |" in (tmp_path / "report" / "evict-result.md").read_text()


def test_a_pdb_refusal_is_retried_then_reported_blocked_never_forced(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "db", 2), pdb(namespace, "db", "db", min_available=2))
    pods = ready_replicas(cluster, namespace, "db", 2)
    wait_pdb_allowed(cluster, namespace, "db", 0)
    # 10 s: the backoff (0.2 s, doubling) leaves room for a retry after even a very slow first refusal
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan_of(pods[:1]), timeout=10)])
    succeeded(process)
    result = results["result"]
    pod = result["pods"][0]
    assert pod["status"] == "blocked_by_pdb" and pod["http_status"] == 429
    assert pod["attempts"] >= 2, "retried with backoff until the per-pod timeout"
    assert "still refused" in pod["reason"]
    assert result["changed"] is False and result["counts"]["blocked_by_pdb"] == 1
    assert pods[0]["metadata"]["uid"] in {p["metadata"]["uid"] for p in pods_of(cluster, namespace)}


@pytest.mark.faults
def test_transient_429s_are_retried_until_the_eviction_goes_through(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 2))
    pods = ready_replicas(cluster, namespace, "web", 2)
    cluster.faults.fail(429, verb="create", path="/eviction$", times=2)
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan_of(pods[:1]))])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "evicted" and pod["attempts"] == 3


def test_several_pdbs_on_one_pod_is_a_hard_error_for_that_pod(cluster: Any, namespace: str, tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 2), pdb(namespace, "web-a", "web", max_unavailable=1),
           pdb(namespace, "web-b", "web", max_unavailable=1), replicaset(namespace, "db", 1))
    web, db = ready_replicas(cluster, namespace, "web", 2), ready_replicas(cluster, namespace, "db", 1)
    (tmp_path / "mixed").mkdir()
    process, results = run_tasks(tmp_path / "mixed", [evict_task(cluster, plan=plan_of(web[:1] + db))])
    succeeded(process)  # one failure is within the default failure budget, and the other pod was evicted
    failed, evicted = results["result"]["pods"]
    assert failed["status"] == "failed" and failed["http_status"] == 500
    assert "more than one PodDisruptionBudget" in failed["error"]
    assert evicted["status"] == "evicted"

    # a run in which that error prevented every eviction did nothing: it fails
    process, results = run_tasks(tmp_path, [{**evict_task(cluster, plan=plan_of(web[1:])), "ignore_errors": True}])
    result = results["result"]
    assert result["failed"] is True and result["counts"]["failed"] == 1
    assert result["msg"].startswith("no pod was evicted: 1 failed and none succeeded"), result["msg"]
    assert "more than one PodDisruptionBudget" in result["msg"]


# ---- stale plans -----------------------------------------------------------------------------------------------------


def _a_node(kube: Any) -> str:
    from kubernetes import client

    with kube.api_client() as api_client:
        return client.CoreV1Api(api_client).list_node().items[0].metadata.name


def test_stale_plan_entries_are_skipped_with_the_reason(cluster: Any, namespace: str, tmp_path: Path) -> None:
    from kubernetes import client

    node_name = _a_node(cluster)
    names = ("gone", "replaced", "moved", "terminating")
    create(cluster, *(bare_pod(namespace, name, node_name, finalizers=["fleet.test/hold"] if name == "terminating"
                               else None) for name in names))
    planned = {p["metadata"]["name"]: p for p in pods_of(cluster, namespace)}
    plan = plan_of([planned[name] for name in names])
    plan["evictions"][2]["node"] = "another-node"
    with cluster.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        core.delete_namespaced_pod("gone", namespace, grace_period_seconds=0)
        core.delete_namespaced_pod("replaced", namespace, grace_period_seconds=0)
        wait_until(lambda: all(cluster.get("Pod", namespace, name) is None for name in ("gone", "replaced")))
        create(cluster, bare_pod(namespace, "replaced", node_name))
        core.delete_namespaced_pod("terminating", namespace)
    try:
        process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan)])
        succeeded(process)
        result = by_name(results["result"])
        assert {name: result[name]["reason_code"] for name in names} == {
            "gone": "stale_gone", "replaced": "stale_replaced", "moved": "stale_moved",
            "terminating": "stale_terminating"}
        assert all(result[name]["status"] == "skipped" and result[name]["attempts"] == 0 for name in names)
        assert results["result"]["changed"] is False
        assert results["result"]["skipped_by_reason"] == {"stale_gone": 1, "stale_moved": 1, "stale_replaced": 1,
                                                          "stale_terminating": 1}
        assert {"replaced", "moved"} <= {p["metadata"]["name"] for p in pods_of(cluster, namespace)}
    finally:
        with cluster.api_client() as api_client:
            client.CoreV1Api(api_client).patch_namespaced_pod("terminating", namespace,
                                                              {"metadata": {"finalizers": None}})


def test_a_plan_older_than_max_plan_age_is_refused(cluster: Any, namespace: str, tmp_path: Path) -> None:
    old = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    plan = {"now": old, "evictions": [{"namespace": namespace, "name": "any", "uid": "x", "node": "n"}]}
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, max_plan_age="1h")])
    assert process.returncode != 0
    assert "more than max_plan_age 1h" in results["result"]["msg"]
    assert "Traceback" not in results["result"]["msg"]


# ---- limits ---------------------------------------------------------------------------------------------------------


@pytest.mark.faults
def test_limits_are_never_exceeded(cluster: Any, tmp_path: Path) -> None:
    cluster.load([namespace_object("team-a"), namespace_object("team-b")])
    for name in ("a1", "a2"):
        cluster.create(replicaset("team-a", name, 4))
    cluster.create(replicaset("team-b", "b1", 4))
    pods = [*ready_replicas(cluster, "team-a", "a1", 4), *ready_replicas(cluster, "team-a", "a2", 4),
            *ready_replicas(cluster, "team-b", "b1", 4)]
    recorder = eviction_recorder(cluster, delay=0.15)
    limits = {"max_per_node": 2, "max_per_namespace": 3, "max_per_owner": 2, "max_total": 5, "max_in_flight": 2}
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan_of(pods), max_unavailable="none",
                                                       **limits)])
    succeeded(process)
    result = results["result"]
    assert max(recorder.evicted_per("node").values()) <= 2
    assert max(recorder.evicted_per("namespace").values()) <= 3
    assert max(recorder.evicted_per("owner").values()) <= 2
    assert len(recorder.evicted) == 5, "the total cap is reachable here and is reached, not passed"
    assert recorder.max_concurrent <= 2 and result["limits"]["max_in_flight_seen"] <= 2
    assert result["counts"]["evicted"] == 5
    assert result["skipped_by_reason"] == {"limit_reached": 7}
    assert result["limits"]["hit"]["total"] == ["*"]
    assert set(recorder.evicted_uids().values()) == {1}


@pytest.mark.faults
def test_max_unavailable_waits_for_the_workload_to_recover(cluster: Any, tmp_path: Path) -> None:
    cluster.load([namespace_object("shop")])
    cluster.create(replicaset("shop", "web", 4))
    pods = ready_replicas(cluster, "shop", "web", 4)
    recorder = eviction_recorder(cluster)
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan_of(pods), max_in_flight=4,
                                                       max_unavailable="1")])
    succeeded(process)
    assert results["result"]["counts"]["evicted"] == 4 and len(recorder.evicted) == 4
    # one at a time although four may be in flight: each waited for the previous one's replacement to be ready
    assert results["result"]["limits"]["max_in_flight_seen"] == 1
    assert all(p["replacement"]["status"] == "ready" for p in results["result"]["pods"])


# ---- journal and resume ---------------------------------------------------------------------------------------------


def _journal(path: Path) -> list[dict[str, Any]]:
    """The records of a journal, skipping a torn line."""
    entries = []
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def running_pods(kube: Any, namespace: str, count: int) -> list[dict[str, Any]] | None:
    """The namespace's pods once `count` of them are on a node and Running, Ready or not; else None."""
    pods = [p for p in pods_of(kube, namespace) if p["spec"].get("nodeName")
            and (p.get("status") or {}).get("phase") == "Running"]
    return pods if len(pods) == count else None


@pytest.mark.faults
def test_an_interrupted_run_resumes_without_evicting_any_pod_twice(kube: Any, tmp_path: Path) -> None:
    web = replicaset("shop", "web", 4)
    # the kubelet stand-in runs these pods but never marks them Ready: run 1 waits
    web["spec"]["template"]["metadata"]["annotations"] = {NEVER_READY: "true"}
    kube.load([namespace_object("shop"), *(node(name) for name in NODES)])
    kube.create(web)
    pods = wait_until(lambda: running_pods(kube, "shop", 4), what="4 running pods of shop/web")
    recorder = eviction_recorder(kube)
    plan = plan_of(pods)
    journal = tmp_path / "journal.jsonl"
    first = _start_playbook(tmp_path / "first", [evict_task(kube, plan=plan, journal=str(journal), max_in_flight=1,
                                                            max_unavailable="none", replacement_timeout=120)])
    try:
        wait_until(lambda: journal.exists() and any(e["event"] == "accepted" for e in _journal(journal)), timeout=60,
                   what="the first eviction")
    finally:
        # the control node dies mid-run: everything, the module included, is killed before it can clean up (a
        # cancelled playbook whose module survives is test_evict_cancel.py's case)
        kill_tree(first.pid)
        first.wait()
    wait_until(lambda: recorder.evicted, timeout=60, what="the proxy to record the answer it passed on")
    assert len(recorder.evicted) == 1
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan, journal=str(journal),
                                                       max_unavailable="none", wait_for_replacements=False)])
    succeeded(process)
    result = results["result"]
    assert result["counts"]["evicted"] == 4 and result["counts"]["resumed"] == 1
    resumed = [p for p in result["pods"] if p["resumed"]]
    assert resumed[0]["reason_code"] == "confirmed_on_resume"
    assert recorder.evicted_uids() == {e["uid"]: 1 for e in plan["evictions"]}, "every pod evicted exactly once"
    assert result["journal"]["previous_runs"] == 1
    # a third run with the same journal has nothing left to do
    process, again = run_tasks(tmp_path, [evict_task(kube, plan=plan, journal=str(journal), register="again")])
    succeeded(process)
    assert again["again"]["skipped_by_reason"] == {"already_done": 4} and again["again"]["changed"] is False
    assert len(recorder.evicted) == 4


@pytest.mark.faults
def test_requested_entries_of_a_journal_are_checked_before_any_new_request(cluster: Any, tmp_path: Path) -> None:
    cluster.load([namespace_object("shop")])
    cluster.create(replicaset("shop", "web", 4))
    pods = ready_replicas(cluster, "shop", "web", 4)
    plan = plan_of(pods)
    alive, accepted, gone, done = (e for e in plan["evictions"])
    cluster.delete("pods", "shop", gone["name"])  # what the interrupted run's request did
    journal = tmp_path / "journal.jsonl"
    lines = [{"event": "run_started", "run": "old"},
             {"event": "requested", "key": alive["uid"], "uid": alive["uid"], "namespace": "shop",
              "name": alive["name"], "node": alive["node"], "run": "old"},
             {"event": "accepted", "key": accepted["uid"], "uid": accepted["uid"], "namespace": "shop",
              "name": accepted["name"], "node": accepted["node"], "run": "old"},
             {"event": "requested", "key": gone["uid"], "uid": gone["uid"], "namespace": "shop", "name": gone["name"],
              "node": gone["node"], "run": "old"},
             {"event": "outcome", "key": done["uid"], "status": "evicted", "namespace": "shop", "name": done["name"],
              "node": done["node"], "run": "old"}]
    journal.write_text("\n".join(json.dumps(line) for line in lines) + '\n{"event": "requ')  # torn last line
    recorder = eviction_recorder(cluster)
    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, journal=str(journal),
                                                       max_unavailable="none")])
    succeeded(process)
    result = by_name(results["result"])
    assert result[alive["name"]]["status"] == "evicted" and not result[alive["name"]]["resumed"]
    assert result[accepted["name"]]["reason_code"] == "journal_inconsistent"
    assert result[gone["name"]]["status"] == "evicted" and result[gone["name"]]["reason_code"] == "confirmed_on_resume"
    assert result[done["name"]]["reason_code"] == "already_done"
    assert [r.name for r in recorder.requests] == [alive["name"]], "only the pod never evicted was requested"
    entries = _journal(journal)
    assert entries[-1]["event"] == "run_finished"
    assert len(journal.read_text().splitlines()) == len(entries) + 1, "the torn line stays alone on its line"


@pytest.mark.faults
def test_the_failure_budget_stops_the_run(cluster: Any, tmp_path: Path) -> None:
    cluster.load([namespace_object("shop")])
    cluster.create(replicaset("shop", "web", 5))
    pods = ready_replicas(cluster, "shop", "web", 5)
    cluster.faults.fail(403, verb="create", path="/eviction$", times=None)
    task = {**evict_task(cluster, plan=plan_of(pods), failure_budget=1, max_in_flight=1),
            "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    result = results["result"]
    assert result["failed"] is True and result["stopped"] is True
    assert "failure budget exceeded" in result["msg"]
    assert result["counts"]["failed"] == 2
    assert result["skipped_by_reason"] == {"run_stopped": 3}
    assert all("permission denied" in p["error"] for p in result["pods"] if p["status"] == "failed")
    assert len(cluster.list("pods", "shop")) == 5


# ---- plan verification -----------------------------------------------------------------------------------------------


def test_plan_verify_server_shows_which_evictions_a_pdb_would_block(cluster: Any, namespace: str,
                                                                    tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 2), pdb(namespace, "web", "web", min_available=2),
           replicaset(namespace, "api", 2))
    ready_replicas(cluster, namespace, "web", 2)
    ready_replicas(cluster, namespace, "api", 2)
    wait_pdb_allowed(cluster, namespace, "web", 0)
    policy = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "old", "pluginConfig": [{"name": "PodLifeTime", "args": {
            "maxPodLifeTimeSeconds": 60, "namespaces": {"include": [namespace]}}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    task = {"descheduler.fleet.plan": {"kubeconfig": str(cluster.kubeconfig), "context": cluster.context,
                                       "policy": policy, "now": tomorrow, "verify": "server"}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    succeeded(process)
    plan = results["plan"]
    verdicts = {e["name"].rsplit("-", 1)[0]: e["verification"] for e in plan["evictions"]}
    assert {e["verification"]["allowed"] for e in plan["evictions"] if e["name"].startswith("web-")} == {False}
    assert {e["verification"]["allowed"] for e in plan["evictions"] if e["name"].startswith("api-")} == {True}
    assert verdicts["web"]["status"] == 429 and "would block" in verdicts["web"]["message"]
    assert plan["verification"] == {"allowed": 2, "blocked": 2}
    assert len(pods_of(cluster, namespace)) == 4, "verification changes nothing"


# ---- helpers --------------------------------------------------------------------------------------------------------


def _start_playbook(directory: Path, tasks: list[dict[str, Any]]) -> subprocess.Popen:
    """ansible-playbook in its own process group, so the test can kill it (and its module) mid-run."""
    directory.mkdir(parents=True, exist_ok=True)
    playbook = directory / "playbook.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "connection": "local", "gather_facts": False,
                                         "tasks": tasks}], sort_keys=False))
    return subprocess.Popen([executable("ansible-playbook"), str(playbook), "-i", "localhost,"], env=ansible_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
