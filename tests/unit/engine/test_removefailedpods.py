"""RemoveFailedPods, ported from upstream removefailedpods/*_test.go (failedpods, validation, defaults) and §6.10.

Upstream builds the plugin from raw args, so a nil minPodLifetimeSeconds means "no age check" there; a loaded
policy defaults it to 3600 (policyconfig_test). Its test pods are created "now", so the cases that leave the field
nil pass ``minPodLifetimeSeconds: 0`` here, which upstream treats the same way (uint age < 0 never holds).
test_default_min_lifetime_protects_new_pods covers the defaulted path. Single-node cases get filler_node().
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
    owner_ref,
    policy,
    set_creation,
    set_deletion,
)

NAME = "RemoveFailedPods"
NOW = "2026-06-30T12:00:00Z"


def status(reason: str = "", phase: str = "", init: Optional[dict] = None, container: Optional[dict] = None) -> dict:
    """newPodStatus: a container state (init or regular) forces phase Failed."""
    result: dict = {"reason": reason, "phase": phase}
    if init is not None:
        result["initContainerStatuses"] = [{"state": init}]
        result["phase"] = "Failed"
    if container is not None:
        result["containerStatuses"] = [{"state": container}]
        result["phase"] = "Failed"
    return result


def failed_pod(name: str, node: str, pod_status: dict, terminating: bool = False) -> dict:
    """buildTestPod: ReplicaSet owner, created now."""
    def apply(pod: dict) -> None:
        pod["status"] = pod_status
        pod["metadata"]["ownerReferences"] = [owner_ref("ReplicaSet", "replicaset-1", "rs-uid")]
        set_creation(pod, NOW)
        if terminating:
            set_deletion(pod)
    return build_pod(name, 1, 1, node, apply)


def term(**fields) -> dict:
    return {"terminated": fields}


def wait(reason: str) -> dict:
    return {"waiting": {"reason": reason}}


def args(init: bool = False, reasons=None, exit_codes=None, exclude=None, min_age: Optional[int] = 0) -> dict:
    result: dict = {"includingInitContainers": init, "minPodLifetimeSeconds": min_age}
    for key, value in (("reasons", reasons), ("exitCodes", exit_codes), ("excludeOwnerKinds", exclude)):
        if value is not None:
            result[key] = value
    return result


def node(name: str, cpu: int = 2000, memory: int = 3000, apply=None) -> dict:
    return build_node(name, cpu, memory, 10, apply)


def run(nodes: list, pods: list, plugin_args: dict, evictor: Optional[dict] = None, **limits) -> dict:
    if len(nodes) < 2:
        nodes = [*nodes, filler_node()]
    return compute_plan([*nodes, *pods], policy((NAME, "deschedule", plugin_args), evictor_args=evictor, **limits),
                        NOW)


N1 = [node("node1")]
# (id, nodes, pods, args, nodeFit, expected)
CASES = [
    ("default empty args, no failures", N1, [], {"minPodLifetimeSeconds": 0}, False, 0),
    ("no failures", N1, [], args(), False, 0),
    ("container terminated with reason NodeAffinity", N1,
     [failed_pod("p1", "node1", status(container=term(reason="NodeAffinity")))], args(), False, 1),
    ("container terminated with exitCode 1", N1, [failed_pod("p1", "node1", status(container=term(exitCode=1)))],
     args(exit_codes=[1]), False, 1),
    ("exitCode 1 and reason NodeAffinity", N1,
     [failed_pod("p1", "node1", status(container=term(reason="NodeAffinity", exitCode=1)))], args(exit_codes=[1]),
     False, 1),
    ("exitCode 1, expected 2", N1, [failed_pod("p1", "node1", status(container=term(exitCode=1)))],
     args(exit_codes=[2]), False, 0),
    ("exit codes 1 and 2, expected 1, 2, 3", N1,
     [failed_pod("p1", "node1", status(container=term(exitCode=1))),
      failed_pod("p2", "node1", status(container=term(exitCode=2)))], args(exit_codes=[1, 2, 3]), False, 2),
    ("exit codes 1 and 2, expected 1", N1,
     [failed_pod("p1", "node1", status(container=term(exitCode=1))),
      failed_pod("p2", "node1", status(container=term(exitCode=2)))], args(exit_codes=[1]), False, 1),
    ("init container terminated with reason NodeAffinity", N1,
     [failed_pod("p1", "node1", status(init=term(reason="NodeAffinity")))], args(init=True), False, 1),
    ("init flag, container exitCode 1", N1, [failed_pod("p1", "node1", status(container=term(exitCode=1)))],
     args(init=True, exit_codes=[1]), False, 1),
    ("init flag, container exitCode 2, expected 1", N1,
     [failed_pod("p1", "node1", status(container=term(exitCode=2)))], args(init=True, exit_codes=[1]), False, 0),
    ("init container waiting CreateContainerConfigError", N1,
     [failed_pod("p1", "node1", status(init=wait("CreateContainerConfigError")))], args(init=True), False, 1),
    ("two nodes, two init containers terminated", [node("node1"), node("node2")],
     [failed_pod("p1", "node1", status(init=term(reason="CreateContainerConfigError"))),
      failed_pod("p2", "node2", status(init=term(reason="CreateContainerConfigError")))], args(init=True), False, 2),
    ("reason CreateContainerConfigError", N1,
     [failed_pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
     args(reasons=["CreateContainerConfigError"]), False, 1),
    ("reasons CreateContainerConfigError and NodeAffinity", N1,
     [failed_pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
     args(reasons=["CreateContainerConfigError", "NodeAffinity"]), False, 1),
    ("reason CreateContainerConfigError, container NodeAffinity", N1,
     [failed_pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
     args(reasons=["CreateContainerConfigError"]), False, 0),
    ("init reason without the init flag", N1,
     [failed_pod("p1", "node1", status(init=wait("CreateContainerConfigError")))],
     args(reasons=["CreateContainerConfigError"]), False, 0),
    ("lifetime 1 hour, created now", N1, [failed_pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
     args(min_age=3600), False, 0),
    ("nodeFit, the other node is unschedulable",
     [node("node1"), node("node2", 2000, 2000, lambda n: n["spec"].update(unschedulable=True))],
     [failed_pod("p1", "node1", status(container=term(reason="NodeAffinity")))], args(), True, 0),
    ("nodeFit, the other node lacks resources", [node("node1", 1, 1), node("node2", 0, 0)],
     [failed_pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
     args(reasons=["CreateContainerConfigError"]), True, 0),
    ("excluded owner kind ReplicaSet", N1, [failed_pod("p1", "node1", status(init=term(reason="NodeAffinity")))],
     args(init=True, exclude=["ReplicaSet"]), False, 0),
    ("excluded owner kind DaemonSet", N1, [failed_pod("p1", "node1", status(init=term(reason="NodeAffinity")))],
     args(init=True, exclude=["DaemonSet"]), False, 1),
    ("terminating pod", N1,
     [failed_pod("p1", "node1", status(init=term(reason="NodeAffinity")), terminating=True)],
     args(init=True, exclude=["DaemonSet"]), False, 0),
    ("pod reason Shutdown, nodeFit with no other node", N1,
     [failed_pod("p1", "node1", status("Shutdown", "Failed"))], args(), True, 0),
    ("reason Shutdown", N1,
     [failed_pod("p1", "node1", status("Shutdown", "Failed")), failed_pod("p2", "node1", status("Shutdown", "Failed"))],
     args(reasons=["Shutdown"]), False, 2),
]


@pytest.mark.parametrize("nodes,pods,plugin_args,node_fit,expected", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_remove_failed_pods(nodes, pods, plugin_args, node_fit, expected):
    plan = run(nodes, pods, plugin_args, {"nodeFit": True} if node_fit else None)
    assert len(plan["evictions"]) == expected


# --- spec §6.10 ⚠ ----------------------------------------------------------------------------------------------------

def aged(name: str, seconds: int, pod_status: Optional[dict] = None, **kwargs) -> dict:
    pod = failed_pod(name, "node1", pod_status or status(container=term(reason="Error")), **kwargs)
    moment = datetime(2026, 6, 30, 12, 0, 0, tzinfo=UTC) - timedelta(seconds=seconds)
    set_creation(pod, moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return pod


def test_default_min_lifetime_protects_new_pods():
    pods = [aged("young", 3599), aged("hour", 3600), aged("old", 7200)]
    assert sorted(evicted_names(run(N1, pods, {}))) == ["hour", "old"]  # age >= min passes


def test_only_failed_pods():
    running = aged("running", 7200, {"phase": "Running"})
    succeeded = aged("succeeded", 7200, {"phase": "Succeeded"})
    assert evicted_names(run(N1, [running, succeeded, aged("failed", 7200)], {})) == ["failed"]


def test_failed_bare_pods_need_the_evictor_to_allow_them():
    bare = aged("bare", 7200)
    bare["metadata"].pop("ownerReferences")
    assert run(N1, [bare], {})["evictions"] == []
    assert evicted_names(run(N1, [bare], {}, {"evictFailedBarePods": True})) == ["bare"]


def test_reasons_match_waiting_terminated_or_pod_reason_but_never_empty():
    pods = [aged("waiting", 7200, status(container=wait("ImagePullBackOff"))),
            aged("pod-reason", 7200, status("Evicted", "Failed")),
            aged("no-reason", 7200, status(container=term(exitCode=1)))]
    assert sorted(evicted_names(run(N1, pods, {"reasons": ["ImagePullBackOff", "Evicted"]}))) == [
        "pod-reason", "waiting"]
    assert run(N1, pods[2:], {"reasons": [""]})["evictions"] == []


def test_node_limit_moves_to_the_next_node():
    nodes = [node("a"), node("b")]
    pods = [failed_pod(f"{n}-{i}", n, status(container=term(reason="Error"))) for n in ("a", "b") for i in range(2)]
    assert evicted_names(run(nodes, pods, args(), maxNoOfPodsToEvictPerNode=1)) == ["a-0", "b-0"]


# --- TestValidateRemoveFailedPodsArgs / TestSetDefaults_RemoveFailedPodsArgs ---------------------------------------

ARGS = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("plugin_args,field", [
    ({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}}, ".namespaces"),
    ({"labelSelector": {"matchExpressions": [{"operator": "In"}]}}, ".labelSelector"),
    ({"minPodLifetimeSeconds": -1}, ".minPodLifetimeSeconds"),
    ({"exitCodes": [1.5]}, ".exitCodes"),
    ({"states": ["Failed"]}, ".states"),
])
def test_validation_errors(plugin_args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy((NAME, "deschedule", plugin_args)), {})
    assert info.value.field == ARGS + field


@pytest.mark.parametrize("plugin_args,expected", [
    ({}, {"minPodLifetimeSeconds": 3600}),
    ({"namespaces": {"include": ["default"]}, "excludeOwnerKinds": ["Job"], "reasons": ["ReasonDoesNotMatch"],
      "minPodLifetimeSeconds": 3600},
     {"namespaces": {"include": ["default"]}, "excludeOwnerKinds": ["Job"], "reasons": ["ReasonDoesNotMatch"],
      "minPodLifetimeSeconds": 3600}),
    ({"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}},
     {"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}, "minPodLifetimeSeconds": 3600}),
    ({"minPodLifetimeSeconds": 0, "includingInitContainers": False},
     {"minPodLifetimeSeconds": 0, "includingInitContainers": False}),
])
def test_valid_args_and_defaults(plugin_args, expected):
    assert load_policy(policy((NAME, "deschedule", plugin_args)), {}).profiles[0].args[NAME] == expected
