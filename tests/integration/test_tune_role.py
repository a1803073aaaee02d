"""playbooks/tune.yml (role descheduler.fleet.tune) on a fleet of three API servers (`fleet_clusters`: the test
control plane and two more sharing its etcd) running the operator stand-in, one inventory host each:
group_vars defaults merged with host_vars overrides, idempotence, the Automatic acknowledgement with the plan shown
first, and the canary rollout stopping at the first failure."""

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
from fleet_support import generated_cluster, run_concurrently
from operator_support import descheduler_operator, get_kd, get_object, operand_started, predictive_log
from playbook import REPO, run_playbook, run_tasks

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

PLAYBOOK = REPO / "playbooks" / "tune.yml"
DEFAULTS = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
            "profiles": ["AffinityAndTaints", "LifecycleAndUtilization"],
            "profileCustomizations": {"podLifetime": "1h", "namespaces": {"excluded": ["batch"]}}}


@pytest.fixture
def fleet(fleet_clusters: Callable[[int], list[Any]]) -> Iterator[dict[str, Any]]:
    """Three clusters, each running the operator, with some workload for the plan."""
    clusters: dict[str, Any] = {}
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    names = ("canary", "prod-a", "prod-b")
    stacks: list[ExitStack] = []
    try:
        for index, (name, cluster) in enumerate(zip(names, fleet_clusters(len(names)), strict=True)):
            stacks.append(stack := ExitStack())
            # The workload first: its nodes are where the operand runs (no extra node for the stand-in).
            stack.enter_context(generated_cluster(cluster, build_cluster(4, 6, seed=index + 1, now=now)))
            cluster.operator = stack.enter_context(descheduler_operator(cluster))  # its set_operand_log for the gate
            clusters[name] = cluster
        yield clusters
    finally:
        run_concurrently([stack.close for stack in stacks])  # each cluster's operator and workload removed at once


def write_inventory(tmp_path: Path, fleet: dict[str, Any], overrides: dict[str, dict]) -> Path:
    hosts = {name: {"ansible_connection": "local", "tune_wait_sleep": 1,
                    "descheduler_fleet_connection": {"kubeconfig": str(cluster.kubeconfig),
                                                     "context": cluster.context},
                    **({"tune_spec": overrides[name]} if name in overrides else {})}
             for name, cluster in fleet.items()}
    inventory = {"clusters": {"vars": {"tune_spec_defaults": DEFAULTS}, "hosts": hosts}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path


def tune(inventory: Path, *extra: str) -> Any:
    return run_playbook(PLAYBOOK, "-i", str(inventory), *extra)


def stored_spec(cluster: Any) -> dict[str, Any] | None:
    kubedescheduler = get_kd(cluster)
    return None if kubedescheduler is None else kubedescheduler["spec"]


def recap(stdout: str, host: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(host + " ") and "ok=" in line)


def test_fleet_defaults_with_per_cluster_overrides_idempotent(fleet: dict[str, Any], tmp_path: Path) -> None:
    overrides = {"prod-b": {"deschedulingIntervalSeconds": 600,
                            "profileCustomizations": {"namespaces": {"excluded": ["batch", "reports"]},
                                                      "thresholdPriority": 10000}}}
    inventory = write_inventory(tmp_path, fleet, overrides)
    process = tune(inventory)
    assert process.returncode == 0, process.stdout[-5000:]
    for name in ("canary", "prod-a"):
        assert stored_spec(fleet[name]) == {**DEFAULTS, "logLevel": "Normal", "operatorLogLevel": "Normal"}
    assert stored_spec(fleet["prod-b"]) == {
        "managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 600,
        "profiles": ["AffinityAndTaints", "LifecycleAndUtilization"],
        "profileCustomizations": {"podLifetime": "1h", "namespaces": {"excluded": ["batch", "reports"]},
                                  "thresholdPriority": 10000},
        "logLevel": "Normal", "operatorLogLevel": "Normal"}
    assert "canary: tuned, mode none -> Predictive, profiles AffinityAndTaints, LifecycleAndUtilization, 1 change(s)" \
        in process.stdout
    assert "Fleet: 3 tuned, 0 unchanged, 0 failed, 0 not reached yet (of 3)" in process.stdout

    again = tune(inventory)
    assert again.returncode == 0, again.stdout[-5000:]
    for name in fleet:
        assert "changed=0" in recap(again.stdout, name), recap(again.stdout, name)
    assert "prod-b: already tuned, mode Predictive -> Predictive" in again.stdout
    assert "Fleet: 0 tuned, 3 unchanged, 0 failed, 0 not reached yet (of 3)" in again.stdout


def test_check_mode_changes_no_cluster(fleet: dict[str, Any], tmp_path: Path) -> None:
    process = tune(write_inventory(tmp_path, fleet, {}), "--check", "--diff")
    assert process.returncode == 0, process.stdout[-5000:]
    assert all(stored_spec(cluster) is None for cluster in fleet.values())
    assert "canary: tuned, mode none -> Predictive" in process.stdout  # what it would do


def plan_of_stored_spec(cluster: Any, tmp_path: Path) -> dict[str, Any]:
    """The plan of the configuration the operator runs (one deterministic cycle: the gate's sample 0)."""
    (tmp_path / "plan").mkdir(exist_ok=True)
    task = {"descheduler.fleet.plan": {"kubeconfig": str(cluster.kubeconfig), "context": cluster.context,
                                       "kubedescheduler": stored_spec(cluster), "field_validation": "Warn"},
            "register": "plan"}
    process, results = run_tasks(tmp_path / "plan", [task])
    assert process.returncode == 0, process.stdout[-3000:]
    return results["plan"]


def test_automatic_needs_acknowledgement_and_shows_the_plan_first(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    process = tune(write_inventory(tmp_path, fleet, {}))
    assert process.returncode == 0, process.stdout[-5000:]
    # the operand's Predictive log: a first cycle on part of the cluster (left out: #47), then the cycle the plan of
    # its configuration finds, so the gate agrees
    planned = plan_of_stored_spec(fleet["canary"], tmp_path)["evictions"]
    fleet["canary"].operator.set_operand_log(predictive_log([planned[:1], planned], operand_started(fleet["canary"])))
    inventory = write_inventory(tmp_path, fleet, {"canary": {"mode": "Automatic"}})

    refused = tune(inventory, "-e", json.dumps({"descheduler_fleet_target_hosts": "canary"}))
    assert refused.returncode != 0
    assert "canary: the new configuration (Predictive -> Automatic) would evict" in refused.stdout
    assert "refusing to switch the descheduler from Predictive to Automatic" in refused.stdout
    assert "set tune_acknowledge_automatic=true" in refused.stdout
    assert stored_spec(fleet["canary"])["mode"] == "Predictive"

    accepted = tune(inventory, "-e", json.dumps({"descheduler_fleet_target_hosts": "canary",
                                                 "tune_acknowledge_automatic": True}))
    assert accepted.returncode == 0, accepted.stdout[-5000:]
    plan_at = accepted.stdout.index("canary: the new configuration (Predictive -> Automatic) would evict")
    applied_at = accepted.stdout.index("TASK [descheduler.fleet.tune : Apply the KubeDescheduler configuration]")
    assert plan_at < applied_at
    assert "canary: tuned, mode Predictive -> Automatic" in accepted.stdout
    assert stored_spec(fleet["canary"])["mode"] == "Automatic"
    args = get_object(fleet["canary"], "deployments", "descheduler", "apps/v1")["spec"]["template"]["spec"][
        "containers"][0]["args"]
    assert "--dry-run=true" not in args


def test_a_predictive_log_that_disagrees_with_the_plan_stops_the_switch(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    process = tune(write_inventory(tmp_path, fleet, {}), "-e", json.dumps({"descheduler_fleet_target_hosts": "canary"}))
    assert process.returncode == 0, process.stdout[-5000:]
    planned = plan_of_stored_spec(fleet["canary"], tmp_path)["evictions"]
    stranger = {"namespace": "payments", "name": "not-a-candidate-7d9f", "plugin": "RemoveDuplicates",
                "node": "worker-9", "profile": "AffinityAndTaints"}
    fleet["canary"].operator.set_operand_log(predictive_log([[], [*planned, stranger]],
                                                            operand_started(fleet["canary"])))
    inventory = write_inventory(tmp_path, fleet, {"canary": {"mode": "Automatic"}})
    switch = {"descheduler_fleet_target_hosts": "canary", "tune_acknowledge_automatic": True}

    refused = tune(inventory, "-e", json.dumps(switch))
    assert refused.returncode != 0
    assert "refusing to switch the descheduler from Predictive to Automatic: what it logged" in refused.stdout
    assert "1 logged eviction(s) the plan does not find possible (at most 0 allowed): " \
        "payments/not-a-candidate-7d9f (RemoveDuplicates)" in refused.stdout
    assert "set tune_acknowledge_gate=true" in refused.stdout
    assert stored_spec(fleet["canary"])["mode"] == "Predictive"

    accepted = tune(inventory, "-e", json.dumps({**switch, "tune_acknowledge_gate": True}))
    assert accepted.returncode == 0, accepted.stdout[-5000:]
    assert stored_spec(fleet["canary"])["mode"] == "Automatic"


def test_canary_failure_stops_the_rollout(fleet: dict[str, Any], tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, fleet, {
        "canary": {"profiles": ["LifecycleAndUtilization", "LongLifecycle"]}})
    process = tune(inventory, "-e", json.dumps({"descheduler_fleet_serial": [1, "100%"]}))
    assert process.returncode != 0
    assert "cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously" in process.stdout
    assert "Fleet: 0 tuned, 0 unchanged, 1 failed, 2 not reached yet (of 3)" in process.stdout
    assert all(stored_spec(fleet[name]) is None for name in fleet)
    assert "prod-a" not in "\n".join(line for line in process.stdout.splitlines() if line.startswith("TASK"))


def test_management_state_comes_from_the_role_default_and_is_required(fleet: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    """tune_spec_defaults defaults to {managementState: Managed}; a fleet-wide spec of one's own without it is refused
    before any write (the operator would scale the descheduler to 0)."""
    without = {key: value for key, value in DEFAULTS.items() if key != "managementState"}
    host = {"ansible_connection": "local", "tune_wait_sleep": 1,
            "descheduler_fleet_connection": {"kubeconfig": str(fleet["canary"].kubeconfig),
                                             "context": fleet["canary"].context}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"clusters": {"vars": {"tune_spec_defaults": without},
                                                 "hosts": {"canary": host}}}))
    refused = tune(path)
    assert refused.returncode != 0
    assert "spec.managementState=null: not set" in refused.stdout, refused.stdout[-5000:]
    assert stored_spec(fleet["canary"]) is None

    path.write_text(yaml.safe_dump({"clusters": {"hosts": {"canary": {**host, "tune_spec": without}}}}))
    process = tune(path)
    assert process.returncode == 0, process.stdout[-5000:]
    assert stored_spec(fleet["canary"]) == {**DEFAULTS, "logLevel": "Normal", "operatorLogLevel": "Normal"}
