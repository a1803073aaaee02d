"""One evict run at a time: the journal's lock and the cluster-side Lease, through real ansible-playbook processes on
the `kube` fixture (the suite's control plane, or a cluster of the tester's).

Limits are asserted on what the API server has: which of the plan's pods are gone.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import (
    create,
    evicted_uids,
    journal_entries,
    node,
    plan_of,
    ready_replicas,
    replicaset,
    sealed,
)
from playbook import ansible_env, executable, run_tasks
from process_tree import holds_open, kill_tree, module_process
from standins.rest import wait_until

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}
NODES = ("worker-1", "worker-2", "worker-3")
QUIET = {"max_in_flight": 1, "max_unavailable": "none", "wait_for_replacements": False}
MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"


@pytest.fixture
def cluster(kube: Any) -> Any:
    """Nodes for the control plane's kubelet stand-in (an external cluster has its own)."""
    if not kube.is_external:
        kube.load([node(name) for name in NODES])
    return kube


def evict_task(kube: Any, register: str = "result", **options: Any) -> dict[str, Any]:
    if isinstance(options.get("plan"), dict):  # as the plan module writes it: sealed, with its cluster
        options["plan"] = sealed(kube, options["plan"])
    return {"descheduler.fleet.evict": {"kubeconfig": str(kube.kubeconfig), "context": kube.context, **FAST,
                                        **QUIET, **options}, "register": register, "ignore_errors": True}


def start_playbook(directory: Path, task: dict[str, Any]) -> subprocess.Popen:
    """A playbook that saves its registered result to ``directory/result.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": [
        task, {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": str(directory / "result.json")}}]}]
    (directory / "playbook.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    return subprocess.Popen([executable("ansible-playbook"), str(directory / "playbook.yml"), "-i", "localhost,"],
                            env=ansible_env(), stdout=(directory / "stdout").open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def finished(playbook: subprocess.Popen, directory: Path) -> dict[str, Any]:
    playbook.wait(timeout=300)
    assert (directory / "result.json").exists(), (directory / "stdout").read_text()[-3000:]
    return json.loads((directory / "result.json").read_text())


def journal_events(path: Path, event: str) -> list[dict[str, Any]]:
    return [entry for entry in journal_entries(path) if entry.get("event") == event]


def module_started(playbook: subprocess.Popen) -> bool:
    """Whether the evict module process runs below ``playbook`` (ansible's own start-up can take seconds)."""
    return module_process(playbook.pid, "evict") is not None


def web(kube: Any, namespace: str, replicas: int) -> dict[str, Any]:
    create(kube, replicaset(namespace, "web", replicas))
    return plan_of(ready_replicas(kube, namespace, "web", replicas))


def read_lease(kube: Any, namespace: str, name: str = "descheduler-fleet-evict") -> dict[str, Any] | None:
    from kubernetes import client

    with kube.api_client() as api_client:
        try:
            response = client.CoordinationV1Api(api_client).read_namespaced_lease(name, namespace,
                                                                                  _preload_content=False)
        except client.exceptions.ApiException as error:
            if error.status == 404:
                return None
            raise
    return json.loads(response.data)


def held_lease(namespace: str, renewed: datetime, duration: int, holder: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"namespace": namespace, "name": "descheduler-fleet-evict",
                         "annotations": {"descheduler.fleet/holder": json.dumps(holder)}},
            "spec": {"holderIdentity": f"{holder['host']}/pid-{holder['pid']}/0123abcd",
                     "leaseDurationSeconds": duration, "acquireTime": renewed.strftime(MICRO_TIME),
                     "renewTime": renewed.strftime(MICRO_TIME), "leaseTransitions": 0}}


def renew_as_other_holder(kube: Any, namespace: str) -> datetime:
    """Renew the other holder's Lease; the renewTime written."""
    from kubernetes import client

    lease = read_lease(kube, namespace)
    assert lease is not None and lease["spec"]["holderIdentity"].startswith("control-node-2/"), lease
    renewed = datetime.now(UTC)
    lease["spec"]["renewTime"] = renewed.strftime(MICRO_TIME)
    with kube.api_client() as api_client:
        client.CoordinationV1Api(api_client).replace_namespaced_lease("descheduler-fleet-evict", namespace, lease)
    return renewed


def micro_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# ---- the journal's lock ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lock_timeout", [0, 120])
def test_two_runs_started_together_never_exceed_the_caps_together(
        cluster: Any, namespace: str, tmp_path: Path, lock_timeout: int) -> None:
    plan = web(cluster, namespace, 6)
    journal = tmp_path / "journal.jsonl"
    runs = [(tmp_path / name, start_playbook(tmp_path / name, evict_task(
        cluster, plan=plan, journal=str(journal), max_total=3, pause=5, lock_timeout=lock_timeout)))
        for name in ("a", "b")]
    results = [finished(playbook, directory) for directory, playbook in runs]
    assert len(evicted_uids(cluster, namespace, plan)) == 3, "max_total 3 holds across both runs"
    assert sum(result.get("evicted_now", 0) for result in results) == 3
    if lock_timeout:
        assert [bool(result.get("failed")) for result in results] == [False, False]
        runs_in_journal = [entry["event"] for entry in journal_entries(journal)
                           if entry["event"] in ("run_started", "run_finished")]
        assert runs_in_journal == ["run_started", "run_finished"] * 2, "one after the other, never both at once"
        later = max(results, key=lambda result: result["started_at"])
        assert later["skipped_by_reason"] == {"already_done": 3, "limit_reached": 3}
        return
    refused = [result for result in results if result.get("failed")]
    assert len(refused) == 1, results
    winner = next(result for result in results if not result.get("failed"))
    message = refused[0]["msg"]
    assert f"is in use by another evict run (pid {winner['lock']['holder']['pid']} on {socket.gethostname()}" \
        in message and "lock_timeout" in message, message
    assert "ansible-playbook" in message, "the holder's playbook is named"


def test_lock_timeout_waits_for_the_holder_and_zero_fails_at_once(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    plan = web(cluster, namespace, 2)
    journal = tmp_path / "journal.jsonl"
    lock = os.open(f"{journal}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # another run, as far as the module can tell: a live process holds the flock
    os.write(lock, json.dumps({"pid": os.getpid(), "host": "ctl-7", "started": "2026-11-24T01:00:00Z",
                               "playbook": "evict.yml", "job": "4242"}).encode())
    try:
        (tmp_path / "at-once").mkdir()
        _process, results = run_tasks(tmp_path / "at-once", [evict_task(cluster, plan=plan, journal=str(journal))])
        message = results["result"]["msg"]  # "not waiting" is what the module says: no clock needed
        assert f"pid {os.getpid()} on ctl-7, started 2026-11-24T01:00:00Z, evict.yml, AWX job 4242" in message
        assert "lock_timeout is 0" in message
        assert evicted_uids(cluster, namespace, plan) == set(), "a refused run changes nothing"

        waiting = start_playbook(tmp_path / "waits", evict_task(cluster, plan=plan, journal=str(journal),
                                                                lock_timeout=60))
        # the module opens the lock file, then polls it: once it has it open it is waiting for the lock
        wait_until(lambda: (pid := module_process(waiting.pid, "evict")) and holds_open(pid, f"{journal}.lock"),
                   timeout=120, what="the second run's module to open the journal's lock file")
        assert evicted_uids(cluster, namespace, plan) == set(), "nothing happens while the lock is held"
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    result = finished(waiting, tmp_path / "waits")
    assert not result.get("failed"), result.get("msg")
    assert result["lock"]["waited_seconds"] > 0, "it was waiting when the lock was released"
    assert result["evicted_now"] == 2 and len(evicted_uids(cluster, namespace, plan)) == 2
    assert Path(f"{journal}.lock").read_text() == "", "released at the end"


def test_a_stale_lock_and_lease_from_a_killed_run_are_taken_over(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    plan = web(cluster, namespace, 4)
    journal = tmp_path / "journal.jsonl"
    lease = {"namespace": namespace, "duration": 300}
    first = start_playbook(tmp_path / "first", evict_task(cluster, plan=plan, journal=str(journal), lease=lease,
                                                          pause=3))
    wait_until(lambda: journal_events(journal, "accepted"), timeout=60, what="the first eviction")
    holder = json.loads(Path(f"{journal}.lock").read_text())
    assert (read_lease(cluster, namespace) or {}).get("spec", {}).get("holderIdentity", "").startswith(
        f"{socket.gethostname()}/pid-{holder['pid']}/")
    kill_tree(first.pid)  # nothing gets to clean up: the lock file and the Lease still name the dead run
    first.wait()
    wait_until(lambda: not Path(f"/proc/{holder['pid']}").exists(), timeout=10, what="the killed module to be gone")

    process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, journal=str(journal), lease=lease)])
    assert process.returncode == 0, process.stdout[-3000:]
    result = results["result"]
    assert not result.get("failed"), result.get("msg")
    # measured by the module itself, so a slow machine's ansible start-up does not count
    assert result["lease"]["waited_seconds"] < 60, "the dead holder's Lease (300 s) was not waited out"
    assert result["lock"]["taken_over_from"]["pid"] == holder["pid"]
    assert result["lease"]["taken_over_from"]["pid"] == holder["pid"]
    assert result["counts"]["evicted"] + result["skipped_by_reason"].get("already_done", 0) == 4
    assert len(evicted_uids(cluster, namespace, plan)) == 4
    assert not (read_lease(cluster, namespace) or {}).get("spec", {}).get("holderIdentity"), "released at the end"


# ---- the cluster's Lease -------------------------------------------------------------------------------------------


def test_a_run_against_a_lease_held_elsewhere_fails_naming_the_holder(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    plan = web(cluster, namespace, 2)
    holder = {"pid": 4711, "host": "control-node-2", "started": "2026-11-24T01:00:00Z", "playbook": "evict.yml"}
    create(cluster, held_lease(namespace, datetime.now(UTC), 600, holder))
    _process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, lease={"namespace": namespace})])
    message = results["result"]["msg"]
    assert results["result"]["failed"] is True
    assert f"Lease {namespace}/descheduler-fleet-evict is held by another evict run" in message
    assert "control-node-2/pid-4711/0123abcd: pid 4711 on control-node-2" in message and "evict.yml" in message
    assert evicted_uids(cluster, namespace, plan) == set()
    assert read_lease(cluster, namespace)["spec"]["holderIdentity"].startswith("control-node-2/")

    _process, results = run_tasks(tmp_path, [evict_task(cluster, plan=plan, lease={"namespace": namespace})],
                                  check=True)
    assert results["result"]["counts"]["would_evict"] == 2, "check mode takes no Lease"
    assert results["result"]["lease"] is None


def test_lock_timeout_waits_for_a_lease_to_expire_then_takes_it_and_renews_it(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    plan = web(cluster, namespace, 3)
    holder = {"pid": 4711, "host": "control-node-2", "started": "2026-11-24T01:00:00Z"}
    create(cluster, held_lease(namespace, datetime.now(UTC), 10, holder))
    lease = {"namespace": namespace, "duration": 10, "renew_deadline": 6}
    playbook = start_playbook(tmp_path / "run", evict_task(cluster, plan=plan, lease=lease, lock_timeout=60,
                                                           pause=4))
    # the other holder renews its Lease until our module runs, then vanishes: the Lease expires 10 s later
    while not module_started(playbook):
        renew_as_other_holder(cluster, namespace)
        time.sleep(0.5)
    time.sleep(1)
    last_renewal = renew_as_other_holder(cluster, namespace)
    renewals = set()
    taken_at: list[str] = []

    def renewed_twice() -> bool:
        spec = (read_lease(cluster, namespace) or {}).get("spec") or {}
        if spec.get("holderIdentity", "").startswith(socket.gethostname()):
            renewals.add(spec.get("renewTime"))
            taken_at.append(spec["acquireTime"])
        return len(renewals) >= 3

    wait_until(renewed_twice, timeout=60, interval=0.5, what="the Lease to be taken and renewed")
    result = finished(playbook, tmp_path / "run")
    assert not result.get("failed"), result.get("msg")
    # taken only once expired: 10 s after the other holder's last renewal (both times from this machine's clock,
    # so how long the module took to start does not matter)
    assert micro_time(taken_at[0]) >= last_renewal + timedelta(seconds=10), (taken_at[0], last_renewal)
    assert result["lease"]["waited_seconds"] > 0, "it waited for the Lease, it did not fail at once"
    assert result["lease"]["taken_over_from"]["host"] == "control-node-2"
    assert result["evicted_now"] == 3
    spec = read_lease(cluster, namespace)["spec"]
    assert not spec.get("holderIdentity") and spec["leaseTransitions"] == 1, "released at the end"


def test_of_two_runs_taking_a_free_lease_at_the_same_moment_exactly_one_gets_it(
        kube: Any, namespace: str, api_client: Any) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import (
        ClusterLease,
        LeaseBusy,
        LeaseSettings,
    )

    settings = LeaseSettings(namespace=namespace)
    for round_number in range(3):  # a free Lease to create, then an expired one to take over, twice
        contenders = [ClusterLease(api_client, settings, f"node-{n}/pid-{n}/{round_number}",
                                   {"pid": n, "host": f"node-{n}", "started": "now"}) for n in range(4)]
        outcomes: list[str] = []
        barrier = threading.Barrier(len(contenders))

        def take(lease: ClusterLease, barrier: threading.Barrier, outcomes: list[str]) -> None:
            barrier.wait()
            try:
                lease.acquire(0)
                outcomes.append(lease.identity)
            except LeaseBusy as error:
                outcomes.append(f"busy: {error}")

        threads = [threading.Thread(target=take, args=(lease, barrier, outcomes)) for lease in contenders]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        winners = [outcome for outcome in outcomes if not outcome.startswith("busy")]
        assert len(winners) == 1 and len(outcomes) == 4, outcomes
        assert read_lease(kube, namespace)["spec"]["holderIdentity"] == winners[0]
        assert all(f"is held by another evict run ({winners[0]}" in outcome
                   for outcome in outcomes if outcome.startswith("busy")), outcomes
        expire_now(kube, namespace)


def expire_now(kube: Any, namespace: str) -> None:
    from kubernetes import client

    lease = read_lease(kube, namespace)
    lease["spec"]["renewTime"] = "2020-01-01T00:00:00.500000Z"  # (the typed client drops a .000000)
    with kube.api_client() as api_client:
        client.CoordinationV1Api(api_client).replace_namespaced_lease("descheduler-fleet-evict", namespace, lease)


def test_a_run_that_loses_its_lease_stops_starting_evictions(cluster: Any, namespace: str, tmp_path: Path) -> None:
    from kubernetes import client

    plan = web(cluster, namespace, 5)
    lease = {"namespace": namespace, "duration": 10, "renew_deadline": 6}
    playbook = start_playbook(tmp_path / "run", evict_task(cluster, plan=plan, lease=lease, pause=4))
    wait_until(lambda: evicted_uids(cluster, namespace, plan), timeout=60, what="the first eviction")
    taken = read_lease(cluster, namespace)
    taken["spec"]["holderIdentity"] = "control-node-2/pid-4711/0123abcd"  # another control node takes it
    with cluster.api_client() as api_client:
        client.CoordinationV1Api(api_client).replace_namespaced_lease("descheduler-fleet-evict", namespace, taken)
    gone_when_lost = len(evicted_uids(cluster, namespace, plan))
    result = finished(playbook, tmp_path / "run")
    assert result["failed"] is True and result["stop_reason"] == "lease_lost"
    assert "lost the Lease" in result["msg"] and "control-node-2/pid-4711/0123abcd" in result["msg"]
    # noticed at the next renewal (every 2.5 s); with an eviction every 4 s at most one more can have started
    assert len(evicted_uids(cluster, namespace, plan)) <= gone_when_lost + 1 < 5
    assert result["skipped_by_reason"].get("cancelled", 0) >= 2
    assert read_lease(cluster, namespace)["spec"]["holderIdentity"] == "control-node-2/pid-4711/0123abcd", \
        "a lost Lease is not released over its new holder"
