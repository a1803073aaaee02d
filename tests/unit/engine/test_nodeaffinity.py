"""RemovePodsViolatingNodeAffinity, ported from upstream removepodsviolatingnodeaffinity/*_test.go (node_affinity,
validation, defaults) and spec §6.5.

Upstream calls Deschedule on the test's node list directly; compute_plan skips a cycle with fewer than two nodes, so
single-node cases get builders.filler_node() (unschedulable, no pods, no labels: it changes no outcome here).
"""

from __future__ import annotations

from typing import Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import (
    build_node,
    build_pod,
    evicted_names,
    filler_node,
    policy,
    set_deletion,
    set_normal_owner,
    set_rs_owner,
    set_unschedulable,
)

NOW = "2026-06-30T12:00:00Z"
NAME = "RemovePodsViolatingNodeAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
INVALID = "requiredDuringSchedulingRequiredDuringExecution"
KEY, VALUE = "kubernetes.io/desiredNode", "yes"
WITH, WITHOUT, UNSCHEDULABLE = "nodeWithLabels", "nodeWithoutLabels", "unschedulableNodeWithLabels"


def desired(node: dict) -> None:
    node["metadata"]["labels"][KEY] = VALUE


def node(name: str) -> dict:
    if name == WITH:
        return build_node(name, 2000, 3000, 10, desired)
    if name == UNSCHEDULABLE:
        return build_node(name, 2000, 3000, 10, lambda n: (desired(n), set_unschedulable(n)))
    return build_node(name, 2000, 3000, 10)


def affinity(kind: str):
    """The podWithNodeAffinity of upstream's addPodsToNode for one affinity type."""
    requirement = {"matchExpressions": [{"key": KEY, "operator": "In", "values": [VALUE]}]}

    def apply(pod: dict) -> None:
        node_affinity: dict = {}
        if kind == REQUIRED:
            node_affinity[REQUIRED] = {"nodeSelectorTerms": [requirement]}
        elif kind == PREFERRED:
            node_affinity[PREFERRED] = [{"weight": 10, "preference": requirement}]
        pod["spec"]["affinity"] = {"nodeAffinity": node_affinity}
    return apply


def pods_on(node_name: str, kind: str, terminating: bool = False) -> list:
    def base(pod: dict) -> None:
        set_normal_owner(pod)
        if terminating:
            set_deletion(pod)

    return [build_pod("podWithNodeAffinity", 100, 0, node_name, lambda p: (affinity(kind)(p), base(p))),
            build_pod("pod1", 100, 0, node_name, base), build_pod("pod2", 100, 0, node_name, base)]


def run(nodes: list, pods: list, types: list, evictor: Optional[dict] = None, **limits) -> dict:
    if len(nodes) < 2:
        nodes = [*nodes, filler_node()]
    document = policy((NAME, "deschedule", {"nodeAffinityType": types}), evictor_args=evictor, **limits)
    return compute_plan([*nodes, *pods], document, NOW)


# (id, pods' node, affinity type, terminating, node names, expected, limits, nodeFit)
CASES = [
    ("invalid affinity type", WITHOUT, INVALID, False, [WITHOUT, WITH], 0, {}, False),
    ("correctly scheduled [required]", WITH, REQUIRED, False, [WITH], 0, {}, False),
    ("correctly scheduled [preferred]", WITH, PREFERRED, False, [WITH], 0, {}, False),
    ("other schedulable node [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 1, {}, False),
    ("other node with better fit [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, WITH], 1, {}, False),
    ("maxPodsToEvictPerNode 1 [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 1,
     {"maxNoOfPodsToEvictPerNode": 1}, False),
    ("maxPodsToEvictPerNode 1 [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, WITH], 1,
     {"maxNoOfPodsToEvictPerNode": 1}, False),
    ("maxPodsToEvictPerNode 0 [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNode": 0}, False),
    ("maxPodsToEvictPerNode 0 [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNode": 0}, False),
    ("terminating pod, per-node limit 1 [required]", WITHOUT, REQUIRED, True, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, False),
    ("terminating pod, per-node limit 1 [preferred]", WITHOUT, PREFERRED, True, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, False),
    ("maxNoOfPodsToEvictPerNamespace 1 [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 1,
     {"maxNoOfPodsToEvictPerNamespace": 1}, False),
    ("maxNoOfPodsToEvictTotal 0 [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNamespace": 1, "maxNoOfPodsToEvictTotal": 0}, False),
    ("maxNoOfPodsToEvictPerNamespace 1 [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, WITH], 1,
     {"maxNoOfPodsToEvictPerNamespace": 1}, False),
    ("maxNoOfPodsToEvictPerNamespace 0 [required]", WITHOUT, REQUIRED, False, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNamespace": 0}, False),
    ("maxNoOfPodsToEvictPerNamespace 0 [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNamespace": 0}, False),
    ("terminating pod, per-namespace limit 1 [required]", WITHOUT, REQUIRED, True, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNamespace": 1}, False),
    ("terminating pod, per-namespace limit 1 [preferred]", WITHOUT, PREFERRED, True, [WITHOUT, WITH], 0,
     {"maxNoOfPodsToEvictPerNamespace": 1}, False),
    ("no node where the pod fits [required]", WITHOUT, REQUIRED, False, [WITHOUT, UNSCHEDULABLE], 0, {}, True),
    ("no node where the pod fits [preferred]", WITHOUT, PREFERRED, False, [WITHOUT, UNSCHEDULABLE], 0, {}, True),
    # the pods' node is not in the list: nothing on the listed nodes to look at
    ("pods' node not listed [required]", WITHOUT, REQUIRED, False, [WITH, UNSCHEDULABLE], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, True),
    ("pods' node not listed [preferred]", WITHOUT, PREFERRED, False, [WITH, UNSCHEDULABLE], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, True),
]


@pytest.mark.parametrize("pod_node,kind,terminating,node_names,expected,limits,node_fit",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_remove_pods_violating_node_affinity(pod_node, kind, terminating, node_names, expected, limits, node_fit):
    types = [kind] if kind != INVALID else [INVALID]
    plan = run([node(n) for n in node_names], pods_on(pod_node, kind, terminating), types,
               {"nodeFit": True} if node_fit else None, **limits)
    assert len(plan["evictions"]) == expected
    if expected:
        assert evicted_names(plan) == ["podWithNodeAffinity"]


def test_invalid_affinity_type_is_reported_and_skipped():
    """Upstream validation lets unknown types through; the plugin logs them and runs the known ones."""
    plan = run([node(WITHOUT), node(WITH)], pods_on(WITHOUT, REQUIRED), [INVALID, REQUIRED])
    assert evicted_names(plan) == ["podWithNodeAffinity"]
    assert [e["plugin"] for e in plan["errors"]] == [NAME] and INVALID in plan["errors"][0]["message"]


# --- spec §6.5 -------------------------------------------------------------------------------------------------------

def test_required_checks_the_node_selector_too():
    """!PodMatchNodeSelector covers spec.nodeSelector as well as the required terms."""
    pod = build_pod("p", 100, 0, WITH, lambda p: (set_rs_owner(p), affinity(REQUIRED)(p),
                                                  p["spec"].update(nodeSelector={"zone": "a"})))
    zoned = build_node("zoned", 2000, 3000, 10, lambda n: (desired(n), n["metadata"]["labels"].update(zone="a")))
    assert evicted_names(run([node(WITH), zoned], [pod], [REQUIRED])) == ["p"]


def test_required_needs_the_affinity_not_just_a_selector():
    pod = build_pod("p", 100, 0, WITHOUT, lambda p: (set_rs_owner(p), p["spec"].update(nodeSelector={KEY: VALUE})))
    assert run([node(WITHOUT), node(WITH)], [pod], [REQUIRED])["evictions"] == []


def test_empty_term_list_violates_everywhere_but_must_fit_somewhere():
    """An empty nodeSelectorTerms list matches no node: PodFitsAnyNode fails, so nothing is evicted."""
    pod = build_pod("p", 100, 0, WITHOUT, lambda p: (set_rs_owner(p), p["spec"].update(affinity={
        "nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}})))
    assert run([node(WITHOUT), node(WITH)], [pod], [REQUIRED])["evictions"] == []


def test_fits_any_node_includes_the_current_node_without_resources():
    """Without nodeFit, PodFitsAnyNode holds even when the better node is full (spec §6.5 ⚠)."""
    full = build_node(WITH, 50, 3000, 10, desired)
    pods = pods_on(WITHOUT, PREFERRED)
    assert evicted_names(run([node(WITHOUT), full], pods, [PREFERRED])) == ["podWithNodeAffinity"]
    # with nodeFit, PreEvictionFilter needs another node with room: none
    assert run([node(WITHOUT), full], pods, [PREFERRED], {"nodeFit": True})["evictions"] == []


def test_preferred_best_node_need_not_fit():
    """The best-weight node may be unschedulable; it still makes the current node look worse."""
    pods = pods_on(WITHOUT, PREFERRED)
    assert evicted_names(run([node(WITHOUT), node(UNSCHEDULABLE)], pods, [PREFERRED])) == ["podWithNodeAffinity"]


def test_preferred_weights_sum_matching_terms():
    def prefer(pod: dict) -> None:
        set_rs_owner(pod)
        pod["spec"]["affinity"] = {"nodeAffinity": {PREFERRED: [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}},
            {"weight": 3, "preference": {"matchExpressions": [{"key": "b", "operator": "Exists"}]}},
            {"weight": 7, "preference": {"matchExpressions": [{"key": "c", "operator": "Exists"}]}}]}}

    def labelled(name: str, *keys: str) -> dict:
        return build_node(name, 2000, 3000, 10, lambda n: n["metadata"]["labels"].update({k: "x" for k in keys}))

    here = labelled("here", "a", "b")  # 8
    assert run([here, labelled("c-only", "c")], [build_pod("p", 1, 0, "here", prefer)], [PREFERRED])["evictions"] == []
    assert evicted_names(run([here, labelled("a-c", "a", "c")], [build_pod("p", 1, 0, "here", prefer)],
                             [PREFERRED])) == ["p"]


def test_types_run_in_list_order_and_a_pod_is_evicted_once():
    pod = build_pod("p", 100, 0, WITHOUT, lambda p: (set_rs_owner(p), affinity(REQUIRED)(p), p["spec"]["affinity"][
        "nodeAffinity"].update({PREFERRED: [{"weight": 1, "preference": {"matchExpressions": [
            {"key": KEY, "operator": "In", "values": [VALUE]}]}}]})))
    plan = run([node(WITHOUT), node(WITH)], [pod], [PREFERRED, REQUIRED])
    assert evicted_names(plan) == ["p"] and plan["evictions"][0]["reason"].startswith("preferred")


def test_node_limit_moves_to_the_next_node():
    pods = [build_pod(f"{n}-{i}", 1, 0, n, lambda p: (set_rs_owner(p), affinity(REQUIRED)(p)))
            for n in ("a", "b") for i in range(3)]
    nodes = [build_node(n, 2000, 3000, 10) for n in ("a", "b")] + [node(WITH)]
    plan = run(nodes, pods, [REQUIRED], maxNoOfPodsToEvictPerNode=2)
    assert evicted_names(plan) == ["a-0", "a-1", "b-0", "b-1"]


def test_namespaces_and_label_selector():
    def violating(name: str, namespace: str, labels: dict) -> dict:
        return build_pod(name, 1, 0, WITHOUT, lambda p: (set_rs_owner(p), affinity(REQUIRED)(p),
                                                         p["metadata"].update(labels=labels)), namespace=namespace)

    pods = [violating("a", "keep", {"app": "x"}), violating("b", "other", {"app": "x"}),
            violating("c", "other", {"app": "y"})]
    document = policy((NAME, "deschedule", {"nodeAffinityType": [REQUIRED], "namespaces": {"exclude": ["keep"]},
                                            "labelSelector": {"matchLabels": {"app": "x"}}}))
    assert evicted_names(compute_plan([node(WITHOUT), node(WITH), *pods], document, NOW)) == ["b"]


# --- TestValidateRemovePodsViolatingNodeAffinityArgs / defaults ---------------------------------------------------

ARGS = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("args,field", [
    ({"nodeAffinityType": None}, ".nodeAffinityType"),
    ({}, ".nodeAffinityType"),
    ({"nodeAffinityType": []}, ".nodeAffinityType"),
    ({"nodeAffinityType": [REQUIRED], "namespaces": {"include": ["default"], "exclude": ["kube-system"]}},
     ".namespaces"),
    # upstream aggregates both errors, the first is nodeAffinityType
    ({"nodeAffinityType": [], "namespaces": {"include": ["default"], "exclude": ["kube-system"]}},
     ".nodeAffinityType"),
    ({"nodeAffinityType": [REQUIRED], "labelSelector": {"matchExpressions": [{"key": "", "operator": "In"}]}},
     ".labelSelector"),
    ({"nodeAffinityType": [REQUIRED], "nodeFit": True}, ".nodeFit"),
])
def test_validation_errors(args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy((NAME, "deschedule", args)), {})
    assert info.value.field == ARGS + field


@pytest.mark.parametrize("args", [
    {"nodeAffinityType": [REQUIRED]},
    {"nodeAffinityType": [INVALID]},
    {"nodeAffinityType": [PREFERRED], "namespaces": {}, "labelSelector": {}},
])
def test_valid_args_and_no_defaults(args):
    loaded = load_policy(policy((NAME, "deschedule", dict(args))), {})
    assert loaded.profiles[0].args[NAME] == args
