"""RemoveDuplicates: upstream's plugin tests, run through compute_plan.

Ported from pkg/framework/plugins/removeduplicates/{removeduplicates,defaults,validation}_test.go at 7d2b28bf.
Upstream asserts counts only (owners and nodes are Go maps).
"""

from __future__ import annotations

from typing import Callable, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import (
    build_node,
    build_pod,
    evicted_names,
    policy,
    set_ds_owner,
    set_host_path_empty_dir,
    set_mirror_annotations,
    set_normal_owner,
    set_priority,
    set_rs_owner_named,
)

NOW = "2026-11-22T12:00:00Z"
PLUGIN = "RemoveDuplicates"
SYSTEM_CRITICAL = 2_000_000_000
Apply = Optional[Callable[[dict], None]]


def node(name: str, apply: Apply = None) -> dict:
    """buildTestNode: 2 cpu, 3000 bytes, 10 pods."""
    return build_node(name, 2000, 3000, 10, apply)


def pod_on(name: str, node_name: str, apply: Apply = None) -> dict:
    """buildTestPodForNode: 100m cpu, 0 memory."""
    return build_pod(name, 100, 0, node_name, apply)


def rs_pod(name: str, namespace: str = "default", apply: Apply = None, node_name: str = "n1") -> dict:
    """buildTestPodWithRSOwnerRefWithNamespaceForNode1: owned by ReplicaSet replicaset-1."""
    def shape(pod: dict) -> None:
        set_rs_owner_named(pod)
        pod["metadata"]["namespace"] = namespace
        if apply:
            apply(pod)
    return pod_on(name, node_name, shape)


def pod_with_image(name: str, image: str) -> dict:
    """buildTestPodWithImage: a second container running <image> next to the image-less first one."""
    pod = rs_pod(name)
    pod["spec"]["containers"].append({"name": image, "image": image})
    return pod


def image(name: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        pod["spec"]["containers"][0]["image"] = name
    return apply


def extra_container(pod: dict) -> None:
    pod["spec"]["containers"].append({"name": "foo", "image": "foo"})


def node_selector(**labels: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = dict(labels)
    return apply


def tainted(node_obj: dict) -> None:
    node_obj["spec"]["taints"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def unschedulable(node_obj: dict) -> None:
    node_obj["spec"] = {"unschedulable": True}


def east(node_obj: dict) -> None:
    node_obj["metadata"]["labels"] = {"datacenter": "east"}


def ds_pod(pod: dict) -> None:
    set_ds_owner(pod)


def local_storage_pod(pod: dict) -> None:
    set_normal_owner(pod)
    set_host_path_empty_dir(pod)


def critical_pod(pod: dict) -> None:
    pod["metadata"]["namespace"] = "kube-system"
    set_priority(pod, SYSTEM_CRITICAL)


def protected_pods() -> list[dict]:
    """p4-p7: a DaemonSet pod, a pod with local storage, a mirror pod and a system-critical pod."""
    return [pod_on("p4", "n1", ds_pod), pod_on("p5", "n1", local_storage_pod),
            pod_on("p6", "n1", set_mirror_annotations), pod_on("p7", "n1", critical_pod)]


def dev_pods() -> list[dict]:
    return [rs_pod(f"p{i}", "dev") for i in (1, 2, 3)]


def ns_test_pods() -> list[dict]:
    return [rs_pod(f"p{i}", "test") for i in (8, 9, 10)]


def run(nodes: list[dict], pods: list[dict], args: Optional[dict] = None, node_fit: bool = False,
        **limits: int) -> dict:
    document = policy((PLUGIN, "balance", args or {}), evictor_args={"nodeFit": node_fit}, **limits)
    return compute_plan(nodes + pods, document, NOW)


TWO_NODES = [node("n1"), node("n2")]

FIND_DUPLICATE_CASES = [
    ("Three pods in the `dev` Namespace, bound to same ReplicaSet. 1 should be evicted.",
     dev_pods(), TWO_NODES, 1, None, False),
    ("Three pods in the `dev` Namespace, bound to same ReplicaSet, but ReplicaSet kind is excluded. 0 should be "
     "evicted.", dev_pods(), TWO_NODES, 0, ["ReplicaSet"], False),
    ("Three Pods in the `test` Namespace, bound to same ReplicaSet. 1 should be evicted.",
     ns_test_pods(), TWO_NODES, 1, None, False),
    ("Three Pods in the `dev` Namespace, three Pods in the `test` Namespace. Bound to ReplicaSet with same name. "
     "4 should be evicted.", dev_pods() + ns_test_pods(), TWO_NODES, 2, None, False),
    ("Pods are: part of DaemonSet, with local storage, mirror pod annotation, critical pod annotation - none should "
     "be evicted.", protected_pods(), TWO_NODES, 0, None, False),
    ("Test all Pods: 4 should be evicted.", dev_pods() + protected_pods() + ns_test_pods(), TWO_NODES, 2, None, False),
    ("Pods with the same owner but different images should not be evicted",
     [rs_pod("p11", "different-images", image("foo")), rs_pod("p12", "different-images", image("bar"))],
     TWO_NODES, 0, None, False),
    ("Pods with multiple containers should not match themselves",
     [rs_pod("p13", "different-images", extra_container)], TWO_NODES, 0, None, False),
    ("Pods with matching ownerrefs and at not all matching image should not trigger an eviction",
     [rs_pod("p11", "different-images", image("foo")), rs_pod("p13", "different-images", extra_container)],
     TWO_NODES, 0, None, False),
    ("Three pods in the `dev` Namespace, bound to same ReplicaSet. Only node available has a taint, and nodeFit set "
     "to true. 0 should be evicted.", dev_pods(), [node("n1"), node("n3", tainted)], 0, None, True),
    ("Three pods in the `node-fit` Namespace, bound to same ReplicaSet, all with a nodeSelector. Only node available "
     "has an incorrect node label, and nodeFit set to true. 0 should be evicted.",
     [rs_pod(name, "node-fit", node_selector(datacenter="west")) for name in ("p15", "NOT1", "NOT2")],
     [node("n1"), node("n4", east)], 0, None, True),
    ("Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available is not schedulable, and "
     "nodeFit set to true. 0 should be evicted.", dev_pods(), [node("n1"), node("n5", unschedulable)], 0, None, True),
    ("Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available does not have enough CPU, "
     "and nodeFit set to true. 0 should be evicted.",
     dev_pods() + [build_pod("CPU-eater", 150, 150, "n6", namespace="test")],
     [node("n1"), build_node("n6", 200, 200, 10)], 0, None, True),
    ("Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available has enough CPU, and "
     "nodeFit set to true. 1 should be evicted.",
     dev_pods() + [build_pod("CPU-saver", 100, 150, "n6", namespace="test")],
     [node("n1"), build_node("n6", 200, 200, 10)], 1, None, True),
]


@pytest.mark.parametrize("pods, nodes, expected, exclude_kinds, node_fit",
                         [pytest.param(*case[1:], id=case[0]) for case in FIND_DUPLICATE_CASES])
def test_find_duplicate_pods(pods, nodes, expected, exclude_kinds, node_fit):
    args = {"excludeOwnerKinds": exclude_kinds} if exclude_kinds is not None else {}
    plan = run(nodes, pods, args, node_fit)
    assert plan["errors"] == []
    assert plan["summary"]["total"] == expected


# --- TestRemoveDuplicatesUniformly ---

def owners(*names: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": n} for n in names]
    return apply


RS1 = owners("replicaset-1")


def spread(prefix: str, layout: dict[str, int], apply: Apply = RS1, first: int = 1) -> list[dict]:
    """Pods <prefix><n> numbered from <first>, <count> on each node of layout in order."""
    pods = []
    for node_name, count in layout.items():
        for _index in range(count):
            pods.append(pod_on(f"{prefix}{first + len(pods)}", node_name, apply))
    return pods


def alternating(layout: dict[str, int], shapes: list[Callable[[dict], None]]) -> list[dict]:
    """p1..pN over layout, the shape cycling through shapes (upstream alternates k1/k2 variants)."""
    pods = []
    for node_name, count in layout.items():
        for _index in range(count):
            pods.append(pod_on(f"p{len(pods) + 1}", node_name, shapes[len(pods) % len(shapes)]))
    return pods


def toleration(key: str, value: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        RS1(pod)
        pod["spec"]["tolerations"] = [{"key": key, "value": value, "operator": "Equal", "effect": "NoSchedule"}]
    return apply


def not_master(key: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        RS1(pod)
        expressions = [{"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"},
                       {"key": key, "operator": "DoesNotExist"}]
        term = {"matchExpressions": expressions}
        pod["spec"]["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    return apply


def worker_selector(value: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        RS1(pod)
        pod["spec"].setdefault("nodeSelector", {})["node-role.kubernetes.io/worker"] = value
    return apply


def master_taint(node_obj: dict) -> None:
    node_obj["spec"]["taints"] = [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]


def master_label(node_obj: dict) -> None:
    node_obj["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = ""


def worker_label(node_obj: dict) -> None:
    node_obj["metadata"]["labels"]["node-role.kubernetes.io/worker"] = "k2"  # upstream sets k1, then k2


def cluster(worker: Apply = None, master: Apply = None) -> list[dict]:
    return ([node(f"worker{i}", worker) for i in (1, 2, 3)] + [node(f"master{i}", master) for i in (1, 2, 3)])


FIVE_THREE_ONE = {"n1": 5, "n2": 3, "n3": 1}
WORKERS_531 = {"worker1": 5, "worker2": 3, "worker3": 1}
THREE_NODES = [node("n1"), node("n2"), node("n3")]

UNIFORM_CASES = [
    ("Evict pods uniformly", spread("p", FIVE_THREE_ONE), 2, THREE_NODES),
    ("Evict pods uniformly with one node left out", spread("p", FIVE_THREE_ONE), 1, [node("n1"), node("n2")]),
    # Upstream expects 4: each of p14/p15 is listed under both owners and its second eviction also counts against
    # upstream's fake clientset. In a dry run the sandbox client deletes the pod, so the second attempt answers
    # NotFound and is not counted (spec §3): 2 pods are evicted.
    ("Evict pods uniformly with two replica sets",
     spread("p", FIVE_THREE_ONE, owners("replicaset-1", "replicaset-2"), first=11), 2, THREE_NODES),
    ("Evict pods uniformly with two owner references",
     spread("p", FIVE_THREE_ONE, first=11) + spread("p", {"n1": 1, "n2": 3, "n3": 5}, owners("replicaset-2"), 21),
     4, THREE_NODES),
    ("Evict pods with number of pods less than nodes", spread("p", {"n1": 2}), 1, THREE_NODES),
    ("Evict pods with number of pods less than nodes, but ignore different pods with the same ownerref",
     [pod_with_image("p1", "foo"), pod_with_image("p2", "bar"), pod_with_image("p3", "baz"),
      pod_with_image("p4", "foo")], 1, THREE_NODES),
    ("Evict pods with a single pod with three nodes", spread("p", {"n1": 1}), 0, THREE_NODES),
    ("Evict pods uniformly respecting taints",
     alternating(WORKERS_531, [toleration("k1", "v1"), toleration("k2", "v2")]), 2, cluster(master=master_taint)),
    ("Evict pods uniformly respecting RequiredDuringSchedulingIgnoredDuringExecution node affinity",
     alternating(WORKERS_531, [not_master("k1"), not_master("k2")]), 2, cluster(master=master_label)),
    ("Evict pods uniformly respecting node selector",
     alternating(WORKERS_531, [worker_selector("k1"), worker_selector("k2")]), 2, cluster(worker=worker_label)),
    ("Evict pods uniformly respecting node selector with zero target nodes",
     alternating(WORKERS_531, [worker_selector("k1"), worker_selector("k2")]), 0, cluster()),
]


@pytest.mark.parametrize("pods, expected, nodes", [pytest.param(*case[1:], id=case[0]) for case in UNIFORM_CASES])
def test_remove_duplicates_uniformly(pods, expected, nodes):
    plan = run(nodes, pods)
    assert plan["errors"] == []
    assert plan["summary"]["total"] == expected


def test_uniform_eviction_keeps_the_original_and_upper_avg_minus_one():
    # (5,3,1) over 3 nodes: upperAvg 3, so n1 keeps p1 (the original) and p2, p3; listing order decides
    plan = run(THREE_NODES, spread("p", FIVE_THREE_ONE))
    assert evicted_names(plan) == ["p4", "p5"]
    assert plan["evictions"][0]["reason"] == "duplicate of ReplicaSet default/replicaset-1: 5 on n1, fair share 3 " \
                                             "over 3 nodes"


def test_pod_with_two_owners_is_evicted_once():
    plan = run(THREE_NODES, spread("p", FIVE_THREE_ONE, owners("replicaset-1", "replicaset-2"), first=11))
    assert evicted_names(plan) == ["p14", "p15"]


def test_node_limit_moves_to_the_next_node_of_the_owner():
    # (5,0,5) over 3 nodes: upperAvg 4; each node would give 1, the per-node limit does not stop the other node
    pods = spread("p", {"n1": 5, "n3": 5})
    plan = run(THREE_NODES, pods, maxNoOfPodsToEvictPerNode=1)
    assert sorted(e["node"] for e in plan["evictions"]) == ["n1", "n3"]


def test_total_limit_ends_the_plugin():
    plan = run(THREE_NODES, spread("p", {"n1": 6, "n3": 3}), maxNoOfPodsToEvictTotal=1)
    assert plan["summary"]["total"] == 1
    assert plan["summary"]["limits"]["hit"]["total"] is True


def test_unschedulable_nodes_count_as_targets():
    # getTargetNodes checks taints and selectors only: n2 (unschedulable) still lowers upperAvg to 2
    plan = run([node("n1"), node("n2", unschedulable)], dev_pods())
    assert plan["summary"]["total"] == 1


def test_namespaces_include():
    plan = run(TWO_NODES, dev_pods() + ns_test_pods(), {"namespaces": {"include": ["test"]}})
    assert [e["namespace"] for e in plan["evictions"]] == ["test"]


# --- defaults_test.go and validation_test.go ---

def _loaded_args(args: dict) -> dict:
    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                "profiles": [{"name": "p", "pluginConfig": [{"name": PLUGIN, "args": args}],
                              "plugins": {"balance": {"enabled": [PLUGIN]}}}]}
    return load_policy(document, {}).profiles[0].args[PLUGIN]


@pytest.mark.parametrize("args", [
    pytest.param({}, id="RemoveDuplicatesArgs empty"),
    pytest.param({"namespaces": {}, "excludeOwnerKinds": ["ReplicaSet"]}, id="RemoveDuplicatesArgs with value"),
])
def test_set_defaults_changes_nothing(args):
    assert _loaded_args(dict(args)) == args


def test_validate_valid_namespace_args():
    _loaded_args({"excludeOwnerKinds": ["Job"], "namespaces": {"include": ["default"]}})


def test_validate_invalid_namespaces_args():
    with pytest.raises(PolicyError, match="only one of include and exclude"):
        _loaded_args({"excludeOwnerKinds": ["Job"], "namespaces": {"include": ["default"], "exclude": ["kube-system"]}})
