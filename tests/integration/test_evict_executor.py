"""Fine-grained executor cases, called directly (no ansible-playbook): the gate under concurrency, the journal, the
classification of eviction answers, option validation, and cases against an API server (the suite's control plane by
default; eviction requests recorded at the fault proxy, replacements held back by a cordoned node)."""

from __future__ import annotations

import calendar
import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import eviction as api
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.journal import Journal, read_history
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.limits import Gate, SlotRequest
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import (
    ExecutorInputError,
    ExecutorOptions,
    allowed_unavailable,
    options_from_params,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.run import execute
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import (
    Target,
    check_plan_age,
    targets_from_plan,
)
from evict_helpers import (
    bare_pod,
    eviction_recorder,
    namespace_object,
    node,
    pdb,
    plan_of,
    ready_replicas,
    replicaset,
)
from standins.rest import wait_until

ONE_HOUR_LATER = calendar.timegm((2026, 1, 1, 1, 0, 0))
# replacement_timeout: on the control plane a replacement is created, bound and started by three components.
FAST = {"poll_interval": 0.05, "retry_delay": 0.05, "timeout": 120.0, "replacement_timeout": 120.0}


# ---- pure parts ---------------------------------------------------------------------------------------------------


def test_the_gate_never_overshoots_a_cap_with_concurrent_workers() -> None:
    options = ExecutorOptions(max_per_node=3, max_total=7, max_in_flight=4)
    gate = Gate(options)
    stop = threading.Event()
    lock = threading.Lock()
    state = {"in_flight": 0, "max_in_flight": 0, "committed": 0, "per_node": {}}

    def worker(index: int) -> None:
        request = SlotRequest(f"node-{index % 3}", "ns", None)
        admission = gate.acquire(request, stop)
        if admission.slot is None:
            return
        with lock:
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        time.sleep(random.uniform(0, 0.01))
        if random.random() < 0.7:  # the others are refused by their PDB: they give their reservation back
            gate.commit(admission.slot)
            with lock:
                state["committed"] += 1
                state["per_node"][request.node] = state["per_node"].get(request.node, 0) + 1
        with lock:
            state["in_flight"] -= 1
        gate.release(admission.slot)

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state["committed"] <= 7 and max(state["per_node"].values()) <= 3
    assert state["max_in_flight"] <= 4
    assert state["committed"] == 7, "refusals free their reservation, so the cap is still reached"


def test_the_gate_skips_at_once_when_a_cap_is_used_up_and_reports_the_widest() -> None:
    gate = Gate(ExecutorOptions(max_per_node=1, max_total=1))
    slot = gate.acquire(SlotRequest("n1", "ns", None), threading.Event()).slot
    assert slot is not None
    gate.commit(slot)
    gate.release(slot)
    admission = gate.acquire(SlotRequest("n1", "ns", None), threading.Event())
    assert admission.skip_reason == "limit reached: max_total (1)"
    assert gate.hits() == {"node": ["n1"], "total": ["*"]}


def test_max_unavailable_rounds_down_but_never_to_zero() -> None:
    assert allowed_unavailable("25%", 3) == 1
    assert allowed_unavailable("25%", 12) == 3
    assert allowed_unavailable("2", 12) == 2
    assert allowed_unavailable(None, 12) is None


@pytest.mark.parametrize("params, message", [
    ({"max_unavailable": "0"}, "max_unavailable"),
    ({"max_unavailable": "lots"}, "max_unavailable"),
    ({"max_in_flight": 0}, "max_in_flight"),
    ({"max_per_node": -1}, "max_per_node"),
    ({"kubevirt": {"max_migrations_per_node": 0}}, "kubevirt.max_migrations_per_node"),
])
def test_bad_options_name_the_option(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ExecutorInputError, match=message):
        options_from_params(params, check_mode=False)


def test_plan_age_and_plan_shape_are_checked() -> None:
    evictions = [{"namespace": "a", "name": "p", "order": 2}, {"namespace": "a", "name": "q", "order": 1},
                 {"namespace": "a", "name": "p", "order": 3}]
    plan = {"now": "2026-01-01T00:00:00Z", "evictions": evictions}
    assert [t.name for t in targets_from_plan(plan)] == ["q", "p"], "plan order, each pod once"
    assert check_plan_age(plan, "2h", now=ONE_HOUR_LATER) < 7200
    with pytest.raises(ExecutorInputError, match="more than max_plan_age 30m"):
        check_plan_age(plan, "30m", now=ONE_HOUR_LATER)
    with pytest.raises(ExecutorInputError, match="evictions"):
        targets_from_plan({"now": "x"})


def test_the_journal_folds_to_the_last_state_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(str(path))
    target = Target("ns", "web-1", uid="u1", node="n1")
    journal.record("run_started")
    journal.record_pod("requested", target, uid="u1")
    journal.record_pod("accepted", target, uid="u1")
    journal.close()
    with path.open("a") as handle:
        handle.write('{"event": "outcome", "key": "u1", "sta')  # the crash
    history, runs = read_history(str(path))
    assert runs == 1 and history["u1"].interrupted and history["u1"].progress == "accepted"
    journal = Journal(str(path))
    journal.record_pod("outcome", target, status="evicted")
    journal.close()
    history, runs = read_history(str(path))
    assert history["u1"].done and not history["u1"].interrupted
    assert all(json.loads(line) for line in path.read_text().splitlines()[-1:])


# ---- against the control plane: eviction answers from the real eviction subresource ----------------------------------


@pytest.fixture
def shop(kube: Any) -> Any:
    kube.load([namespace_object("shop"), *(node(f"worker-{i}") for i in range(1, 4))])
    return kube


def wait_pdb_settled(kube: Any, name: str, allowed: int) -> None:
    """The disruption controller has computed the budget (a real server answers 429 until it has)."""
    def settled() -> bool:
        status = (kube.get("PodDisruptionBudget", "shop", name) or {}).get("status") or {}
        return status.get("disruptionsAllowed") == allowed and status.get("expectedPods") is not None

    wait_until(settled, what=f"PDB shop/{name} to allow {allowed}")


@pytest.mark.faults
def test_eviction_answers_are_classified(shop: Any, api_client: Any) -> None:
    shop.load([bare_pod("shop", "free", "worker-1", labels={"app": "free"}),
               bare_pod("shop", "guarded", "worker-1", labels={"app": "guarded"}),
               bare_pod("shop", "twice", "worker-1", labels={"app": "twice"}),
               pdb("shop", "guarded", "guarded", min_available=1),
               pdb("shop", "twice-a", "twice", max_unavailable=1), pdb("shop", "twice-b", "twice", max_unavailable=1)])
    wait_pdb_settled(shop, "guarded", 0)
    assert api.request_eviction(api_client, "shop", "free", dry_run=True).outcome == api.ACCEPTED
    assert api.request_eviction(api_client, "shop", "free", uid="not-its-uid").outcome == api.REPLACED
    assert api.request_eviction(api_client, "shop", "guarded").outcome == api.BLOCKED
    assert api.request_eviction(api_client, "shop", "twice").outcome == api.MULTIPLE_PDBS
    assert api.request_eviction(api_client, "shop", "absent").outcome == api.GONE
    shop.faults.fail(500, verb="create", path="/eviction$")
    assert api.request_eviction(api_client, "shop", "free").outcome == api.ERROR, "a 500 for another reason"
    assert shop.get("pods", "shop", "free") is not None


@pytest.mark.faults
def test_in_flight_counts_pods_until_their_replacement_is_ready(shop: Any, api_client: Any) -> None:
    for name in ("a", "b", "c"):
        shop.create(replicaset("shop", name, 2))
    pods = [pod for name in ("a", "b", "c") for pod in ready_replicas(shop, "shop", name, 2)]
    recorder = eviction_recorder(shop, delay=0.05)
    targets = targets_from_plan(plan_of(pods))
    result = execute(api_client, targets, ExecutorOptions(max_in_flight=2, max_unavailable=None, **FAST))
    assert result["counts"]["evicted"] == 6 and len(recorder.evicted) == 6
    assert result["limits"]["max_in_flight_seen"] == 2 and recorder.max_concurrent <= 2
    assert all(pod["replacement"]["status"] == "ready" for pod in result["pods"])


def test_a_replacement_that_never_gets_ready_times_out_but_the_pod_stays_evicted(shop: Any, api_client: Any) -> None:
    shop.create(replicaset("shop", "web", 2, node_name="worker-1"))
    pods = ready_replicas(shop, "shop", "web", 2)
    shop.patch("nodes", None, "worker-1", {"spec": {"unschedulable": True}})  # the replacement stays Pending
    targets = targets_from_plan(plan_of(pods[:1]))
    result = execute(api_client, targets, ExecutorOptions(max_unavailable=None, **{**FAST,
                                                                                   "replacement_timeout": 2.0}))
    pod = result["pods"][0]
    assert pod["status"] == "evicted" and pod["replacement"]["status"] == "timeout"
    assert pod["replacement"]["ready"] == 1 and pod["replacement"]["desired"] == 2


@pytest.mark.faults
def test_a_workload_that_does_not_recover_is_not_disrupted_further(shop: Any, api_client: Any) -> None:
    shop.create(replicaset("shop", "web", 3))
    pods = ready_replicas(shop, "shop", "web", 3)
    recorder = eviction_recorder(shop)
    targets = targets_from_plan(plan_of(pods[1:2]))
    # one replica is down (and stays down) and max_unavailable is 1: another eviction must wait, then give up
    replica_down(shop, pods[0])
    result = execute(api_client, targets, ExecutorOptions(max_unavailable="1", **{**FAST, "timeout": 0.5}))
    pod = result["pods"][0]
    assert pod["status"] == "skipped" and pod["reason_code"] == "owner_not_recovered"
    assert "2/3 ready" in pod["reason"]
    assert recorder.requests == []


def replica_down(kube: Any, pod: dict[str, Any]) -> None:
    """One replica of shop/web stops being ready: its pod turns not Ready (a readiness probe failing, as its kubelet
    would report it) and the ReplicaSet controller counts 2 ready."""
    from kubernetes import client

    conditions = [{**c, "status": "False"} if c.get("type") in ("Ready", "ContainersReady") else c
                  for c in pod["status"]["conditions"]]
    with kube.api_client() as api_client:
        client.CoreV1Api(api_client).patch_namespaced_pod_status(
            pod["metadata"]["name"], "shop", {"status": {"conditions": conditions}})
    wait_until(lambda: (kube.get("ReplicaSet", "shop", "web")["status"].get("readyReplicas") == 2),
               what="shop/web to count 2 ready replicas")


# `pause` spaces the eviction requests as the API server receives them: one request at a time, the next `pause`
# after the previous one's answer, so neither the reads between a worker's slot and its POST nor how the threads
# are scheduled on a loaded machine can bring two requests closer (measured where the server's proxy receives them).
@pytest.mark.faults
def test_pause_spaces_the_starts_of_evictions(shop: Any, api_client: Any) -> None:
    shop.create(replicaset("shop", "web", 3))
    pods = ready_replicas(shop, "shop", "web", 3)
    recorder = eviction_recorder(shop)
    targets = targets_from_plan(plan_of(pods))
    result = execute(api_client, targets, ExecutorOptions(max_in_flight=3, pause=0.3, max_unavailable=None, **FAST))
    assert result["counts"]["evicted"] == 3
    starts = sorted(r.started for r in recorder.evicted)
    assert all(later - earlier >= 0.3 for earlier, later in zip(starts, starts[1:], strict=False)), starts
