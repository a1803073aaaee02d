"""The rollout module's health gates on the suite's control plane, one cluster ("c1") with the operator stand-in
(standins/descheduler_operator.py) and the kubelet stand-in serving the operand's log.

- expected evictions: the operand logs (through the kubelet stand-in) the evictions a configuration makes; the
  plan.json given for the cluster says which it predicted. Logged evictions the plan predicts pass; a pod the plan
  never evicts breaches: the cluster is rolled back and the rollout halts, saying which pod. A plan of another
  cluster, or none at the path given, fails before anything is changed.
- workloads: a Deployment drops below its ready replicas during the soak (a stand-in turns its pods never-ready
  when the new configuration renders, as a bad configuration would): breach, rollback, halt.
- rollback to ABSENT: the cluster had no KubeDescheduler; rolling back deletes the one the rollout created and
  nothing else (the operator namespace, its other objects and the last-good record stay).

No sleeps: the soak ends at the first breach, and every wait is on observed state with a generous deadline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubelet_standin import NEVER_READY
from operator_support import connection, descheduler_operator, get_kd, get_object
from playbook import run_tasks
from standins.descheduler_operator import OPERATOR_NAMESPACE, DeschedulerOperator
from standins.rest import Rest, path, wait_until

SPEC = {"managementState": "Managed", "mode": "Automatic", "deschedulingIntervalSeconds": 3600,
        "profiles": ["LifecycleAndUtilization"]}
RECORD = "descheduler-fleet-last-good"
PLANNED = {"namespace": "shop", "name": "web-1", "node": "control-plane-1", "plugin": "PodLifeTime"}
STRANGER = {"namespace": "payments", "name": "ledger-0", "node": "control-plane-1", "plugin": "RemoveDuplicates"}


@pytest.fixture
def operator(kube: Any) -> Iterator[DeschedulerOperator]:
    with descheduler_operator(kube) as running:
        yield running


def kube_system_uid(kube: Any) -> str:
    with kube.api_client() as client:
        return Rest(client).get(path("v1", "namespaces", name="kube-system"))["metadata"]["uid"]


def write_plan(tmp_path: Path, kube: Any, *, cluster: str = "c1", uid: str | None = None) -> str:
    """The plan.json the plan module writes for a configuration that evicts PLANNED (the parts the gate reads)."""
    plan = {"cluster": cluster, "cluster_identity": {"uid": uid or kube_system_uid(kube), "server": None},
            "evictions": [{**PLANNED, "certain": True}], "summary": {"total": 1}}
    target = tmp_path / f"plan-{cluster}.json"
    target.write_text(json.dumps(plan), encoding="utf-8")
    return str(target)


def operand_log(*evictions: dict[str, Any]) -> str:
    """One Automatic cycle of the descheduler evicting `evictions`, as klog prints it."""
    lines = [f'I1126 10:00:{index:02d}.000001       1 evictions.go:607] "Evicted pod" pod="{e["namespace"]}/'
             f'{e["name"]}" reason="" strategy="{e["plugin"]}" node="{e["node"]}"\n'
             for index, e in enumerate(evictions)]
    lines.append(f'I1126 10:01:00.000001       1 descheduler.go:252] "Number of evictions/requests" '
                 f'totalEvicted={len(evictions)} evictionRequests=0\n')
    return "".join(lines)


def roll_out(kube: Any, tmp_path: Path, **options: Any) -> tuple[Any, dict[str, Any]]:
    """The rollout module on c1 (SPEC), its soak long enough for any breach to show and ended by the first one."""
    args = {"clusters": [{"name": "c1", "connection": connection(kube), "spec": SPEC}], "min_success_time": "20s",
            "gate_interval": 1, "progress_deadline": "180s", "wait_sleep": 1, "run_id": "gates", **options}
    task = {"name": "Roll out", "descheduler.fleet.rollout": args, "register": "rollout", "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    return process, results["rollout"]


def record(kube: Any) -> dict[str, Any] | None:
    configmap = get_object(kube, "configmaps", RECORD)
    return None if configmap is None else json.loads(configmap["data"]["kubedescheduler.json"])


def assert_back_to_absent(kube: Any, result: dict[str, Any], reason: str) -> None:
    """Rolled back to no KubeDescheduler, halted with `reason`; the rollout's record and the rest stay."""
    assert result["halted"] is True and reason in result["halt_reason"] and reason in result["msg"], result
    assert result["clusters"]["c1"]["status"] == "rolled_back", result["clusters"]["c1"]
    wait_until(lambda: get_kd(kube) is None, 120, 0.5, "the KubeDescheduler the rollout created to be deleted")
    assert record(kube)["present"] is False  # the record stays: there was no KubeDescheduler before
    assert get_object(kube, "deployments", "descheduler-operator", "apps/v1") is not None  # the operator stays


def test_logged_evictions_the_plan_predicts_pass(kube: Any, operator: DeschedulerOperator, tmp_path: Path) -> None:
    operator.set_operand_log(operand_log(PLANNED))
    plan = write_plan(tmp_path, kube)
    process, result = roll_out(kube, tmp_path, gates={"expected_evictions": {"plans": {"c1": plan}}})
    assert process.returncode == 0 and result.get("failed") is not True, result
    assert result["halted"] is False and result["clusters"]["c1"]["status"] == "succeeded"
    assert get_kd(kube)["spec"]["deschedulingIntervalSeconds"] == 3600


def test_an_eviction_the_plan_never_predicts_rolls_back_to_absent_and_halts(
        kube: Any, operator: DeschedulerOperator, tmp_path: Path) -> None:
    with kube.api_client() as client:  # an object of the operator namespace the rollout did not create
        Rest(client).create(path("v1", "configmaps", OPERATOR_NAMESPACE), {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "site-notes"}, "data": {"a": "b"}})
    operator.set_operand_log(operand_log(PLANNED, STRANGER))
    process, result = roll_out(kube, tmp_path, min_success_time="300s",
                               gates={"expected_evictions": {"plans": {"c1": write_plan(tmp_path, kube)}}})
    assert result.get("failed") is True, result
    assert_back_to_absent(kube, result, "health gate breached on c1: evictions outside the plan: 1 logged "
                                        "eviction(s) the plan does not find possible (at most 0 allowed): "
                                        "payments/ledger-0 (RemoveDuplicates)")
    assert get_object(kube, "configmaps", "site-notes")["data"] == {"a": "b"}


def test_a_plan_of_another_cluster_fails_before_anything_changes(
        kube: Any, operator: DeschedulerOperator, tmp_path: Path) -> None:
    # two clusters of one group each (both this control plane): c2's plan, made elsewhere, is refused before c1's
    # group, the first, changes anything
    clusters = [{"name": name, "connection": connection(kube), "spec": SPEC} for name in ("c1", "c2")]
    other = write_plan(tmp_path, kube, cluster="c2", uid="00000000-0000-0000-0000-000000000000")
    process, result = roll_out(kube, tmp_path, clusters=clusters, clusters_per_group=1,
                               gates={"expected_evictions": {"plans": {"c2": other}}})
    assert result.get("failed") is True, result
    assert result["field"] == "gates.expected_evictions.plans.c2", result
    assert "gates.expected_evictions.plans.c2 was made on another cluster" in result["msg"], result
    assert get_kd(kube) is None and record(kube) is None
    # a plan keyed by no cluster of the rollout: refused too, naming it, before any cluster is reached
    unknown = write_plan(tmp_path, kube, cluster="c3")
    process, result = roll_out(kube, tmp_path, clusters=clusters, clusters_per_group=1,
                               gates={"expected_evictions": {"plans": {"c3": unknown}}})
    assert result.get("failed") is True and result["field"] == "gates.expected_evictions.plans.c3", result
    assert "'c3' is not a cluster of this rollout (its clusters: c1, c2)" in result["msg"], result
    assert get_kd(kube) is None and record(kube) is None

    named_other = write_plan(tmp_path, kube, cluster="c2")
    process, result = roll_out(kube, tmp_path, gates={"expected_evictions": {"plans": {"c1": named_other}}})
    assert result.get("failed") is True and "is the plan of cluster 'c2', not 'c1'" in result["msg"], result
    missing = str(tmp_path / "nowhere" / "plan.json")
    process, result = roll_out(kube, tmp_path, gates={"expected_evictions": {"plans": {"c1": missing}}})
    assert result.get("failed") is True, result
    assert f"gates.expected_evictions.plans.c1: {missing!r} does not exist" in result["msg"], result
    assert get_kd(kube) is None and record(kube) is None


def web_deployment(namespace: str) -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": namespace},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]}}}}


def break_on_render(operator: DeschedulerOperator, breaking: Callable[[], None]) -> None:
    """The stand-in calls `breaking` whenever it renders the operand: what the new configuration does to the
    workloads on a real cluster."""
    render = operator._render

    def render_and_break(kubedescheduler: dict[str, Any], spec: dict[str, Any]) -> None:
        breaking()
        render(kubedescheduler, spec)

    operator._render = render_and_break


def test_a_workload_losing_ready_replicas_in_the_soak_rolls_back_and_halts(
        kube: Any, operator: DeschedulerOperator, namespace: str, tmp_path: Path) -> None:
    deployments = path("apps/v1", "deployments", namespace)
    with kube.api_client() as client:
        rest = Rest(client)
        rest.create(deployments, web_deployment(namespace))
        wait_until(lambda: (rest.get(f"{deployments}/web").get("status") or {}).get("readyReplicas") == 2, 120, 0.5,
                   "web's two replicas to be ready before the rollout")

    def never_ready() -> None:  # the pods come back never Ready: readyReplicas drops to 0 during the soak
        operator.rest.change(f"{deployments}/web", lambda web: web["spec"]["template"]["metadata"].setdefault(
            "annotations", {}).update({NEVER_READY: "true"}))

    break_on_render(operator, never_ready)
    process, result = roll_out(kube, tmp_path, min_success_time="300s")
    assert result.get("failed") is True, result
    assert_back_to_absent(kube, result, f"health gate breached on c1: Deployment {namespace}/web lacks ")
    assert "pod(s) (before the change 0, tolerance 0)" in result["halt_reason"]
