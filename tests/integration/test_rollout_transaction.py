"""A rollout as a transaction (docs/rolling-out.md, "One change at a time" and "Interrupted"), on the fleet of
test_rollout.py: three API servers with the operator stand-in, canary (mandatory), prod-a, prod-b.

A rollout of NEW is started with a soak far longer than the test; each test waits until the canary's record says
``soaking`` (polled on the API server), then acts: a second rollout, a tune and an evict run must be refused naming
the holder; SIGTERM to ansible-playbook (an AWX cancel) must roll the canary back; SIGKILL of the module must leave a
record that the next run resolves per ``on_interrupted``. Nothing waits for a time to pass: every wait polls state.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    LOG_ONLY_IGNORED,
)
from operator_support import get_kd, read
from playbook import ansible_env, executable, run_playbook, run_tasks
from process_tree import kill_tree, module_process
from standins.rest import Rest, path, wait_until
from test_evict_cancel import cancel_like_awx, running
from test_rollout import NEW_INTERVAL, PLAYBOOK, fleet, interval, record, start_on_base, write_inventory

__all__ = ["fleet"]  # the fixture, shared with test_rollout.py

CHANGE_LEASE = path("coordination.k8s.io/v1", "leases", "kube-system", "descheduler-fleet-change")
EVICT_LEASE = path("coordination.k8s.io/v1", "leases", "kube-system", "descheduler-fleet-evict")
MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"
CONTROLS = {"mandatory_groups": ["canaries"], "groups": ["wave-1", "wave-2"], "gate_interval": 1,
            "progress_deadline": 180, "run_id": "test"}


def rollout_args(inventory: Path, **controls: Any) -> list[str]:
    rollout = {**CONTROLS, "min_success_time": 2, **controls}
    return ["-i", str(inventory), "-e", json.dumps({"descheduler_fleet_rollout": rollout})]


def start_rollout(directory: Path, inventory: Path, **controls: Any) -> subprocess.Popen:
    """ansible-playbook as AWX runs it (its own session), in the background."""
    directory.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([executable("ansible-playbook"), str(PLAYBOOK), *rollout_args(inventory, **controls)],
                            env=ansible_env(),
                            stdout=(directory / "stdout").open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def roll(inventory: Path, **controls: Any) -> subprocess.CompletedProcess:
    return run_playbook(PLAYBOOK, *rollout_args(inventory, **controls))


def change_lease(cluster: Any) -> dict[str, Any] | None:
    return read(cluster, CHANGE_LEASE)


def holder_pid(cluster: Any) -> int | None:
    lease = change_lease(cluster)
    if not lease or not lease["spec"].get("holderIdentity"):
        return None
    return json.loads(lease["metadata"]["annotations"]["descheduler.fleet/holder"])["pid"]


def soaking(cluster: Any) -> bool:
    current = record(cluster)
    return current is not None and current["state"] == "soaking"


def untouched(fleet: dict[str, Any], generations: dict[str, int]) -> None:
    """prod-a and prod-b still on BASE, never written since `generations` were read, their records verified."""
    for name in ("prod-a", "prod-b"):
        assert interval(fleet[name]) == 3600
        assert get_kd(fleet[name])["metadata"]["generation"] == generations[name]
        assert record(fleet[name])["state"] == "verified"


def generations(fleet: dict[str, Any]) -> dict[str, int]:
    return {name: get_kd(cluster)["metadata"]["generation"] for name, cluster in fleet.items()}


def a_pod(cluster: Any) -> dict[str, Any]:
    with cluster.api_client() as client:
        pods = Rest(client).list(path("v1", "pods"))
    return next(pod for pod in pods if pod["metadata"]["namespace"] not in ("kube-system",))


def test_during_a_soak_a_second_rollout_a_tune_and_an_evict_are_refused_and_sigterm_rolls_the_canary_back(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    canary, before = fleet["canary"], generations(fleet)
    new = write_inventory(tmp_path, fleet, NEW_INTERVAL)
    first = start_rollout(tmp_path / "first", new, min_success_time="1h")
    try:
        wait_until(lambda: soaking(canary), timeout=300, what="the canary's record to say soaking")
        assert interval(canary) == NEW_INTERVAL and holder_pid(canary) == module_process(first.pid, "rollout")

        # a second rollout (another interval) fails at the canary before any write, naming the holder
        second = roll(write_inventory(tmp_path, fleet, 900))
        assert second.returncode != 0, second.stdout[-4000:]
        assert "canary: FAILED: " in second.stdout
        assert "descheduler-fleet-change is held by another change" in second.stdout
        assert f"pid {holder_pid(canary)} on {socket.gethostname()}" in second.stdout and "held since" in second.stdout
        assert interval(canary) == NEW_INTERVAL and soaking(canary)  # the first's change and journal untouched

        # tune without rollout controls (the kubedescheduler module) on the canary: refused the same way
        tune = run_playbook(PLAYBOOK, "-i", str(write_inventory(tmp_path, fleet, 900)), "--limit", "canary")
        assert tune.returncode != 0, tune.stdout[-4000:]
        assert "descheduler-fleet-change is held by another change" in tune.stdout
        assert interval(canary) == NEW_INTERVAL

        # an evict run on the canary: refused before any eviction
        pod = a_pod(canary)
        evict = {"name": "evict", "descheduler.fleet.evict": {
            "kubeconfig": str(canary.kubeconfig), "context": canary.context,
            "pods": [{"namespace": pod["metadata"]["namespace"], "name": pod["metadata"]["name"]}]},
            "register": "evict", "ignore_errors": True}
        (tmp_path / "evict").mkdir()
        _process, results = run_tasks(tmp_path / "evict", [evict])
        assert results["evict"]["failed"] is True
        assert "descheduler-fleet-change is held by a change" in results["evict"]["msg"]
        with canary.api_client() as client:
            still = Rest(client).get(path("v1", "pods", pod["metadata"]["namespace"], pod["metadata"]["name"]))
        assert still is not None and still["metadata"]["uid"] == pod["metadata"]["uid"]

        # an AWX cancel: the module outlives ansible-playbook, notices, and rolls the canary back
        module = module_process(first.pid, "rollout")
        cancel_like_awx(first)
        assert first.returncode != 0
        wait_until(lambda: not running(module), timeout=300, what="the cancelled rollout module to finish")
    finally:
        kill_tree(first.pid)
    assert interval(canary) == 3600
    assert record(canary)["state"] == "rolled-back" and record(canary)["spec"]["deschedulingIntervalSeconds"] == 3600
    assert not (change_lease(canary) or {}).get("spec", {}).get("holderIdentity")  # given back
    untouched(fleet, before)

    # the next run finds a settled record and converges
    rerun = roll(new)
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    for cluster in fleet.values():
        assert interval(cluster) == NEW_INTERVAL and record(cluster)["state"] == "verified"


def test_sigkill_mid_soak_leaves_a_soaking_record_that_the_next_run_refuses_then_rolls_back(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    canary, before = fleet["canary"], generations(fleet)
    new = write_inventory(tmp_path, fleet, NEW_INTERVAL)
    first = start_rollout(tmp_path / "first", new, min_success_time="1h")
    try:
        wait_until(lambda: soaking(canary), timeout=300, what="the canary's record to say soaking")
        module = module_process(first.pid, "rollout")
        os.kill(module, signal.SIGKILL)  # nothing runs after this: no rollback, no record written
        kill_tree(first.pid)
        first.wait(timeout=60)
        wait_until(lambda: not running(module), timeout=60, what="the killed module to be gone")
    finally:
        kill_tree(first.pid)
    assert first.returncode != 0
    # the canary is fully new, and its record says so: soaking, BASE as its last good configuration
    assert interval(canary) == NEW_INTERVAL
    left = record(canary)
    assert left["state"] == "soaking" and left["spec"]["deschedulingIntervalSeconds"] == 3600
    untouched(fleet, before)

    # on_interrupted: fail (the default) stops at the canary with the record shown, writing nothing
    canary_generation = get_kd(canary)["metadata"]["generation"]
    refused = roll(new)
    assert refused.returncode != 0, refused.stdout[-4000:]
    assert "canary: FAILED: " in refused.stdout and "shows a change that did not finish" in refused.stdout
    assert "soaking" in refused.stdout.split("shows a change that did not finish", 1)[1][:400]
    assert get_kd(canary)["metadata"]["generation"] == canary_generation and record(canary)["state"] == "soaking"
    untouched(fleet, before)

    # on_interrupted: rollback, rolling BASE out again: the canary goes back to BASE first, and all end verified
    settled = roll(write_inventory(tmp_path, fleet, 3600), on_interrupted="rollback")
    assert settled.returncode == 0, settled.stdout[-6000:]
    for cluster in fleet.values():
        assert interval(cluster) == 3600 and record(cluster)["state"] == "verified"

    # and a rerun of NEW converges
    rerun = roll(new)
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    for cluster in fleet.values():
        assert interval(cluster) == NEW_INTERVAL and record(cluster)["state"] == "verified"


def test_a_rollout_does_not_start_on_a_cluster_where_an_evict_run_holds_its_lease(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    canary, before = fleet["canary"], generations(fleet)
    holder = {"host": "control-node-2", "pid": 4242, "started": "2026-12-02T08:00:00Z"}
    now = datetime.now(UTC).strftime(MICRO_TIME)
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"namespace": "kube-system", "name": "descheduler-fleet-evict",
                          "annotations": {"descheduler.fleet/holder": json.dumps(holder)}},
             "spec": {"holderIdentity": "control-node-2/pid-4242/0123abcd", "leaseDurationSeconds": 3600,
                      "acquireTime": now, "renewTime": now, "leaseTransitions": 0}}
    with canary.api_client() as client:
        Rest(client).create(path("coordination.k8s.io/v1", "leases", "kube-system"), lease)
    try:
        refused = roll(write_inventory(tmp_path, fleet, NEW_INTERVAL))
        assert refused.returncode != 0, refused.stdout[-4000:]
        assert "descheduler-fleet-evict is held by an evict run" in refused.stdout
        assert "pid 4242 on control-node-2" in refused.stdout
        assert get_kd(canary)["metadata"]["generation"] == before["canary"] and interval(canary) == 3600
        assert record(canary)["state"] == "verified"
        assert not change_lease(canary)["spec"].get("holderIdentity")  # the change gave its own Lease back
        untouched(fleet, before)
    finally:
        with canary.api_client() as client:
            Rest(client).delete(EVICT_LEASE)


def test_sigterm_mid_apply_rolls_the_canary_back_once_its_apply_ends(fleet: dict[str, Any], tmp_path: Path) -> None:
    """The operator holds NEW back (it logs an error for every sync) until the test has cancelled the playbook: the
    apply in flight is not cut short, and the cancel rolls the canary back as soon as it ends."""
    start_on_base(fleet, tmp_path)
    canary, before = fleet["canary"], generations(fleet)
    canary.operator.inject_error("held back by the test", LOG_ONLY_IGNORED)
    new = write_inventory(tmp_path, fleet, NEW_INTERVAL)
    first = start_rollout(tmp_path / "first", new, min_success_time="1h")
    try:
        wait_until(lambda: interval(canary) == NEW_INTERVAL and record(canary)["state"] == "intended", timeout=300,
                   what="the canary's KubeDescheduler written, its record saying intended")
        module = module_process(first.pid, "rollout")
        cancel_like_awx(first)
        assert first.returncode != 0
        canary.operator.clear_errors()  # the operator rolls NEW out: the apply ends, then the cancel is seen
        wait_until(lambda: not running(module), timeout=300, what="the cancelled rollout module to finish")
    finally:
        canary.operator.clear_errors()
        kill_tree(first.pid)
    assert interval(canary) == 3600
    assert record(canary)["state"] == "rolled-back" and record(canary)["spec"]["deschedulingIntervalSeconds"] == 3600
    assert not (change_lease(canary) or {}).get("spec", {}).get("holderIdentity")
    untouched(fleet, before)

    rerun = roll(new)
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    for cluster in fleet.values():
        assert interval(cluster) == NEW_INTERVAL and record(cluster)["state"] == "verified"


def test_sigkill_mid_rollback_leaves_rolling_back_which_the_next_run_finishes(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    """NEW is held back until the progress deadline fails the canary; its rollback to BASE is held back too (the
    operator errs on every sync); the module is killed while the record says rolling-back."""
    start_on_base(fleet, tmp_path)
    canary, before = fleet["canary"], generations(fleet)
    canary.operator.inject_error("held back by the test", LOG_ONLY_IGNORED)
    first = start_rollout(tmp_path / "first", write_inventory(tmp_path, fleet, NEW_INTERVAL), progress_deadline=20)
    try:
        wait_until(lambda: record(canary)["state"] == "rolling-back", timeout=300,
                   what="the canary's record to say rolling-back")
        # killed within its rollback, or (on a slow machine) after that rollback failed its deadline and the
        # rollout halted: either way the record says rolling-back, which is what the next run must resolve
        module = module_process(first.pid, "rollout")
        if module is not None:
            os.kill(module, signal.SIGKILL)
        kill_tree(first.pid)
        first.wait(timeout=60)
        if module is not None:
            wait_until(lambda: not running(module), timeout=60, what="the killed module to be gone")
    finally:
        canary.operator.clear_errors()
        kill_tree(first.pid)
    left = record(canary)
    assert left["state"] == "rolling-back" and left["spec"]["deschedulingIntervalSeconds"] == 3600
    untouched(fleet, before)

    refused = roll(write_inventory(tmp_path, fleet, 3600))
    assert refused.returncode != 0 and "shows a change that did not finish" in refused.stdout, refused.stdout[-4000:]
    assert record(canary)["state"] == "rolling-back"

    settled = roll(write_inventory(tmp_path, fleet, 3600), on_interrupted="rollback")
    assert settled.returncode == 0, settled.stdout[-6000:]
    for cluster in fleet.values():
        assert interval(cluster) == 3600 and record(cluster)["state"] == "verified"
