"""Cancelling an evict run: through real ansible-playbook processes, on the `kube` fixture (the suite's control plane,
or a cluster of the tester's).

What is asserted is what the API server saw: which of the plan's pods are gone. Evictions are spaced (`pause`) so that
a run that ignored the cancel would go on evicting for several seconds after it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
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
from process_tree import module_process
from standins.rest import wait_until

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}
NODES = ("worker-1", "worker-2", "worker-3")
PODS = 6
DETECTION = 0.5  # seconds from SIGINT to ansible-playbook until the module may still start a request
PAUSE = 2.0  # seconds between two evictions: the window in which a run that ignores the cancel would evict more


@pytest.fixture
def cluster(kube: Any) -> Any:
    """Nodes for the control plane's kubelet stand-in (an external cluster has its own)."""
    if not kube.is_external:
        kube.load([node(name) for name in NODES])
    return kube


def evict_args(kube: Any, **options: Any) -> dict[str, Any]:
    if isinstance(options.get("plan"), dict):  # as the plan module writes it: sealed, with its cluster
        options["plan"] = sealed(kube, options["plan"])
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context, **FAST, **options}


def start_playbook(directory: Path, task: dict[str, Any]) -> subprocess.Popen:
    """ansible-playbook as AWX runs it: its own session, nothing between it and the signals it is sent."""
    directory.mkdir(parents=True, exist_ok=True)
    playbook = directory / "playbook.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "connection": "local", "gather_facts": False,
                                         "tasks": [task]}], sort_keys=False))
    return subprocess.Popen([executable("ansible-playbook"), str(playbook), "-i", "localhost,"], env=ansible_env(),
                            stdout=(directory / "stdout").open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def module_pid(playbook: subprocess.Popen) -> int:
    """The evict module's process below a running ansible-playbook."""
    return wait_until(lambda: module_process(playbook.pid, "evict"), timeout=120, what="the evict module process")


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def accepted(journal: Path) -> int:
    return sum(1 for entry in journal_entries(journal) if entry["event"] == "accepted")


def cancel_like_awx(playbook: subprocess.Popen) -> datetime:
    """SIGINT to ansible-playbook, then SIGTERM a second later, as an AWX job cancel does; returns when SIGINT went."""
    cancelled_at = datetime.now(UTC)
    playbook.send_signal(signal.SIGINT)
    try:
        playbook.wait(timeout=1)
    except subprocess.TimeoutExpired:
        playbook.send_signal(signal.SIGTERM)
        playbook.wait(timeout=30)
    return cancelled_at


def test_a_cancelled_playbook_starts_no_eviction_after_the_cancel_and_a_rerun_resumes_within_the_caps(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", PODS))
    plan = plan_of(ready_replicas(cluster, namespace, "web", PODS))
    journal = tmp_path / "journal.jsonl"
    caps = {"max_total": 4, "max_in_flight": 1, "max_unavailable": "none", "wait_for_replacements": False}
    playbook = start_playbook(tmp_path / "first", {"descheduler.fleet.evict": evict_args(
        cluster, plan=plan, journal=str(journal), pause=PAUSE, **caps)})
    module = module_pid(playbook)
    wait_until(lambda: accepted(journal) >= 1, timeout=60, what="the first eviction")
    cancelled_at = cancel_like_awx(playbook)
    gone_at_cancel = evicted_uids(cluster, namespace, plan)
    wait_until(lambda: not running(module), timeout=120, what="the module to stop after the cancel")
    # without the cancel the run would go on to 4 evictions, one every PAUSE seconds; give it the time to show
    time.sleep(PAUSE + 1)
    gone = evicted_uids(cluster, namespace, plan)
    # at most the one request that was already under way when the cancel came may land after it
    assert len(gone) <= len(gone_at_cancel) + 1, (gone_at_cancel, gone)
    assert len(gone) < caps["max_total"]
    entries = journal_entries(journal)
    assert entries[-1]["event"] == "run_finished" and entries[-1]["stop_reason"] == "cancelled"
    requested = {entry["uid"] for entry in entries if entry["event"] == "requested"}
    assert requested == gone, "the journal names exactly the pods the API server evicted"
    last_request = max(datetime.strptime(entry["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
                       for entry in entries if entry["event"] == "requested")
    assert last_request < cancelled_at + timedelta(seconds=DETECTION), "no eviction started after the cancel"
    skipped = [entry for entry in entries if entry["event"] == "outcome" and entry["status"] == "skipped"]
    assert skipped and all("cancelled" in (entry.get("reason") or "") for entry in skipped)

    process, results = run_tasks(tmp_path, [{"descheduler.fleet.evict": evict_args(
        cluster, plan=plan, journal=str(journal), **caps), "register": "result"}])
    assert process.returncode == 0, process.stdout[-3000:]
    result = results["result"]
    assert result["skipped_by_reason"].get("already_done") == len(gone)
    assert result["evicted_now"] == caps["max_total"] - len(gone), "the caps count the cancelled run's evictions"
    assert len(evicted_uids(cluster, namespace, plan)) == caps["max_total"]
    assert result["journal"]["previous_runs"] == 1


def test_sigterm_to_the_module_cancels_the_run_and_the_task_fails_saying_so(
        cluster: Any, namespace: str, tmp_path: Path) -> None:
    create(cluster, replicaset(namespace, "web", 4))
    plan = plan_of(ready_replicas(cluster, namespace, "web", 4))
    journal = tmp_path / "journal.jsonl"
    task = {"descheduler.fleet.evict": evict_args(cluster, plan=plan, journal=str(journal), pause=PAUSE,
                                                  max_in_flight=1, max_unavailable="none",
                                                  wait_for_replacements=False),
            "register": "result", "ignore_errors": True}
    (tmp_path / "run").mkdir()
    results_file = tmp_path / "run" / "results.json"
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": [
        task, {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": str(results_file)}}]}]
    (tmp_path / "run" / "playbook.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    playbook = subprocess.Popen([executable("ansible-playbook"), str(tmp_path / "run" / "playbook.yml"),
                                 "-i", "localhost,"], env=ansible_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
    module = module_pid(playbook)
    wait_until(lambda: accepted(journal) >= 1, timeout=60, what="the first eviction")
    os.kill(module, signal.SIGTERM)
    output, _unused = playbook.communicate(timeout=60)
    result = json.loads(results_file.read_text())
    assert result["failed"] is True, output[-3000:]
    assert result["stop_reason"] == "cancelled" and "SIGTERM" in result["msg"]
    assert result["skipped_by_reason"].get("cancelled", 0) >= 1
    assert result["evicted_now"] == len(evicted_uids(cluster, namespace, plan)) < 4
    assert journal_entries(journal)[-1]["stop_reason"] == "cancelled"


def test_a_cancelled_run_leaves_a_live_migration_to_kubevirt_and_the_rerun_follows_it(
        cluster: Any, tmp_path: Path) -> None:
    from standins.kubevirt import KubeVirt

    if getattr(cluster, "is_external", False):
        pytest.skip("the KubeVirt stand-in's webhook listens on 127.0.0.1, which only the suite's own control plane "
                    "reaches")
    cluster.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vms"}}])
    kubevirt = KubeVirt.on(cluster, interval=1.5)  # a pass every 1.5 s: a migration takes ~9 s, time to cancel in it
    try:
        source = kubevirt.create_vm("vms", "db", "worker-1")
        journal = tmp_path / "journal.jsonl"
        plan = plan_of([source])
        playbook = start_playbook(tmp_path / "first", {"descheduler.fleet.evict": evict_args(
            cluster, plan=plan, journal=str(journal))})
        module = module_pid(playbook)
        wait_until(lambda: any(e["event"] == "migration_started" for e in journal_entries(journal)), timeout=60,
                   what="the migration to start")
        cancel_like_awx(playbook)
        wait_until(lambda: not running(module), timeout=120, what="the module to stop after the cancel")
        entries = journal_entries(journal)
        assert entries[-1]["event"] == "run_finished" and entries[-1]["stop_reason"] == "cancelled"
        assert not [e for e in entries if e["event"] == "outcome"], "the migration's end is left to the next run"
        assert cluster.get("virtualmachineinstances", "vms", "db")["status"].get("evacuationNodeName"), \
            "KubeVirt goes on with the migration"

        process, results = run_tasks(tmp_path, [{"descheduler.fleet.evict": evict_args(
            cluster, plan=plan, journal=str(journal)), "register": "result"}])
        assert process.returncode == 0, process.stdout[-3000:]
        pod = results["result"]["pods"][0]
        assert pod["status"] == "migrated" and pod["resumed"] is True, pod
        assert pod["migration"]["target_node"] not in (None, "worker-1")
        assert [r.code for r in kubevirt.observed.reviews] == [429], \
            "one eviction request in all: the migration's start"
    finally:
        kubevirt.uninstall()
    kubevirt.check()
