"""NodeResourcesBalancedAllocation: cases of upstream balanced_allocation_test.go (score = (1 - std) * 100)."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.balancedallocation import (
    BalancedAllocation,
    balanced_score,
)
from schedtest import cluster, node, pod, scores

TWO_CONTAINERS = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]


def test_nothing_scheduled_differently_sized_nodes() -> None:
    # node1: cpu 3000/4000 = .75, memory 5000/10000 = .5 → std .125 → 87; node2: .5/.5 → 100
    nodes = [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})]
    assert scores(BalancedAllocation(), pod(requests=TWO_CONTAINERS), cluster(nodes)) == {"node1": 87, "node2": 100}


def test_pods_scheduled_with_resources() -> None:
    # node1: cpu 6000/10000 = .6, memory 5000/20000 = .25 → std .175 → 82; node2: .6 and .5 → std .05 → 95
    nodes = [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "20000"})]
    existing = [pod(node_name="node1", requests=[{"cpu": "3000", "memory": "0"}]),
                pod(node_name="node2", requests=[{"cpu": "3000", "memory": "5000"}])]
    got = scores(BalancedAllocation(), pod(requests=TWO_CONTAINERS), cluster(nodes, existing))
    assert got == {"node1": 82, "node2": 95}


def test_fraction_above_one_is_capped() -> None:
    # requested beyond capacity counts as 1: cpu 1.0, memory .5 → std .25 → 75
    assert balanced_score([8000, 5000], [4000, 10000]) == 75


def test_three_resources_use_the_standard_deviation() -> None:
    # fractions .2, .4, .6: mean .4, std sqrt((.04+0+.04)/3) = .1633 → 83
    assert balanced_score([2, 4, 6], [10, 10, 10]) == 83


def test_best_effort_pod_is_not_scored() -> None:
    # kubernetes#129138: no requests at all → PreScore Skip, every node 0
    nodes = [node("node1", {"cpu": "4", "memory": "8Gi"}), node("node2", {"cpu": "8", "memory": "8Gi"})]
    existing = [pod(node_name="node1", requests=[{"cpu": "3", "memory": "1Gi"}])]
    assert scores(BalancedAllocation(), pod(requests=[{}]), cluster(nodes, existing)) == {"node1": 0, "node2": 0}


def test_uses_actual_requests_not_the_defaults() -> None:
    # a pod asking cpu only: memory fraction comes from actual requests (0), not the 200Mi default
    nodes = [node("node1", {"cpu": "1000m", "memory": "1000Mi"})]
    assert scores(BalancedAllocation(), pod(requests=[{"cpu": "500m"}]), cluster(nodes)) == {"node1": 75}
