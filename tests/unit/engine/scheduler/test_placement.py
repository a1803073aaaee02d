"""Placement preview through compute_plan: same-node returns, no-fit reasons, ties, bare pods, the scheduler
chosen by schedulerName, binpack, and the three utilization states."""

from __future__ import annotations

import copy

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
    PlacementRequest,
    preview_placement,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from schedtest import node, pod

NOW = "2026-11-22T12:00:00Z"
OLD = "2026-11-01T00:00:00Z"
HOST = "kubernetes.io/hostname"
TAINT = {"key": "maintenance", "value": "true", "effect": "NoSchedule"}


def policy(name: str, point: str, args: dict) -> dict:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "p", "pluginConfig": [{"name": name, "args": args}], "plugins": {point: {"enabled": [name]}}}]}


LIFETIME = policy("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 3600,
                                                "labelSelector": {"matchLabels": {"old": "yes"}}})
TAINTS = policy("RemovePodsViolatingNodeTaints", "deschedule", {})


def worker(name: str, cpu: str = "4", memory: str = "8Gi", taints: list | None = None, **labels: str) -> dict:
    return node(name, {"cpu": cpu, "memory": memory}, labels={HOST: name, **labels}, taints=taints)


def app_pod(name: str, node_name: str, cpu: str = "500m", old: bool = False, owner: str | None = "rs",
            spec: dict | None = None) -> dict:
    obj = pod(name, node_name=node_name, requests=[{"cpu": cpu, "memory": "512Mi"}],
              labels={"old": "yes"} if old else {}, owner=owner, spec=spec)
    obj["metadata"]["creationTimestamp"] = OLD if old else NOW
    return obj


def plan_with(objects: list[dict], document: dict, config: dict | None = None) -> dict:
    return compute_plan(copy.deepcopy(objects), document, NOW, placement=PlacementRequest(config))


def test_replacement_returns_to_its_node_when_that_node_scores_best() -> None:
    busy = [app_pod(f"busy{i}", "n2", cpu="1", owner=f"other{i}") for i in range(3)]
    objects = [worker("n1"), worker("n2"), app_pod("aged", "n1", old=True)] + busy
    plan = plan_with(objects, LIFETIME)
    [eviction] = plan["evictions"]
    assert eviction["placement"]["node"] == "n1"
    assert eviction["placement"]["same_node"] is True
    assert plan["placement"]["same_node"] == 1
    assert plan["placement"]["placed"] == 1


def test_no_node_fits_names_the_filters() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2", cpu="1"),
               app_pod("victim", "n1", cpu="2"), app_pod("filler", "n2", cpu="500m", owner="x")]
    plan = plan_with(objects, TAINTS)
    [eviction] = plan["evictions"]
    placement = eviction["placement"]
    assert placement["node"] is None
    assert placement["outcome"] == "unplaced"
    assert placement["reason"] == ("0/2 nodes are available: 1 Insufficient cpu, "
                                   "1 node(s) had untolerated taint(s).")
    assert placement["rejected_by"] == {"NodeResourcesFit": 1, "TaintToleration": 1}
    assert plan["placement"]["unplaced"] == 1


def test_ties_list_every_best_node() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), worker("n3"), worker("n4", cpu="2"),
               app_pod("victim", "n1")]
    placement = plan_with(objects, TAINTS)["evictions"][0]["placement"]
    assert placement["tied_nodes"] == ["n2", "n3"]
    assert placement["node"] in placement["tied_nodes"]
    assert placement["same_node"] is False


def _direct(objects: list[dict], evicted_names: list[str]) -> list[dict]:
    """preview_placement on hand-picked evictions (the DefaultEvictor would protect bare and DaemonSet pods)."""
    snapshot = Snapshot(copy.deepcopy(objects))
    evictions, evicted = [], {}
    for name in evicted_names:
        target = next(p for p in snapshot.pods if p.name == name)
        entry = {"namespace": target.namespace, "name": target.name, "node": target.node_name}
        evictions.append(entry)
        evicted[target.index] = entry
    preview_placement(snapshot, evicted, evictions, PlacementRequest())
    return [e["placement"] for e in evictions]


def test_bare_pod_is_not_replaced_and_daemonset_pod_returns_to_its_node() -> None:
    daemon = app_pod("agent", "n1", owner=None)
    daemon["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": "ds-uid", "controller": True}]
    objects = [worker("n1"), worker("n2"), app_pod("bare", "n1", owner=None), daemon]
    bare, agent = _direct(objects, ["bare", "agent"])
    assert bare == {"node": None, "same_node": False, "tied_nodes": [], "reason": "a bare pod is not recreated",
                    "outcome": "not_replaced"}
    assert agent["node"] == "n1" and agent["same_node"] is True and agent["outcome"] == "placed"


def test_replacements_are_placed_one_at_a_time() -> None:
    # two evicted pods, room for one on each of two nodes: the second sees the first's requests
    objects = [worker("n1", taints=[TAINT]), worker("n2", cpu="1"), worker("n3", cpu="1"),
               app_pod("a", "n1", cpu="800m"), app_pod("b", "n1", cpu="800m")]
    plan = plan_with(objects, TAINTS)
    landed = sorted(e["placement"]["node"] for e in plan["evictions"])
    assert landed == ["n2", "n3"]


def test_binpack_profile_from_scheduler_name() -> None:
    config = {"kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "binpack", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
    objects = [worker("n1", taints=[TAINT]), worker("n2"), worker("n3"),
               app_pod("victim", "n1", spec={"schedulerName": "binpack"}),
               app_pod("resident", "n3", cpu="2", owner="other")]
    plan = plan_with(objects, TAINTS, config)
    placement = plan["evictions"][0]["placement"]
    assert placement["node"] == "n3"  # the fuller node
    assert placement["scheduler"] == "binpack"
    assert "binpack" in plan["placement"]["schedulers"]


def test_unknown_scheduler_name_is_reported() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), app_pod("victim", "n1", spec={"schedulerName": "custom"})]
    placement = plan_with(objects, TAINTS)["evictions"][0]["placement"]
    assert placement["node"] is None and placement["outcome"] == "unplaced"
    assert "schedulerName 'custom' has no profile in scheduler_config" in placement["reason"]


def test_volcano_scheduled_pods_say_their_placement_is_not_predicted() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), app_pod("victim", "n1", spec={"schedulerName": "volcano"})]
    placement = plan_with(objects, TAINTS)["evictions"][0]["placement"]
    assert placement["node"] is None and placement["outcome"] == "unplaced"
    assert "Volcano scheduler" in placement["reason"] and "not predicted" in placement["reason"]
    assert "scheduler_config" not in placement["reason"]  # no KubeSchedulerConfiguration would help


def test_utilization_three_states_and_spread() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), app_pod("victim", "n1", cpu="2")]
    plan = plan_with(objects, TAINTS)
    by_name = {n["name"]: n for n in plan["utilization"]["nodes"]}
    assert by_name["n1"]["before"]["cpu"] == 50.0
    assert by_name["n1"]["after"]["cpu"] == 0.0
    assert by_name["n1"]["after_placement"]["cpu"] == 0.0
    assert by_name["n2"]["after_placement"]["cpu"] == 50.0
    spread = plan["placement"]["spread"]
    assert spread["before"]["cpu"] == {"stddev": 25.0, "range": 50.0}
    assert spread["after_placement"]["cpu"] == {"stddev": 25.0, "range": 50.0}


def test_placement_off_keeps_the_plan_unchanged() -> None:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), app_pod("victim", "n1")]
    plan = compute_plan(copy.deepcopy(objects), TAINTS, NOW)
    assert "placement" not in plan
    assert "placement" not in plan["evictions"][0]
    assert "after_placement" not in plan["utilization"]["nodes"][0]
