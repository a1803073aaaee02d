"""Profiles (default and KubeSchedulerConfiguration), the FitError message, ties and numFeasibleNodesToFind."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    StaticCache,
    load_profiles,
    num_feasible_nodes_to_find,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP
from schedtest import cluster, node, pod, sched

BINPACK = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
    "schedulerName": "binpack",
    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}],
}]}


def test_default_profile_weights_match_upstream() -> None:
    profile = load_profiles(None)["default-scheduler"]
    described = profile.describe()
    assert described["scores"] == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                   "PodTopologySpread": 2, "InterPodAffinity": 2,
                                   "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert described["filters"][:4] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"]
    assert not any(n.startswith("ImageLocality") for n in described["not_modeled"])


def test_configuration_profiles_by_scheduler_name() -> None:
    profiles = load_profiles(BINPACK)
    assert set(profiles) == {"binpack", "default-scheduler"}
    assert profiles["binpack"].scorers[2][0].strategy == "MostAllocated"


def test_disabling_and_weights() -> None:
    config = {"profiles": [{"plugins": {"score": {
        "disabled": [{"name": "NodeResourcesBalancedAllocation"}, {"name": "PodTopologySpread"}],
        "enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}]}
    described = load_profiles(config)["default-scheduler"].describe()
    assert described["scores"] == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 5,
                                   "InterPodAffinity": 2, "ImageLocality": 1}
    everything_off = {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]}
    assert load_profiles(everything_off)["default-scheduler"].describe()["scores"] == {}


@pytest.mark.parametrize("config,field", [
    ({"kind": "KubeSchedulerPolicy"}, "scheduler_config.kind"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}]}]},
     "scheduler_config.profiles[0].pluginConfig.NodeResourcesFit.args.scoringStrategy.type"),
    ({"profiles": [{"percentageOfNodesToScore": 150}]}, "scheduler_config.profiles[0].percentageOfNodesToScore"),
])
def test_bad_configuration_names_the_field(config: dict, field: str) -> None:
    with pytest.raises(PolicyError) as caught:
        load_profiles(config)
    assert caught.value.field == field


@pytest.mark.parametrize("nodes,percentage,expected", [
    (50, None, 50), (100, None, 100), (1000, None, 420), (5000, None, 500), (20000, None, 1000), (5000, 30, 1500),
    (150, 10, 100),
])
def test_num_feasible_nodes_to_find(nodes: int, percentage: int | None, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_fit_error_lists_reasons_with_counts() -> None:
    nodes = [node("small1", {"cpu": "1", "memory": "1Gi"}), node("small2", {"cpu": "1", "memory": "1Gi"}),
             node("tainted", {"cpu": "8", "memory": "8Gi"},
                  taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]),
             node("cordoned", {"cpu": "8", "memory": "8Gi"}, unschedulable=True)]
    decision = schedule(load_profiles(None)["default-scheduler"], sched(pod(requests=[{"cpu": "2"}])),
                        cluster(nodes), StaticCache())
    assert decision.node is None
    assert decision.reason == ("0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                               "1 node(s) were unschedulable, 2 Insufficient cpu.")
    assert decision.rejected_by == {"NodeResourcesFit": 2, "NodeUnschedulable": 1, "TaintToleration": 1}


def test_identical_nodes_are_reported_as_ties() -> None:
    nodes = [node(n, {"cpu": "4", "memory": "8Gi"}, labels={"kubernetes.io/hostname": n}) for n in ("a", "b", "c")]
    state = cluster(nodes, [pod(node_name="b", requests=[{"cpu": "1", "memory": "1Gi"}])])
    decision = schedule(load_profiles(None)["default-scheduler"], sched(pod(requests=[{"cpu": "1", "memory": "1Gi"}])),
                        state, StaticCache())
    assert decision.tied == ["a", "c"]
    binpacked = schedule(load_profiles(BINPACK)["binpack"], sched(pod(requests=[{"cpu": "1", "memory": "1Gi"}])),
                         state, StaticCache())
    assert binpacked.tied == ["b"]


@pytest.mark.parametrize("seed", range(8))
def test_batched_scoring_equals_per_node_scoring(seed: int) -> None:
    """score_many (what the framework calls) gives exactly score() per node, on random clusters."""
    import random

    from schedtest import pod as make_pod

    rng = random.Random(seed)
    zones = ("a", "b", "")
    nodes = []
    for i in range(12):
        labels = {"kubernetes.io/hostname": f"n{i}"}
        if rng.choice(zones):
            labels["topology.kubernetes.io/zone"] = rng.choice(zones[:2])
        taints = [{"key": "t", "value": "v", "effect": "PreferNoSchedule"}] if rng.random() < 0.3 else []
        nodes.append(node(f"n{i}", {"cpu": str(rng.choice((1, 2, 4))), "memory": f"{rng.choice((2, 4, 8))}Gi"},
                          labels=labels, taints=taints))
    pods = [make_pod(node_name=f"n{rng.randrange(12)}", owner="rs" if rng.random() < 0.5 else None,
                     requests=[{"cpu": f"{rng.choice((100, 300, 900))}m", "memory": f"{rng.choice((64, 512))}Mi"}])
            for _unused in range(30)]
    state = cluster(nodes, pods)
    incoming = sched(make_pod(owner="rs", requests=[{"cpu": "200m", "memory": "256Mi"}]))
    feasible = list(state.nodes)
    for plugin, _unused in load_profiles(BINPACK)["binpack"].scorers + load_profiles(None)["default-scheduler"].scorers:
        pre = plugin.pre_score(incoming, state, feasible)
        if pre is SKIP or not hasattr(plugin, "score_many"):
            continue
        assert plugin.score_many(incoming, pre, feasible) == [plugin.score(incoming, pre, n) for n in feasible], \
            plugin.name
