"""The evict role and playbooks/evict.yml through real ansible-playbook runs on the test's API server (the control
plane, its ReplicaSet controller and kubelet stand-in making the pods). Both inventory hosts name
the same API server, each with its own namespace: what the role does per host and for the fleet is what is tested.
The eviction requests are recorded at the fault proxy: tests are marked `faults`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import (
    eviction_recorder,
    namespace_object,
    node,
    plan_of,
    ready_replicas,
    replicaset,
    sealed,
    wait_until_pods_are_older_than,
)
from playbook import REPO, run_playbook, run_tasks

pytestmark = pytest.mark.faults

PLAYBOOK = REPO / "playbooks" / "evict.yml"
FAST = {"evict_poll_interval": 0.1, "evict_retry_delay": 0.2,
        "evict_timeout": 120, "evict_replacement_timeout": 120}


@pytest.fixture
def fleet(kube: Any, tmp_path: Path) -> dict[str, Any]:
    """Two clusters (inventory hosts c1, c2), both on the test's API server, each with its own namespace of 3 web
    pods, running and ready."""
    kube.load([namespace_object("c1"), namespace_object("c2"), *(node(f"worker-{i}") for i in range(1, 4))])
    for cluster in ("c1", "c2"):
        kube.create(replicaset(cluster, "web", 3))
    for cluster in ("c1", "c2"):
        ready_replicas(kube, cluster, "web", 3)
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    inventory = {"clusters": {"hosts": {name: {"descheduler_fleet_connection": connection} for name in ("c1", "c2")}}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return {"inventory": path, "reports": tmp_path / "reports"}


def write_dry_run_plan(reports: Path, cluster: str, plan: dict[str, Any]) -> Path:
    path = reports / cluster / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan))
    return path


def play(fleet: dict[str, Any], tmp_path: Path, *args: str, **variables: Any) -> Any:
    extra = tmp_path / "extra-vars.json"
    extra.write_text(json.dumps({"evict_report_dir": str(fleet["reports"]), **FAST, **variables}))
    return run_playbook(PLAYBOOK, "-i", str(fleet["inventory"]), "-e", f"@{extra}", *args,
                        env={"ANSIBLE_SHOW_CUSTOM_STATS": "true"})


def test_the_role_refuses_to_evict_without_confirmation(kube: Any, fleet: dict[str, Any],
                                                        tmp_path: Path) -> None:
    write_dry_run_plan(fleet["reports"], "c1", sealed(kube, plan_of(kube.list("pods", "c1")[:2])))
    write_dry_run_plan(fleet["reports"], "c2", sealed(kube, plan_of(kube.list("pods", "c2")[:1])))
    recorder = eviction_recorder(kube)
    process = play(fleet, tmp_path)
    assert process.returncode != 0
    assert "evict_confirm is not true" in process.stdout
    assert "c1: 2 eviction(s) planned" in process.stdout, "the plan is shown before the refusal"
    assert recorder.requests == []
    assert not (fleet["reports"] / "c1" / "evict-result.json").exists()


def test_the_role_executes_reviewed_plans_and_writes_cluster_and_fleet_results(
        kube: Any, fleet: dict[str, Any], tmp_path: Path) -> None:
    c1_pods, c2_pods = kube.list("pods", "c1")[:2], kube.list("pods", "c2")[:1]
    write_dry_run_plan(fleet["reports"], "c1", sealed(kube, plan_of(c1_pods)))  # the dry_run role's report
    # an AWX workflow artifact holding the (sealed) plan itself
    published = {"c2": {"ok": True, **sealed(kube, plan_of(c2_pods))}}
    recorder = eviction_recorder(kube)
    process = play(fleet, tmp_path, evict_confirm=True, dry_run_plans=published,
                   evict_max_unavailable="1")
    assert process.returncode == 0, process.stdout[-5000:]
    assert sorted(r.name for r in recorder.evicted) == sorted(p["metadata"]["name"] for p in c1_pods + c2_pods)
    c1 = json.loads((fleet["reports"] / "c1" / "evict-result.json").read_text())
    assert c1["counts"]["evicted"] == 2 and c1["cluster"] == "c1"
    assert (fleet["reports"] / "c1" / "evict-journal.jsonl").exists()
    fleet_result = json.loads((fleet["reports"] / "fleet-evict-result.json").read_text())
    by_cluster = {c["cluster"]: c for c in fleet_result["clusters"]}
    assert by_cluster["c1"]["plan_source"].endswith("c1/plan.json")
    assert by_cluster["c2"]["plan_source"] == "stats"
    assert by_cluster["c1"]["counts"]["evicted"] == 2 and by_cluster["c2"]["counts"]["evicted"] == 1
    markdown = (fleet["reports"] / "fleet-evict-result.md").read_text()
    assert "| c1 | ok |" in markdown and "| **total** | 2/2 ok |" in markdown
    assert "evict_results" in process.stdout  # set_stats for the next workflow node


def test_check_mode_needs_no_confirmation_and_changes_nothing(
        kube: Any, fleet: dict[str, Any], tmp_path: Path) -> None:
    policy = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "old", "pluginConfig": [{"name": "PodLifeTime", "args": {
            "maxPodLifeTimeSeconds": 1, "namespaces": {"include": ["c1", "c2"]}}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}

    def fleet_pods() -> list[dict[str, Any]]:  # not all namespaces: an earlier test's may still be terminating
        return kube.list("pods", "c1") + kube.list("pods", "c2")

    pods = fleet_pods()
    before = {p["metadata"]["uid"] for p in pods}
    recorder = eviction_recorder(kube)
    wait_until_pods_are_older_than(pods, 1)  # maxPodLifeTimeSeconds
    process = play(fleet, tmp_path, "--check", evict_plan_source="compute", evict_policy=policy)
    assert process.returncode == 0, process.stdout[-5000:]
    assert {p["metadata"]["uid"] for p in fleet_pods()} == before
    assert recorder.requests and all(r.dry_run for r in recorder.requests)
    fleet_result = json.loads((fleet["reports"] / "fleet-evict-result.json").read_text())
    # both inventory hosts are the same API server: each plan holds the six pods of c1 and c2
    assert {c["cluster"]: c["counts"]["would_evict"] for c in fleet_result["clusters"]} == {"c1": 6, "c2": 6}
    assert {c["cluster"]: c["plan_source"] for c in fleet_result["clusters"]} == {"c1": "compute", "c2": "compute"}
    assert all(c["check_mode"] for c in fleet_result["clusters"])


def test_a_stale_plan_file_is_refused_by_age(kube: Any, fleet: dict[str, Any], tmp_path: Path) -> None:
    old = (datetime.now(UTC) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for cluster in ("c1", "c2"):
        write_dry_run_plan(fleet["reports"], cluster, sealed(kube, plan_of(kube.list("pods", cluster)[:1], now=old)))
    recorder = eviction_recorder(kube)
    process = play(fleet, tmp_path, evict_confirm=True)
    assert process.returncode != 0
    assert "more than max_plan_age 24h" in process.stdout
    assert recorder.requests == []
    fleet_result = json.loads((fleet["reports"] / "fleet-evict-result.json").read_text())
    assert [c["ok"] for c in fleet_result["clusters"]] == [False, False]


def test_a_refused_plan_is_named_by_where_it_came_from(kube: Any, fleet: dict[str, Any], tmp_path: Path) -> None:
    pods = {cluster: kube.list("pods", cluster)[:1] for cluster in ("c1", "c2")}
    before = {p["metadata"]["uid"] for cluster in ("c1", "c2") for p in kube.list("pods", cluster)}
    for cluster in ("c1", "c2"):  # sealed as written, then a pod of the other cluster's namespace added
        plan = sealed(kube, plan_of(pods[cluster]))
        plan["evictions"].append({**plan_of(pods["c2" if cluster == "c1" else "c1"])["evictions"][0], "order": 2})
        write_dry_run_plan(fleet["reports"], cluster, plan)
    recorder = eviction_recorder(kube)
    process = play(fleet, tmp_path, evict_confirm=True)
    assert process.returncode != 0
    text = " ".join(process.stdout.split())
    path = fleet["reports"] / "c1" / "plan.json"
    assert (f"the plan from {path}: the plan is not the one sealed when it was written: evictions has 2 entries, 1 "
            "when sealed; the first that differs is evictions[1] (c2/") in text
    assert "(plan)" not in text

    # the same plan kept in a run store: named by its store object (c1 only: both hosts are one cluster here, which
    # a run store refuses as planned twice)
    store = {"path": str(tmp_path / "store")}
    saves = [{"descheduler.fleet.run_store": {
        "operation": "save_plan", "run_store": store, "run_id": "r1", "cluster": cluster, "slice": "s1",
        "result": {"cluster": cluster, "ok": True, "error": None, "report_dir": None, "plan": {}},
        "plan_file": str(fleet["reports"] / cluster / "plan.json")}} for cluster in ("c1",)]
    (tmp_path / "save").mkdir()
    saved, _results = run_tasks(tmp_path / "save", saves)
    assert saved.returncode == 0, saved.stdout[-3000:]
    process = play(fleet, tmp_path, "--limit", "c1", evict_confirm=True, descheduler_fleet_run_store=store,
                   descheduler_fleet_run_id="r1")
    assert process.returncode != 0
    text = " ".join(process.stdout.split())
    uid = kube.get("Namespace", None, "kube-system")["metadata"]["uid"]
    stored = tmp_path / "store" / "runs" / "r1" / "clusters" / "c1" / uid / "s1" / "plan.json"
    assert f"the plan from {stored}: the plan is not the one sealed when it was written" in text, text[-3000:]
    assert recorder.requests == []
    assert {p["metadata"]["uid"] for cluster in ("c1", "c2") for p in kube.list("pods", cluster)} == before
