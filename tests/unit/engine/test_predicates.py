"""Shared predicates, ported from upstream pkg/descheduler/node/node_test.go, pkg/utils/predicates_test.go,
pkg/descheduler/pod/pods_test.go (sorts) and removepodsviolatingnodetaints TestToleratesTaint.

Upstream builds some "other" pods with a bare ObjectMeta (no name); the snapshot needs names, so they get one.
"""

from __future__ import annotations

from typing import Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import (
    Node,
    Pod,
    compute_qos,
    pod_requests,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    PREFER_NO_EVICTION,
    NodeUsage,
    fit_failure,
    fits_any_node,
    fits_any_other_node,
    matches_node_selector,
    preferred_weight,
    sort_by_priority,
    tolerates_all,
    tolerates_taint,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import parse_quantity
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from builders import (
    add_taint,
    build_node,
    build_pod,
    make_best_effort,
    make_burstable,
    make_guaranteed_from_requests,
    set_annotation,
    set_container_requests,
    set_node_allocatable,
    set_priority,
    set_unschedulable,
)

DESIRED = "kubernetes.io/desiredNode"
GB = 1000 * 1000 * 1000


def labelled(**labels: str):
    def apply(obj: dict) -> None:
        obj["metadata"]["labels"] = dict(labels)
    return apply


def with_node_selector(**selector: str):
    def apply(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = dict(selector)
    return apply


def anti_affinity(key: str, value: str):
    """test.PodWithPodAntiAffinity: a required term key In [value] on topologyKey region, and that label."""
    def apply(pod: dict) -> None:
        pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
             "topologyKey": "region"}]}}
        pod["metadata"]["labels"] = {key: value}
    return apply


def chain(*applies):
    def apply(obj: dict) -> None:
        for item in applies:
            item(obj)
    return apply


def in_namespace(namespace: str):
    def apply(pod: dict) -> None:
        pod["metadata"]["namespace"] = namespace
    return apply


def node_fit(pod_obj: dict, node_obj: dict, others: tuple = ()) -> Optional[str]:
    snapshot = Snapshot([node_obj, pod_obj, *others])
    pod = next(p for p in snapshot.pods if p.uid == pod_obj["metadata"]["uid"])
    return fit_failure(pod, snapshot.nodes[node_obj["metadata"]["name"]], NodeUsage(snapshot.pods_by_node))


def fits_other(pod_obj: dict, nodes: list, others: tuple = ()) -> bool:
    snapshot = Snapshot([*nodes, pod_obj, *others])
    pod = next(p for p in snapshot.pods if p.uid == pod_obj["metadata"]["uid"])
    return fits_any_other_node(pod, [snapshot.nodes[n["metadata"]["name"]] for n in nodes],
                               NodeUsage(snapshot.pods_by_node))


# --- TestNodeFit -------------------------------------------------------------------------------------------------

def region_node(node: dict) -> None:
    node["metadata"]["labels"] = {"region": "main-region"}


def sidecar(cpu: int, memory: int):
    def apply(pod: dict) -> None:
        pod["spec"].setdefault("initContainers", []).append({
            "name": "sidecar", "restartPolicy": "Always",
            "resources": {"requests": {"cpu": f"{cpu}m", "memory": str(memory), "ephemeral-storage": "0"}}})
    return apply


def overhead(cpu: int, memory: int, storage: int):
    def apply(pod: dict) -> None:
        pod["spec"]["overhead"] = {"cpu": f"{cpu}m", "memory": str(memory), "ephemeral-storage": str(storage)}
    return apply


NODE_FIT_CASES = [
    ("insufficient cpu", build_pod("p1", 10000, 2 * GB, ""),
     build_node("node", 64000, 128 * GB, 2, region_node), (build_pod("p2", 60000, 60 * GB, "node"),),
     "insufficient cpu"),
    ("insufficient pod num", build_pod("p1", 1000, 2 * GB, ""), build_node("node", 64000, 128 * GB, 2, region_node),
     (build_pod("p2", 1000, 2 * GB, "node"), build_pod("p3", 1000, 2 * GB, "node")), "insufficient pods"),
    ("pod matches anti-affinity of other pod on node", build_pod("p1", 1000, 1000, "node", anti_affinity("foo", "bar")),
     build_node("node", 64000, 128 * GB, 2, region_node),
     (build_pod("p2", 1000, 1000, "node", anti_affinity("foo", "bar")),), "pod anti-affinity"),
    ("other pod in another namespace", build_pod("p1", 1000, 1000, "node", anti_affinity("foo", "bar")),
     build_node("node", 64000, 128 * GB, 2, region_node),
     (build_pod("p2", 1000, 1000, "node", chain(in_namespace("test"), anti_affinity("foo", "bar"))),), None),
    ("other pod does not match the labels", build_pod("p1", 1000, 1000, "node", anti_affinity("foo", "bar")),
     build_node("node", 64000, 128 * GB, 2, region_node),
     (build_pod("p2", 1000, 1000, "node", anti_affinity("foo1", "bar1")),), None),
    ("node has no topologyKey", build_pod("p1", 1000, 1000, "node1", anti_affinity("foo", "bar")),
     build_node("node", 64000, 128 * GB, 2), (build_pod("p2", 1000, 1000, "node", anti_affinity("foo", "bar")),), None),
    ("pod fits on node", build_pod("p1", 1000, 1000, ""), build_node("node", 64000, 128 * GB, 2, region_node), (),
     None),
    ("native sidecar with too much cpu", build_pod("p1", 1, 100, "", sidecar(100000, 100 * 1000 * 1000)),
     build_node("node", 64000, 128 * GB, 2, region_node), (), "insufficient cpu"),
    ("native sidecar with too much memory", build_pod("p1", 1, 100, "", sidecar(100, 1000 * GB)),
     build_node("node", 64000, 128 * GB, 2, region_node), (), "insufficient memory"),
    ("small native sidecar fits", build_pod("p1", 1, 100, "", sidecar(100, 100 * 1000 * 1000)),
     build_node("node", 64000, 128 * GB, 2, region_node), (), None),
    ("large overhead does not fit", build_pod("p1", 1, 100, "", overhead(100000, 100 * 1000 * 1000, 0)),
     build_node("node", 64000, 128 * GB, 2, region_node), (), "insufficient cpu"),
    ("small overhead fits", build_pod("p1", 1, 100, "", overhead(1, 1000 * 1000, 0)),
     build_node("node", 64000, 128 * GB, 2, region_node), (), None),
]


@pytest.mark.parametrize("pod,node,others,expected", [c[1:] for c in NODE_FIT_CASES],
                         ids=[c[0] for c in NODE_FIT_CASES])
def test_node_fit(pod, node, others, expected):
    assert node_fit(pod, node, others) == expected


# --- TestPodFitsAnyOtherNode ---------------------------------------------------------------------------------------

NODE_NAMES = ["node1", "node2", "stagingNode", "node4"]
HW_TAINT = ("hardware", "gpu")


def big_node(name: str, label: Optional[str] = "yes",
             tainted: bool = False, unschedulable: bool = False, cpu: int = 64000, memory: int = 128 * GB,
             pods: int = 200, storage: int = 1000 * GB) -> dict:
    def apply(node: dict) -> None:
        if label is not None:
            node["metadata"]["labels"] = {DESIRED: label}
        set_node_allocatable(node, ephemeral_storage=str(storage))
        if tainted:
            add_taint(node, *HW_TAINT)
        if unschedulable:
            set_unschedulable(node)
    return build_node(name, cpu, memory, pods, apply)


def staging() -> dict:
    return build_node(NODE_NAMES[2], 0, 0, 0)


def candidate(cpu: int = 0, memory: int = 0, storage: Optional[int] = None, node: str = NODE_NAMES[2]) -> dict:
    def apply(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = {DESIRED: "yes"}
        if storage is not None:
            set_container_requests(pod, ephemeral_storage=str(storage))
    return build_pod("p1", cpu, memory, node, apply)


def resident(name: str, cpu: int, memory: int, node: str, storage: Optional[int] = None,
             extra: Optional[dict] = None, pod_overhead: Optional[tuple] = None) -> dict:
    def apply(pod: dict) -> None:
        pod["metadata"]["namespace"] = "test"
        pod["metadata"]["labels"] = {"test": "true"}
        if storage is not None:
            set_container_requests(pod, ephemeral_storage=str(storage))
        if extra:
            pod["spec"]["containers"][0]["resources"]["requests"].update(extra)
        if pod_overhead:
            overhead(*pod_overhead)(pod)
    return build_pod(name, cpu, memory, node, apply)


def fits_other_cases() -> list:
    n1, n2, n3 = NODE_NAMES[0], NODE_NAMES[1], NODE_NAMES[3]
    custom = "example.com/custom-resource"

    def with_custom(node: dict) -> dict:
        node["status"]["allocatable"][custom] = "15"
        return node

    return [
        ("fits another node matching the selector", candidate(),
         [big_node(n1), big_node(n2, label="no"), staging()], (), True),
        ("fits one of the nodes", candidate(), [big_node(n1, label="no"), big_node(n2), staging()], (), True),
        ("fits none of the nodes", candidate(), [big_node(n1, label="unfit1"), big_node(n2, label="unfit2"), staging()],
         (), False),
        ("unschedulable although labels match", candidate(),
         [big_node(n1, unschedulable=True), big_node(n2, label="no"), staging()], (), False),
        ("both nodes tainted", candidate(2000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, tainted=True), staging()], (), False),
        ("one tainted, a pod on the other and low requests", candidate(2000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2), staging()],
         (resident("test-pod", 12000, 20 * GB, n2, 40 * GB),), True),
        ("one tainted, cpu too big", candidate(2000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=4000, memory=8 * GB, pods=12, storage=200 * GB), staging()],
         (resident("3-core-pod", 3000, 4 * GB, n2, 10 * GB),), False),
        ("one tainted, memory too big", candidate(2000, 5 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=10000, memory=8 * GB, pods=12, storage=200 * GB), staging()],
         (resident("4GB-mem-pod", 2000, 4 * GB, n2, 10 * GB),), False),
        ("one tainted, ephemeral storage too big", candidate(2000, 4 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=10000, memory=8 * GB, pods=12, storage=20 * GB), staging()],
         (resident("11GB-storage-pod", 2000, 4 * GB, n2, 11 * GB),), False),
        ("one tainted, custom resource too big",
         build_pod("p1", 2000, 2 * GB, NODE_NAMES[2], chain(
             with_node_selector(**{DESIRED: "yes"}),
             lambda p: set_container_requests(p, ephemeral_storage=str(10 * GB), **{custom: "10"}))),
         [with_custom(big_node(n1, tainted=True)),
          with_custom(big_node(n2, cpu=10000, memory=8 * GB, pods=12, storage=200 * GB)), staging()],
         (resident("10-custom-resource-pod", 0, 0, n2, extra={custom: "10"}),), False),
        ("one tainted, cpu fits with a low overhead", candidate(1000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=5000, memory=8 * GB, pods=12, storage=200 * GB), staging()],
         (resident("3-core-pod", 2000, 4 * GB, n2, 10 * GB, pod_overhead=(1000, GB, GB)),), True),
        ("one tainted, overhead too high", candidate(2000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=5000, memory=8 * GB, pods=12, storage=200 * GB), staging()],
         (resident("3-core-pod", 2000, 4 * GB, n2, 10 * GB, pod_overhead=(2000, GB, GB)),), False),
        ("four nodes: tainted, two too small", candidate(1000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, cpu=3000, memory=8 * GB, pods=12, storage=200 * GB),
          build_node(NODE_NAMES[2], 3000, 8 * GB, 12), build_node(n3, 0, 0, 0)],
         (resident("3-core-pod", 2000, 4 * GB, n2, 10 * GB, pod_overhead=(1000, GB, GB)),), False),
        ("four nodes: only the fourth fits", candidate(1000, 2 * GB, 10 * GB),
         [big_node(n1, tainted=True), big_node(n2, label=None, cpu=8000, memory=8 * GB, pods=12, storage=200 * GB),
          build_node(NODE_NAMES[2], 1000, 8 * GB, 12), big_node(n3, cpu=8000, memory=8 * GB, pods=12)],
         (resident("3-core-pod", 2000, 4 * GB, n2, 10 * GB, pod_overhead=(1000, GB, GB)),), True),
        ("four nodes: the only fit is the pod's own node", candidate(1000, 2 * GB, 10 * GB, node=n3),
         [big_node(n1, tainted=True), big_node(n2, label=None, cpu=8000, memory=8 * GB, pods=12, storage=200 * GB),
          build_node(NODE_NAMES[2], 1000, 8 * GB, 12), big_node(n3, cpu=8000, memory=8 * GB, pods=12)],
         (resident("3-core-pod", 2000, 4 * GB, n2, 10 * GB, pod_overhead=(1000, GB, GB)),), False),
    ]


FITS_OTHER = fits_other_cases()


@pytest.mark.parametrize("pod,nodes,others,expected", [c[1:] for c in FITS_OTHER], ids=[c[0] for c in FITS_OTHER])
def test_pod_fits_any_other_node(pod, nodes, others, expected):
    assert fits_other(pod, nodes, others) is expected


@pytest.mark.parametrize("label,expected", [("yes", True), ("no", False)])
def test_pod_fits_current_node(label, expected):
    """TestPodFitsCurrentNode: a required node affinity against the pod's (unset) node."""
    pod = build_pod("p", 0, 0, "", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": DESIRED, "operator": "In", "values": ["yes"]}]}]}}}))
    node = big_node("node1", label=label)
    assert (node_fit(pod, node) is None) is expected


def test_fits_any_node_skips_resources_only_on_the_current_node():
    """PodFitsAnyNode includes the pod's own node, where the resource check is skipped (spec §4.6)."""
    pod = build_pod("p", 5000, 0, "small")
    nodes = [build_node("small", 1000, 10 * GB, 10), build_node("other", 1000, 10 * GB, 10)]
    snapshot = Snapshot([*nodes, pod])
    usage = NodeUsage(snapshot.pods_by_node)
    model = snapshot.pods[0]
    assert fits_any_node(model, snapshot.sorted_nodes(), usage)
    assert not fits_any_other_node(model, snapshot.sorted_nodes(), usage)


def test_fit_reads_allocatable_not_capacity():
    """nodeAvailableResources reads status.allocatable; a node with only capacity offers nothing."""
    node = build_node("cap-only", 4000, 8 * GB, 10, lambda n: n["status"].pop("allocatable"))
    assert node_fit(build_pod("p", 100, 0, ""), node) == "insufficient cpu"  # pods <= 0 is checked last
    assert node_fit(build_pod("p", 0, 0, ""), node) == "insufficient pods"


def test_fit_unschedulable_checked_first():
    node = build_node("n", 64000, 128 * GB, 10, set_unschedulable)
    assert node_fit(build_pod("p", 0, 0, ""), node) == "node is unschedulable"


def test_fit_prefer_no_schedule_taints_ignored():
    node = build_node("n", 64000, 128 * GB, 10, lambda n: add_taint(n, "soft", effect="PreferNoSchedule"))
    assert node_fit(build_pod("p", 0, 0, ""), node) is None
    add_taint(node, "hard", effect="NoExecute")
    assert node_fit(build_pod("p", 0, 0, ""), node) == "untolerated taint"


def test_fit_terminal_pods_do_not_use_resources():
    """Available = allocatable − requests of non-terminal pods (Succeeded/Failed pods free their requests)."""
    node = build_node("n", 1000, 10 * GB, 2)
    done = build_pod("done", 900, 0, "n", lambda p: p["status"].update(phase="Succeeded"))
    running = build_pod("running", 100, 0, "n")
    assert node_fit(build_pod("p", 900, 0, ""), node, (done, running)) is None
    assert node_fit(build_pod("p", 901, 0, ""), node, (done, running)) == "insufficient cpu"


# --- readiness (TestReadyNodes) and unschedulable --------------------------------------------------------------------

@pytest.mark.parametrize("conditions,ready", [
    ([{"type": "Ready", "status": "True"}], True),
    ([{"type": "MemoryPressure", "status": "True"}], True),
    ([{"type": "NetworkUnavailable", "status": "True"}], True),
    ([], True),
    ([{"type": "Ready", "status": "False"}], False),
    ([{"type": "Ready", "status": "Unknown"}], False),
])
def test_node_readiness(conditions, ready):
    node = build_node("n", 1000, 2000, 9, lambda n: n["status"].update(conditions=conditions))
    assert Node(node).ready is ready


def test_unschedulable_node_is_ready():
    node = Node(build_node("n", 1000, 2000, 9, set_unschedulable))
    assert node.ready and node.unschedulable


# --- tolerations (TestToleratesTaint and the Lt/Gt operators) -----------------------------------------------------

@pytest.mark.parametrize("toleration,taint,tolerated", [
    ({"key": "foo", "operator": "Exists", "effect": "NoSchedule"}, {"key": "foo", "effect": "NoSchedule"}, True),
    ({"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
     {"key": "foo", "value": "bar", "effect": "NoSchedule"}, True),
    ({"key": "", "operator": "Exists", "effect": "NoSchedule"},
     {"key": "foo", "value": "bar", "effect": "NoSchedule"}, True),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
     {"key": "foo", "value": "bar", "effect": "NoSchedule"}, True),
    ({"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
     {"key": "foo", "value": "value2", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
     {"key": "foo", "value": "bar", "effect": "NoExecute"}, False),
    # an empty operator means Equal, an empty effect matches every effect
    ({"key": "foo", "value": "bar"}, {"key": "foo", "value": "bar", "effect": "NoExecute"}, True),
    ({"key": "foo", "operator": "Lt", "value": "10"}, {"key": "foo", "value": "5", "effect": "NoSchedule"}, True),
    ({"key": "foo", "operator": "Lt", "value": "10"}, {"key": "foo", "value": "10", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Gt", "value": "-3"}, {"key": "foo", "value": "0", "effect": "NoSchedule"}, True),
    # IsDecimalInteger wants canonical integers on both sides
    ({"key": "foo", "operator": "Lt", "value": "10"}, {"key": "foo", "value": "05", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Gt", "value": "+1"}, {"key": "foo", "value": "5", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Lt", "value": "1_0"}, {"key": "foo", "value": "5", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Lt", "value": "10"}, {"key": "foo", "value": "", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Bogus"}, {"key": "foo", "effect": "NoSchedule"}, False),
])
def test_tolerates_taint(toleration, taint, tolerated):
    assert tolerates_taint(toleration, taint) is tolerated


def test_tolerates_all_with_effect_filter():
    taints = [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"}]
    tolerations = [{"key": "a", "operator": "Exists"}]
    assert tolerates_all(tolerations, taints, {"NoSchedule", "NoExecute"})
    assert not tolerates_all(tolerations, taints)


# --- node selector / affinity matching -----------------------------------------------------------------------------

def affinity_pod(terms: Optional[list], selector: Optional[dict] = None) -> Pod:
    def apply(pod: dict) -> None:
        if terms is not None:
            pod["spec"]["affinity"] = {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
        if selector is not None:
            pod["spec"]["nodeSelector"] = selector
    return Pod(build_pod("p", 0, 0, "n", apply))


LABELLED = Node(build_node("n1", 1000, 1000, 10, labelled(zone="a", size="5")))


@pytest.mark.parametrize("terms,selector,matched", [
    (None, None, True),
    (None, {"zone": "a"}, True),
    (None, {"zone": "b"}, False),
    ([], None, False),  # an empty term list matches nothing
    ([{}], None, False),  # empty terms are dropped
    ([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
      {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}], None, True),
    ([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                            {"key": "size", "operator": "Gt", "values": ["7"]}]}], None, False),
    ([{"matchExpressions": [{"key": "size", "operator": "Lt", "values": ["7"]}]}], None, True),
    ([{"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}], None, True),
    ([{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["x"]}]}], None, True),
    ([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}], None, True),
    ([{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}], None, False),
    ([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}], {"zone": "b"}, False),
])
def test_matches_node_selector(terms, selector, matched):
    assert matches_node_selector(affinity_pod(terms, selector), LABELLED) is matched


def test_pod_node_affinity_weight():
    """TestPodNodeAffinityWeight and TestBestPodNodeAffinityWeight."""
    node = Node(build_node("n", 1, 1, 1, labelled(key1="value1", key2="value2", key3="value3")))

    def preferred(*weighted: tuple) -> Pod:
        terms = [{"weight": w, "preference": {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}}
                 for w, k, v in weighted]
        return Pod(build_pod("p", 0, 0, "n", lambda p: p["spec"].update(
            affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}})))

    assert preferred_weight(Pod(build_pod("p", 0, 0, "n")), node) == 0
    assert preferred_weight(affinity_pod([{"matchExpressions": [
        {"key": "key1", "operator": "In", "values": ["value1"]}]}]), node) == 0
    assert preferred_weight(preferred((10, "key1", "value1"), (5, "key1", "valueX")), node) == 10
    assert preferred_weight(preferred((10, "key1", "value1"), (5, "key2", "value2")), node) == 15
    pod = preferred((10, "key1", "value1"))
    others = [Node(build_node("n2", 1, 1, 1, labelled(key2="value2"))),
              Node(build_node("n3", 1, 1, 1, labelled(key3="value3")))]
    assert max(preferred_weight(pod, n) for n in others) == 0
    assert max(preferred_weight(pod, n) for n in [Node(build_node("n1", 1, 1, 1, labelled(key1="value1"))),
                                                  others[0]]) == 10


# --- SortPodsBasedOnPriorityLowToHigh / SortPodsBasedOnAge ----------------------------------------------------------

def test_sort_pods_based_on_priority_low_to_high():
    low, high = 0, 10000

    def pod(name: str, memory: int, *applies) -> dict:
        return build_pod(name, 400, memory, "n1", chain(*applies))

    def prefer(pod_obj: dict) -> None:
        set_annotation(pod_obj, PREFER_NO_EVICTION)

    objects = {
        "p1": pod("p1", 0, lambda p: set_priority(p, low)),
        "p2": pod("p2", 0, lambda p: set_priority(p, high), make_best_effort),
        "p3": pod("p3", 0, lambda p: set_priority(p, high), make_burstable),
        "p4": pod("p4", 100, lambda p: set_priority(p, high), make_guaranteed_from_requests),
        "p5": pod("p5", 100, make_best_effort),
        "p6": pod("p6", 100, make_guaranteed_from_requests),
        "p7": pod("p7", 0, lambda p: set_priority(p, low), prefer),
        "p8": pod("p8", 0, lambda p: set_priority(p, high), make_best_effort, prefer),
        "p9": pod("p9", 0, lambda p: set_priority(p, high), make_burstable, prefer),
        "p10": pod("p10", 100, lambda p: set_priority(p, high), make_guaranteed_from_requests, prefer),
        "p11": pod("p11", 0, make_burstable),
        "p12": pod("p12", 0, make_burstable, prefer),
    }
    order = ["p1", "p8", "p9", "p10", "p2", "p3", "p4", "p5", "p6", "p7", "p11", "p12"]
    ranked = sort_by_priority([Pod(objects[name]) for name in order])
    assert [p.name for p in ranked] == ["p5", "p11", "p12", "p6", "p1", "p7", "p2", "p8", "p3", "p9", "p4", "p10"]


def test_sort_is_stable_on_ties():
    """Upstream's comparator is not strict (ties reverse for <=12 pods); we keep the input order instead."""
    pods = [Pod(build_pod(f"p{i}", 100, 0, "n")) for i in range(5)]
    assert [p.name for p in sort_by_priority(pods)] == [f"p{i}" for i in range(5)]


# --- QoS (pkg/utils/qos.go) and PodRequests (component-helpers) ---------------------------------------------------

@pytest.mark.parametrize("containers,status_qos,expected", [
    ([{}], None, "BestEffort"),
    ([{"requests": {"cpu": "0", "memory": "0"}}], None, "BestEffort"),
    ([{"requests": {"cpu": "100m"}}], None, "Burstable"),
    ([{"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "100m", "memory": "1Gi"}}], None, "Guaranteed"),
    ([{"limits": {"cpu": "100m", "memory": "1Gi"}}], None, "Burstable"),  # no defaulting of requests here
    ([{"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "200m", "memory": "1Gi"}}], None, "Burstable"),
    ([{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1000m", "memory": "1Gi"}},
      {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}], None, "Guaranteed"),
    ([{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}, {}], None, "Burstable"),
    ([{"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}], None, "BestEffort"),
    ([{}], "Guaranteed", "Guaranteed"),
])
def test_qos(containers, status_qos, expected):
    pod = {"spec": {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)]},
           "status": {"qosClass": status_qos} if status_qos else {}}
    assert compute_qos(pod) == expected


def spec(containers: list, init: tuple = (), **extra) -> dict:
    return {"containers": [{"resources": {"requests": r}} for r in containers],
            "initContainers": [{"resources": {"requests": r}, **({"restartPolicy": "Always"} if side else {})}
                               for r, side in init], **extra}


@pytest.mark.parametrize("pod_spec,expected", [
    (spec([{"cpu": "100m"}, {"cpu": "200m", "memory": "1Ki"}]), {"cpu": "300m", "memory": "1Ki"}),
    # a plain init container only raises the maximum
    (spec([{"cpu": "100m"}], [({"cpu": "500m"}, False)]), {"cpu": "500m"}),
    # sidecars add up, and count into each later init container's request
    (spec([{"cpu": "100m"}], [({"cpu": "50m"}, True), ({"cpu": "400m"}, False)]), {"cpu": "450m"}),
    (spec([{"cpu": "100m"}], [({"cpu": "400m"}, False), ({"cpu": "50m"}, True)]), {"cpu": "400m"}),
    # pod-level requests replace cpu/memory, overhead is added last
    (spec([{"cpu": "100m", "ephemeral-storage": "1G"}], resources={"requests": {"cpu": "1"}},
          overhead={"cpu": "10m"}), {"cpu": "1010m", "ephemeral-storage": "1G"}),
    (spec([{"cpu": "0", "memory": "0"}]), {"cpu": "0", "memory": "0"}),
])
def test_pod_requests(pod_spec, expected):
    assert pod_requests(pod_spec) == {k: parse_quantity(v) for k, v in expected.items()}
