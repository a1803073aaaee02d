"""VM pods: live migration through the eviction API, tracked to completion, within migration limits.

KubeVirt is the stand-in of tests/integration/standins/kubevirt.py: the real kube-apiserver calls its eviction webhook
(virt-api's), and its loop does what virt-controller and virt-handler do, over HTTP only. The suite's control plane
reaches the webhook on 127.0.0.1; a cluster of the tester's (TEST_KUBECONFIG) does not, so these tests skip there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evict_helpers import namespace_object, node, plan_of, sealed
from playbook import run_tasks
from standins.kubevirt import KubeVirt

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120}
NODES = ("worker-1", "worker-2", "worker-3")


@pytest.fixture
def kubevirt(kube: Any, request: pytest.FixtureRequest) -> Iterator[KubeVirt]:
    """KubeVirt on the test's API server, three nodes and the namespace `vms`. `parametrize(..., indirect=True)`
    passes options to the stand-in."""
    if getattr(kube, "is_external", False):
        pytest.skip("the KubeVirt stand-in's webhook listens on 127.0.0.1, which only the suite's own control plane "
                    "reaches")
    kube.load([node(name) for name in NODES] + [namespace_object("vms")])
    standin = KubeVirt.on(kube, **{"interval": 0.1, **getattr(request, "param", {})})
    try:
        yield standin
    finally:
        standin.uninstall()
    standin.check()


def evict_task(kube: Any, register: str = "result", **options: Any) -> dict[str, Any]:
    if isinstance(options.get("plan"), dict):  # as the plan module writes it: sealed, with its cluster
        options["plan"] = sealed(kube, options["plan"])
    return {"descheduler.fleet.evict": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                        **FAST, **options}, "register": register}


def launcher(kubevirt: KubeVirt, namespace: str, vmi: str) -> dict[str, Any]:
    pods = kubevirt.launchers(namespace, vmi)
    assert len(pods) == 1, pods
    return pods[0]


def succeeded(process: Any) -> None:
    assert process.returncode == 0, process.stdout[-5000:] + process.stderr[-3000:]


def test_a_vm_is_live_migrated_and_followed_until_it_runs_elsewhere(
        kube: Any, kubevirt: KubeVirt, tmp_path: Path) -> None:
    source = kubevirt.create_vm("vms", "db", "worker-1")
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of([source]))])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "migrated", pod
    assert pod["vm"] == {"vmi": "db", "eviction_strategy": "LiveMigrate", "strategy_source": "cluster",
                         "live_migratable": True, "action": "migrate"}
    migration = pod["migration"]
    assert migration["source_node"] == "worker-1" and migration["target_node"] not in (None, "worker-1")
    assert migration["attempts"] == 1 and migration["failed"] == 0
    vmi = kube.get("virtualmachineinstances", "vms", "db")
    assert vmi["status"]["nodeName"] == migration["target_node"]
    assert "evacuationNodeName" not in vmi["status"]
    assert (vmi["metadata"].get("annotations") or {}).get("kubevirt.io/eviction-source") is None  # cleared
    assert launcher(kubevirt, "vms", "db")["spec"]["nodeName"] == migration["target_node"]
    assert kube.get("pods", "vms", source["metadata"]["name"]) is None
    assert results["result"]["changed"] is True and results["result"]["counts"]["migrated"] == 1
    assert results["result"]["placements"]["items"][0]["kind"] == "vm"
    # KubeVirt answered the one request with its 429: that was the start, not a refusal
    assert [r.code for r in kubevirt.observed.reviews] == [429]
    assert [(m[1], m[2], m[3]) for m in kubevirt.observed.marks] == [("vms", "db", "worker-1")]


def test_a_failed_migration_is_not_the_end_kubevirt_retries_it(kube: Any, kubevirt: KubeVirt,
                                                               tmp_path: Path) -> None:
    source = kubevirt.create_vm("vms", "db", "worker-1")
    kubevirt.fail_migrations("vms", "db", 1)
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of([source]))])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "migrated", pod
    assert pod["migration"]["attempts"] == 2 and pod["migration"]["failed"] == 1
    phases = sorted(m["status"]["phase"] for m in kube.list("virtualmachineinstancemigrations", "vms"))
    assert phases == ["Failed", "Succeeded"]


def test_a_migration_that_never_completes_is_reported_failed_after_the_timeout(
        kube: Any, kubevirt: KubeVirt, tmp_path: Path) -> None:
    source = kubevirt.create_vm("vms", "db", "worker-1")
    kubevirt.fail_migrations("vms", "db", "always")
    task = {**evict_task(kube, plan=plan_of([source]), kubevirt={"migration_timeout": 2}), "ignore_errors": True}
    _process, results = run_tasks(tmp_path, [task])
    result = results["result"]
    # the only pod failed: the run did nothing because of an error, so the task fails and says why
    assert result["failed"] is True
    assert result["msg"].startswith("no pod was evicted: 1 failed and none succeeded"), result["msg"]
    pod = result["pods"][0]
    assert pod["status"] == "failed"
    assert "not finished after 2s" in pod["error"] and "KubeVirt keeps retrying" in pod["error"]
    # How many attempts KubeVirt failed within the 2 s depends on how fast the stand-in ran (on a loaded machine it
    # had failed none yet: seen in a loaded fresh-clone run), and KubeVirt keeps retrying after the run; that the
    # module saw the attempts it reports does not.
    seen = pod["migration"]
    assert 1 <= seen["attempts"] <= len(kube.list("virtualmachineinstancemigrations", "vms")), seen
    assert 0 <= seen["failed"] <= seen["attempts"], seen


def test_migrations_stay_within_the_cluster_and_per_node_limits(kube: Any, kubevirt: KubeVirt,
                                                                tmp_path: Path) -> None:
    vms = [("worker-1", f"a{index}") for index in range(4)] + [("worker-2", f"b{index}") for index in range(3)]
    pods = [kubevirt.create_vm("vms", name, source) for source, name in vms]
    task = evict_task(kube, plan=plan_of(pods), max_in_flight=10,
                      kubevirt={"max_migrations_per_cluster": 3, "max_migrations_per_node": 2})
    process, results = run_tasks(tmp_path, [task])
    succeeded(process)
    result = results["result"]
    assert result["counts"]["migrated"] == 7, [p["error"] for p in result["pods"]]
    assert kubevirt.observed.max_marked <= 3 and kubevirt.observed.max_marked_per_node <= 2
    assert kubevirt.observed.max_marked >= 2, "migrations did run in parallel"
    assert result["limits"]["max_migrations_seen"] <= 3
    assert all(kube.get("virtualmachineinstances", "vms", name)["status"]["nodeName"] != source
               for source, name in vms)


@pytest.mark.parametrize("kubevirt", [{"eviction_strategy": None}], indirect=True)
def test_vms_that_would_restart_are_skipped_unless_allowed(kube: Any, kubevirt: KubeVirt, tmp_path: Path) -> None:
    pods = {"plain": kubevirt.create_vm("vms", "plain", "worker-1"),  # no strategy anywhere: eviction stops the VM
            "pinned": kubevirt.create_vm("vms", "pinned", "worker-1", strategy="LiveMigrate", migratable=False),
            "maybe": kubevirt.create_vm("vms", "maybe", "worker-1", strategy="LiveMigrateIfPossible",
                                        migratable=False)}
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of(list(pods.values())))])
    succeeded(process)
    codes = {p["name"]: p["reason_code"] for p in results["result"]["pods"]}
    assert codes == {pods["plain"]["metadata"]["name"]: "vm_restart_not_allowed",
                     pods["pinned"]["metadata"]["name"]: "vm_not_migratable",
                     pods["maybe"]["metadata"]["name"]: "vm_restart_not_allowed"}
    assert kubevirt.observed.reviews == [], "nothing was even requested"
    assert "allow_vm_restart" in results["result"]["pods"][0]["reason"]

    allowed = evict_task(kube, register="allowed", allow_vm_restart=True,
                         pods=[{"namespace": "vms", "name": pods["maybe"]["metadata"]["name"]}])
    process, results = run_tasks(tmp_path, [allowed])
    succeeded(process)
    pod = results["allowed"]["pods"][0]
    assert pod["status"] == "evicted" and pod["reason_code"] == "vm_restart"
    assert kube.get("pods", "vms", pods["maybe"]["metadata"]["name"]) is None
    assert [(r.name, r.code) for r in kubevirt.observed.reviews] == [(pods["maybe"]["metadata"]["name"], 200)]


def test_check_mode_reports_would_migrate_and_marks_nothing(kube: Any, kubevirt: KubeVirt, tmp_path: Path) -> None:
    source = kubevirt.create_vm("vms", "db", "worker-1")
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of([source]))], check=True)
    succeeded(process)
    assert results["result"]["pods"][0]["status"] == "would_migrate"
    assert "evacuationNodeName" not in kube.get("virtualmachineinstances", "vms", "db")["status"]
    assert kubevirt.observed.marks == []
    assert [(r.dry_run, r.code) for r in kubevirt.observed.reviews] == [(True, 429)]


def test_a_resumed_run_follows_the_migration_it_started_without_a_new_request(
        kube: Any, kubevirt: KubeVirt, tmp_path: Path) -> None:
    kubevirt.stop()  # nothing progresses until the resumed run is under way
    pod = kubevirt.create_vm("vms", "db", "worker-1")
    answer = request_eviction(kube, "vms", pod["metadata"]["name"])  # the interrupted run's request
    assert answer.status == 429 and "Eviction triggered evacuation" in answer.body, answer
    assert kube.get("virtualmachineinstances", "vms", "db")["status"]["evacuationNodeName"] == "worker-1"
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"event": "migration_started", "key": pod["metadata"]["uid"],
                                   "uid": pod["metadata"]["uid"], "namespace": "vms", "name": pod["metadata"]["name"],
                                   "node": "worker-1", "vmi": "db", "source_node": "worker-1", "run": "old"}) + "\n")
    kubevirt.start()
    requested_before = len(kubevirt.observed.reviews)
    process, results = run_tasks(tmp_path, [evict_task(kube, plan=plan_of([pod]), journal=str(journal))])
    succeeded(process)
    result = results["result"]["pods"][0]
    assert result["status"] == "migrated" and result["resumed"] is True
    assert kubevirt.observed.reviews[requested_before:] == []


def request_eviction(kube: Any, namespace: str, name: str) -> Any:
    """POST an Eviction for a pod as any client would; the ApiException of the answer (KubeVirt denies with 429)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
    with kube.api_client() as api_client:
        try:
            client.CoreV1Api(api_client).create_namespaced_pod_eviction(name, namespace, body)
        except ApiException as error:
            return error
    raise AssertionError(f"the eviction of {namespace}/{name} was accepted: KubeVirt should have answered 429")
