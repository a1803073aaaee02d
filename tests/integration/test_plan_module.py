"""The plan module through real ansible-playbook runs: live cluster (the suite's control plane or TEST_KUBECONFIG) and
snapshots."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import patch_raw
from evict_helpers import create, namespace_object, node, pdb, ready_replicas, replicaset
from playbook import REPO, run_tasks
from restricted_user import restricted_kubeconfig, user_name

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
KUBEDESCHEDULER = {
    "mode": "Predictive",
    "deschedulingIntervalSeconds": 3600,
    "profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"],
}
RESTARTS_POLICY = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [{
        "name": "restarts",
        "pluginConfig": [{"name": "RemovePodsHavingTooManyRestarts", "args": {"podRestartThreshold": 10}}],
        "plugins": {"deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts"]}},
    }],
}


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def comparable(plan: dict) -> dict:
    """What must be identical between a live plan and a snapshot plan of the same objects."""
    return {"evictions": plan["evictions"], "summary": plan["summary"], "spared": plan["spared"],
            "cycle": plan["cycle"], "errors": plan["errors"]}


def assert_succeeded(process: Any) -> None:
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-2000:]


@pytest.fixture
def seeded(kube: Any) -> Any:
    """On the suite's control plane, real workloads made by its controllers (a tester's cluster is used as it is)."""
    if not kube.is_external:
        kube.load([node(f"worker-{index}") for index in range(1, 4)])
        kube.load([namespace_object("shop")])
        create(kube, replicaset("shop", "web", 5), replicaset("shop", "api", 3), pdb("shop", "web", "web",
                                                                                     max_unavailable=1))
        ready_replicas(kube, "shop", "web", 5)
        ready_replicas(kube, "shop", "api", 3)
    return kube


def test_live_plan_equals_plan_of_a_snapshot_of_the_same_objects(seeded: Any, tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot.json"
    live_task = {"name": "Plan the live cluster", "descheduler.fleet.plan": {
        **connection(seeded), "kubedescheduler": KUBEDESCHEDULER, "now": NOW, "page_size": 50}, "register": "live"}
    process, results = run_tasks(tmp_path, [live_task])
    assert_succeeded(process)
    live = results["live"]
    assert live["changed"] is False
    assert live["source"]["type"] == "cluster"
    # the objects as the API serves them, written as a kubectl-style List, must plan the same
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import build_api_client
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.snapshot_source import (
        list_cluster_objects,
    )

    listed = list_cluster_objects(build_api_client(connection(seeded)))
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": listed.objects}))
    file_task = {"name": "Plan the snapshot", "descheduler.fleet.plan": {
        "snapshot": str(snapshot), "kubedescheduler": KUBEDESCHEDULER, "now": NOW}, "register": "offline"}
    process, results = run_tasks(tmp_path, [file_task])
    assert_succeeded(process)
    assert comparable(results["offline"]) == comparable(live)


@pytest.mark.faults
def test_live_plan_survives_an_expired_continue_token(seeded: Any, tmp_path: Path) -> None:
    page_size = 3  # several pages of the control plane's 8 pods
    reference_task = {"descheduler.fleet.plan": {**connection(seeded), "kubedescheduler": KUBEDESCHEDULER,
                                                 "now": NOW, "page_size": page_size}, "register": "reference"}
    process, results = run_tasks(tmp_path, [reference_task])
    assert_succeeded(process)
    seeded.faults.expire_continue_after(2)
    paged = {"descheduler.fleet.plan": {**reference_task["descheduler.fleet.plan"], "watch_list": False},
             "register": "again"}
    process, again = run_tasks(tmp_path, [paged])
    assert_succeeded(process)
    # the reference streamed each kind (watch_list defaults to true); the same plan from pages, one restarted
    assert comparable(again["again"]) == comparable(results["reference"])
    kinds = set(results["reference"]["source"]["resource_versions"])
    assert results["reference"]["source"]["read_as"] == dict.fromkeys(kinds, "stream")
    assert again["again"]["source"]["read_as"] == dict.fromkeys(kinds, "pages")
    assert seeded.faults.continues_expired == 1  # the proxy did answer 410 Expired to the third page


def restarting_pod(kube: Any) -> str:
    """On the control plane: one pod of the seeded ReplicaSet `web` whose container restarted 12 times (as its
    kubelet would report), so RemovePodsHavingTooManyRestarts (threshold 10) has exactly one pod to evict."""
    web = sorted(pod["metadata"]["name"] for pod in kube.list("Pod", "shop", label_selector="app=web"))[0]
    current = kube.get("Pod", "shop", web)
    statuses = [dict(status, restartCount=12) for status in current["status"]["containerStatuses"]]
    with kube.api_client() as client:
        patch_raw(client, f"/api/v1/namespaces/shop/pods/{web}/status", {"status": {"containerStatuses": statuses}})
    return web


UPSTREAM_POLICY_CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"namespace": "kube-system", "name": "descheduler"},
                             "data": {"policy.yaml": json.dumps(RESTARTS_POLICY)}}


def test_policy_is_read_from_the_upstream_configmap(seeded: Any, tmp_path: Path) -> None:
    external = getattr(seeded, "is_external", False)  # a tester's cluster (TEST_KUBECONFIG), used as it is
    restarting = None if external else restarting_pod(seeded)
    seeded.load([UPSTREAM_POLICY_CONFIGMAP])
    try:
        task = {"descheduler.fleet.plan": {**connection(seeded), "now": NOW}, "register": "plan"}
        process, results = run_tasks(tmp_path, [task], check=True)
    finally:  # kube-system outlives the test on a real server: the next test must find no policy there
        seeded.delete("ConfigMap", "kube-system", "descheduler")
    assert_succeeded(process)
    plan = results["plan"]
    assert plan["policy_origin"] == {"type": "cluster", "object": "ConfigMap kube-system/descheduler",
                                     "key": "policy.yaml"}
    assert set(plan["summary"]["by_plugin"]) <= {"RemovePodsHavingTooManyRestarts"}
    for eviction in plan["evictions"]:
        assert eviction["reason"].startswith("restarts ")
    if not external:  # the seeded cluster has a pod over the threshold
        assert plan["evictions"], "pods restarted more than podRestartThreshold times"
    if restarting is not None:
        assert [(e["namespace"], e["name"]) for e in plan["evictions"]] == [("shop", restarting)]


def test_no_policy_anywhere_is_a_clear_error(seeded: Any, tmp_path: Path) -> None:
    task = {"descheduler.fleet.plan": {**connection(seeded), "now": NOW}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode != 0
    message = results["plan"]["msg"]
    assert "no descheduler policy found in the cluster" in message
    assert "ConfigMap kube-system/descheduler" in message and "policy_configmap" in message  # where it looked, the fix
    assert "Traceback" not in message


# Every kind the plan lists but pods: (apiGroup, resource)
SNAPSHOT_RESOURCES_BUT_PODS = [("", "nodes"), ("", "namespaces"), ("scheduling.k8s.io", "priorityclasses"),
                               ("policy", "poddisruptionbudgets"), ("", "persistentvolumeclaims")]


def test_forbidden_list_names_the_missing_permission(seeded: Any, tmp_path: Path) -> None:
    # a real ServiceAccount that may list everything the plan reads but pods
    kubeconfig = restricted_kubeconfig(seeded, tmp_path, "planner-without-pods", rules=[
        {"apiGroups": [group], "resources": [resource], "verbs": ["list"]}
        for group, resource in SNAPSHOT_RESOURCES_BUT_PODS])
    options = {"kubeconfig": str(kubeconfig), "context": seeded.context}
    task = {"descheduler.fleet.plan": {**options, "policy": RESTARTS_POLICY}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode != 0
    message = results["plan"]["msg"]
    # refused before the first list (cluster/rights.py), every missing right named, and the fix
    assert "list pods (API group '') at the cluster scope" in message and "watch pods" in message
    assert "ClusterRole(s) descheduler-fleet-planning" in message and "rbac/planning.yml" in message, message
    assert user_name("planner-without-pods") in message
    assert "Traceback" not in message


def test_bad_policy_fails_before_anything_with_field_and_fix(tmp_path: Path) -> None:
    snapshot = tmp_path / "objects.yaml"
    snapshot.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    bad = json.loads(json.dumps(RESTARTS_POLICY))
    bad["profiles"][0]["pluginConfig"][0]["args"]["podRestartThreshold"] = 0
    task = {"descheduler.fleet.plan": {"snapshot": str(snapshot), "policy": bad}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode != 0
    result = results["plan"]
    assert "podRestartThreshold" in result["msg"] and "≥ 1" in result["msg"]
    assert result["field"].endswith("args.podRestartThreshold")
    assert "Traceback" not in result["msg"] and "internal error" not in result["msg"]


def test_bad_snapshot_file_is_a_clear_error(tmp_path: Path) -> None:
    snapshot = tmp_path / "broken.yaml"
    snapshot.write_text("- kind: Pod\n  metadata: {namespace: a}\n")
    task = {"descheduler.fleet.plan": {"snapshot": str(snapshot), "policy": RESTARTS_POLICY}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode != 0
    assert "metadata.name is missing" in results["plan"]["msg"]


def test_report_dir_gets_json_markdown_and_html(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps(build_cluster(8, 10, seed=2, now=NOW)))
    task = {"descheduler.fleet.plan": {"snapshot": str(snapshot), "kubedescheduler": KUBEDESCHEDULER, "now": NOW,
                                       "report_dir": str(tmp_path / "out"), "cluster_name": "c1"},
            "register": "plan"}
    # the same plan without the eviction list in the result (a large cluster's): the report still has it
    lean = {"descheduler.fleet.plan": {**task["descheduler.fleet.plan"], "report_dir": str(tmp_path / "lean"),
                                       "return_evictions": False},
            "register": "lean"}
    process, results = run_tasks(tmp_path, [task, lean])
    assert_succeeded(process)
    files = results["plan"]["report_files"]
    written = json.loads(Path(files["json"]).read_text())
    assert written["evictions"] == results["plan"]["evictions"]
    assert "<svg" in Path(files["html"]).read_text()
    assert Path(files["markdown"]).read_text().startswith("#")
    assert results["plan"]["evictions"], "the benchmark cluster's plan evicts something"
    assert "evictions" not in results["lean"]
    assert results["lean"]["summary"] == results["plan"]["summary"]
    lean_written = json.loads(Path(results["lean"]["report_files"]["json"]).read_text())
    assert lean_written["evictions"] == results["plan"]["evictions"]


def test_a_large_plan_returns_the_first_1000_evictions_and_says_where_the_rest_are(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps(build_cluster(100, 30, seed=2, now=NOW)))  # 1,222 evictions
    plan = {"snapshot": str(snapshot), "kubedescheduler": KUBEDESCHEDULER, "now": NOW}
    tasks = [{"descheduler.fleet.plan": {**plan, "report_dir": str(tmp_path / "out")}, "register": "bounded"},
             {"descheduler.fleet.plan": {**plan, "return_evictions": "all"}, "register": "whole"},
             {"descheduler.fleet.plan": {**plan, "return_evictions": "none"}, "register": "counts"},
             {"descheduler.fleet.plan": {**plan, "return_evictions": "lots"}, "register": "wrong",
              "ignore_errors": True}]
    process, results = run_tasks(tmp_path, tasks)
    assert_succeeded(process)
    bounded, whole = results["bounded"], results["whole"]
    total = bounded["summary"]["total"]
    assert total > 1000 and len(whole["evictions"]) == total and whole["evictions_left_out"] == 0
    assert bounded["evictions"] == whole["evictions"][:1000]
    assert bounded["evictions_left_out"] == total - 1000
    written = json.loads(Path(bounded["evictions_file"]).read_text())
    assert bounded["evictions_file"] == bounded["report_files"]["json"] and written["evictions"] == whole["evictions"]
    # the result's seal no longer lists every entry: evict refuses it as a plan; the file's seal is whole
    assert "entries" not in bounded["seal"] and len(written["seal"]["entries"]) == total
    assert whole["seal"] == written["seal"]
    assert "evictions" not in results["counts"] and results["counts"]["evictions_left_out"] == total
    assert results["counts"]["evictions_file"] is None and results["counts"]["summary"] == bounded["summary"]
    wrong = results["wrong"]
    assert wrong["failed"] and wrong["field"] == "return_evictions" and wrong["value"] == "lots"
    assert "give all (the whole list), none (counts only) or how many" in wrong["msg"]


def test_misspelt_kubedescheduler_fields_are_refused_unless_passed_on(kube: Any, tmp_path: Path) -> None:
    kube.load([node("worker-1"), node("worker-2")])
    misspelt = {**KUBEDESCHEDULER, "profileCustomisations": {"podLifetime": "1h"}, "modee": "Automatic"}
    tasks = [{"descheduler.fleet.plan": {**connection(kube), "kubedescheduler": misspelt}, "register": "strict",
              "ignore_errors": True},
             {"descheduler.fleet.plan": {**connection(kube), "kubedescheduler": misspelt, "field_validation": "Warn"},
              "register": "warned"}]
    process, results = run_tasks(tmp_path, tasks)
    assert_succeeded(process)
    strict = results["strict"]
    assert strict["failed"] is True and "evictions" not in strict
    assert strict["msg"].startswith("kubedescheduler: 2 unknown field(s), nothing was planned:"), strict["msg"]
    assert 'spec.modee="Automatic": not a field of KubeDescheduler v1' in strict["msg"]
    assert 'did you mean "mode"?' in strict["msg"] and 'did you mean "profileCustomizations"?' in strict["msg"]
    warnings = results["warned"]["plan_warnings"]
    assert any("spec.profileCustomisations" in w and "did you mean" in w for w in warnings), warnings


# LowNodeUtilization on measured usage: without a metrics API (this control plane serves none) it reports an error.
LOAD_AWARE_POLICY = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "metricsProviders": [{"source": "KubernetesMetrics"}],
    "profiles": [{
        "name": "load-aware",
        "pluginConfig": [{"name": "LowNodeUtilization", "args": {
            "thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50},
            "metricsUtilization": {"source": "KubernetesMetrics"}}}],
        "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}},
    }],
}


def test_a_plan_that_evicts_nothing_for_a_reason_of_its_input_says_so(tmp_path: Path) -> None:
    """An empty snapshot: the descheduler skips the cycle. Warned, and a failure under fail_on, after the report."""
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
    plan = {"snapshot": str(empty), "policy": RESTARTS_POLICY, "now": NOW}
    tasks = [{"descheduler.fleet.plan": plan, "register": "warned"},
             {"descheduler.fleet.plan": {**plan, "fail_on": ["cycle_skipped"], "report_dir": str(tmp_path / "out")},
              "register": "failed", "ignore_errors": True}]
    process, results = run_tasks(tmp_path, tasks)
    assert_succeeded(process)
    skipped = "the descheduler skips this cycle and evicts nothing: it requires >=2 nodes, found 0 ready node(s)"
    assert any(w.startswith(skipped) for w in results["warned"]["plan_warnings"]), results["warned"]["plan_warnings"]
    assert "[WARNING]: the descheduler skips this cycle" in process.stdout + process.stderr
    assert not results["warned"].get("failed")
    failed = results["failed"]
    assert failed["failed"] is True
    assert failed["msg"].startswith(f"the plan met fail_on (cycle_skipped): {skipped}"), failed["msg"]
    assert (tmp_path / "out" / "plan.json").exists(), "the report is written before the task fails"


def test_a_load_aware_plan_without_metrics_warns_and_fails_when_asked(kube: Any, tmp_path: Path) -> None:
    if kube.is_external:
        pytest.skip("needs a cluster that serves no metrics API: the suite's own control plane")
    kube.load([node("worker-1"), node("worker-2")])
    plan = {**connection(kube), "policy": LOAD_AWARE_POLICY}
    tasks = [{"descheduler.fleet.plan": plan, "register": "warned"},
             {"descheduler.fleet.plan": {**plan, "fail_on": ["plugin_error"]}, "register": "failed",
              "ignore_errors": True}]
    process, results = run_tasks(tmp_path, tasks)
    assert_succeeded(process)
    prefix = "profile load-aware, plugin LowNodeUtilization: "
    warned = [w for w in results["warned"]["plan_warnings"] if w.startswith(prefix)]
    assert warned and warned[0].endswith("; the plugin evicts nothing in this plan"), results["warned"]
    assert results["failed"]["failed"] is True
    assert results["failed"]["msg"].startswith(f"the plan met fail_on (plugin_error): {prefix}"), results["failed"]
