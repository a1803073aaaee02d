"""NodeResourcesFit: scoring tables of upstream least_allocated_test.go, most_allocated_test.go and
requested_to_capacity_ratio_test.go, and fit_test.go's filter reasons."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.noderesources import (
    NodeResourcesFit,
)
from schedtest import cluster, filter_reasons, node, pod, scores

EXTENDED = "intel.com/foo"
TWO_CONTAINERS = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]


def fit(strategy: str, resources: list | None = None) -> NodeResourcesFit:
    args = {"scoringStrategy": {"type": strategy}}
    if resources is not None:
        args["scoringStrategy"]["resources"] = resources
    return NodeResourcesFit(args)


LEAST = [
    ("nothing scheduled, nothing requested", [], [("node1", "4000", "10000"), ("node2", "4000", "10000")], [],
     None, {"node1": 100, "node2": 100}),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     [("node1", "4000", "10000"), ("node2", "6000", "10000")], [], None, {"node1": 37, "node2": 50}),
    ("no resources requested, pods scheduled with resources", [],
     [("node1", "10000", "20000"), ("node2", "10000", "20000")],
     [("node1", "3000", "0"), ("node1", "3000", "0"), ("node2", "3000", "0"), ("node2", "3000", "5000")],
     None, {"node1": 70, "node2": 57}),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [("node1", "10000", "20000"), ("node2", "10000", "20000")],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], None, {"node1": 57, "node2": 45}),
    ("differently sized nodes", TWO_CONTAINERS, [("node1", "10000", "20000"), ("node2", "10000", "50000")],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], None, {"node1": 57, "node2": 60}),
    ("requested resources exceed node capacity", [{"cpu": "3000", "memory": "0"}],
     [("node1", "4000", "10000"), ("node2", "4000", "10000")],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], None, {"node1": 50, "node2": 25}),
    ("zero node resources", [], [("node1", None, None), ("node2", None, None)],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], None, {"node1": 0, "node2": 0}),
    ("different weights on CPU and memory", TWO_CONTAINERS, [("node1", "4000", "10000"), ("node2", "6000", "10000")],
     [], [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], {"node1": 41, "node2": 50}),
]

MOST = [
    ("nothing scheduled, nothing requested", [], [("node1", "4000", "10000"), ("node2", "4000", "10000")], [],
     None, {"node1": 0, "node2": 0}),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     [("node1", "4000", "10000"), ("node2", "6000", "10000")], [], None, {"node1": 62, "node2": 50}),
    ("no resources requested, pods scheduled with resources", [],
     [("node1", "10000", "20000"), ("node2", "10000", "20000")],
     [("node1", "3000", "0"), ("node1", "3000", "0"), ("node2", "3000", "0"), ("node2", "3000", "5000")],
     None, {"node1": 30, "node2": 42}),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [("node1", "10000", "20000"), ("node2", "10000", "20000")],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], None, {"node1": 42, "node2": 55}),
    ("resources requested equal node capacity", [{"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}],
     [("node1", "5000", "10000"), ("node2", "10000", "9000")], [], None, {"node1": 95, "node2": 75}),
    ("different weights", TWO_CONTAINERS, [("node1", "4000", "10000"), ("node2", "6000", "10000")], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], {"node1": 58, "node2": 50}),
]


def _case(nodes: list, existing: list) -> tuple:
    built = [node(name, {"cpu": cpu, "memory": mem} if cpu else {}) for name, cpu, mem in nodes]
    pods = [pod(node_name=n, requests=[{"cpu": c, "memory": m}]) for n, c, m in existing]
    return built, pods


@pytest.mark.parametrize("name,requests,nodes,existing,resources,expected", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated(name: str, requests: list, nodes: list, existing: list, resources: list | None,
                         expected: dict) -> None:
    built, pods = _case(nodes, existing)
    assert scores(fit("LeastAllocated", resources), pod(requests=requests), cluster(built, pods)) == expected


@pytest.mark.parametrize("name,requests,nodes,existing,resources,expected", MOST, ids=[c[0] for c in MOST])
def test_most_allocated(name: str, requests: list, nodes: list, existing: list, resources: list | None,
                        expected: dict) -> None:
    built, pods = _case(nodes, existing)
    assert scores(fit("MostAllocated", resources), pod(requests=requests), cluster(built, pods)) == expected


def test_most_allocated_counts_default_requests_of_pods_without_requests() -> None:
    # upstream "no resources requested, pods scheduled, nonzero request for resource": 100m/200Mi per container
    nodes = [node("node1", {"cpu": "250m", "memory": "1000Mi"}), node("node2", {"cpu": "250m", "memory": "1000Mi"})]
    existing = [pod(node_name="node1", requests=[{}]), pod(node_name="node1", requests=[{}])]
    assert scores(fit("MostAllocated"), pod(requests=[{}]), cluster(nodes, existing)) == {"node1": 80, "node2": 30}


def test_extended_resource_scored_only_when_requested() -> None:
    nodes = [node("node1", {"cpu": "6000", "memory": "10000", EXTENDED: "4"}),
             node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "10"})]
    resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXTENDED, "weight": 1}]
    asking = pod(requests=[{"cpu": "3000", "memory": "5000", EXTENDED: "2"}])
    assert scores(fit("MostAllocated", resources), asking, cluster(nodes)) == {"node1": 50, "node2": 40}
    assert scores(fit("LeastAllocated", resources), asking, cluster(nodes)) == {"node1": 50, "node2": 60}
    not_asking = pod(requests=TWO_CONTAINERS)
    assert scores(fit("MostAllocated", resources), not_asking, cluster(nodes)) == {"node1": 50, "node2": 50}


def test_requested_to_capacity_ratio_shape() -> None:
    # requested_to_capacity_ratio_test.go "nothing scheduled, resources requested, differently sized nodes"
    # shape (0,10),(100,0): node1 cpu 3000/4000 → 25, memory 5000/10000 → 50 → 38; node2 50/50 → 50
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                       {"utilization": 100, "score": 0}]}}}
    nodes = [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})]
    got = scores(NodeResourcesFit(args), pod(requests=TWO_CONTAINERS), cluster(nodes))
    assert got == {"node1": 38, "node2": 50}


@pytest.mark.parametrize("resources,field", [
    ([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], "resources[0]"),
    ([{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}], "resources[1]"),
    ([{"name": "memory", "weight": 101}], "resources[0]"),
])
def test_bad_resource_weight_names_the_field(resources: list, field: str) -> None:
    with pytest.raises(PolicyError) as caught:
        fit("MostAllocated", resources)
    assert caught.value.field.endswith(f"scoringStrategy.{field}")


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(PolicyError, match="LeastAllocated, MostAllocated"):
        NodeResourcesFit({"scoringStrategy": {"type": "Binpack"}})


def test_filter_reasons_like_fit_test() -> None:
    nodes = [node("small", {"cpu": "10", "memory": "20", "pods": "1"}), node("big", {"cpu": "10", "memory": "20"})]
    existing = [pod(node_name="small", requests=[{"cpu": "8", "memory": "19"}]),
                pod(node_name="big", requests=[{"cpu": "5", "memory": "5"}])]
    reasons = filter_reasons(NodeResourcesFit(), pod(requests=[{"cpu": "3", "memory": "2"}]),
                             cluster(nodes, existing))
    assert reasons == {"big": None, "small": ("Too many pods", "Insufficient cpu", "Insufficient memory")}


def test_filter_extended_resource_the_node_lacks() -> None:
    reasons = filter_reasons(NodeResourcesFit(), pod(requests=[{EXTENDED: "1"}]),
                             cluster([node("n", {"cpu": "1", "memory": "1Gi"})]))
    assert reasons == {"n": (f"Insufficient {EXTENDED}",)}


def test_nonzero_requests_are_cached_per_request_shape_only() -> None:
    """Pods that ask alike share one parse; a sidecar (restartPolicy Always), overhead or a missing request is a
    different shape."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
        _nonzero_requests,
        nonzero_requests,
    )

    main = {"name": "app", "resources": {"requests": {"cpu": "250m"}}}
    init = {"name": "init", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    specs = [
        {"containers": [main]},
        {"containers": [dict(main, name="other", image="x")]},
        {"containers": [main], "initContainers": [init]},
        {"containers": [main], "initContainers": [dict(init, restartPolicy="Always")]},
        {"containers": [main], "overhead": {"cpu": "100m"}},
        {"containers": [{"name": "bare"}]},
        {"containers": [main, {"name": "bare"}]},
    ]
    for spec in specs * 2:  # the second round reads the cache
        assert nonzero_requests(spec) == _nonzero_requests(spec), spec
    assert nonzero_requests(specs[0]) == (250, 200 * 1024 * 1024)
    assert nonzero_requests(specs[3]) == (1250, 1024 ** 3 + 200 * 1024 * 1024)
    assert nonzero_requests(specs[6]) == (350, 400 * 1024 * 1024)
