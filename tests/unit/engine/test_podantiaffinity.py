"""RemovePodsViolatingInterPodAntiAffinity: upstream's plugin tests, run through compute_plan.

Ported from pkg/framework/plugins/removepodsviolatinginterpodantiaffinity/{pod_antiaffinity,defaults,validation}_test.go
at 7d2b28bf. Upstream calls Deschedule on a single node in most cases; compute_plan skips a cycle with fewer than two
nodes, so those cases get builders.filler_node() (unschedulable, unlabelled, empty), which no check can react to.
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
    filler_node,
    policy,
    set_deletion,
    set_normal_owner,
    set_pod_anti_affinity,
    set_priority,
)

NOW = "2026-11-22T12:00:00Z"
PLUGIN = "RemovePodsViolatingInterPodAntiAffinity"
SYSTEM_CRITICAL = 2_000_000_000
Apply = Optional[Callable[[dict], None]]


def node(name: str, apply: Apply = None) -> dict:
    return build_node(name, 2000, 3000, 10, apply)


def main_region(node_obj: dict) -> None:
    node_obj["metadata"]["labels"] = {"region": "main-region"}


def node1() -> dict:
    return node("n1", main_region)


def pod(name: str, node_name: str = "n1", apply: Apply = None) -> dict:
    return build_pod(name, 100, 0, node_name, apply)


def labels(**values: str) -> Callable[[dict], None]:
    def apply(pod_obj: dict) -> None:
        pod_obj["metadata"]["labels"] = dict(values)
    return apply


def shaped(*steps: Callable[[dict], None]) -> Callable[[dict], None]:
    def apply(pod_obj: dict) -> None:
        for step in steps:
            step(pod_obj)
    return apply


def anti(key: str, value: str) -> Callable[[dict], None]:
    return lambda pod_obj: set_pod_anti_affinity(pod_obj, key, value)


def priority(value: int) -> Callable[[dict], None]:
    return lambda pod_obj: set_priority(pod_obj, value)


def with_anti_affinity(name: str) -> dict:
    """buildTestPodWithAntiAffinityForNode1: owned, anti-affinity to foo=bar over region."""
    return pod(name, apply=shaped(set_normal_owner, anti("foo", "bar")))


def p2() -> dict:
    return pod("p2", apply=shaped(set_normal_owner, labels(foo="bar")))


def non_evictable() -> dict:
    """A bare system-critical pod labelled foo=bar."""
    return pod("non-evict", apply=shaped(priority(SYSTEM_CRITICAL), labels(foo="bar")))


def four_pods() -> list[dict]:
    return [with_anti_affinity("p1"), p2(), with_anti_affinity("p3"), with_anti_affinity("p4")]


def west_selector(pod_obj: dict) -> None:
    pod_obj["spec"]["nodeSelector"] = {"datacenter": "west"}


def east(node_obj: dict) -> None:
    node_obj["metadata"]["labels"] = {"datacenter": "east"}


def unschedulable(node_obj: dict) -> None:
    node_obj["spec"] = {"unschedulable": True}


def run(nodes: list[dict], pods: list[dict], node_fit: bool = False, args: Optional[dict] = None,
        **limits: int) -> dict:
    document = policy((PLUGIN, "deschedule", args or {}), evictor_args={"nodeFit": node_fit}, **limits)
    return compute_plan(nodes + pods, document, NOW)


ALONE = [node1(), filler_node()]

CASES = [
    ("Maximum pods to evict - 0", four_pods(), ALONE, 3, {}, False),
    ("Maximum pods to evict - 3", four_pods(), ALONE, 3, {"maxNoOfPodsToEvictPerNode": 3}, False),
    ("Maximum pods to evict (maxPodsToEvictPerNamespace=3) - 3", four_pods(), ALONE, 3,
     {"maxNoOfPodsToEvictPerNamespace": 3}, False),
    ("Maximum pods to evict (maxNoOfPodsToEvictTotal)", four_pods(), ALONE, 1,
     {"maxNoOfPodsToEvictPerNamespace": 3, "maxNoOfPodsToEvictTotal": 1}, False),
    ("Evict only 1 pod after sorting",
     [pod("p5", apply=shaped(set_normal_owner, labels(foo="bar"), anti("foo1", "bar1"), priority(100))),
      pod("p6", apply=shaped(set_normal_owner, labels(foo="bar"), anti("foo1", "bar1"), priority(50))),
      pod("p7", apply=shaped(set_normal_owner, labels(foo1="bar1"), anti("foo", "bar"), priority(0)))],
     ALONE, 1, {}, False),
    ("Evicts pod that conflicts with critical pod (but does not evict critical pod)",
     [with_anti_affinity("p1"), non_evictable()], ALONE, 1, {"maxNoOfPodsToEvictPerNode": 1}, False),
    ("Won't evict pods because node selectors don't match available nodes",
     [pod("p8", apply=west_selector), non_evictable()], [node1(), node("n2", east)], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, True),
    ("Won't evict pods because only other node is not schedulable",
     [pod("p8", apply=west_selector), non_evictable()], [node1(), node("n3", unschedulable)], 0,
     {"maxNoOfPodsToEvictPerNode": 1}, True),
    ("No pod to evicted since all pod terminating",
     [pod(name, apply=shaped(set_normal_owner, anti("foo", "bar"), set_deletion)) for name in ("p9", "p10")],
     ALONE, 0, {}, False),
    ("Won't evict pods because only other node doesn't have enough resources", four_pods(),
     [node1(), build_node("n4", 2, 2, 1)], 0, {"maxNoOfPodsToEvictPerNode": 3}, True),
    ("Evict pod violating anti-affinity among different node (all pods have anti-affinity)",
     [with_anti_affinity("p1"), pod("p11", "n5", shaped(set_normal_owner, labels(foo="bar")))],
     [node1(), build_node("n5", 200, 3000, 10, main_region)], 1, {}, False),
]


@pytest.mark.parametrize("pods, nodes, expected, limits, node_fit",
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
def test_pod_anti_affinity(pods, nodes, expected, limits, node_fit):
    plan = run(nodes, pods, node_fit, **limits)
    assert plan["errors"] == []
    assert plan["summary"]["total"] == expected


def test_sorted_lowest_priority_first_and_partner_removed():
    # p7 (priority 0) goes first and is evicted; p5 and p6 then have no partner left
    plan = run(ALONE, CASES[4][1])
    assert evicted_names(plan) == ["p7"]


def test_owner_of_the_term_is_evicted_not_the_matched_pod():
    plan = run(ALONE, [with_anti_affinity("p1"), p2()])
    assert evicted_names(plan) == ["p1"]
    assert plan["evictions"][0]["reason"] == ("violates its required pod anti-affinity with default/p2 "
                                              "(topologyKey region)")


def test_topology_domain_needs_the_key_on_both_nodes():
    # p1 on n1 (region main-region) against p11 on n5 without a region label: no shared domain
    nodes = [node1(), build_node("n5", 200, 3000, 10)]
    plan = run(nodes, [with_anti_affinity("p1"), pod("p11", "n5", shaped(set_normal_owner, labels(foo="bar")))])
    assert plan["summary"]["total"] == 0


def test_same_node_matches_without_the_topology_key():
    nodes = [node("n1"), filler_node()]  # no region label at all: the same node is still the same domain
    plan = run(nodes, [with_anti_affinity("p1"), p2()])
    assert evicted_names(plan) == ["p1"]


def test_term_namespaces_default_to_the_pods_own():
    partner = pod("p2", apply=shaped(set_normal_owner, labels(foo="bar")))
    partner["metadata"]["namespace"] = "other"
    assert run(ALONE, [with_anti_affinity("p1"), partner])["summary"]["total"] == 0
    owner = with_anti_affinity("p1")
    owner["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "namespaces"] = ["other"]
    partner = pod("p2", apply=shaped(set_normal_owner, labels(foo="bar")))
    partner["metadata"]["namespace"] = "other"
    assert evicted_names(run(ALONE, [owner, partner])) == ["p1"]


def test_plugin_namespaces_also_hide_partners():
    # NS/LS apply to the partner list too: with only "default" included, a partner in "other" is invisible
    owner = with_anti_affinity("p1")
    owner["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "namespaces"] = ["other"]
    partner = pod("p2", apply=shaped(set_normal_owner, labels(foo="bar")))
    partner["metadata"]["namespace"] = "other"
    plan = run(ALONE, [owner, partner], args={"namespaces": {"include": ["default"]}})
    assert plan["summary"]["total"] == 0


def test_non_evictable_partner_still_counts():
    # no F on the partner list: a bare critical pod makes p1 violate
    plan = run(ALONE, [with_anti_affinity("p1"), non_evictable()])
    assert evicted_names(plan) == ["p1"]


def test_node_limit_moves_to_the_next_node():
    nodes = [node1(), node("n2", main_region)]
    pods = four_pods() + [pod("q1", "n2", shaped(set_normal_owner, anti("foo", "bar")))]
    plan = run(nodes, pods, maxNoOfPodsToEvictPerNode=1)
    assert evicted_names(plan) == ["p1", "q1"]


# --- defaults_test.go and validation_test.go ---

def _loaded_args(args: dict) -> dict:
    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                "profiles": [{"name": "p", "pluginConfig": [{"name": PLUGIN, "args": args}],
                              "plugins": {"deschedule": {"enabled": [PLUGIN]}}}]}
    return load_policy(document, {}).profiles[0].args[PLUGIN]


@pytest.mark.parametrize("args", [
    pytest.param({}, id="empty"),
    pytest.param({"namespaces": {}, "labelSelector": {}}, id="with value"),
])
def test_set_defaults_changes_nothing(args):
    assert _loaded_args(dict(args)) == args


@pytest.mark.parametrize("args, error", [
    pytest.param({"namespaces": {"include": ["default"]}}, None, id="valid namespace args"),
    pytest.param({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}},
                 "only one of include and exclude", id="invalid namespaces args"),
    pytest.param({"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}}, None,
                 id="valid label selector args"),
    pytest.param({"labelSelector": {"matchExpressions": [{"operator": "In"}]}}, "must be non-empty",
                 id="invalid label selector args"),
])
def test_validate_args(args, error):
    if error is None:
        _loaded_args(args)
        return
    with pytest.raises(PolicyError, match=error):
        _loaded_args(args)
