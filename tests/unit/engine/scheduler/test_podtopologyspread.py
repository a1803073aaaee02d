"""PodTopologySpread: scoring cases of upstream podtopologyspread/scoring_test.go and filter cases of
filtering_test.go."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podtopologyspread import (
    REASON_CONSTRAINTS,
    REASON_LABEL,
    PodTopologySpread,
)
from schedtest import cluster, filter_reasons, node, pod, scores

HOST = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


def spread(max_skew: int, key: str, selector: dict | None, when: str = "ScheduleAnyway") -> dict:
    constraint = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        constraint["labelSelector"] = selector
    return constraint


def incoming(*constraints: dict, labels: dict | None = None) -> dict:
    return pod("p", labels=labels if labels is not None else {"foo": ""},
               spec={"topologySpreadConstraints": list(constraints)})


def hosts(*names: str, zone: dict | None = None) -> list[dict]:
    return [node(n, labels={HOST: n, **({"zone": zone[n]} if zone else {})}) for n in names]


def existing(layout: dict[str, int], labels: dict | None = None) -> list[dict]:
    return [pod(f"p-{n}{i}", node_name=n, labels=labels or {"foo": ""}) for n, count in layout.items()
            for i in range(count)]


@pytest.mark.parametrize("max_skew,layout,expected", [
    (1, {"node-a": 2, "node-b": 1, "node-d": 3}, {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    (2, {"node-a": 2, "node-b": 1, "node-d": 3}, {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    (3, {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}, {"node-a": 44, "node-b": 66, "node-c": 77,
                                                               "node-d": 100}),
], ids=["2/1/0/3", "2/1/0/3 maxSkew=2", "4/3/2/1 maxSkew=3"])
def test_one_constraint_on_node_all_candidates(max_skew: int, layout: dict, expected: dict) -> None:
    state = cluster(hosts("node-a", "node-b", "node-c", "node-d"), existing(layout))
    assert scores(PodTopologySpread(), incoming(spread(max_skew, HOST, FOO)), state) == expected


def test_null_selector_matches_nothing() -> None:
    state = cluster(hosts("node-a", "node-b", "node-c", "node-d"), existing({"node-a": 2, "node-b": 1}))
    assert set(scores(PodTopologySpread(), incoming(spread(1, HOST, None)), state).values()) == {100}


def test_three_of_four_nodes_candidates() -> None:
    state = cluster(hosts("node-a", "node-b", "node-x", "node-y"),
                    existing({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}))
    got = scores(PodTopologySpread(), incoming(spread(1, HOST, FOO)), state, ["node-a", "node-b", "node-x"])
    assert got == {"node-a": 33, "node-b": 83, "node-x": 100}


def test_candidate_without_the_topology_key_scores_zero() -> None:
    nodes = [node("node-a", labels={HOST: "node-a"}), node("node-b", labels={"n": "node-b"}),
             node("node-x", labels={HOST: "node-x"}), node("node-y", labels={HOST: "node-y"})]
    state = cluster(nodes, existing({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}))
    got = scores(PodTopologySpread(), incoming(spread(1, HOST, FOO)), state, ["node-a", "node-b", "node-x"])
    assert got == {"node-a": 16, "node-b": 0, "node-x": 100}


def test_one_constraint_on_zone() -> None:
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    state = cluster(hosts(*zones, zone=zones), existing({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}))
    got = scores(PodTopologySpread(), incoming(spread(1, "zone", FOO)), state, ["node-a", "node-b", "node-x"])
    assert got == {"node-a": 75, "node-b": 75, "node-x": 100}


def test_two_constraints_two_candidates() -> None:
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    state = cluster(hosts(*zones, zone=zones), existing({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}))
    pod_in = incoming(spread(1, "zone", FOO), spread(1, HOST, FOO))
    assert scores(PodTopologySpread(), pod_in, state, ["node-a", "node-x"]) == {"node-a": 100, "node-x": 63}


def test_two_constraints_different_selectors() -> None:
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    pods = [pod("p-a1", node_name="node-a", labels={"foo": ""}),
            pod("p-b1", node_name="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node_name="node-y", labels={"foo": ""}), pod("p-y2", node_name="node-y", labels={"bar": ""})]
    pod_in = incoming(spread(1, "zone", FOO), spread(1, HOST, BAR), labels={"foo": "", "bar": ""})
    got = scores(PodTopologySpread(), pod_in, cluster(hosts(*zones, zone=zones), pods))
    assert got == {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}


def test_system_default_spreading_counts_pods_of_the_same_controller() -> None:
    # "system defaulting, nodes don't have zone, pods match service" (4/3/2/1 → 44/66/77/100); the default
    # selector is the controller here (see the module docstring)
    pods = [pod(f"p-{n}{i}", node_name=n, owner="rs") for n, c in
            {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}.items() for i in range(c)]
    state = cluster(hosts("node-a", "node-b", "node-c", "node-d"), pods)
    got = scores(PodTopologySpread(), pod("p", owner="rs"), state)
    assert got == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    assert set(scores(PodTopologySpread(), pod("bare"), state).values()) == {0}  # no selector: skipped


def test_filter_max_skew() -> None:
    # filtering_test.go "pods spread across nodes as 2/1/0/3, only node-c fits" (maxSkew 1 on hostname)
    state = cluster(hosts("node-a", "node-b", "node-c", "node-d"), existing({"node-a": 2, "node-b": 1, "node-d": 3}))
    got = filter_reasons(PodTopologySpread(), incoming(spread(1, HOST, FOO, "DoNotSchedule")), state)
    assert got == {"node-a": (REASON_CONSTRAINTS,), "node-b": (REASON_CONSTRAINTS,), "node-c": None,
                   "node-d": (REASON_CONSTRAINTS,)}


def test_filter_missing_topology_label() -> None:
    state = cluster([node("labelled", labels={"zone": "z1"}), node("bare")], [])
    got = filter_reasons(PodTopologySpread(), incoming(spread(1, "zone", FOO, "DoNotSchedule")), state)
    assert got == {"bare": (REASON_LABEL,), "labelled": None}


def test_filter_min_domains_makes_the_global_minimum_zero() -> None:
    zones = {"node-a": "zone1", "node-b": "zone2"}
    state = cluster(hosts(*zones, zone=zones), existing({"node-a": 1, "node-b": 1}))
    constraint = dict(spread(1, "zone", FOO, "DoNotSchedule"), minDomains=3)
    got = filter_reasons(PodTopologySpread(), incoming(constraint), state)
    assert got == {"node-a": (REASON_CONSTRAINTS,), "node-b": (REASON_CONSTRAINTS,)}


@pytest.mark.parametrize("policy,expected", [
    ("Honor", {"node-a": 100, "node-x": 0}),  # node-b's pods do not count: the pod's nodeSelector excludes node-b
    ("Ignore", {"node-a": 25, "node-x": 100}),
])
def test_node_affinity_policy_decides_whose_pods_count(policy: str, expected: dict) -> None:
    nodes = [node("node-a", labels={HOST: "node-a", "zone": "zone1", "env": "prod"}),
             node("node-b", labels={HOST: "node-b", "zone": "zone1"}),
             node("node-x", labels={HOST: "node-x", "zone": "zone2", "env": "prod"})]
    state = cluster(nodes, existing({"node-b": 3, "node-x": 1}))
    constraint = {**spread(1, "zone", FOO), "nodeAffinityPolicy": policy}
    pod_in = pod("p", labels={"foo": ""}, spec={"topologySpreadConstraints": [constraint],
                                                "nodeSelector": {"env": "prod"}})
    assert scores(PodTopologySpread(), pod_in, state, ["node-a", "node-x"]) == expected
