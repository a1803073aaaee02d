"""KubeVirtRelieveAndMigrate planned as the operator renders it: Prometheus utilization with deviation thresholds,
kubevirt.io/schedulable nodes only, 5 evictions in total and 2 per node, VMs marked, soft taints reported."""

from typing import Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.kubevirt import (
    APPROPRIATE_TAINT,
    OVERUTILIZED_TAINT,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import attach
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind

NOW = "2026-11-22T12:00:00Z"
DEFAULT_QUERY = "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m"
PSI_CPU_QUERY = "rate(node_pressure_cpu_waiting_seconds_total[1m])"


def node(name: str, kubevirt: bool = True) -> dict:
    labels = {"kubevirt.io/schedulable": "true"} if kubevirt else {}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}


def virt_launcher(vm: str, node_name: str) -> dict:
    metadata = {"name": f"virt-launcher-{vm}-x1x2x", "namespace": "vms", "uid": f"uid-{vm}",
                "labels": {"kubevirt.io": "virt-launcher", "vm.kubevirt.io/name": vm},
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": vm,
                                     "uid": f"vmi-{vm}", "controller": True}]}
    container = {"name": "compute", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}
    return {"kind": "Pod", "metadata": metadata, "spec": {"nodeName": node_name, "containers": [container]},
            "status": {"phase": "Running"}}


def answer(values: dict[str, float]) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": n}, "value": [1795348800, str(v)]} for n, v in values.items()]}}


def plan_of(objects: list[dict], values: dict[str, float], mode: str = "Predictive",
            customizations: Optional[dict] = None, query: Optional[str] = None) -> dict:
    snapshot = Snapshot(objects + [{"kind": "Namespace", "metadata": {"name": "vms"}}])
    attach(snapshot, {query: answer(values)} if query else {None: answer(values)})
    spec = {"mode": mode, "deschedulingIntervalSeconds": 60, "profiles": ["KubeVirtRelieveAndMigrate"]}
    if customizations:
        spec["profileCustomizations"] = customizations
    return compute_plan_for_kind(snapshot, spec, NOW, policy_kind="KubeDescheduler")


def cluster(vms_per_node: dict[str, int]) -> list[dict]:
    objects = [node(n) for n in vms_per_node]
    for name, count in vms_per_node.items():
        objects += [virt_launcher(f"{name}-vm{i}", name) for i in range(count)]
    return objects


def test_two_vms_per_overutilized_node_and_five_in_total():
    objects = cluster({"w1": 4, "w2": 4, "w3": 4, "w4": 1, "w5": 1, "w6": 1})
    values = {"w1": 0.9, "w2": 0.85, "w3": 0.8, "w4": 0.1, "w5": 0.1, "w6": 0.05}
    plan = plan_of(objects, values, query=DEFAULT_QUERY)
    assert plan["errors"] == []
    # average 46.7%, AsymmetricLow (0:10): over above 56.7%, under at or below 46.7%
    assert len(plan["evictions"]) == 5
    assert plan["summary"]["limits"]["hit"]["total"]
    per_node = plan["summary"]["by_node"]
    assert per_node == {"w1": 2, "w2": 2, "w3": 1}
    assert all(e["vm"]["action"] == "live-migrate" for e in plan["evictions"])
    assert plan["evictions"][0]["vm"]["name"] == "w1-vm0"
    assert plan["summary"]["vms_to_migrate"] == 5


def test_only_kubevirt_schedulable_nodes_are_in_the_cycle():
    objects = cluster({"w1": 3, "w2": 1}) + [node("infra", kubevirt=False)]
    plan = plan_of(objects, {"w1": 0.9, "w2": 0.1})  # no sample for infra: it is not in the cycle
    assert plan["errors"] == []
    assert plan["cycle"]["nodes"] == ["w1", "w2"]
    assert [e["node"] for e in plan["evictions"]] == ["w1", "w1"]


def test_soft_taints_follow_the_classification():
    objects = cluster({"w1": 2, "w2": 1, "w3": 1, "w4": 1})
    plan = plan_of(objects, {"w1": 0.9, "w2": 0.5, "w3": 0.3, "w4": 0.2}, mode="Automatic")
    taints = plan["soft_taints"]
    assert taints["applied_by_operator"] is True
    keys = {name: [t["key"] for t in wanted] for name, wanted in taints["nodes"].items()}
    # average 47.5: w1 over (> 57.5), w2 appropriate, w3/w4 under (<= 47.5)
    assert keys == {"w1": [APPROPRIATE_TAINT, OVERUTILIZED_TAINT], "w2": [APPROPRIATE_TAINT], "w3": [], "w4": []}
    assert all(t["effect"] == "PreferNoSchedule" for t in taints["nodes"]["w1"])


def test_no_appropriate_taint_when_no_node_is_underutilized():
    objects = cluster({"w1": 2, "w2": 1, "w3": 1})
    # static Low thresholds (10/30): nothing is at or below 10%, w1 is over 30%
    plan = plan_of(objects, {"w1": 0.5, "w2": 0.2, "w3": 0.2},
                   customizations={"devLowNodeUtilizationThresholds": "Low"})
    keys = {name: [t["key"] for t in wanted] for name, wanted in plan["soft_taints"]["nodes"].items()}
    assert keys == {"w1": [APPROPRIATE_TAINT, OVERUTILIZED_TAINT], "w2": [], "w3": []}
    assert plan["soft_taints"]["applied_by_operator"] is False
    assert plan["evictions"] == []  # nothing under-utilized: LowNodeUtilization does nothing


def test_utilization_profile_selects_the_query():
    objects = cluster({"w1": 2, "w2": 1})
    plan = plan_of(objects, {"w1": 0.9, "w2": 0.1}, customizations={
        "devActualUtilizationProfile": "PrometheusCPUPSIPressure"}, query=PSI_CPU_QUERY)
    assert plan["errors"] == []
    assert plan["actual_utilization"]["plugins"]["KubeVirtRelieveAndMigrate/LowNodeUtilization"]["query"] == \
        PSI_CPU_QUERY
    assert len(plan["evictions"]) == 2


@pytest.mark.parametrize("missing", ["w2"])
def test_missing_sample_fails_the_plugin_and_no_soft_taints(missing):
    objects = cluster({"w1": 2, "w2": 1})
    plan = plan_of(objects, {"w1": 0.9})
    assert plan["evictions"] == []
    assert f"unable to find metric entry for {missing}" in plan["errors"][0]["message"]
    assert plan["soft_taints"]["nodes"] == {}  # the soft tainter fails the same way
    assert f"unable to find metric entry for {missing}" in plan["soft_taints"]["error"]


def test_soft_tainter_classifies_every_selected_node_ready_or_not():
    objects = cluster({"w1": 2, "w2": 1, "w3": 1, "w4": 1})
    objects[3]["status"]["conditions"] = [{"type": "Ready", "status": "False"}]  # w4: not in the cycle
    plan = plan_of(objects, {"w1": 0.9, "w2": 0.62, "w3": 0.3, "w4": 0.9})
    assert plan["cycle"]["nodes"] == ["w1", "w2", "w3"]
    # the cycle's average is 60.7: w2 (62) is appropriate for LowNodeUtilization...
    classes = {n["name"]: n["classes"] for n in plan["utilization"]["nodes"]}
    assert classes["w2"] == {"KubeVirtRelieveAndMigrate/LowNodeUtilization": "appropriate"}
    # ...but the soft tainter averages w4 in too (68): w2 is under-utilized there, and w4 is over-utilized
    taints = plan["soft_taints"]["nodes"]
    keys = {name: [t["key"].rsplit("/", 1)[-1] for t in wanted] for name, wanted in taints.items()}
    assert keys == {"w1": ["appropriate", "overutilized"], "w2": [], "w3": [], "w4": ["appropriate", "overutilized"]}


# --- KubevirtMigrationAware from the recorded VMIs and VMIMs -----------------------------------------------------

def with_domain(pod: dict) -> dict:
    pod["metadata"]["annotations"] = {"kubevirt.io/domain": pod["metadata"]["labels"]["vm.kubevirt.io/name"]}
    return pod


def vmi(name: str, node_name: str, start: Optional[str] = None, end: Optional[str] = None) -> dict:
    status: dict = {"phase": "Running", "nodeName": node_name}
    if start:
        status["migrationState"] = {"startTimestamp": start, **({"endTimestamp": end} if end else {})}
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": "vms", "uid": f"vmi-{name}"}, "status": status}


def vmim(name: str, vmi_name: str, end: str) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": name, "namespace": "vms"}, "spec": {"vmiName": vmi_name},
            "status": {"phase": "Succeeded", "migrationState": {"endTimestamp": end}}}


def migration_cluster(*extra: dict) -> list[dict]:
    objects = [node("w1"), node("w2")]
    objects += [with_domain(virt_launcher(f"w1-vm{i}", "w1")) for i in range(4)] + [virt_launcher("w2-vm0", "w2")]
    return objects + list(extra)


VALUES = {"w1": 0.9, "w2": 0.1}


def test_without_vmis_every_vm_is_evictable_and_the_plan_says_so():
    plan = plan_of(migration_cluster(), VALUES)
    assert [e["vm"]["name"] for e in plan["evictions"]] == ["w1-vm0", "w1-vm1"]
    assert any("found no VirtualMachineInstance in the snapshot" in w for w in plan["warnings"])


def test_a_vm_migrating_now_is_not_evicted():
    objects = migration_cluster(vmi("w1-vm0", "w1", start="2026-11-22T11:58:00Z"), vmi("w1-vm1", "w1"))
    plan = plan_of(objects, VALUES)
    assert [e["vm"]["name"] for e in plan["evictions"]] == ["w1-vm1", "w1-vm2"]
    spared = plan["spared"]["by_reason"]["VM live migration in progress (KubevirtMigrationAware Filter)"]
    assert spared["examples"] == ["vms/virt-launcher-w1-vm0-x1x2x"]
    assert not any("found no VirtualMachineInstance" in w for w in plan["warnings"])


def test_cooldown_after_a_migration_defers_the_vm():
    # migrated 10 minutes ago in 2 minutes: the 15 minute default cooldown still runs
    recent = vmi("w1-vm0", "w1", start="2026-11-22T11:48:00Z", end="2026-11-22T11:50:00Z")
    # migrated 40 minutes ago, but it took 45 minutes: the cooldown is the migration's duration
    slow = vmi("w1-vm1", "w1", start="2026-11-22T10:35:00Z", end="2026-11-22T11:20:00Z")
    # migrated 20 minutes ago: past 15 minutes, evictable
    done = vmi("w1-vm2", "w1", start="2026-11-22T11:38:00Z", end="2026-11-22T11:40:00Z")
    plan = plan_of(migration_cluster(recent, slow, done), VALUES)
    assert [e["vm"]["name"] for e in plan["evictions"]] == ["w1-vm2", "w1-vm3"]
    reasons = [r for r in plan["spared"]["by_reason"] if "PreEvictionFilter" in r]
    assert any("migrated 10m ago, cooldown 15m" in r for r in reasons)
    assert any("migrated 40m ago, cooldown 45m" in r for r in reasons)


def test_repeated_migrations_double_the_cooldown():
    # 20 minutes ago (past 15m), but its third completion within 48h: 15m x 2 x 2 = 60m
    vm = vmi("w1-vm0", "w1", start="2026-11-22T11:38:00Z", end="2026-11-22T11:40:00Z")
    history = [vmim(f"m{i}", "w1-vm0", end) for i, end in
               enumerate(("2026-11-21T08:00:00Z", "2026-11-22T02:00:00Z", "2026-11-22T11:40:00Z"))]
    old = vmim("m-old", "w1-vm0", "2026-11-19T08:00:00Z")  # outside the 48h window
    plan = plan_of(migration_cluster(vm, *history, old), VALUES)
    assert "w1-vm0" not in [e["vm"]["name"] for e in plan["evictions"]]
    assert any("cooldown 60m after 3 migration(s)" in r for r in plan["spared"]["by_reason"])
    short = plan_of(migration_cluster(vm, *history, old), VALUES,
                    customizations={"devMigrationCooldown": "5m", "devMaxMigrationCooldown": "10m"})
    assert "w1-vm0" in [e["vm"]["name"] for e in short["evictions"]]  # capped at 10m, 20m elapsed


def test_migration_aware_args_are_validated_as_upstream():
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError

    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "p", "pluginConfig": [{"name": "KubevirtMigrationAware",
                                       "args": {"migrationCooldown": "1h", "maxMigrationCooldown": "30m"}}],
        "plugins": {"filter": {"enabled": ["KubevirtMigrationAware"]}}}]}
    with pytest.raises(PolicyError, match="maxMigrationCooldown must be >= migrationCooldown"):
        compute_plan([], document, NOW)
