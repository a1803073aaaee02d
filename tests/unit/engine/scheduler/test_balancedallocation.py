"""NodeResourcesBalancedAllocation: the cases of upstream v1.36.3 balanced_allocation_test.go (score = 50 + (50 +
balance with the pod - balance without it) / 2, balance = (1 - std of the fractions) × 100)."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.balancedallocation import (
    BalancedAllocation,
    balance,
)
from schedtest import cluster, node, pod, scores

TWO = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_ONLY = [{"cpu": "1000m"}, {"cpu": "2000m"}]
GPU = "nvidia.com/gpu"
WITH_GPU = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]}


def make_node(name: str, millicpu: int, memory: int, gpus: int = 0) -> dict:
    capacity = {"cpu": f"{millicpu}m", "memory": str(memory)}
    if gpus:
        capacity[GPU] = str(gpus)
    return node(name, capacity)


def test_best_effort_pod_is_skipped() -> None:
    state = cluster([make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)])
    assert scores(BalancedAllocation(), pod(requests=[{}]), state) == {"node1": 0, "node2": 0}


def test_nothing_scheduled_differently_sized_nodes() -> None:
    state = cluster([make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)])
    assert scores(BalancedAllocation(), pod(requests=TWO), state) == {"node1": 68, "node2": 75}


def test_pods_scheduled_with_resources() -> None:
    existing = [pod(node_name="node1", requests=CPU_ONLY), pod(node_name="node2", requests=TWO)]
    state = cluster([make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], existing)
    assert scores(BalancedAllocation(), pod(requests=TWO), state) == {"node1": 73, "node2": 74}
    state = cluster([make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
                    [pod(node_name="node1", requests=CPU_ONLY), pod(node_name="node2", requests=TWO)])
    assert scores(BalancedAllocation(), pod(requests=TWO), state) == {"node1": 73, "node2": 70}


def test_nodes_reaching_min_and_max_score() -> None:
    state = cluster([make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
                    [pod(node_name="node1", requests=CPU_ONLY)])
    incoming = pod(requests=[{"memory": "2000"}, {"memory": "3000"}])
    assert scores(BalancedAllocation(), incoming, state) == {"node1": 100, "node2": 50}


def test_requested_resources_at_node_capacity() -> None:
    state = cluster([make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
                    [pod(node_name="node1", requests=CPU_ONLY), pod(node_name="node2", requests=TWO)])
    assert scores(BalancedAllocation(), pod(requests=CPU_ONLY), state) == {"node1": 62, "node2": 62}


def test_scalar_resource_counted_only_when_requested() -> None:
    existing = [pod(node_name="node1", requests=[{"cpu": "1000m", "memory": "2000"},
                                                 {"cpu": "2000m", "memory": "3000", GPU: "3"}]),
                pod(node_name="node2", requests=TWO)]
    state = cluster([make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000, 8)], existing)
    asking = pod(requests=[{"cpu": "0", "memory": "0", GPU: "1"}])
    assert scores(BalancedAllocation(WITH_GPU), asking, state) == {"node1": 75, "node2": 76}
    state = cluster([make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000)])
    assert scores(BalancedAllocation(WITH_GPU), pod(requests=TWO), state) == {"node1": 56, "node2": 56}


def test_three_resources_use_the_standard_deviation() -> None:
    # fractions .2, .4, .6: mean .4, std sqrt((.04+0+.04)/3) = .1633 → 83
    assert balance([2, 4, 6], [10, 10, 10]) == 83
