"""VM pods: live migration through the eviction API, tracked to completion, within migration limits (emulator only:
the KubeVirt emulation stands in for virt-api, virt-controller and virt-handler)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulator.kubevirt import KubeVirtEmulation, install_kubevirt
from evict_helpers import EvictionRecorder, node, plan_of
from playbook import run_tasks

pytestmark = pytest.mark.needs_emulator

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 5}
NODES = ("worker-1", "worker-2", "worker-3")


@pytest.fixture
def kubevirt(emulator: Any, request: pytest.FixtureRequest) -> Iterator[KubeVirtEmulation]:
    options = {"tick_seconds": 0.05, **getattr(request, "param", {})}  # parametrize(..., indirect=True) to change
    emulation = install_kubevirt(emulator, **options)
    emulator.load([node(name) for name in NODES])
    try:
        yield emulation
    finally:
        emulation.stop()


def evict_task(emulator: Any, register: str = "result", **options: Any) -> dict[str, Any]:
    return {"descheduler.fleet.evict": {"kubeconfig": str(emulator.kubeconfig), "context": emulator.context,
                                        **FAST, **options}, "register": register}


def launcher(emulator: Any, namespace: str, vmi: str) -> dict[str, Any]:
    pods = [p for p in emulator.list("pods", namespace) if p["metadata"]["annotations"]["kubevirt.io/domain"] == vmi]
    assert len(pods) == 1, pods
    return pods[0]


def succeeded(process: Any) -> None:
    assert process.returncode == 0, process.stdout[-5000:] + process.stderr[-3000:]


def test_a_vm_is_live_migrated_and_followed_until_it_runs_elsewhere(
        emulator: Any, kubevirt: KubeVirtEmulation, tmp_path: Path) -> None:
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))
    source = launcher(emulator, "vms", "db")
    recorder = EvictionRecorder(emulator)
    process, results = run_tasks(tmp_path, [evict_task(emulator, plan=plan_of([source]))])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "migrated", pod
    assert pod["vm"] == {"vmi": "db", "eviction_strategy": "LiveMigrate", "strategy_source": "cluster",
                         "live_migratable": True, "action": "migrate"}
    migration = pod["migration"]
    assert migration["source_node"] == "worker-1" and migration["target_node"] not in (None, "worker-1")
    assert migration["attempts"] == 1 and migration["failed"] == 0
    vmi = emulator.get("virtualmachineinstances", "vms", "db")
    assert vmi["status"]["nodeName"] == migration["target_node"]
    assert "evacuationNodeName" not in vmi["status"]
    assert vmi["metadata"]["annotations"].get("kubevirt.io/eviction-source") is None  # cleared after the move
    assert launcher(emulator, "vms", "db")["spec"]["nodeName"] == migration["target_node"]
    assert emulator.get("pods", "vms", source["metadata"]["name"]) is None
    assert results["result"]["changed"] is True and results["result"]["counts"]["migrated"] == 1
    assert results["result"]["placements"]["items"][0]["kind"] == "vm"
    # KubeVirt answered the one request with its 429: that was the start, not a refusal
    assert [r.code for r in recorder.requests] == [429]


def test_a_failed_migration_is_not_the_end_kubevirt_retries_it(emulator: Any, kubevirt: KubeVirtEmulation,
                                                               tmp_path: Path) -> None:
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))
    kubevirt.fail_next_migrations(1, vmi="db")
    process, results = run_tasks(tmp_path, [evict_task(emulator, plan=plan_of([launcher(emulator, "vms", "db")]))])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "migrated", pod
    assert pod["migration"]["attempts"] == 2 and pod["migration"]["failed"] == 1
    phases = sorted(m["status"]["phase"] for m in emulator.list("virtualmachineinstancemigrations", "vms"))
    assert phases == ["Failed", "Succeeded"]


def test_a_migration_that_never_completes_is_reported_failed_after_the_timeout(
        emulator: Any, kubevirt: KubeVirtEmulation, tmp_path: Path) -> None:
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))
    kubevirt.fail_next_migrations(1000, vmi="db")
    task = evict_task(emulator, plan=plan_of([launcher(emulator, "vms", "db")]), kubevirt={"migration_timeout": 2})
    process, results = run_tasks(tmp_path, [task])
    succeeded(process)
    pod = results["result"]["pods"][0]
    assert pod["status"] == "failed"
    assert "not finished after 2s" in pod["error"] and "KubeVirt keeps retrying" in pod["error"]
    assert pod["migration"]["failed"] >= 1


def test_migrations_stay_within_the_cluster_and_per_node_limits(emulator: Any, kubevirt: KubeVirtEmulation,
                                                                tmp_path: Path) -> None:
    vms = [("worker-1", f"a{index}") for index in range(4)] + [("worker-2", f"b{index}") for index in range(3)]
    for source, name in vms:
        emulator.load(kubevirt.vm("vms", name, source))
    pods = [launcher(emulator, "vms", name) for _unused, name in vms]
    task = evict_task(emulator, plan=plan_of(pods), max_in_flight=10,
                      kubevirt={"max_migrations_per_cluster": 3, "max_migrations_per_node": 2})
    process, results = run_tasks(tmp_path, [task])
    succeeded(process)
    result = results["result"]
    assert result["counts"]["migrated"] == 7, [p["error"] for p in result["pods"]]
    assert kubevirt.observed.max_marked <= 3 and kubevirt.observed.max_marked_per_node <= 2
    assert kubevirt.observed.max_marked >= 2, "migrations did run in parallel"
    assert result["limits"]["max_migrations_seen"] <= 3
    assert all(emulator.get("virtualmachineinstances", "vms", name)["status"]["nodeName"] != source
               for source, name in vms)


@pytest.mark.parametrize("kubevirt", [{"eviction_strategy": None}], indirect=True)
def test_vms_that_would_restart_are_skipped_unless_allowed(emulator: Any, kubevirt: KubeVirtEmulation,
                                                           tmp_path: Path) -> None:
    emulator.load(kubevirt.vm("vms", "plain", "worker-1"))  # no strategy anywhere: an eviction stops the VM
    emulator.load(kubevirt.vm("vms", "pinned", "worker-1", strategy="LiveMigrate", migratable=False))
    emulator.load(kubevirt.vm("vms", "maybe", "worker-1", strategy="LiveMigrateIfPossible", migratable=False))
    pods = {name: launcher(emulator, "vms", name) for name in ("plain", "pinned", "maybe")}
    recorder = EvictionRecorder(emulator)
    process, results = run_tasks(tmp_path, [evict_task(emulator, plan=plan_of(list(pods.values())))])
    succeeded(process)
    codes = {p["name"]: p["reason_code"] for p in results["result"]["pods"]}
    assert codes == {pods["plain"]["metadata"]["name"]: "vm_restart_not_allowed",
                     pods["pinned"]["metadata"]["name"]: "vm_not_migratable",
                     pods["maybe"]["metadata"]["name"]: "vm_restart_not_allowed"}
    assert recorder.requests == [], "nothing was even requested"
    assert "allow_vm_restart" in results["result"]["pods"][0]["reason"]

    allowed = evict_task(emulator, register="allowed", allow_vm_restart=True,
                         pods=[{"namespace": "vms", "name": pods["maybe"]["metadata"]["name"]}])
    process, results = run_tasks(tmp_path, [allowed])
    succeeded(process)
    pod = results["allowed"]["pods"][0]
    assert pod["status"] == "evicted" and pod["reason_code"] == "vm_restart"
    assert emulator.get("pods", "vms", pods["maybe"]["metadata"]["name"]) is None


def test_check_mode_reports_would_migrate_and_marks_nothing(
        emulator: Any, kubevirt: KubeVirtEmulation, tmp_path: Path) -> None:
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))
    process, results = run_tasks(tmp_path, [evict_task(emulator, plan=plan_of([launcher(emulator, "vms", "db")]))],
                                 check=True)
    succeeded(process)
    assert results["result"]["pods"][0]["status"] == "would_migrate"
    assert "evacuationNodeName" not in emulator.get("virtualmachineinstances", "vms", "db")["status"]
    assert kubevirt.observed.marks == []


def test_a_resumed_run_follows_the_migration_it_started_without_a_new_request(
        emulator: Any, kubevirt: KubeVirtEmulation, tmp_path: Path) -> None:
    kubevirt.stop()  # nothing progresses until the resumed run is under way
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))
    pod = launcher(emulator, "vms", "db")
    try:
        emulator.evict("vms", pod["metadata"]["name"])  # the interrupted run's request
    except Exception as error:  # KubeVirt's 429
        assert "Eviction triggered evacuation" in str(error)
    assert emulator.get("virtualmachineinstances", "vms", "db")["status"]["evacuationNodeName"] == "worker-1"
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"event": "migration_started", "key": pod["metadata"]["uid"],
                                   "uid": pod["metadata"]["uid"], "namespace": "vms", "name": pod["metadata"]["name"],
                                   "node": "worker-1", "vmi": "db", "source_node": "worker-1", "run": "old"}) + "\n")
    kubevirt.start_ticker(0.05)
    recorder = EvictionRecorder(emulator)
    process, results = run_tasks(tmp_path, [evict_task(emulator, plan=plan_of([pod]), journal=str(journal))])
    succeeded(process)
    result = results["result"]["pods"][0]
    assert result["status"] == "migrated" and result["resumed"] is True
    assert recorder.requests == []
