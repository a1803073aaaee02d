"""TaintToleration: filter and score cases of upstream taint_toleration_test.go."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.tainttoleration import (
    TaintToleration,
)
from schedtest import cluster, filter_reasons, node, pod, scores


def prefer(key: str, value: str) -> dict:
    return {"key": key, "value": value, "effect": "PreferNoSchedule"}


def with_tolerations(tolerations: list) -> dict:
    return pod(spec={"tolerations": tolerations})


def test_node_with_taints_the_pod_tolerates_scores_highest() -> None:
    # "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"
    nodes = [node("nodeA", taints=[prefer("foo", "bar")]), node("nodeB", taints=[prefer("foo", "blah")])]
    incoming = with_tolerations([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}])
    assert scores(TaintToleration(), incoming, cluster(nodes)) == {"nodeA": 100, "nodeB": 0}


def test_more_intolerable_taints_score_lower() -> None:
    # "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many taints"
    # and "the more intolerable taints a node has, the lower score it gets"
    nodes = [node("nodeA"), node("nodeB", taints=[prefer("cpu-type", "arm64")]),
             node("nodeC", taints=[prefer("cpu-type", "arm64"), prefer("disk-type", "ssd")])]
    incoming = with_tolerations([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}])
    assert scores(TaintToleration(), incoming, cluster(nodes)) == {"nodeA": 100, "nodeB": 50, "nodeC": 0}


def test_only_prefer_no_schedule_taints_count() -> None:
    # "only taints and tolerations that have effect PreferNoSchedule are checked by the score"
    nodes = [node("nodeA"), node("nodeB", taints=[{"key": "cpu-type", "value": "arm64", "effect": "NoSchedule"}]),
             node("nodeC", taints=[prefer("cpu-type", "arm64")])]
    incoming = with_tolerations([{"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}])
    assert scores(TaintToleration(), incoming, cluster(nodes)) == {"nodeA": 100, "nodeB": 100, "nodeC": 0}


def test_no_taints_anywhere_every_node_scores_max() -> None:
    assert scores(TaintToleration(), pod(), cluster([node("a"), node("b")])) == {"a": 100, "b": 100}


def test_filter_names_the_untolerated_taint() -> None:
    nodes = [node("tainted", taints=[{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
             node("free")]
    assert filter_reasons(TaintToleration(), pod(), cluster(nodes)) == {
        "free": None, "tainted": ("node(s) had untolerated taint(s)",)}
    tolerant = with_tolerations([{"key": "dedicated", "operator": "Exists"}])
    assert filter_reasons(TaintToleration(), tolerant, cluster(nodes)) == {"free": None, "tainted": None}
