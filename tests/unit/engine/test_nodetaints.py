"""RemovePodsViolatingNodeTaints, ported from upstream removepodsviolatingnodetaints/*_test.go (node_taint,
validation, defaults) and spec §6.6. Toleration matching itself (TestToleratesTaint) is in test_predicates.py.

Single-node upstream cases get builders.filler_node() so the cycle runs (see its docstring).
"""

from __future__ import annotations

from typing import Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.nodetaints import relevant_taints
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import (
    build_node,
    build_pod,
    evicted_names,
    filler_node,
    policy,
    set_ds_owner,
    set_host_path_empty_dir,
    set_mirror_annotations,
    set_normal_owner,
    set_rs_owner,
    set_unschedulable,
)

NOW = "2026-06-30T12:00:00Z"
NAME = "RemovePodsViolatingNodeTaints"
CRITICAL = 2_000_000_000


def taint(key: str, value: str, effect: str = "NoSchedule") -> dict:
    return {"key": key, "value": value, "effect": effect}


TEST_TAINT = taint("testTaint1", "test1")
TESTING_TAINT = taint("testingTaint1", "testing1")


def tainted(name: str, *taints: dict, cpu: int = 2000, memory: int = 3000, pods: int = 10, apply=None) -> dict:
    def setup(node: dict) -> None:
        node["spec"]["taints"] = [dict(t) for t in taints]
        if apply:
            apply(node)
    return build_node(name, cpu, memory, pods, setup)


def toleration(key: str, value: str, effect: str = "NoSchedule"):
    """addTolerationToPod: replaces the tolerations, operator left empty (Equal)."""
    def apply(pod: dict) -> None:
        pod["spec"]["tolerations"] = [{"key": key, "value": value, "effect": effect}]
    return apply


TOLERATE_TEST = toleration("testTaint1", "test1")
TOLERATE_X = toleration("testTaintX1", "testX1")


def owned(name: str, node: str, *applies) -> dict:
    """buildTestPodWithNormalOwnerRef: 100m cpu, owner kind Pod."""
    def apply(pod: dict) -> None:
        set_normal_owner(pod)
        for item in applies:
            item(pod)
    return build_pod(name, 100, 0, node, apply)


def critical(pod: dict) -> None:
    pod["metadata"]["namespace"] = "kube-system"
    pod["spec"]["priority"] = CRITICAL


def run(nodes: list, pods: list, args: Optional[dict] = None, evictor: Optional[dict] = None, **limits) -> dict:
    if len(nodes) < 2:
        nodes = [*nodes, filler_node()]
    return compute_plan([*nodes, *pods], policy((NAME, "deschedule", args or {}), evictor_args=evictor, **limits),
                        NOW)


def protected_mix(node: str) -> list:
    return [owned("p7", node, critical), build_pod("p8", 100, 0, node, set_ds_owner),
            owned("p9", node, set_host_path_empty_dir), owned("p10", node, set_mirror_annotations)]


# (id, nodes, pods, plugin args, evictor args, limits, expected count, expected names or None)
CASES = [
    ("pods not tolerating the taint are evicted", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p2", "n1"), owned("p3", "n1", TOLERATE_TEST)], {}, {}, {}, 1, ["p2"]),
    ("pods with tolerations that miss the taint are evicted", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p3", "n1", TOLERATE_TEST), owned("p4", "n1", TOLERATE_X)],
     {}, {}, {}, 1, ["p4"]),
    ("maxNoOfPodsToEvictTotal", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p5", "n1"), owned("p6", "n1")], {}, {},
     {"maxNoOfPodsToEvictPerNode": 2, "maxNoOfPodsToEvictTotal": 1}, 1, None),
    ("maxPodsToEvictPerNode", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p5", "n1"), owned("p6", "n1")], {}, {},
     {"maxNoOfPodsToEvictPerNode": 1}, 1, None),
    ("maxNoOfPodsToEvictPerNamespace", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p5", "n1"), owned("p6", "n1")], {}, {},
     {"maxNoOfPodsToEvictPerNamespace": 1}, 1, None),
    ("critical pods are not evicted", [tainted("n2", TESTING_TAINT)], protected_mix("n2"), {}, {}, {}, 0, []),
    ("critical pods except storage pods", [tainted("n2", TESTING_TAINT)], protected_mix("n2"), {},
     {"evictLocalStoragePods": True}, {}, 1, ["p9"]),
    ("only non critical pods", [tainted("n2", TESTING_TAINT)],
     [*(p for p in protected_mix("n2") if p["metadata"]["name"] != "p9"), owned("p11", "n2")], {}, {}, {}, 1,
     ["p11"]),
    ("critical pods too with evictSystemCriticalPods", [tainted("n1", TEST_TAINT), tainted("n2", TESTING_TAINT)],
     [owned("p2", "n1"), *(p for p in protected_mix("n2") if p["metadata"]["name"] != "p8")], {},
     {"evictSystemCriticalPods": True}, {}, 2, ["p2", "p7"]),
    ("nodeFit: the other node is tainted too", [tainted("n1", TEST_TAINT), tainted("n2", TESTING_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p2", "n1"), owned("p3", "n1", TOLERATE_TEST)], {},
     {"nodeFit": True}, {}, 0, []),
    ("nodeFit: the other node does not match the selector",
     [tainted("n1", TEST_TAINT), tainted("n3", apply=lambda n: n["metadata"].update(labels={"datacenter": "east"}))],
     [owned("p1", "n1", TOLERATE_TEST), owned("p3", "n1", TOLERATE_TEST),
      owned("p11", "n2", lambda p: p["spec"].update(nodeSelector={"datacenter": "west"}))], {},
     {"nodeFit": True}, {}, 0, []),
    ("nodeFit: the other node is unschedulable", [tainted("n1", TEST_TAINT), tainted("n4", apply=set_unschedulable)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p2", "n1"), owned("p3", "n1", TOLERATE_TEST)], {},
     {"nodeFit": True}, {}, 0, []),
    ("PreferNoSchedule taints ignored by default", [tainted("n5", taint("testTaint1", "test1", "PreferNoSchedule"))],
     [owned("p13", "n5", toleration("testTaint0", "test0", "PreferNoSchedule"))], {}, {}, {}, 0, []),
    ("PreferNoSchedule taints with includePreferNoSchedule",
     [tainted("n5", taint("testTaint1", "test1", "PreferNoSchedule"))],
     [owned("p13", "n5", toleration("testTaint0", "test0", "PreferNoSchedule"))], {"includePreferNoSchedule": True},
     {}, {}, 1, ["p13"]),
    ("excluded taint by key", [tainted("n1", TEST_TAINT)], [owned("p2", "n1")],
     {"excludedTaints": ["excludedTaint1", "testTaint1"]}, {}, {}, 0, []),
    ("excluded taint by key and value", [tainted("n1", TEST_TAINT)], [owned("p2", "n1")],
     {"excludedTaints": ["testTaint1=test1"]}, {}, {}, 0, []),
    ("excluded key with another value", [tainted("n1", TEST_TAINT)], [owned("p2", "n1")],
     {"excludedTaints": ["testTaint1=test2"]}, {}, {}, 1, ["p2"]),
    ("nodeFit: the only other node is too small",
     [tainted("n1", TEST_TAINT), tainted("n6", taint("testTaint1", "test1", "PreferNoSchedule"), cpu=1, memory=1,
                                         pods=1)],
     [owned("p2", "n1"), *(p for p in protected_mix("n2") if p["metadata"]["name"] != "p8")], {},
     {"evictSystemCriticalPods": True, "nodeFit": True}, {}, 0, []),
    ("included taint tolerated, the other taint not included", [tainted("n7", TEST_TAINT, TESTING_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST)], {"includedTaints": ["testTaint1=test1"]}, {}, {}, 0, []),
    ("taint not included", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p2", "n1"), owned("p4", "n1", TOLERATE_X)],
     {"includedTaints": ["testTaint2=test2"]}, {}, {}, 0, []),
    ("included taint not tolerated", [tainted("n1", TEST_TAINT)],
     [owned("p1", "n1", TOLERATE_TEST), owned("p2", "n1"), owned("p3", "n1", TOLERATE_TEST)],
     {"includedTaints": ["testTaint1=test1"]}, {}, {}, 1, ["p2"]),
    ("includedTaints unset includes every taint", [tainted("n7", TEST_TAINT, TESTING_TAINT)],
     [owned("p14", "n7", TOLERATE_TEST),
      owned("p15", "n7", lambda p: p["spec"].update(tolerations=[
          {"key": "testTaint1", "value": "test1", "effect": "NoSchedule"},
          {"key": "testingTaint1", "value": "testing1", "effect": "NoSchedule"}]))], {}, {}, {}, 1, ["p14"]),
]


@pytest.mark.parametrize("nodes,pods,args,evictor,limits,count,names", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_delete_pods_violating_node_taints(nodes, pods, args, evictor, limits, count, names):
    plan = run(nodes, pods, args, evictor, **limits)
    assert len(plan["evictions"]) == count
    if names is not None:
        assert evicted_names(plan) == names


# --- spec §6.6 ⚠ ------------------------------------------------------------------------------------------------------

def test_empty_included_taints_includes_nothing():
    pods = [owned("p2", "n1")]
    assert run([tainted("n1", TEST_TAINT)], pods, {"includedTaints": []})["evictions"] == []
    assert evicted_names(run([tainted("n1", TEST_TAINT)], pods, {"includedTaints": None})) == ["p2"]


def test_key_value_entries_match_only_taints_with_a_value():
    keyed = taint("dedicated", "")
    assert relevant_taints([keyed], {"includedTaints": ["dedicated="]}) == []
    assert relevant_taints([keyed], {"includedTaints": ["dedicated"]}) == [keyed]
    assert relevant_taints([keyed], {"excludedTaints": ["dedicated="]}) == [keyed]
    valued = taint("dedicated", "gpu")
    assert relevant_taints([valued], {"includedTaints": ["dedicated"]}) == [valued]
    assert relevant_taints([valued], {"includedTaints": ["dedicated=gpu"]}) == [valued]
    assert relevant_taints([valued], {"excludedTaints": ["dedicated=cpu"]}) == [valued]


def test_no_execute_is_never_considered():
    pods = [build_pod("p", 100, 0, "n1", set_rs_owner)]
    assert run([tainted("n1", taint("evict", "now", "NoExecute"))], pods)["evictions"] == []
    assert run([tainted("n1", taint("evict", "now", "NoExecute"))], pods,
               {"includePreferNoSchedule": True, "includedTaints": ["evict"]})["evictions"] == []


def test_wildcard_and_exists_tolerations():
    pods = [
        build_pod("any", 1, 0, "n1", lambda p: (set_rs_owner(p), p["spec"].update(
            tolerations=[{"operator": "Exists"}]))),
        build_pod("key", 1, 0, "n1", lambda p: (set_rs_owner(p), p["spec"].update(
            tolerations=[{"key": "testTaint1", "operator": "Exists", "effect": "NoSchedule"}]))),
        build_pod("wrong-effect", 1, 0, "n1", lambda p: (set_rs_owner(p), p["spec"].update(
            tolerations=[{"key": "testTaint1", "operator": "Exists", "effect": "NoExecute"}]))),
    ]
    assert evicted_names(run([tainted("n1", TEST_TAINT)], pods)) == ["wrong-effect"]


def test_node_limit_moves_to_the_next_node_and_total_limit_stops():
    pods = [build_pod(f"{n}-{i}", 1, 0, n, set_rs_owner) for n in ("a", "b") for i in range(3)]
    nodes = [tainted(n, TEST_TAINT) for n in ("a", "b")]
    assert evicted_names(run(nodes, pods, maxNoOfPodsToEvictPerNode=1)) == ["a-0", "b-0"]
    assert evicted_names(run(nodes, pods, maxNoOfPodsToEvictTotal=2)) == ["a-0", "a-1"]


def test_namespace_limit_skips_only_that_pod():
    pods = [build_pod("a", 1, 0, "n1", set_rs_owner), build_pod("b", 1, 0, "n1", set_rs_owner),
            build_pod("c", 1, 0, "n1", set_rs_owner, namespace="other")]
    plan = run([tainted("n1", TEST_TAINT)], pods, maxNoOfPodsToEvictPerNamespace=1)
    assert sorted(evicted_names(plan)) == ["a", "c"]


# --- TestValidateRemovePodsViolatingNodeTaintsArgs / defaults -----------------------------------------------------

ARGS = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("args,field", [
    ({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}}, ".namespaces"),
    ({"labelSelector": {"matchExpressions": [{"operator": "In"}]}}, ".labelSelector"),
    ({"excludedTaints": ["do-not-evict"], "includedTaints": ["testTaint1=test1"]}, ""),
    ({"includedTaints": "testTaint1"}, ".includedTaints"),
])
def test_validation_errors(args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy((NAME, "deschedule", args)), {})
    assert info.value.field == ARGS + field


@pytest.mark.parametrize("args", [
    {},
    {"namespaces": {"include": ["default"]}},
    {"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}},
    {"excludedTaints": ["testTaint1=test1"]},
    {"namespaces": {}, "labelSelector": {}, "includePreferNoSchedule": False, "excludedTaints": ["ExcludedTaints"],
     "includedTaints": []},
])
def test_valid_args_and_no_defaults(args):
    assert load_policy(policy((NAME, "deschedule", dict(args))), {}).profiles[0].args[NAME] == args
