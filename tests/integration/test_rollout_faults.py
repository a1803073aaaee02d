"""Faults around a rollout's writes (docs/rolling-out.md, "Interrupted"), on the fleet of test_rollout.py: three API
servers with the operator stand-in, canary (mandatory), prod-a, prod-b; completing test_rollout_transaction.py.

- SIGTERM, and SIGKILL, of ansible-playbook while the rollout waits for the canary's change Lease (held by another
  control node), and SIGKILL of the whole process tree once the rollout holds the Lease, before its first write;
- SIGTERM while the canary's rollback is in flight: the rollback finishes, or the record says ``interrupted``;
- the API server of prod-a killed while prod-a's change is applied, and started again.

The step a fault hits is reached by observed state, never by time: the record, the Lease, and the fault proxy
(faultproxy.py) in front of one cluster, which counts requests or holds one until the test releases it. Each test
compares the resourceVersions of what the collection writes on each cluster (the KubeDescheduler, the record, the
change Lease) before and after, and reruns to convergence.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEGRADED_SCALE_TO_ZERO,
    LOG_ONLY_IGNORED,
)
from controlplane import write_kubeconfig
from faultproxy import FaultProxy
from operator_support import get_kd, get_object
from process_tree import kill_tree, module_process
from standins.rest import Rest, wait_until
from test_evict_cancel import cancel_like_awx, running
from test_rollout import NEW_INTERVAL, RECORD, fleet, interval, record, start_on_base, write_inventory
from test_rollout_transaction import CHANGE_LEASE, MICRO_TIME, change_lease, holder_pid, roll, start_rollout

__all__ = ["fleet"]  # the fixture, shared with test_rollout.py

BASE_INTERVAL = 3600
ELSEWHERE = {"host": "control-node-2", "pid": 4242, "started": "2026-12-02T08:00:00Z", "playbook": "tune.yml"}


# ---- what the collection wrote, and where a fault hits ------------------------------------------------------------

def versions(fleet: dict[str, Any]) -> dict[str, dict[str, str | None]]:
    """The resourceVersion of each object the collection writes on each cluster (None: absent)."""
    def version(obj: dict[str, Any] | None) -> str | None:
        return None if obj is None else obj["metadata"]["resourceVersion"]

    return {name: {"kubedescheduler": version(get_kd(cluster)), "record": version(get_object(cluster, "configmaps",
                                                                                             RECORD)),
                   "lease": version(change_lease(cluster))}
            for name, cluster in fleet.items()}


def plane_of(fleet_planes: Any, cluster: Any) -> Any:
    return next(plane for plane in fleet_planes.planes(3) if plane.kubeconfig == cluster.kubeconfig)


@contextmanager
def proxied(fleet: dict[str, Any], fleet_planes: Any, name: str, tmp_path: Path
            ) -> Iterator[tuple[FaultProxy, Callable[[int], Path]]]:
    """A fault proxy in front of cluster `name`, and `inventory(interval)`: the fleet's inventory with that cluster
    reached through the proxy (the test reads and writes the cluster directly)."""
    plane = plane_of(fleet_planes, fleet[name])
    proxy = FaultProxy(plane.url, plane.admin_ssl_context()).start()
    directory = tmp_path / f"through-proxy-{name}"
    directory.mkdir()
    kubeconfig = write_kubeconfig(directory / "kubeconfig", proxy.url, None, None, plane.context)
    view = {**fleet, name: SimpleNamespace(kubeconfig=kubeconfig, context=plane.context)}
    try:
        yield proxy, lambda interval: write_inventory(directory, view, interval)
    finally:
        proxy.stop()


def refuse_by_interval(operator: Any) -> dict[int, tuple[str, str]]:
    """The operator stand-in answers a spec with the interval a test puts in the returned dict as that outcome
    (DEGRADED_SCALE_TO_ZERO: fails the change at once; LOG_ONLY_IGNORED: never rolls it out), others as usual."""
    refusals: dict[int, tuple[str, str]] = {}
    first_error = operator._first_error
    operator._first_error = lambda spec: refusals.get(spec.get("deschedulingIntervalSeconds")) or first_error(spec)
    return refusals


def writes_interval(interval: int) -> Callable[[bytes | None], bool]:
    """A request body that writes a KubeDescheduler with this interval."""
    def matches(body: bytes | None) -> bool:
        return bool(body) and (json.loads(body).get("spec") or {}).get("deschedulingIntervalSeconds") == interval
    return matches


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def cancel_seen(module: int, before: int) -> bool:
    """The module's ancestor watch (executor/cancel.py) ends once it has cancelled the run: one thread fewer."""
    return threads(module) < before


def hold_change_lease_elsewhere(cluster: Any) -> None:
    """The canary's change Lease held by a change on another control node (its pid cannot be checked from here)."""
    now = datetime.now(UTC).strftime(MICRO_TIME)

    def held(lease: dict[str, Any]) -> None:
        lease["metadata"].setdefault("annotations", {})["descheduler.fleet/holder"] = json.dumps(ELSEWHERE)
        lease["spec"].update({"holderIdentity": "control-node-2/pid-4242/elsewhere", "leaseDurationSeconds": 3600,
                              "acquireTime": now, "renewTime": now})

    with cluster.api_client() as client:
        assert Rest(client).change(CHANGE_LEASE, held) is not None  # the first rollout left it, given back


def give_change_lease_back(cluster: Any) -> None:
    with cluster.api_client() as client:
        Rest(client).change(CHANGE_LEASE, lambda lease: lease["spec"].update({"holderIdentity": None}))


def kill_playbook_alone(playbook: subprocess.Popen) -> None:
    """SIGKILL of ansible-playbook only: its worker and the module live on (docs/rolling-out.md)."""
    playbook.send_signal(signal.SIGKILL)
    playbook.wait(timeout=30)


def stop_while_waiting(playbook: subprocess.Popen, lease_reads: Any,
                       stop: Callable[[subprocess.Popen], Any]) -> None:
    """Once the rollout module reads the change Lease again (it waits for it), `stop` ansible-playbook; returns when
    the module has finished."""
    module = wait_until(lambda: module_process(playbook.pid, "rollout"), timeout=300,
                        what="the rollout module to start")
    seen = lease_reads.hits
    wait_until(lambda: lease_reads.hits >= seen + 2, timeout=120, what="the rollout to wait for the change Lease")
    stop(playbook)
    wait_until(lambda: not running(module), timeout=120, what="the cancelled module to finish")


def cancel_then_release(playbook: subprocess.Popen, held: Any) -> None:
    """Cancel ansible-playbook as AWX does while the module waits on `held`; release it once the module has seen
    the cancel; returns when the module has finished."""
    module = module_process(playbook.pid, "rollout")
    before = threads(module)
    cancel_like_awx(playbook)
    wait_until(lambda: cancel_seen(module, before), timeout=60, what="the module to see the cancel")
    held.release()
    wait_until(lambda: not running(module), timeout=300, what="the cancelled module to finish")


def all_on(fleet: dict[str, Any], wanted: int) -> None:
    for name, cluster in fleet.items():
        assert interval(cluster) == wanted, name
        assert record(cluster)["state"] == "verified" and record(cluster)["spec"]["deschedulingIntervalSeconds"] == \
            wanted, name


# ---- before the first write ---------------------------------------------------------------------------------------

def test_sigterm_and_sigkill_of_ansible_playbook_before_the_first_write_change_nothing(
        fleet: dict[str, Any], fleet_planes: Any, tmp_path: Path) -> None:
    start_on_base(fleet, tmp_path)
    canary = fleet["canary"]
    with proxied(fleet, fleet_planes, "canary", tmp_path) as (proxy, inventory):
        new = inventory(NEW_INTERVAL)
        lease_reads = proxy.delay(0, verb="get", path="/leases/descheduler-fleet-change$")  # a request counter

        # the rollout waits for the canary's change Lease (lock_timeout), which a change elsewhere holds: SIGTERM
        # (an AWX cancel), then SIGKILL of ansible-playbook alone; the module notices either and gives up the wait
        hold_change_lease_elsewhere(canary)
        before = versions(fleet)
        for stop in (cancel_like_awx, kill_playbook_alone):
            playbook = start_rollout(tmp_path / stop.__name__, new, lock_timeout=3600)
            try:
                stop_while_waiting(playbook, lease_reads, stop)
            finally:
                kill_tree(playbook.pid)
            assert playbook.returncode != 0
            assert versions(fleet) == before  # nothing written anywhere, the other change's Lease untouched
            assert change_lease(canary)["spec"]["holderIdentity"] == "control-node-2/pid-4242/elsewhere"

        # the rollout holds the Lease and reads the evict run's (held there by the proxy): SIGKILL of the whole tree
        give_change_lease_back(canary)
        before = versions(fleet)
        held = proxy.hold(verb="get", path="/leases/descheduler-fleet-evict$")
        playbook = start_rollout(tmp_path / "killed", new)
        try:
            wait_until(held.arrived.is_set, timeout=300, what="the rollout to take the canary's change Lease")
            module = module_process(playbook.pid, "rollout")
            assert holder_pid(canary) == module
            kill_tree(playbook.pid)
            playbook.wait(timeout=60)
            wait_until(lambda: not running(module), timeout=60, what="the killed module to be gone")
        finally:
            held.release()
            kill_tree(playbook.pid)
    after = versions(fleet)
    assert after["canary"]["kubedescheduler"] == before["canary"]["kubedescheduler"]
    assert after["canary"]["record"] == before["canary"]["record"] and record(canary)["state"] == "verified"
    assert holder_pid(canary) == module and not running(module)  # left naming a process that is gone
    assert {name: after[name] for name in ("prod-a", "prod-b")} == {name: before[name] for name in ("prod-a", "prod-b")}

    # the next run, on this host, takes that Lease at once (lock_timeout 0) and converges
    rerun = roll(write_inventory(tmp_path, fleet, NEW_INTERVAL))
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    all_on(fleet, NEW_INTERVAL)
    assert not change_lease(canary)["spec"].get("holderIdentity")


# ---- mid-rollback -------------------------------------------------------------------------------------------------

def test_sigterm_mid_rollback_finishes_the_rollback_or_leaves_it_interrupted_for_the_next_run(
        fleet: dict[str, Any], fleet_planes: Any, tmp_path: Path) -> None:
    """The canary's operator degrades on NEW, so the canary fails at once and is rolled back; the rollback's write
    of BASE is held by the proxy while ansible-playbook is cancelled. Released, it finishes (BASE rolls out), or,
    when the operator never rolls BASE out, ends failed after the cancel: the record says interrupted."""
    start_on_base(fleet, tmp_path)
    canary = fleet["canary"]
    refusals = refuse_by_interval(canary.operator)
    refusals[NEW_INTERVAL] = (DEGRADED_SCALE_TO_ZERO, "the canary cannot run this configuration")
    others = {name: versions(fleet)[name] for name in ("prod-a", "prod-b")}
    with proxied(fleet, fleet_planes, "canary", tmp_path) as (proxy, inventory):
        for phase, base_rolls_out in (("finishes", True), ("interrupted", False)):
            if not base_rolls_out:
                refusals[BASE_INTERVAL] = (LOG_ONLY_IGNORED, "held back by the test")
            held = proxy.hold(verb="update", path="/kubedeschedulers/cluster$", body=writes_interval(BASE_INTERVAL))
            playbook = start_rollout(tmp_path / phase, inventory(NEW_INTERVAL), progress_deadline=60,
                                     interrupt_grace=60)
            try:
                wait_until(held.arrived.is_set, timeout=300, what="the canary's rollback to write BASE")
                assert record(canary)["state"] == "rolling-back" and interval(canary) == NEW_INTERVAL
                cancel_then_release(playbook, held)
            finally:
                held.release()
                kill_tree(playbook.pid)
            assert playbook.returncode != 0
            left = record(canary)
            assert left["spec"]["deschedulingIntervalSeconds"] == BASE_INTERVAL  # what a rollback goes back to
            assert left["state"] == ("rolled-back" if base_rolls_out else "interrupted"), left
            assert interval(canary) == BASE_INTERVAL  # the rollback's write went through either way
            assert not change_lease(canary)["spec"].get("holderIdentity")  # given back
            assert {name: versions(fleet)[name] for name in others} == others

    # on_interrupted: fail (the default) stops at the canary with the record shown, writing nothing (but taking and
    # giving back the canary's change Lease); the later groups are not reached
    untouched = versions(fleet)
    refused = roll(write_inventory(tmp_path, fleet, NEW_INTERVAL))
    assert refused.returncode != 0, refused.stdout[-4000:]
    assert "canary: FAILED: " in refused.stdout and "shows a change that did not finish" in refused.stdout
    assert "interrupted" in refused.stdout.split("shows a change that did not finish", 1)[1][:400]
    now = versions(fleet)
    assert {key: now["canary"][key] for key in ("kubedescheduler", "record")} == {
        key: untouched["canary"][key] for key in ("kubedescheduler", "record")}
    assert {name: now[name] for name in others} == others

    # on_interrupted: rollback, once the operator takes every configuration again: all converge on NEW
    refusals.clear()
    settled = roll(write_inventory(tmp_path, fleet, NEW_INTERVAL), on_interrupted="rollback")
    assert settled.returncode == 0, settled.stdout[-6000:]
    all_on(fleet, NEW_INTERVAL)


# ---- an API server killed mid-apply -------------------------------------------------------------------------------

def test_an_api_server_killed_mid_apply_and_started_again_ends_rolled_back_and_a_rerun_converges(
        fleet: dict[str, Any], fleet_planes: Any, tmp_path: Path) -> None:
    """prod-a's operator holds NEW back, so prod-a's change waits for it; then prod-a's kube-apiserver is killed
    (etcd and its other components stay). The change fails on the unreachable server; the rollback tries again until
    the server, started again, answers, and puts BASE back. The canary (an earlier group) keeps NEW, prod-b (a later
    one) is not reached."""
    start_on_base(fleet, tmp_path)
    canary, prod_a = fleet["canary"], fleet["prod-a"]
    refusals = refuse_by_interval(prod_a.operator)
    refusals[NEW_INTERVAL] = (LOG_ONLY_IGNORED, "held back by the test")
    before = versions(fleet)
    plane = plane_of(fleet_planes, prod_a)
    with proxied(fleet, fleet_planes, "prod-a", tmp_path) as (proxy, inventory):
        unreachable: list[str] = []

        class Unreachable:  # the module's requests other than the Lease's renewals that found no server
            def started(self, method: str, path: str, body: bytes | None) -> str:
                return f"{method} {path}"

            def finished(self, token: str, status: int) -> None:
                if status == 0:
                    unreachable.append(token)

        proxy.observe(Unreachable(), path=r"^(?!.*/leases/)")
        playbook = start_rollout(tmp_path / "first", inventory(NEW_INTERVAL), progress_deadline=180)
        try:
            wait_until(lambda: interval(prod_a) == NEW_INTERVAL and record(prod_a)["state"] == "intended",
                       timeout=300, what="prod-a's KubeDescheduler written, its record saying intended")
            plane.kill_apiserver()
            wait_until(lambda: unreachable, timeout=120, what="prod-a's change to find its API server gone")
            plane.start_apiserver()
            playbook.wait(timeout=420)
        finally:
            kill_tree(playbook.pid)
    stdout = (tmp_path / "first" / "stdout").read_text()
    prod_a.operator.errors.clear()  # its own requests during the outage: retried once the server was back
    assert playbook.returncode != 0, stdout[-6000:]
    assert "prod-a: FAILED: cannot reach" in stdout and "rolled back to its last good configuration" in stdout
    assert "prod-b: not reached yet" in stdout
    # prod-a fully old, its record saying so; the canary fully new and verified; prod-b never written
    assert interval(prod_a) == BASE_INTERVAL
    assert record(prod_a)["state"] == "rolled-back" and record(prod_a)["spec"]["deschedulingIntervalSeconds"] == \
        BASE_INTERVAL
    assert not change_lease(prod_a)["spec"].get("holderIdentity")
    assert interval(canary) == NEW_INTERVAL and record(canary)["state"] == "verified"
    assert versions(fleet)["prod-b"] == before["prod-b"]

    refusals.clear()
    rerun = roll(write_inventory(tmp_path, fleet, NEW_INTERVAL))
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    all_on(fleet, NEW_INTERVAL)
