"""NodeAffinity, NodeUnschedulable and NodePorts: cases of upstream node_affinity_test.go (score),
node_unschedulable_test.go and node_ports_test.go."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeaffinity import NodeAffinity
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeports import NodePorts
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeunschedulable import (
    NodeUnschedulable,
)
from schedtest import cluster, filter_reasons, node, pod, scores

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

PREFERRED = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
    {"weight": 4, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}},
    {"weight": 5, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]},
                                                      {"key": "key", "operator": "In", "values": ["value"]},
                                                      {"key": "az", "operator": "In", "values": ["az1"]}]}},
]}}}


def test_all_nodes_same_priority_without_preferences() -> None:
    nodes = [node("node1", labels=LABEL1), node("node2", labels=LABEL2)]
    assert scores(NodeAffinity(), pod(), cluster(nodes)) == {"node1": 0, "node2": 0}


def test_preferred_weights_normalized_to_the_best_node() -> None:
    # "all machines matches the preferred scheduling requirements of pod but with different priorities"
    nodes = [node("node1", labels=LABEL1), node("node5", labels=LABEL5), node("node2", labels=LABEL2)]
    got = scores(NodeAffinity(), pod(spec=PREFERRED), cluster(nodes))
    assert got == {"node1": 18, "node5": 100, "node2": 36}


def test_required_selector_filter() -> None:
    spec = {"nodeSelector": {"foo": "bar"}}
    got = filter_reasons(NodeAffinity(), pod(spec=spec), cluster([node("a", labels=LABEL1), node("b")]))
    assert got == {"a": None, "b": ("node(s) didn't match Pod's node affinity/selector",)}


def test_cordoned_node_rejected_unless_tolerated() -> None:
    nodes = [node("cordoned", unschedulable=True), node("open")]
    assert filter_reasons(NodeUnschedulable(), pod(), cluster(nodes)) == {
        "cordoned": ("node(s) were unschedulable",), "open": None}
    tolerant = pod(spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                          "effect": "NoSchedule"}]})
    assert filter_reasons(NodeUnschedulable(), tolerant, cluster(nodes)) == {"cordoned": None, "open": None}


def _port_pod(node_name: str, *ports: tuple[str, str, int]) -> dict:
    container = {"name": "c", "ports": [{"hostIP": ip, "protocol": proto, "hostPort": port, "containerPort": port}
                                        for proto, ip, port in ports]}
    return pod(node_name=node_name, spec={"containers": [container]})


def test_host_ports() -> None:
    # node_ports_test.go: same port different protocol fits; same port on 0.0.0.0 conflicts with any IP
    state = cluster([node("m1"), node("m2")], [_port_pod("m1", ("UDP", "127.0.0.1", 8080)),
                                               _port_pod("m2", ("TCP", "0.0.0.0", 8001))])
    assert filter_reasons(NodePorts(), _port_pod("", ("TCP", "127.0.0.1", 8080)), state) == {"m1": None, "m2": None}
    conflict = filter_reasons(NodePorts(), _port_pod("", ("TCP", "127.0.0.1", 8001)), state)
    assert conflict == {"m1": None, "m2": ("node(s) didn't have free ports for the requested pod ports",)}
    assert filter_reasons(NodePorts(), _port_pod("", ("UDP", "127.0.0.2", 8080)), state)["m1"] is None
    assert filter_reasons(NodePorts(), _port_pod("", ("UDP", "0.0.0.0", 8080)), state)["m1"] is not None
