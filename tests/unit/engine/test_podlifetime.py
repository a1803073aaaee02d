"""PodLifeTime, ported from upstream podlifetime/*_test.go (pod_lifetime, validation, defaults) and spec §6.9.

Upstream's ``time.Now()`` becomes the fixed NOW: "newer" pods are created at NOW, the old transition time is two hours
before it and the new one a minute before. Single-node upstream cases get builders.filler_node() so the cycle runs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
    owner_ref,
    policy,
    set_creation,
    set_deletion,
    set_pvc_volume,
    set_rs_owner,
)

NAME = "PodLifeTime"
NOW_DT = datetime(2026, 6, 30, 12, 0, 0, tzinfo=UTC)
NOW = NOW_DT.strftime("%Y-%m-%dT%H:%M:%SZ")


def ago(seconds: float) -> str:
    return (NOW_DT - timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


OLDER = "2009-11-10T23:00:00Z"
NEWER = NOW
OLD_TRANSITION = ago(2 * 3600)
NEW_TRANSITION = ago(60)
MAX = 600

Apply = Optional[Callable[[dict], None]]


def pod_on_n1(name: str, created: str, *applies, owner: bool = True) -> dict:
    """buildTestPodWithRSOwnerRefForNode1 (or buildTestPodForNode1 with owner=False): 100m cpu on n1."""
    def apply(pod: dict) -> None:
        set_creation(pod, created)
        if owner:
            set_rs_owner(pod)
        for item in applies:
            item(pod)
    return build_pod(name, 100, 0, "n1", apply)


def pending(pod: dict) -> None:
    pod["status"]["phase"] = "Pending"


def phase(value: str) -> Callable[[dict], None]:
    return lambda pod: pod["status"].update(phase=value)


def statuses(key: str, **state: dict) -> Callable[[dict], None]:
    """One container status of kind ``key`` (containerStatuses, initContainerStatuses...) with the given state."""
    return lambda pod: pod["status"].update({key: [{"state": state}]})


def waiting(reason: str, key: str = "containerStatuses") -> Callable[[dict], None]:
    return statuses(key, waiting={"reason": reason})


def terminated(key: str = "containerStatuses", **fields) -> Callable[[dict], None]:
    return statuses(key, terminated=fields)


def conditions(*items: dict) -> Callable[[dict], None]:
    return lambda pod: pod["status"].update(conditions=list(items))


def job_owner(pod: dict) -> None:
    pod["metadata"]["ownerReferences"] = [owner_ref("Job", "job1", "job-uid")]


def rs_pod(name: str, *applies) -> dict:
    """buildPod: 1m cpu on node1, ReplicaSet owner, no creationTimestamp (so ~2000 years old)."""
    def apply(pod: dict) -> None:
        set_rs_owner(pod)
        for item in applies:
            item(pod)
    return build_pod(name, 1, 1, "node1", apply)


N1 = [build_node("n1", 2000, 3000, 10)]
NODE1 = [build_node("node1", 2000, 3000, 10)]


def run(nodes: list, pods: list, args: dict, evictor: Optional[dict] = None, **limits) -> dict:
    if len(nodes) < 2:
        nodes = [*nodes, filler_node()]
    return compute_plan([*nodes, *pods], policy((NAME, "deschedule", args), evictor_args=evictor, **limits), NOW)


def pvc(pod: dict) -> None:
    set_pvc_volume(pod, "foo")


def labels(**values: str) -> Callable[[dict], None]:
    return lambda pod: pod["metadata"].update(labels=dict(values))


def max_and(**extra) -> dict:
    return {"maxPodLifeTimeSeconds": MAX, **extra}


# (id, nodes, pods, args, evictor args, limits, expected count, expected names or None)
CASES = [
    # TestPodLifeTime
    ("terminating pods are not evicted", N1,
     [pod_on_n1("p14", OLDER, set_deletion), pod_on_n1("p15", OLDER, set_deletion)],
     max_and(labelSelector={"matchLabels": {"foo": "bar"}}), None, {}, 0, []),
    # TestPodLifeTime_EvictorConfiguration
    ("pvc pods kept with ignorePvcPods", N1, [pod_on_n1("p11", OLDER, pvc)], max_and(), {"ignorePvcPods": True}, {},
     0, []),
    ("pvc pods evicted without ignorePvcPods", N1, [pod_on_n1("p11", OLDER, pvc)], max_and(), None, {}, 1, ["p11"]),
    # TestPodLifeTime_GenericFiltering
    ("label selector", N1, [pod_on_n1("p12", OLDER, labels(foo="bar")), pod_on_n1("p13", OLDER, labels(foo="bar1"))],
     max_and(labelSelector={"matchLabels": {"foo": "bar"}}), None, {}, 1, ["p12"]),
    # TestPodLifeTime_EvictionLimits
    ("2 oldest pods without limits", N1,
     [pod_on_n1("p1", NEWER), pod_on_n1("p2", OLDER), pod_on_n1("p9", OLDER, pending)], max_and(), None, {}, 2,
     ["p2", "p9"]),
    ("per-namespace limit 1", N1, [pod_on_n1("p1", NEWER), pod_on_n1("p2", OLDER)], max_and(), None,
     {"maxNoOfPodsToEvictPerNamespace": 1}, 1, ["p2"]),
    ("total limit 1", N1, [pod_on_n1("p1", NEWER), pod_on_n1("p2", OLDER)], max_and(), None,
     {"maxNoOfPodsToEvictPerNamespace": 2, "maxNoOfPodsToEvictTotal": 1}, 1, ["p2"]),
    ("per-node limit 1", N1, [pod_on_n1("p1", NEWER), pod_on_n1("p2", OLDER)], max_and(), None,
     {"maxNoOfPodsToEvictPerNode": 1}, 1, ["p2"]),
    # TestPodLifeTime_ContainerWaitingReasons
    ("ContainerCreating", N1,
     [pod_on_n1("p9", OLDER, pending),
      build_pod("container-creating-stuck", 0, 0, "n1", lambda p: (waiting("ContainerCreating")(p), set_rs_owner(p),
                                                                   set_creation(p, OLDER)))],
     max_and(states=["ContainerCreating"]), None, {}, 1, ["container-creating-stuck"]),
    ("PodInitializing", N1,
     [pod_on_n1("p9", OLDER, pending),
      build_pod("pod-initializing-stuck", 0, 0, "n1", lambda p: (waiting("PodInitializing")(p), set_rs_owner(p),
                                                                 set_creation(p, OLDER)))],
     max_and(states=["PodInitializing"]), None, {}, 1, ["pod-initializing-stuck"]),
    *[(f"waiting reason {reason}", N1, [pod_on_n1("p9", OLDER, pending, waiting(reason))],
       max_and(states=[reason]), None, {}, 1, ["p9"])
      for reason in ("ImagePullBackOff", "CrashLoopBackOff", "CreateContainerConfigError", "ErrImagePull",
                     "CreateContainerError", "InvalidImageName")],
    ("init container CreateContainerError without includingInitContainers", N1,
     [pod_on_n1("p9", OLDER, pending, waiting("CreateContainerError", "initContainerStatuses"))],
     max_and(states=["CreateContainerError"]), None, {}, 0, []),
    ("init container CreateContainerError with includingInitContainers", N1,
     [pod_on_n1("p9", OLDER, pending, waiting("CreateContainerError", "initContainerStatuses"))],
     max_and(states=["CreateContainerError"], includingInitContainers=True), None, {}, 1, ["p9"]),
    ("ephemeral container CreateContainerError without includingEphemeralContainers", N1,
     [pod_on_n1("p9", OLDER, pending, waiting("CreateContainerError", "ephemeralContainerStatuses"))],
     max_and(states=["CreateContainerError"]), None, {}, 0, []),
    ("ephemeral container CreateContainerError with includingEphemeralContainers", N1,
     [pod_on_n1("p9", OLDER, pending, waiting("CreateContainerError", "ephemeralContainerStatuses"))],
     max_and(states=["CreateContainerError"], includingEphemeralContainers=True), None, {}, 1, ["p9"]),
    ("ImagePullBackOff ignored when the state is ContainerCreating", N1,
     [pod_on_n1("p9", OLDER, pending, waiting("ImagePullBackOff"))], max_and(states=["ContainerCreating"]), None,
     {}, 0, []),
    # TestPodLifeTime_PodStatusReasons
    *[(f"pod status reason {reason}", N1, [pod_on_n1("p9", OLDER, pending, lambda p, r=reason: p["status"].update(
        reason=r))], max_and(states=[reason]), None, {}, 1, ["p9"])
      for reason in ("NodeLost", "NodeAffinity", "Shutdown", "UnexpectedAdmissionError")],
    # TestPodLifeTime_AgeThreshold
    ("1 new and 1 old pod", N1, [pod_on_n1("p1", NEWER), pod_on_n1("p2", OLDER)], max_and(), None, {}, 1, ["p2"]),
    ("2 new pods", N1, [pod_on_n1("p3", NEWER), pod_on_n1("p4", NEWER)], max_and(), None, {}, 0, []),
    ("created 605 seconds ago", N1, [pod_on_n1("p5", NEWER), pod_on_n1("p6", ago(605))], max_and(), None, {}, 1,
     ["p6"]),
    ("created 595 seconds ago (bare pods)", N1,
     [pod_on_n1("p7", NEWER, owner=False), pod_on_n1("p8", ago(595), owner=False)], max_and(), None, {}, 0, []),
    # TestPodLifeTime_PodPhaseStates
    ("Pending among two old pods", N1, [pod_on_n1("p9", OLDER, pending), pod_on_n1("p10", OLDER, phase("Running"))],
     max_and(states=["Pending"]), None, {}, 1, ["p9"]),
    *[(f"phase {value}", N1, [pod_on_n1("p16", OLDER, phase(value))], max_and(states=[value]), None, {}, 1, ["p16"])
      for value in ("Succeeded", "Failed", "Unknown")],
    # TestStatesWithTerminatedReasons
    ("terminated reason via states", NODE1, [rs_pod("p1", phase("Failed"), terminated(reason="NodeAffinity"))],
     {"states": ["NodeAffinity"]}, None, {}, 1, ["p1"]),
    ("pod status reason via states", NODE1,
     [rs_pod("p1", phase("Failed"), lambda p: p["status"].update(reason="Shutdown"))], {"states": ["Shutdown"]},
     None, {}, 1, ["p1"]),
    ("terminated reason on an init container", NODE1,
     [rs_pod("p1", terminated("initContainerStatuses", reason="CreateContainerConfigError"))],
     {"states": ["CreateContainerConfigError"], "includingInitContainers": True}, None, {}, 1, ["p1"]),
    ("terminated reason on an init container without the flag", NODE1,
     [rs_pod("p1", terminated("initContainerStatuses", reason="CreateContainerConfigError"))],
     {"states": ["CreateContainerConfigError"]}, None, {}, 0, []),
    # TestConditionFiltering
    ("condition reason", NODE1,
     [rs_pod("p1", conditions({"type": "Initialized", "status": "True", "reason": "PodCompleted",
                               "lastTransitionTime": OLD_TRANSITION})),
      rs_pod("p2", conditions({"type": "Initialized", "status": "True", "reason": "OtherReason",
                               "lastTransitionTime": OLD_TRANSITION}))],
     {"conditions": [{"reason": "PodCompleted", "status": "True"}]}, None, {}, 1, ["p1"]),
    ("condition type only", NODE1,
     [rs_pod("p1", conditions({"type": "Ready", "status": "False", "lastTransitionTime": OLD_TRANSITION}))],
     {"conditions": [{"type": "Ready"}]}, None, {}, 1, ["p1"]),
    ("no matching condition", NODE1,
     [rs_pod("p1", conditions({"type": "Ready", "status": "True", "reason": "SomethingElse"}))],
     {"conditions": [{"reason": "PodCompleted"}]}, None, {}, 0, []),
    # TestTransitionTimeFiltering
    ("old transition time", NODE1,
     [rs_pod("p1", phase("Succeeded"), conditions(
         {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
         {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION}))],
     {"states": ["Succeeded"], "conditions": [{"reason": "PodCompleted", "status": "True",
                                               "minTimeSinceLastTransitionSeconds": 300}]}, None, {}, 1, ["p1"]),
    ("recent transition time", NODE1,
     [rs_pod("p1", phase("Succeeded"), conditions({"type": "Ready", "status": "False",
                                                   "lastTransitionTime": NEW_TRANSITION}))],
     {"states": ["Succeeded"], "conditions": [{"minTimeSinceLastTransitionSeconds": 14400}]}, None, {}, 0, []),
    ("transition time scoped to the matching condition", NODE1,
     [rs_pod("p1", conditions({"type": "Initialized", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
                              {"type": "Ready", "reason": "OtherReason", "lastTransitionTime": NEW_TRANSITION}))],
     {"conditions": [{"reason": "PodCompleted", "minTimeSinceLastTransitionSeconds": 300}]}, None, {}, 1, ["p1"]),
    ("no conditions on the pod", NODE1, [rs_pod("p1", phase("Running"))],
     {"states": ["Running"], "conditions": [{"minTimeSinceLastTransitionSeconds": 300}]}, None, {}, 0, []),
    # TestOwnerKindsFiltering
    ("exclude Job: Job pod kept", NODE1, [rs_pod("p1", phase("Failed"), job_owner)],
     {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}}, None, {}, 0, []),
    ("exclude Job: other pod evicted", NODE1, [rs_pod("p1", phase("Failed"), job_owner), rs_pod("p2", phase("Failed"))],
     {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}}, None, {}, 1, ["p2"]),
    ("include Job only", NODE1, [rs_pod("p1", phase("Failed"), job_owner), rs_pod("p2", phase("Failed"))],
     {"states": ["Failed"], "ownerKinds": {"include": ["Job"]}}, None, {}, 1, ["p1"]),
    # TestStatesWithEphemeralContainers
    ("terminated reason on an ephemeral container", NODE1,
     [rs_pod("p1", terminated("ephemeralContainerStatuses", reason="OOMKilled"))],
     {"states": ["OOMKilled"], "includingEphemeralContainers": True}, None, {}, 1, ["p1"]),
    ("ephemeral container without the flag", NODE1,
     [rs_pod("p1", terminated("ephemeralContainerStatuses", reason="OOMKilled"))], {"states": ["OOMKilled"]}, None,
     {}, 0, []),
    # TestExitCodesFiltering
    ("matching exit code", NODE1, [rs_pod("p1", phase("Failed"), terminated(exitCode=1))],
     {"states": ["Failed"], "exitCodes": [1]}, None, {}, 1, ["p1"]),
    ("exit code not matched", NODE1, [rs_pod("p1", phase("Failed"), terminated(exitCode=1))],
     {"states": ["Failed"], "exitCodes": [2]}, None, {}, 0, []),
    # TestCombinedFilters
    ("Succeeded + PodCompleted condition + transition time", NODE1,
     [rs_pod("stale-completed", phase("Succeeded"), conditions(
         {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
         {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION})),
      rs_pod("recent-completed", phase("Succeeded"), conditions(
          {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": NEW_TRANSITION})),
      rs_pod("running-pod", phase("Running"))],
     {"states": ["Succeeded"], "conditions": [{"reason": "PodCompleted", "status": "True",
                                               "minTimeSinceLastTransitionSeconds": 300}]}, None, {}, 1,
     ["stale-completed"]),
    ("Failed + min age + exclude Job", NODE1,
     [rs_pod("failed-rs", phase("Failed"), terminated(reason="Error")),
      rs_pod("failed-job", phase("Failed"), job_owner)],
     {"states": ["Failed"], "maxPodLifeTimeSeconds": 0, "ownerKinds": {"exclude": ["Job"]}}, None, {}, 1,
     ["failed-rs"]),
]


@pytest.mark.parametrize("nodes,pods,args,evictor,limits,count,names", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_pod_lifetime(nodes, pods, args, evictor, limits, count, names):
    plan = run(nodes, pods, args, evictor, **limits)
    assert len(plan["evictions"]) == count
    if names is not None:
        assert sorted(evicted_names(plan)) == sorted(names)


# --- spec §6.9 ⚠ ------------------------------------------------------------------------------------------------------

def test_age_is_strictly_greater_than_max():
    pods = [pod_on_n1("exact", ago(600)), pod_on_n1("just-over", ago(601)), pod_on_n1("fraction", ago(600.9))]
    assert evicted_names(run(N1, pods, max_and())) == ["just-over"]


def test_future_creation_is_never_old():
    assert run(N1, [pod_on_n1("future", ago(-3600))], {"maxPodLifeTimeSeconds": 0})["evictions"] == []


def test_missing_creation_timestamp_is_about_292_years_old():
    """Go's time.Sub saturates: a zero creationTimestamp gives the largest Duration, ~9.2e9 seconds."""
    pod = build_pod("ancient", 1, 0, "n1", set_rs_owner)
    assert evicted_names(run(N1, [pod], {"maxPodLifeTimeSeconds": 9_223_372_035})) == ["ancient"]
    assert run(N1, [pod], {"maxPodLifeTimeSeconds": 9_223_372_037})["evictions"] == []


def test_oldest_first_across_all_nodes():
    nodes = [build_node("a", 2000, 3000, 10), build_node("b", 2000, 3000, 10)]
    pods = [build_pod("a-new", 1, 0, "a", lambda p: (set_rs_owner(p), set_creation(p, ago(1000)))),
            build_pod("b-old", 1, 0, "b", lambda p: (set_rs_owner(p), set_creation(p, ago(5000)))),
            build_pod("a-mid", 1, 0, "a", lambda p: (set_rs_owner(p), set_creation(p, ago(3000))))]
    assert evicted_names(run(nodes, pods, max_and())) == ["b-old", "a-mid", "a-new"]


def test_node_limit_skips_only_that_pod():
    """The list spans all nodes, so a node-limit error moves to the next pod, not the next node."""
    nodes = [build_node("a", 2000, 3000, 10), build_node("b", 2000, 3000, 10)]
    ages = {"a1": 9000, "a2": 8000, "b1": 7000, "a3": 6000, "b2": 5000}
    pods = [build_pod(n, 1, 0, n[0], lambda p, a=a: (set_rs_owner(p), set_creation(p, ago(a))))
            for n, a in ages.items()]
    plan = run(nodes, pods, max_and(), maxNoOfPodsToEvictPerNode=1)
    assert evicted_names(plan) == ["a1", "b1"]
    plan = run(nodes, pods, max_and(), maxNoOfPodsToEvictTotal=2)
    assert evicted_names(plan) == ["a1", "a2"]


def test_exit_codes_ignore_ephemeral_containers():
    pod = rs_pod("p1", terminated("ephemeralContainerStatuses", exitCode=3))
    assert run(NODE1, [pod], {"exitCodes": [3], "includingEphemeralContainers": True})["evictions"] == []
    init = rs_pod("p2", terminated("initContainerStatuses", exitCode=3))
    assert evicted_names(run(NODE1, [init], {"exitCodes": [3], "includingInitContainers": True})) == ["p2"]


def test_explicit_zero_transition_time_needs_a_transition():
    no_time = rs_pod("no-time", conditions({"type": "Ready", "status": "False"}))
    with_time = rs_pod("with-time", conditions({"type": "Ready", "status": "False", "lastTransitionTime": ago(1)}))
    plan = run(NODE1, [no_time, with_time], {"conditions": [{"type": "Ready", "minTimeSinceLastTransitionSeconds": 0}]})
    assert evicted_names(plan) == ["with-time"]


# --- TestValidateRemovePodLifeTimeArgs / TestValidation / defaults --------------------------------------------------

ARGS = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("args", [
    {"maxPodLifeTimeSeconds": 1, "states": ["Running"]},
    {"maxPodLifeTimeSeconds": 1, "states": ["Succeeded", "Failed"]},
    {"maxPodLifeTimeSeconds": 1, "states": ["CrashLoopBackOff"]},
    {"states": ["Running"]},
    {"conditions": [{"reason": "PodCompleted"}]},
    {"maxPodLifeTimeSeconds": 600},
    {"states": ["Running"], "maxPodLifeTimeSeconds": 600},
    {"states": ["Succeeded"], "conditions": [{"reason": "PodCompleted"}]},
    {"exitCodes": [1]},
    {"conditions": [{"reason": "PodCompleted", "minTimeSinceLastTransitionSeconds": 300}]},
    {"conditions": [{"minTimeSinceLastTransitionSeconds": 300}]},
    {"maxPodLifeTimeSeconds": 0},
])
def test_valid_args_and_no_defaults(args):
    assert load_policy(policy((NAME, "deschedule", dict(args))), {}).profiles[0].args[NAME] == args


@pytest.mark.parametrize("args,field", [
    ({}, ""),
    ({"maxPodLifeTimeSeconds": 1, "states": ["InvalidState"]}, ".states"),
    ({"states": ["InvalidState"]}, ".states"),  # upstream reports only the states error here
    ({"states": ["NotAState"]}, ".states"),
    ({"states": ["Running"], "namespaces": {"include": ["a"], "exclude": ["b"]}}, ".namespaces"),
    ({"states": ["Running"], "ownerKinds": {"include": ["Job"], "exclude": ["ReplicaSet"]}}, ".ownerKinds"),
    ({"conditions": [{}]}, ".conditions[0]"),
    ({"maxPodLifeTimeSeconds": -1}, ".maxPodLifeTimeSeconds"),
    ({"exitCodes": ["1"]}, ".exitCodes"),
    ({"states": ["Running"], "podRestartThreshold": 1}, ".podRestartThreshold"),
])
def test_validation_errors(args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy((NAME, "deschedule", args)), {})
    assert info.value.field == ARGS + field
