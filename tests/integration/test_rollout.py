"""playbooks/tune.yml with rollout controls (descheduler_fleet_rollout; docs/rolling-out.md) on a fleet of three API
servers (`fleet_clusters`), each running the operator stand-in, one inventory host and one decision group each:
canaries (mandatory: canary), wave-1 (prod-a), wave-2 (prod-b).

Each cluster first runs BASE (a rollout that passes: changed, soaked, recorded as verified). Then NEW (another
descheduling interval) is rolled out while prod-a's stand-in answers NEW the way a bad change shows on a real
cluster: its operand logs an eviction storm, or the operator never rolls NEW out (log-only refusal), or it degrades.
The rollout must stop at prod-a's group, put prod-a back on BASE, keep canary on NEW and leave prod-b untouched.
No sleeps: the soak is a few seconds of polling observed state; every wait has a generous deadline.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEGRADED_SCALE_TO_ZERO,
    LOG_ONLY_IGNORED,
)
from fleet_support import generated_cluster, run_concurrently
from operator_support import descheduler_operator, get_kd, get_object
from playbook import REPO, run_playbook

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

PLAYBOOK = REPO / "playbooks" / "tune.yml"
BASE = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
        "profiles": ["AffinityAndTaints"]}
NEW_INTERVAL = 1800
GROUPS = {"canary": "canaries", "prod-a": "wave-1", "prod-b": "wave-2"}
RECORD = "descheduler-fleet-last-good"


@pytest.fixture
def fleet(fleet_clusters: Callable[[int], list[Any]]) -> Iterator[dict[str, Any]]:
    clusters: dict[str, Any] = {}
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    stacks: list[ExitStack] = []
    try:
        for index, (name, cluster) in enumerate(zip(GROUPS, fleet_clusters(len(GROUPS)), strict=True)):
            stacks.append(stack := ExitStack())
            # nodes for the operand (with addresses: its log is read through the kubelet stand-in) and workloads
            stack.enter_context(generated_cluster(cluster, build_cluster(3, 4, seed=index + 1, now=now)))
            cluster.operator = stack.enter_context(descheduler_operator(cluster))
            clusters[name] = cluster
        yield clusters
    finally:
        run_concurrently([stack.close for stack in stacks])


def write_inventory(tmp_path: Path, fleet: dict[str, Any], interval: int) -> Path:
    hosts = {name: {"ansible_connection": "local", "tune_wait_sleep": 1,
                    "descheduler_fleet_connection": {"kubeconfig": str(cluster.kubeconfig),
                                                     "context": cluster.context}}
             for name, cluster in fleet.items()}
    children = {group: {"hosts": {name: {}}} for name, group in GROUPS.items()}
    inventory = {"clusters": {"vars": {"tune_spec_defaults": {**BASE, "deschedulingIntervalSeconds": interval}},
                              "hosts": hosts, "children": children}}
    path = tmp_path / f"inventory-{interval}.yml"
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path


def roll_out(inventory: Path, *options: str, **controls: Any) -> Any:
    rollout = {"mandatory_groups": ["canaries"], "groups": ["wave-1", "wave-2"], "min_success_time": 2,
               "gate_interval": 1, "progress_deadline": 180, "run_id": "test", **controls}
    return run_playbook(PLAYBOOK, "-i", str(inventory), "-e", json.dumps({"descheduler_fleet_rollout": rollout}),
                        *options)


def interval(cluster: Any) -> int:
    return get_kd(cluster)["spec"]["deschedulingIntervalSeconds"]


def record(cluster: Any) -> dict[str, Any] | None:
    configmap = get_object(cluster, "configmaps", RECORD)
    if configmap is None:
        return None
    return {**json.loads(configmap["data"]["kubedescheduler.json"]),
            "state": configmap["metadata"]["annotations"]["descheduler.fleet/state"]}


def start_on_base(fleet: dict[str, Any], tmp_path: Path) -> None:
    """Every cluster on BASE through a rollout that passes: changed, soaked, BASE recorded as verified."""
    process = roll_out(write_inventory(tmp_path, fleet, 3600))
    assert process.returncode == 0, process.stdout[-6000:]
    assert "Rollout done: canaries -> wave-1 -> wave-2" in process.stdout
    for cluster in fleet.values():
        assert interval(cluster) == 3600
        assert record(cluster)["state"] == "verified" and record(cluster)["spec"]["deschedulingIntervalSeconds"] == 3600


def on_new_config(operator: Any, react: Callable[[], None], otherwise: Callable[[], None] | None = None) -> None:
    """Make the stand-in call `react` while it syncs a KubeDescheduler with the NEW interval (as the real operator
    or operand reacts to that configuration), `otherwise` for any other."""
    first_error, render = operator._first_error, operator._render

    def first_error_now(spec: dict[str, Any]) -> tuple[str | None, str]:
        if spec.get("deschedulingIntervalSeconds") == NEW_INTERVAL and getattr(operator, "refusal", None):
            return operator.refusal
        return first_error(spec)

    def render_now(kubedescheduler: dict[str, Any], spec: dict[str, Any]) -> None:
        (react if spec.get("deschedulingIntervalSeconds") == NEW_INTERVAL else (otherwise or (lambda: None)))()
        render(kubedescheduler, spec)

    operator._first_error, operator._render = first_error_now, render_now


def storm_log(evictions: int) -> str:
    """The operand's log under a configuration that evicts a lot: `evictions` real evictions within one minute."""
    return "".join(f'I1126 10:00:{index % 60:02d}.000001       1 evictions.go:607] "Evicted pod" '
                   f'pod="shop/web-{index}" reason="" strategy="PodLifeTime" node="worker-1" '
                   f'profile="AffinityAndTaints"\n' for index in range(evictions))


def assert_stopped_at_prod_a(fleet: dict[str, Any], prod_b_generation: int, stdout: str) -> None:
    assert interval(fleet["canary"]) == NEW_INTERVAL  # the earlier group is kept
    assert interval(fleet["prod-a"]) == 3600  # rolled back to its last good configuration
    assert record(fleet["prod-a"])["spec"]["deschedulingIntervalSeconds"] == 3600
    prod_b = get_kd(fleet["prod-b"])  # the later group untouched
    assert prod_b["spec"]["deschedulingIntervalSeconds"] == 3600
    assert prod_b["metadata"]["generation"] == prod_b_generation
    assert record(fleet["prod-b"])["state"] == "verified"
    assert "prod-a: FAILED: " in stdout and "rolled back to its last good configuration" in stdout
    assert "prod-b: not reached yet" in stdout


def test_a_breached_gate_rolls_the_cluster_back_and_halts(fleet: dict[str, Any], tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    prod_a = fleet["prod-a"].operator
    on_new_config(prod_a, lambda: setattr(prod_a, "operand_log", storm_log(30)),
                  lambda: setattr(prod_a, "operand_log", ""))
    generation = get_kd(fleet["prod-b"])["metadata"]["generation"]

    # check mode first: every cluster says what would change, one diff each; nothing is written, nothing soaks
    checked = roll_out(write_inventory(tmp_path, fleet, NEW_INTERVAL), "--check", "--diff", min_success_time=20,
                       gates={"max_evictions_per_minute": 10})
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert "Fleet: 3 tuned, 0 unchanged, 0 failed, 0 not reached yet (of 3)" in checked.stdout
    for name in GROUPS:
        assert f"{name}: KubeDescheduler openshift-kube-descheduler-operator/cluster" in checked.stdout
        assert interval(fleet[name]) == 3600 and record(fleet[name])["state"] == "verified"

    process = roll_out(write_inventory(tmp_path, fleet, NEW_INTERVAL), min_success_time=20,
                       gates={"max_evictions_per_minute": 10})
    assert process.returncode != 0, process.stdout[-6000:]
    assert ("Rollout halted: group wave-1: health gate breached on prod-a: eviction storm: the descheduler logged "
            "30 eviction(s) within a minute from 1126 10:00:00.000001 (at most 10 allowed)") in process.stdout
    assert_stopped_at_prod_a(fleet, generation, process.stdout)
    canary = record(fleet["canary"])
    assert {key: canary[key] for key in ("present", "state", "spec")} == {
        "present": True, "state": "verified",
        "spec": {**BASE, "deschedulingIntervalSeconds": NEW_INTERVAL, "logLevel": "Normal",
                 "operatorLogLevel": "Normal"}}
    assert canary["intended"] is None  # the journal: nothing left intended on a verified cluster


def test_a_progress_deadline_stops_the_rollout(fleet: dict[str, Any], tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    prod_a = fleet["prod-a"].operator
    prod_a.refusal = (LOG_ONLY_IGNORED, "the stand-in never rolls this configuration out")
    on_new_config(prod_a, lambda: None)
    generation = get_kd(fleet["prod-b"])["metadata"]["generation"]

    # prod-a never rolls NEW out, whatever the deadline; the deadline is long enough for the canary to roll NEW out
    # and for prod-a to roll back to BASE (both bounded by it) on a loaded machine
    process = roll_out(write_inventory(tmp_path, fleet, NEW_INTERVAL), progress_deadline="60s")
    assert process.returncode != 0, process.stdout[-6000:]
    assert "Rollout halted: group wave-1: 1 cluster(s) failed (prod-a), over its max failures (0)" in process.stdout
    assert "prod-a: FAILED: progress deadline (60s) exceeded: the operator did not roll out generation" \
        in process.stdout
    assert_stopped_at_prod_a(fleet, generation, process.stdout)


def test_max_failures_stops_the_rollout(fleet: dict[str, Any], tmp_path: Path) -> None:
    """No mandatory group, each group tolerating failures, the fleet one: canary fails (rolled back, tolerated),
    prod-a fails (over the fleet's budget: halt), prod-b is never touched."""
    start_on_base(fleet, tmp_path)
    for name in ("canary", "prod-a"):
        fleet[name].operator.refusal = (DEGRADED_SCALE_TO_ZERO, f"{name} cannot run this configuration")
        on_new_config(fleet[name].operator, lambda: None)
    generation = get_kd(fleet["prod-b"])["metadata"]["generation"]

    process = roll_out(write_inventory(tmp_path, fleet, NEW_INTERVAL), mandatory_groups=[],
                       groups=["canaries", "wave-1", "wave-2"], max_failures="100%", max_failures_total=1)
    assert process.returncode != 0, process.stdout[-6000:]
    assert "Rollout halted: group wave-1: 1 cluster(s) failed (prod-a), over the fleet's max failures (1)" \
        in process.stdout
    assert "canary: FAILED: the operator refused generation" in process.stdout
    for name in ("canary", "prod-a"):
        assert interval(fleet[name]) == 3600
        assert get_object(fleet[name], "deployments", "descheduler", "apps/v1")["spec"]["replicas"] == 1
    prod_b = get_kd(fleet["prod-b"])
    assert prod_b["spec"]["deschedulingIntervalSeconds"] == 3600 and prod_b["metadata"]["generation"] == generation


def test_a_misspelt_group_fails_before_any_cluster_changes(fleet: dict[str, Any], tmp_path: Path) -> None:
    """A misspelt canary group would make the canary an ordinary cluster (#46): the tune role passes every inventory
    group, and the rollout refuses a name that is none, naming the closest, before any cluster changes."""
    inventory = write_inventory(tmp_path, fleet, 3600)
    process = roll_out(inventory, mandatory_groups=["canariez"])
    assert process.returncode != 0, process.stdout[-6000:]
    assert ("mandatory_groups: 'canariez' is no inventory group (inventory_groups) and no cluster's "
            "descheduler_fleet_rollout_group (did you mean 'canaries'?") in process.stdout
    # a host variable naming no group: the canary would leave its mandatory group for a group of its own
    hosts = yaml.safe_load(inventory.read_text())
    hosts["clusters"]["hosts"]["canary"]["descheduler_fleet_rollout_group"] = "canarie"
    inventory.write_text(yaml.safe_dump(hosts, sort_keys=False))
    process = roll_out(inventory)
    assert process.returncode != 0, process.stdout[-6000:]
    assert ("clusters[0].group: 'canarie', the descheduler_fleet_rollout_group of canary, is not in mandatory_groups "
            "or groups and no inventory group (did you mean 'canaries'?") in process.stdout
    for cluster in fleet.values():  # nothing written on any cluster
        assert get_kd(cluster) is None and record(cluster) is None


def test_a_cluster_that_succeeded_beside_a_failed_one_is_reported_unsoaked(fleet: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    """canary and prod-a in one mandatory group, changed at once: the canary's operator degrades under NEW (rolled
    back, the group halts before its soak), prod-a takes NEW. prod-a keeps NEW unsoaked, and says so: in its record
    (state unsoaked, BASE still its last good configuration), in the module's result and in the summary. Once the
    canary's cause is gone, the same rollout converges: every cluster on NEW, verified."""
    start_on_base(fleet, tmp_path)
    canary = fleet["canary"].operator
    canary.refusal = (DEGRADED_SCALE_TO_ZERO, "canary cannot run this configuration")
    on_new_config(canary, lambda: None)
    generation = get_kd(fleet["prod-b"])["metadata"]["generation"]
    inventory = write_inventory(tmp_path, fleet, NEW_INTERVAL)
    hosts = yaml.safe_load(inventory.read_text())
    hosts["clusters"]["children"]["canaries"]["hosts"]["prod-a"] = {}  # prod-a beside the canary
    del hosts["clusters"]["children"]["wave-1"]
    inventory.write_text(yaml.safe_dump(hosts, sort_keys=False))

    process = roll_out(inventory, groups=["wave-2"], max_concurrency=2)
    assert process.returncode != 0, process.stdout[-6000:]
    prod_a_record = record(fleet["prod-a"])
    assert prod_a_record["state"] == "unsoaked" and prod_a_record["spec"]["deschedulingIntervalSeconds"] == 3600
    assert interval(fleet["prod-a"]) == NEW_INTERVAL and interval(fleet["canary"]) == 3600
    assert record(fleet["canary"])["state"] == "rolled-back"  # the journal's last step (test_rollout_transaction.py)
    assert "prod-a: ok, mode Predictive (changed); UNSOAKED: its group halted before the soak passed" in process.stdout
    assert ("Rollout halted: group canaries: 1 cluster(s) failed (canary), over its max failures (0, a mandatory "
            "group); changed but unsoaked: prod-a") in process.stdout
    assert get_kd(fleet["prod-b"])["metadata"]["generation"] == generation

    canary.refusal = None
    again = roll_out(inventory, groups=["wave-2"], max_concurrency=2)
    assert again.returncode == 0, again.stdout[-6000:]
    assert "UNSOAKED" not in again.stdout
    for cluster in fleet.values():
        assert interval(cluster) == NEW_INTERVAL and record(cluster)["state"] == "verified"
        assert record(cluster)["spec"]["deschedulingIntervalSeconds"] == NEW_INTERVAL
