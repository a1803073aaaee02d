"""InterPodAffinity: cases in the style of upstream interpodaffinity/scoring_test.go and filtering_test.go."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.incremental_schedule import Columns
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.interpodaffinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI,
    InterPodAffinity,
)
from schedtest import cluster, filter_reasons, node, pod, sched, scores

S1 = {"security": "S1"}
S2 = {"security": "S2"}
SELECT_S1 = {"matchExpressions": [{"key": "security", "operator": "In", "values": ["S1"]}]}


def term(selector: dict, key: str) -> dict:
    return {"labelSelector": selector, "topologyKey": key}


def nodes() -> list[dict]:
    return [node("node1", labels={"region": "China"}), node("node2", labels={"region": "India"}),
            node("node3", labels={"az": "az1"})]


def with_affinity(kind: str, mode: str, entries: list, labels: dict | None = None, node_name: str = "") -> dict:
    return pod(node_name=node_name, labels=labels or {}, spec={"affinity": {kind: {mode: entries}}})


PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def test_no_affinity_anywhere_scores_zero() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S1)])
    assert scores(InterPodAffinity(), pod(labels=S1), state) == {"node1": 0, "node2": 0, "node3": 0}


def test_preferred_affinity_favours_the_matching_topology() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S1), pod(node_name="node2", labels=S2)])
    incoming = with_affinity("podAffinity", PREFERRED, [{"weight": 5, "podAffinityTerm": term(SELECT_S1, "region")}])
    assert scores(InterPodAffinity(), incoming, state) == {"node1": 100, "node2": 0, "node3": 0}


def test_preferred_anti_affinity_avoids_the_matching_topology() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S1), pod(node_name="node2", labels=S2)])
    incoming = with_affinity("podAntiAffinity", PREFERRED,
                             [{"weight": 5, "podAffinityTerm": term(SELECT_S1, "region")}])
    assert scores(InterPodAffinity(), incoming, state) == {"node1": 0, "node2": 100, "node3": 100}


def test_existing_pods_required_affinity_attracts_with_hard_weight() -> None:
    existing = with_affinity("podAffinity", REQUIRED, [term(SELECT_S1, "region")], labels=S2, node_name="node1")
    state = cluster(nodes(), [existing])
    assert scores(InterPodAffinity(), pod(labels=S1), state) == {"node1": 100, "node2": 0, "node3": 0}
    assert scores(InterPodAffinity({"hardPodAffinityWeight": 0}), pod(labels=S1), state) == {
        "node1": 0, "node2": 0, "node3": 0}


def test_required_anti_affinity_of_existing_pod_filters() -> None:
    existing = with_affinity("podAntiAffinity", REQUIRED, [term(SELECT_S1, "region")], node_name="node1")
    state = cluster(nodes(), [existing])
    assert filter_reasons(InterPodAffinity(), pod(labels=S1), state) == {
        "node1": (REASON_EXISTING_ANTI,), "node2": None, "node3": None}


def test_required_affinity_needs_a_matching_pod_in_the_domain() -> None:
    state = cluster(nodes(), [pod(node_name="node2", labels=S1)])
    incoming = with_affinity("podAffinity", REQUIRED, [term(SELECT_S1, "region")])
    assert filter_reasons(InterPodAffinity(), incoming, state) == {
        "node1": (REASON_AFFINITY,), "node2": None, "node3": (REASON_AFFINITY,)}


def test_first_pod_of_a_self_selecting_group_may_land_where_the_key_exists() -> None:
    incoming = with_affinity("podAffinity", REQUIRED, [term(SELECT_S1, "region")], labels=S1)
    assert filter_reasons(InterPodAffinity(), incoming, cluster(nodes(), [])) == {
        "node1": None, "node2": None, "node3": (REASON_AFFINITY,)}


def test_required_anti_affinity_of_the_incoming_pod() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S1)])
    incoming = with_affinity("podAntiAffinity", REQUIRED, [term(SELECT_S1, "region")])
    assert filter_reasons(InterPodAffinity(), incoming, state) == {
        "node1": (REASON_ANTI_AFFINITY,), "node2": None, "node3": None}


def test_namespace_scope_of_terms() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S1, namespace="other")])
    incoming = with_affinity("podAntiAffinity", REQUIRED, [term(SELECT_S1, "region")])
    assert filter_reasons(InterPodAffinity(), incoming, state)["node1"] is None  # own namespace only
    everywhere = with_affinity("podAntiAffinity", REQUIRED, [dict(term(SELECT_S1, "region"), namespaceSelector={})])
    assert filter_reasons(InterPodAffinity(), everywhere, state)["node1"] == (REASON_ANTI_AFFINITY,)


def window_scores(incoming: dict, state: Any) -> Any:
    """The fast path's batch scores over every node (window order = node index order)."""
    window = list(range(len(state.nodes)))
    return InterPodAffinity().window_scores(sched(incoming), state, window, Columns(state))


@pytest.mark.parametrize("keys", [["region"], ["region", "az"], ["az", "region", "zone"]])
def test_window_scores_equal_the_per_node_scores_for_one_or_more_topology_keys(keys: list[str]) -> None:
    # the batch form sums one column per topology key: with one key it starts from that key's column
    labelled = [node("node1", labels={"region": "China", "az": "az1"}), node("node2", labels={"region": "India"}),
                node("node3", labels={"az": "az1", "zone": "z1"}), node("node4", labels={"zone": "z1"})]
    state = cluster(labelled, [pod(node_name="node1", labels=S1), pod(node_name="node3", labels=S1),
                               pod(node_name="node2", labels=S2)])
    entries = [{"weight": 3 + i, "podAffinityTerm": term(SELECT_S1, key)} for i, key in enumerate(keys)]
    incoming = with_affinity("podAffinity", PREFERRED, entries)
    expected = scores(InterPodAffinity(), incoming, state, [n.name for n in state.nodes])
    batch = window_scores(incoming, state)
    assert isinstance(batch, list)  # the nodes differ: not one score for all
    assert dict(zip([n.name for n in state.nodes], batch, strict=True)) == expected


def test_window_scores_are_one_number_when_every_node_scores_alike() -> None:
    state = cluster(nodes(), [pod(node_name="node1", labels=S2)])
    incoming = with_affinity("podAffinity", PREFERRED, [{"weight": 5, "podAffinityTerm": term(SELECT_S1, "region")}])
    assert window_scores(incoming, state) in (0, SKIP)
    assert set(scores(InterPodAffinity(), incoming, state).values()) == {0}
