"""RemovePodsHavingTooManyRestarts, ported from upstream removepodshavingtoomanyrestarts/*_test.go (toomanyrestarts,
validation, defaults) and spec §6.8.

Single-node upstream cases get builders.filler_node() so the cycle runs (see its docstring).
"""

from __future__ import annotations

from typing import Callable, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import (
    add_taint,
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
NAME = "RemovePodsHavingTooManyRestarts"


def restarts(base: int) -> Callable[[dict], None]:
    """setPodContainerStatusRestartCount: init 5*base, two containers 10*base each (25*base in all)."""
    def apply(pod: dict) -> None:
        pod["status"] = {"initContainerStatuses": [{"restartCount": 5 * base}],
                         "containerStatuses": [{"restartCount": 10 * base}, {"restartCount": 10 * base}]}
    return apply


def init_pods(extra: Optional[Callable[[dict], None]] = None) -> list:
    """initPods: pod-0..pod-9 on node1 with 25*i restarts; 6 is a DaemonSet pod, 7 has local storage, 8 is a
    mirror pod; plus two CPU consumers on node4 and node5."""
    protect = {6: set_ds_owner, 7: set_host_path_empty_dir, 8: set_mirror_annotations}
    pods = []
    for i in range(10):
        def apply(pod: dict, i: int = i) -> None:
            set_normal_owner(pod)
            restarts(i)(pod)
            if i in protect:
                protect[i](pod)
            if extra:
                extra(pod)
        pods.append(build_pod(f"pod-{i}", 100, 0, "node1", apply))
    pods += [build_pod("CPU-consumer-1", 150, 100, "node4", set_normal_owner),
             build_pod("CPU-consumer-2", 150, 100, "node5", set_normal_owner)]
    return pods


def plain_node(name: str, apply=None) -> dict:
    return build_node(name, 2000, 3000, 10, apply)


def run(nodes: list, pods: list, args: dict, evictor: Optional[dict] = None, **limits) -> dict:
    if len(nodes) < 2:
        nodes = [*nodes, filler_node()]
    return compute_plan([*nodes, *pods], policy((NAME, "deschedule", args), evictor_args=evictor, **limits), NOW)


def waiting(reason: str, init: bool = False) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        if init:
            pod["status"]["initContainerStatuses"] = [{"state": {"waiting": {"reason": reason}}}]
        elif pod["status"].get("containerStatuses"):
            pod["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": reason}}
    return apply


def phase(value: str) -> Callable[[dict], None]:
    return lambda pod: pod["status"].update(phase=value)


def hw_tainted(node: dict) -> None:
    add_taint(node, "hardware", "gpu")


def args(threshold: int, init: bool = False, **extra) -> dict:
    return {"podRestartThreshold": threshold, "includingInitContainers": init, **extra}


# (id, node names (+ how), pods extra, args, limits, nodeFit, expected)
CASES = [
    ("all pods under the threshold", [plain_node("node1")], None, args(10000, True), {}, False, 0),
    ("some pods over the threshold", [plain_node("node1")], None, args(1, True), {}, False, 6),
    ("nine pods at threshold 25, with init containers", [plain_node("node1")], None, args(25, True), {}, False, 6),
    ("nine pods at threshold 25, without init containers", [plain_node("node1")], None, args(25), {}, False, 5),
    ("threshold 20 with init containers", [plain_node("node1")], None, args(20, True), {}, False, 6),
    ("threshold 20 without init containers", [plain_node("node1")], None, args(20), {}, False, 6),
    ("threshold 5*25+1 with init containers", [plain_node("node1")], None, args(5 * 25 + 1, True), {}, False, 1),
    ("threshold 5*20+1 without init containers", [plain_node("node1")], None, args(5 * 20 + 1), {}, False, 1),
    ("maxPodsToEvictPerNode 3", [plain_node("node1")], None, args(1, True), {"maxNoOfPodsToEvictPerNode": 3},
     False, 3),
    ("maxNoOfPodsToEvictPerNamespace 3", [plain_node("node1")], None, args(1, True),
     {"maxNoOfPodsToEvictPerNamespace": 3}, False, 3),
    ("nodeFit: the only other node is tainted", [plain_node("node1"), plain_node("node2", hw_tainted)], None,
     args(1, True), {"maxNoOfPodsToEvictPerNode": 3}, True, 0),
    ("nodeFit: the only other node is unschedulable", [plain_node("node1"), plain_node("node3", set_unschedulable)],
     None, args(1, True), {"maxNoOfPodsToEvictPerNode": 3}, True, 0),
    ("nodeFit: the only other node lacks cpu", [plain_node("node1"), build_node("node4", 200, 3000, 10)], None,
     args(1, True), {"maxNoOfPodsToEvictPerNode": 3}, True, 0),
    ("nodeFit: the only other node has cpu", [plain_node("node1"), plain_node("node5")], None, args(1, True),
     {"maxNoOfPodsToEvictPerNode": 3}, True, 3),
    ("CrashLoopBackOff pods with states=CrashLoopBackOff", [plain_node("node1"), plain_node("node5")],
     waiting("CrashLoopBackOff"), args(1, states=["CrashLoopBackOff"]), {"maxNoOfPodsToEvictPerNode": 3}, True, 3),
    ("no CrashLoopBackOff with states=CrashLoopBackOff", [plain_node("node1"), plain_node("node5")], None,
     args(1, states=["CrashLoopBackOff"]), {"maxNoOfPodsToEvictPerNode": 3}, True, 0),
    ("running pods with states=Running", [plain_node("node1")], phase("Running"), args(1, states=["Running"]),
     {"maxNoOfPodsToEvictPerNode": 3}, False, 3),
    ("pending pods with states=Running", [plain_node("node1")], phase("Pending"), args(1, states=["Running"]),
     {"maxNoOfPodsToEvictPerNode": 3}, False, 0),
    ("init container CrashLoopBackOff, including init containers", [plain_node("node1")],
     waiting("CrashLoopBackOff", init=True), args(1, True, states=["CrashLoopBackOff"]),
     {"maxNoOfPodsToEvictPerNode": 3}, False, 3),
    ("init container CrashLoopBackOff, not including init containers", [plain_node("node1")],
     waiting("CrashLoopBackOff", init=True), args(1, False, states=["CrashLoopBackOff"]),
     {"maxNoOfPodsToEvictPerNode": 3}, False, 0),
]


@pytest.mark.parametrize("nodes,extra,plugin_args,limits,node_fit,expected", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_remove_pods_having_too_many_restarts(nodes, extra, plugin_args, limits, node_fit, expected):
    plan = run(nodes, init_pods(extra), plugin_args, {"nodeFit": True} if node_fit else None, **limits)
    assert len(plan["evictions"]) == expected


# --- spec §6.8 -------------------------------------------------------------------------------------------------------

def test_evicts_most_restarts_first():
    plan = run([plain_node("node1")], init_pods(), args(1, True), maxNoOfPodsToEvictPerNode=3)
    assert evicted_names(plan) == ["pod-9", "pod-5", "pod-4"]
    assert plan["evictions"][0]["reason"] == "restarts 225 ≥ threshold 1"


def test_terminal_pods_count():
    """All phases are listed: a Failed or Succeeded pod with restarts is evicted too."""
    pods = [build_pod(p, 1, 0, "node1", lambda pod, p=p: (set_rs_owner(pod), restarts(1)(pod), phase(p)(pod)))
            for p in ("Failed", "Succeeded")]
    assert sorted(evicted_names(run([plain_node("node1")], pods, args(1)))) == ["Failed", "Succeeded"]


def test_states_match_phase_or_waiting_reason_only():
    def pod(name: str, status: dict) -> dict:
        return build_pod(name, 1, 0, "node1", lambda p: (set_rs_owner(p), p["status"].update(
            containerStatuses=[{"restartCount": 5, **status}])))

    pods = [pod("waiting", {"state": {"waiting": {"reason": "CrashLoopBackOff"}}}),
            pod("terminated", {"state": {"terminated": {"reason": "CrashLoopBackOff"}}}),
            pod("last-state", {"lastState": {"waiting": {"reason": "CrashLoopBackOff"}}})]
    assert evicted_names(run([plain_node("node1")], pods, args(5, states=["CrashLoopBackOff"]))) == ["waiting"]


def test_node_limit_moves_to_the_next_node():
    pods = [build_pod(f"{n}-{i}", 1, 0, n, lambda p, i=i: (set_rs_owner(p), restarts(i + 1)(p)))
            for n in ("a", "b") for i in range(3)]
    plan = run([plain_node("a"), plain_node("b")], pods, args(1), maxNoOfPodsToEvictPerNode=1)
    assert evicted_names(plan) == ["a-2", "b-2"]


def test_namespaces_and_label_selector():
    def pod(name: str, namespace: str, app: str) -> dict:
        return build_pod(name, 1, 0, "node1", lambda p: (set_rs_owner(p), restarts(1)(p),
                                                         p["metadata"].update(labels={"app": app})),
                         namespace=namespace)

    pods = [pod("a", "keep", "x"), pod("b", "other", "x"), pod("c", "other", "y")]
    plugin_args = args(1, namespaces={"include": ["other"]}, labelSelector={"matchLabels": {"app": "x"}})
    assert evicted_names(run([plain_node("node1")], pods, plugin_args)) == ["b"]


# --- TestValidateRemovePodsHavingTooManyRestartsArgs / defaults --------------------------------------------------

ARGS = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("plugin_args,field", [
    ({"podRestartThreshold": 1, "namespaces": {"include": ["default"], "exclude": ["kube-system"]}}, ".namespaces"),
    ({"podRestartThreshold": 1, "labelSelector": {"matchExpressions": [{"operator": "In"}]}}, ".labelSelector"),
    ({"podRestartThreshold": 0}, ".podRestartThreshold"),
    ({}, ".podRestartThreshold"),
    ({"podRestartThreshold": 1, "states": ["Failed"]}, ".states"),
    ({"podRestartThreshold": 0, "states": ["Failed"]}, ".podRestartThreshold"),  # upstream's first of two errors
    ({"podRestartThreshold": 1, "states": ["Running", "ImagePullBackOff"]}, ".states"),
    ({"podRestartThreshold": 1, "includingInitContainers": "yes"}, ".includingInitContainers"),
])
def test_validation_errors(plugin_args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy((NAME, "deschedule", plugin_args)), {})
    assert info.value.field == ARGS + field


@pytest.mark.parametrize("plugin_args", [
    {"podRestartThreshold": 1, "namespaces": {"include": ["default"]}},
    {"podRestartThreshold": 1, "labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}},
    {"podRestartThreshold": 1, "states": ["Running"]},
    {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]},
    {"podRestartThreshold": 10, "includingInitContainers": True, "namespaces": {}, "labelSelector": {}},
])
def test_valid_args_and_no_defaults(plugin_args):
    assert load_policy(policy((NAME, "deschedule", dict(plugin_args))), {}).profiles[0].args[NAME] == plugin_args
