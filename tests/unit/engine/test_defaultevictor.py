"""DefaultEvictor, ported from upstream pkg/framework/plugins/defaultevictor/*_test.go (defaultevictor, validation,
defaults), plus the spec's ⚠ items of §5.

Filter and PreEvictionFilter are called through a PluginHandle built on a Snapshot, after loading the args through
load_policy (so validation and priorityThreshold resolution run as they would for a real policy). Upstream's
``metav1.Now()`` becomes the fixed NOW.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import evictor as evictor_module
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import (
    EVICT_ANNOTATION,
    DefaultEvictor,
    EvictionLimits,
    effective_protections,
    validate_args,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import (
    CycleState,
    PluginHandle,
    ProfileEvictor,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import PREFER_NO_EVICTION
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from builders import (
    add_empty_dir,
    add_taint,
    build_namespace,
    build_node,
    build_pdb,
    build_pod,
    build_priority_class,
    build_pvc,
    evicted_names,
    owner_ref,
    policy,
    set_annotation,
    set_deletion,
    set_ds_owner,
    set_host_path_empty_dir,
    set_labels,
    set_mirror_annotations,
    set_normal_owner,
    set_priority,
    set_pvc_volume,
    set_rs_owner,
    set_ss_owner,
)

NOW = "2026-06-30T12:00:00Z"
NOW_TS = parse_time(NOW)
CRITICAL = 2_000_000_000
DEFAULTS = {"PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods"}


def minutes_ago(minutes: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(NOW_TS - 60 * minutes, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def handle_for(objects: list, evictor_args: Optional[dict] = None) -> PluginHandle:
    snapshot = Snapshot(objects)
    loaded = load_policy(policy(evictor_args=evictor_args or {}), snapshot.priority_classes)
    profile = loaded.profiles[0]
    evictor = DefaultEvictor(profile.args[evictor_module.NAME], profile.priority_threshold, snapshot, NOW_TS)
    state = CycleState(snapshot, NOW_TS, snapshot.sorted_nodes(), EvictionLimits(None, None, None))
    return PluginHandle(state, profile.name, "test", "Deschedule",
                        ProfileEvictor([evictor.filter], [evictor.pre_eviction_filter]))


def pod_in(handle: PluginHandle, name: str, namespace: str = "default"):
    return next(p for p in handle.state.snapshot.pods if p.name == name and p.namespace == namespace)


def filtered(objects: list, evictor_args: Optional[dict] = None, target: str = "") -> bool:
    """DefaultEvictor.Filter of the first pod in ``objects`` (or ``target``)."""
    handle = handle_for(objects, evictor_args)
    name = target or next(o for o in objects if o["kind"] == "Pod")["metadata"]["name"]
    return handle.filter(pod_in(handle, name))


def pre_evicted(objects: list, evictor_args: Optional[dict] = None, namespace: str = "default") -> bool:
    handle = handle_for(objects, evictor_args)
    first = next(o for o in objects if o["kind"] == "Pod")["metadata"]
    return handle.pre_evict(pod_in(handle, first["name"], first.get("namespace", namespace)))


def apply_all(*applies):
    def apply(obj: dict) -> None:
        for item in applies:
            item(obj)
    return apply


def ut_pod(name: str, *applies, node: str = "node1") -> dict:
    """upstream buildTestPod: 400m cpu, 0 memory, on node1 (a node that is not in the snapshot)."""
    return build_pod(name, 400, 0, node, apply_all(*applies))


def ut_node(name: str, *applies) -> dict:
    return build_node(name, 1000, 2000, 13, apply_all(*applies))


# --- TestDefaultEvictorPreEvictionFilter --------------------------------------------------------------------------

def hw_taint(node: dict) -> None:
    add_taint(node, "hardware", "gpu")


def dc_label(node: dict) -> None:
    node["metadata"]["labels"] = {"datacenter": "east"}


def node_selector(value: str):
    def apply(pod: dict) -> None:
        pod["spec"]["nodeSelector"] = {"datacenter": value}
    return apply


def gpu_toleration(pod: dict) -> None:
    pod["spec"]["tolerations"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def memory_pod(name: str, cpu: int, memory: int, node: str) -> dict:
    return build_pod(name, cpu, memory, node, lambda p: set_labels(p, test="true"))


def in_ns(namespace: str):
    def apply(pod: dict) -> None:
        pod["metadata"]["namespace"] = namespace
    return apply


NS_SELECTOR = {"matchLabels": {"kubernetes.io/metadata.name": "test"}}
PRE_EVICTION_CASES = [
    ("no tolerations, all other nodes tainted",
     [ut_pod("p1", set_normal_owner), ut_node("node2", hw_taint), ut_node("node3", hw_taint)],
     {"nodeFit": True}, False),
    ("correct tolerations, all other nodes tainted",
     [ut_pod("p1", set_normal_owner, gpu_toleration), ut_node("node2", hw_taint), ut_node("node3", hw_taint)],
     {"nodeFit": True}, True),
    ("incorrect node selector",
     [ut_pod("p1", set_normal_owner, node_selector("fail")), ut_node("node2", dc_label),
      ut_node("node3", dc_label)], {"nodeFit": True}, False),
    ("correct node selector",
     [ut_pod("p1", set_normal_owner, node_selector("east")), ut_node("node2", dc_label),
      ut_node("node3", dc_label)], {"nodeFit": True}, True),
    ("correct node selector, no node with enough cpu",
     [build_pod("p1", 12, 8, "node1", apply_all(set_normal_owner, node_selector("east"))),
      build_node("node2-TEST", 10, 16, 10, dc_label), build_node("node3-TEST", 10, 16, 10, dc_label)],
     {"nodeFit": True}, False),
    ("correct node selector, one node with enough memory",
     [build_pod("p1", 12, 8, "node1", apply_all(set_normal_owner, node_selector("east"))),
      memory_pod("node2-pod-10GB-mem", 20, 10, "node2"), memory_pod("node3-pod-10GB-mem", 20, 10, "node3"),
      build_node("node2", 100, 16, 10, dc_label), build_node("node3", 100, 20, 10, dc_label)],
     {"nodeFit": True}, True),
    ("correct node selector, no node with enough memory",
     [build_pod("p1", 12, 8, "node1", apply_all(set_normal_owner, node_selector("east"))),
      memory_pod("node2-pod-10GB-mem", 10, 10, "node2"), memory_pod("node3-pod-10GB-mem", 10, 10, "node3"),
      build_node("node2", 100, 16, 10, dc_label), build_node("node3", 100, 16, 10, dc_label)],
     {"nodeFit": True}, False),
    ("incorrect node selector without nodeFit",
     [ut_pod("p1", set_normal_owner, node_selector("fail")), ut_node("node2", dc_label),
      ut_node("node3", dc_label)], {}, True),
    ("namespace matches the namespace selector",
     [ut_pod("p1", in_ns("test"), set_normal_owner, node_selector("east")), ut_node("node2", dc_label),
      ut_node("node3", dc_label), build_namespace("default"), build_namespace("test")],
     {"nodeFit": True, "namespaceLabelSelector": NS_SELECTOR}, True),
    ("namespace does not match the namespace selector",
     [ut_pod("p1", set_normal_owner, node_selector("fail")), ut_node("node2", dc_label),
      ut_node("node3", dc_label), build_namespace("default"), build_namespace("test")],
     {"nodeFit": True, "namespaceLabelSelector": NS_SELECTOR}, False),
]


@pytest.mark.parametrize("objects,args,expected", [c[1:] for c in PRE_EVICTION_CASES],
                         ids=[c[0] for c in PRE_EVICTION_CASES])
def test_pre_eviction_filter(objects, args, expected):
    assert pre_evicted(objects, args) is expected


# --- TestDefaultEvictorFilter -------------------------------------------------------------------------------------

def evict_annotation(pod: dict) -> None:
    pod["metadata"]["annotations"] = {EVICT_ANNOTATION: "true"}


def add_evict_annotation(pod: dict) -> None:
    set_annotation(pod, EVICT_ANNOTATION, "true")


def failed(pod: dict) -> None:
    pod["status"]["phase"] = "Failed"


def priority(value: int):
    return lambda pod: set_priority(pod, value)


def pvc_foo(pod: dict) -> None:
    set_pvc_volume(pod, "foo")


def owner_uid(uid: str):
    def apply(pod: dict) -> None:
        pod["metadata"]["ownerReferences"][0]["uid"] = uid
    return apply


def two_owners(pod: dict) -> None:
    set_normal_owner(pod)
    pod["metadata"]["ownerReferences"].append(dict(pod["metadata"]["ownerReferences"][0]))
    pod["metadata"]["ownerReferences"][0]["uid"] = "owner-uuid"


def started(minutes: int):
    def apply(pod: dict) -> None:
        pod["status"]["startTime"] = minutes_ago(minutes)
    return apply


def small(name: str, *applies) -> dict:
    return build_pod(name, 1, 1, "node1", apply_all(*applies))


def emptydir_volume(pod: dict) -> None:
    pod["spec"]["volumes"] = [{"name": "local-storage", "emptyDir": {}}]


def ds_owner_named(pod: dict) -> None:
    pod["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "daemonset-test", "uid": "daemonset-uid"}]


def resource_claim(pod: dict) -> None:
    pod["spec"]["resourceClaims"] = [{"name": "test-claim", "resourceClaimName": "test-resource-claim"}]


def two_pvcs(pod: dict) -> None:
    set_pvc_volume(pod, "protected", "protected-pvc")
    set_pvc_volume(pod, "unprotected", "unprotected-pvc")


def protected_classes(*names: str) -> dict:
    return {"extraEnabled": ["PodsWithPVC"],
            "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": n} for n in names]}}}


LOW, HIGH = 800, 900
FILTER_CASES: list[tuple[str, list, dict, bool]] = [
    ("failed bare pod", [ut_pod("bare_pod_failed", failed)], {}, False),
    ("bare pod with evictFailedBarePods", [ut_pod("bare_pod")], {"evictFailedBarePods": True}, False),
    ("failed bare pod with evictFailedBarePods", [ut_pod("bare_pod_failed_but_can_be_evicted", failed)],
     {"evictFailedBarePods": True}, True),
    ("normal ownerRefs", [ut_pod("p1", set_normal_owner)], {}, True),
    ("normal ownerRefs and evict annotation", [ut_pod("p2", evict_annotation, set_normal_owner)], {}, True),
    ("prefer-no-eviction annotation, Preferred policy",
     [ut_pod("p2", lambda p: set_annotation(p, PREFER_NO_EVICTION), set_normal_owner)], {}, True),
    ("prefer-no-eviction annotation, Mandatory policy",
     [ut_pod("p2", lambda p: set_annotation(p, PREFER_NO_EVICTION), set_normal_owner)],
     {"noEvictionPolicy": "Mandatory"}, False),
    ("replicaSet ownerRefs", [ut_pod("p3", set_normal_owner)], {}, True),
    ("replicaSet ownerRefs and evict annotation", [ut_pod("p4", evict_annotation, set_rs_owner)], {}, True),
    ("statefulSet ownerRefs", [ut_pod("p18", set_normal_owner)], {}, True),
    ("statefulSet ownerRefs and evict annotation", [ut_pod("p19", evict_annotation, set_ss_owner)], {}, True),
    ("local storage, evictLocalStoragePods false", [ut_pod("p5", set_normal_owner, set_host_path_empty_dir)], {},
     False),
    ("local storage, evictLocalStoragePods true", [ut_pod("p6", set_normal_owner, set_host_path_empty_dir)],
     {"evictLocalStoragePods": True}, True),
    ("local storage with evict annotation",
     [ut_pod("p7", evict_annotation, set_normal_owner, set_host_path_empty_dir)], {}, True),
    ("daemonSet pod", [ut_pod("p8", set_normal_owner, set_ds_owner)], {}, False),
    ("daemonSet pod with evict annotation", [ut_pod("p9", evict_annotation, set_ds_owner)], {}, True),
    ("mirror pod", [ut_pod("p10", set_normal_owner, set_mirror_annotations)], {}, False),
    ("mirror pod with evict annotation",
     [ut_pod("p11", set_normal_owner, set_mirror_annotations, add_evict_annotation)], {}, True),
    ("system critical priority", [ut_pod("p12", set_normal_owner, priority(CRITICAL))], {}, False),
    ("system critical priority with evict annotation",
     [ut_pod("p13", set_normal_owner, priority(CRITICAL), evict_annotation)], {}, True),
    ("priority above the threshold", [ut_pod("p14", set_normal_owner, priority(HIGH))],
     {"priorityThreshold": {"value": LOW}}, False),
    ("priority above the threshold with evict annotation",
     [ut_pod("p15", set_normal_owner, evict_annotation, priority(HIGH))], {"priorityThreshold": {"value": LOW}},
     True),
    ("system critical priority with evictSystemCriticalPods",
     [ut_pod("p16", set_normal_owner, priority(CRITICAL))], {"evictSystemCriticalPods": True}, True),
    ("system critical priority with evictSystemCriticalPods and evict annotation",
     [ut_pod("p16", set_normal_owner, evict_annotation, priority(CRITICAL))], {"evictSystemCriticalPods": True},
     True),
    ("priority above the threshold with evictSystemCriticalPods",
     [ut_pod("p17", set_normal_owner, priority(HIGH))],
     {"evictSystemCriticalPods": True, "priorityThreshold": {"value": LOW}}, True),
    ("priority above the threshold with evictSystemCriticalPods and evict annotation",
     [ut_pod("p17", set_normal_owner, add_evict_annotation, priority(HIGH))],
     {"evictSystemCriticalPods": True, "priorityThreshold": {"value": LOW}}, True),
    ("nodeFit is not part of Filter",
     [ut_pod("p1", set_normal_owner), ut_node("node2", hw_taint), ut_node("node3", hw_taint)],
     {"nodeFit": True}, True),
    ("minReplicas 2, owner with 2 replicas",
     [small("p1", set_normal_owner, owner_uid("owner-uuid")), small("p2", set_normal_owner, owner_uid("owner-uuid"))],
     {"minReplicas": 2}, True),
    ("minReplicas 3, owner with 2 replicas",
     [small("p1", set_normal_owner, owner_uid("owner-uuid")), small("p2", set_normal_owner, owner_uid("owner-uuid"))],
     {"minReplicas": 3}, False),
    ("minReplicas 2, multiple owners", [small("p1", two_owners), small("p2", set_normal_owner)],
     {"minReplicas": 2}, True),
    ("minPodAge 50m, started 10 minutes ago", [small("p1", set_normal_owner, started(10))],
     {"minPodAge": "50m"}, False),
    ("minPodAge 50m, started 60 minutes ago", [small("p1", set_normal_owner, started(60))],
     {"minPodAge": "50m"}, True),
    ("no minPodAge, started 60 minutes ago", [small("p1", set_normal_owner, started(60))], {}, True),
    ("ignorePodsWithoutPDB, no PDB", [small("p1", set_normal_owner, lambda p: set_labels(p, app="foo"))],
     {"ignorePodsWithoutPDB": True}, False),
    ("ignorePodsWithoutPDB, with a PDB",
     [small("p1", set_normal_owner, lambda p: set_labels(p, app="foo")), build_pdb("pdb1", "foo")],
     {"ignorePodsWithoutPDB": True}, True),
    ("ignorePvcPods, pod with PVC", [ut_pod("p15", set_normal_owner, pvc_foo)], {"ignorePvcPods": True}, False),
    ("ignorePvcPods unset, pod with PVC", [ut_pod("p15", set_normal_owner, pvc_foo)], {}, True),
    ("PodsWithLocalStorage in defaultDisabled", [ut_pod("p18", set_normal_owner, emptydir_volume)],
     {"podProtections": {"defaultDisabled": ["PodsWithLocalStorage"]}}, True),
    ("DaemonSetPods in defaultDisabled", [ut_pod("p19", ds_owner_named)],
     {"podProtections": {"defaultDisabled": ["DaemonSetPods"]}}, True),
    ("PodsWithPVC in extraEnabled", [ut_pod("p20", set_normal_owner, pvc_foo)],
     {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}, False),
    ("PodsWithoutPDB in extraEnabled", [ut_pod("p21", set_normal_owner)],
     {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}, False),
    ("PodsWithResourceClaims in extraEnabled", [ut_pod("p20", set_normal_owner, resource_claim)],
     {"podProtections": {"extraEnabled": ["PodsWithResourceClaims"]}}, False),
    ("protected storage class", [ut_pod("p23", set_normal_owner, pvc_foo), build_pvc("foo", "standard")],
     {"podProtections": protected_classes("standard")}, False),
    ("unprotected storage class", [ut_pod("p24", set_normal_owner, pvc_foo), build_pvc("foo", "unprotected")],
     {"podProtections": protected_classes("protected")}, True),
    ("missing PVC with protected classes", [ut_pod("p25", set_normal_owner, pvc_foo)],
     {"podProtections": protected_classes("protected")}, False),
    ("protected and unprotected storage classes",
     [ut_pod("p26", set_normal_owner, two_pvcs), build_pvc("protected", "protected"),
      build_pvc("unprotected", "unprotected")], {"podProtections": protected_classes("protected")}, False),
]


@pytest.mark.parametrize("objects,args,expected", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(objects, args, expected):
    assert filtered(objects, args) is expected


# --- TestGetEffectivePodProtections_TableDriven -----------------------------------------------------------------

@pytest.mark.parametrize("protections,expected", [
    ({"defaultDisabled": [], "extraEnabled": []}, DEFAULTS),
    ({"defaultDisabled": ["PodsWithLocalStorage"]}, {"DaemonSetPods", "SystemCriticalPods", "FailedBarePods"}),
    ({"defaultDisabled": ["DaemonSetPods", "SystemCriticalPods"]}, {"PodsWithLocalStorage", "FailedBarePods"}),
    ({"extraEnabled": ["PodsWithPVC"]}, DEFAULTS | {"PodsWithPVC"}),
    ({"extraEnabled": ["PodsWithPVC", "PodsWithoutPDB"]}, DEFAULTS | {"PodsWithPVC", "PodsWithoutPDB"}),
    ({"defaultDisabled": ["FailedBarePods", "DaemonSetPods"], "extraEnabled": ["PodsWithPVC"]},
     {"PodsWithLocalStorage", "SystemCriticalPods", "PodsWithPVC"}),
    ({"extraEnabled": ["PodsWithResourceClaims"]}, DEFAULTS | {"PodsWithResourceClaims"}),
    ({"defaultDisabled": ["FailedBarePods", "DaemonSetPods"],
      "extraEnabled": ["PodsWithPVC", "PodsWithResourceClaims"]},
     {"PodsWithLocalStorage", "SystemCriticalPods", "PodsWithPVC", "PodsWithResourceClaims"}),
])
def test_effective_pod_protections(protections, expected):
    assert effective_protections({"podProtections": protections}) == expected


def test_legacy_bools_decide_without_protection_lists():
    assert effective_protections({}) == DEFAULTS
    assert effective_protections({"evictLocalStoragePods": True, "evictDaemonSetPods": True,
                                  "evictSystemCriticalPods": True, "evictFailedBarePods": True,
                                  "ignorePvcPods": True, "ignorePodsWithoutPDB": True}) == {
        "PodsWithPVC", "PodsWithoutPDB"}


@pytest.mark.parametrize("protections,expected", [
    (None, set()),
    ({"config": {}}, set()),
    (protected_classes("sc1", "sc2"), {"sc1", "sc2"}),
])
def test_protected_pvc_storage_classes(protections, expected):
    args: dict[str, Any] = {"podProtections": protections} if protections else {}
    assert DefaultEvictor(args, CRITICAL, Snapshot([]), NOW_TS).protected_classes == expected


# --- TestMultipleProfilesWithDifferentNamespaceLabelSelectors / TestNamespaceLabelSelectorAllOperations -------------

def namespaced_objects() -> list:
    namespaces = [build_namespace("ns-prod", env="prod", tier="frontend"),
                  build_namespace("ns-staging", env="staging", tier="backend"),
                  build_namespace("ns-test", env="test"),
                  build_namespace("ns-backend", team="backend"),
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-nolabels", "labels": {}}}]
    pods = [build_pod(f"pod-in-{ns[3:]}", 100, 100, "node1", apply_all(in_ns(ns), set_normal_owner))
            for ns in ("ns-prod", "ns-staging", "ns-test", "ns-backend", "ns-nolabels")]
    return [build_node("node1", 1000, 2000, 10), *namespaces, *pods]


def passing(selector: dict) -> set[str]:
    handle = handle_for(namespaced_objects(), {"namespaceLabelSelector": selector})
    return {p.namespace for p in handle.state.snapshot.pods if handle.pre_evict(p)}


@pytest.mark.parametrize("selector,expected", [
    ({"matchLabels": {"env": "prod"}}, {"ns-prod"}),
    ({"matchLabels": {"team": "backend"}}, {"ns-backend"}),
    ({"matchLabels": {"tier": "frontend"},
      "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging"]}]}, {"ns-prod"}),
    ({"matchLabels": {"tier": "backend"}, "matchExpressions": [{"key": "env", "operator": "Exists"}]},
     {"ns-staging"}),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"},
                           {"key": "env", "operator": "In", "values": ["staging"]}]}, {"ns-staging"}),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {"ns-test", "ns-backend", "ns-nolabels"}),
    ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod", "test"]}]},
     {"ns-staging", "ns-backend", "ns-nolabels"}),
])
def test_namespace_label_selector(selector, expected):
    assert passing(selector) == expected


def test_namespace_label_selector_per_profile():
    """Two profiles, two selectors: each evictor judges with its own (TestMultipleProfiles...)."""
    objects = namespaced_objects()
    document = policy(("PodLifeTime", "deschedule", {"states": ["Running"]}), profile="prod",
                      evictor_args={"namespaceLabelSelector": {"matchLabels": {"env": "prod"}}})
    second = policy(("PodLifeTime", "deschedule", {"states": ["Running"]}), profile="backend",
                    evictor_args={"namespaceLabelSelector": {"matchLabels": {"team": "backend"}}})
    document["profiles"] += second["profiles"]
    for pod in (o for o in objects if o["kind"] == "Pod"):
        pod["status"]["phase"] = "Running"
    plan = compute_plan([*objects, build_node("node2", 1000, 2000, 10)], document, NOW)
    assert {(e["profile"], e["namespace"]) for e in plan["evictions"]} == {("prod", "ns-prod"),
                                                                           ("backend", "ns-backend")}


def test_namespace_label_selector_needs_the_namespace_object():
    objects = [ut_pod("p1", set_normal_owner)]  # no Namespace object for "default"
    assert not pre_evicted(objects, {"namespaceLabelSelector": {"matchLabels": {"a": "b"}}})


@pytest.mark.parametrize("selector", [{}, {"matchLabels": {}}, {"matchExpressions": []}])
def test_empty_namespace_label_selector_is_inactive(selector):
    """Only a selector with matchLabels or matchExpressions is applied, so no Namespace object is needed."""
    assert pre_evicted([ut_pod("p1", set_normal_owner)], {"namespaceLabelSelector": selector})


# --- ⚠ items of spec §5 ---------------------------------------------------------------------------------------------

def test_evict_annotation_bypasses_every_filter_check():
    pod = ut_pod("p", add_evict_annotation, set_deletion, set_mirror_annotations, add_evict_annotation,
                 lambda p: set_annotation(p, "kubernetes.io/config.source", "file"),
                 lambda p: set_annotation(p, PREFER_NO_EVICTION), started(1))
    args = {"labelSelector": {"matchLabels": {"x": "y"}}, "minReplicas": 5, "minPodAge": "1h",
            "noEvictionPolicy": "Mandatory", "podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}
    assert filtered([pod], args)


def test_evict_annotation_does_not_bypass_pre_eviction_filter():
    objects = [ut_pod("p1", set_normal_owner, add_evict_annotation), ut_node("node2", hw_taint)]
    assert filtered(objects, {"nodeFit": True})
    assert not pre_evicted(objects, {"nodeFit": True})


@pytest.mark.parametrize("phase,args,expected", [
    ("Running", {}, False),
    ("Running", {"evictFailedBarePods": True}, False),
    ("", {"podProtections": {"defaultDisabled": ["FailedBarePods"]}}, False),
    ("Failed", {}, False),
    ("Failed", {"podProtections": {"defaultDisabled": ["FailedBarePods"]}}, True),
])
def test_failed_bare_pods(phase, args, expected):
    """Without FailedBarePods, only a *failed* bare pod passes; a running bare pod never does."""
    pod = ut_pod("bare", lambda p: p["status"].update(phase=phase))
    assert filtered([pod], args) is expected


def test_system_critical_disabled_ignores_the_threshold():
    pod = [ut_pod("p", set_normal_owner, priority(HIGH))]
    assert not filtered(pod, {"priorityThreshold": {"value": LOW}})
    assert filtered(pod, {"priorityThreshold": {"value": LOW},
                          "podProtections": {"defaultDisabled": ["SystemCriticalPods"]}})


def test_threshold_is_inclusive_and_priority_class_name_alone_is_no_priority():
    assert not filtered([ut_pod("p", set_normal_owner, priority(LOW))], {"priorityThreshold": {"value": LOW}})
    assert filtered([ut_pod("p", set_normal_owner, priority(LOW - 1))], {"priorityThreshold": {"value": LOW}})
    unresolved = ut_pod("p", set_normal_owner, lambda p: p["spec"].update(priorityClassName="system-node-critical"))
    assert filtered([unresolved], {})


def test_threshold_by_priority_class_name():
    objects = [ut_pod("p", set_normal_owner, priority(500)), build_priority_class("mid", 500)]
    assert not filtered(objects, {"priorityThreshold": {"name": "mid"}})
    objects[1] = build_priority_class("mid", 501)
    assert filtered(objects, {"priorityThreshold": {"name": "mid"}})


def test_static_pod_source():
    assert not filtered([ut_pod("p", set_normal_owner,
                                lambda p: set_annotation(p, "kubernetes.io/config.source", "file"))])
    assert filtered([ut_pod("p", set_normal_owner, lambda p: set_annotation(p, "kubernetes.io/config.source", "api"))])


def test_terminating_and_label_selector():
    assert not filtered([ut_pod("p", set_normal_owner, set_deletion)])
    args = {"labelSelector": {"matchLabels": {"app": "web"}}}
    assert not filtered([ut_pod("p", set_normal_owner)], args)
    assert filtered([ut_pod("p", set_normal_owner, lambda p: set_labels(p, app="web"))], args)


def test_local_storage_is_emptydir_or_hostpath_only():
    assert not filtered([ut_pod("p", set_normal_owner, add_empty_dir)])
    ephemeral = ut_pod("p", set_normal_owner, lambda p: p["spec"].update(
        volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]))
    assert filtered([ephemeral])


def test_min_replicas_counts_owner_uid_across_the_cluster():
    """Every pod with that owner UID counts: other namespaces, other phases, other nodes and unscheduled pods."""
    def owned(name: str, node: str, *applies) -> dict:
        return build_pod(name, 1, 1, node, apply_all(lambda p: p["metadata"].update(
            ownerReferences=[owner_ref("ReplicaSet", "rs", "shared-uid")]), *applies))

    objects = [owned("target", "node1"), owned("pending", ""), owned("done", "node9", failed, in_ns("other"))]
    assert filtered(objects, {"minReplicas": 3}, target="target")
    assert not filtered(objects, {"minReplicas": 4}, target="target")
    assert filtered(objects[:1], {"minReplicas": 1}, target="target")  # 1 disables the check


def test_min_replicas_sees_earlier_evictions_of_the_cycle():
    """Evicted pods leave the (sandboxed) pod cache, so later listings count fewer replicas.

    Filter runs when a plugin lists a node's pods, not again at eviction: PodLifeTime lists every node before
    evicting (all four pass with 4 replicas), the taint plugin lists node by node (n2's pods see 2 replicas left).
    """
    nodes = [build_node(n, 4000, 4 * 10**9, 10, hw_taint) for n in ("n1", "n2")]
    pods = [build_pod(f"r{i}", 1, 1, f"n{1 + i // 2}", set_rs_owner) for i in range(4)]
    lifetime = policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 60}), evictor_args={"minReplicas": 3})
    assert evicted_names(compute_plan(nodes + pods, lifetime, NOW)) == ["r0", "r1", "r2", "r3"]
    taints = policy(("RemovePodsViolatingNodeTaints", "deschedule", {}), evictor_args={"minReplicas": 3})
    plan = compute_plan(nodes + pods, taints, NOW)
    assert evicted_names(plan) == ["r0", "r1"]
    assert plan["spared"]["by_reason"]["fewer replicas than minReplicas"]["count"] == 2


def test_min_pod_age_uses_start_time():
    old_created = ut_pod("p", set_normal_owner, lambda p: p["metadata"].update(creationTimestamp=minutes_ago(600)))
    assert not filtered([old_created], {"minPodAge": "1h"})  # no startTime → protected
    assert filtered([ut_pod("p", set_normal_owner, started(61))], {"minPodAge": "1h"})
    assert not filtered([ut_pod("p", set_normal_owner, started(59))], {"minPodAge": "1h"})


def test_pvc_protected_classes_edge_cases():
    args = {"podProtections": protected_classes("gold")}
    empty_class = build_pvc("foo", "")
    other_ns = build_pvc("foo", "silver", namespace="elsewhere")
    assert not filtered([ut_pod("p", set_normal_owner, pvc_foo), empty_class], args)
    assert not filtered([ut_pod("p", set_normal_owner, pvc_foo), other_ns], args)
    assert filtered([ut_pod("p", set_normal_owner, pvc_foo), build_pvc("foo", "silver")], args)
    assert filtered([ut_pod("p", set_normal_owner), empty_class], args)


def test_pods_without_pdb_selector_semantics():
    args = {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}
    pod = ut_pod("p", set_normal_owner, lambda p: set_labels(p, app="foo"))
    nil_selector = build_pdb("nil", "x")
    nil_selector["spec"].pop("selector")
    all_selector = build_pdb("all", "x")
    all_selector["spec"]["selector"] = {}
    assert not filtered([pod, nil_selector], args)
    assert filtered([pod, all_selector], args)
    assert not filtered([pod, build_pdb("elsewhere", "foo", namespace="other")], args)


def test_node_fit_candidates_are_ready_nodes_matching_the_evictor_node_selector():
    """Candidates come from the whole cluster (not the policy node list), ready and matching evictor.nodeSelector."""
    not_ready = build_node("not-ready", 1000, 2000, 13, lambda n: n["status"].update(
        conditions=[{"type": "Ready", "status": "False"}]))
    pool_b = build_node("pool-b", 1000, 2000, 13, lambda n: set_labels(n, pool="b"))
    pod = ut_pod("p1", set_normal_owner)
    assert not pre_evicted([pod, not_ready], {"nodeFit": True})
    assert pre_evicted([pod, not_ready, pool_b], {"nodeFit": True})
    assert not pre_evicted([pod, pool_b], {"nodeFit": True, "nodeSelector": "pool=a"})
    assert pre_evicted([pod, pool_b], {"nodeFit": True, "nodeSelector": "pool in (a,b)"})


def test_node_fit_ignores_the_policy_node_selector():
    """A pod may move to a node the policy's nodeSelector leaves out of the cycle."""
    nodes = [build_node(n, 1000, 2000, 13, lambda node: set_labels(node, pool="a")) for n in ("a1", "a2")]
    outside = build_node("b1", 1000, 2000, 13)
    tainted = [hw_taint(n) or n for n in nodes]
    pods = [build_pod("p", 100, 0, "a1", set_rs_owner)]
    document = policy(("RemovePodsViolatingNodeTaints", "deschedule", {}), evictor_args={"nodeFit": True},
                      nodeSelector="pool=a")
    assert evicted_names(compute_plan([*tainted, *pods], document, NOW)) == []
    assert evicted_names(compute_plan([*tainted, outside, *pods], document, NOW)) == ["p"]


def test_unparsable_evictor_node_selector_fails_node_fit_only():
    objects = [ut_pod("p1", set_normal_owner), ut_node("node2")]
    assert pre_evicted(objects, {"nodeSelector": "a in b"})
    assert not pre_evicted(objects, {"nodeSelector": "a in b", "nodeFit": True})
    loaded = load_policy(policy(evictor_args={"nodeSelector": "a in b", "nodeFit": True}), {})
    assert any("nodeSelector" in w and "every pod fails nodeFit" in w for w in loaded.warnings)


# --- TestValidateDefaultEvictorArgs (our PolicyError names the field instead of aggregating) ---------------------

FIELD = "policy.profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("args,field", [
    ({"priorityThreshold": {"value": 1, "name": "priority-name"}}, "priorityThreshold"),
    ({"noEvictionPolicy": "invalid-no-eviction-policy"}, "noEvictionPolicy"),
    ({"evictLocalStoragePods": True, "podProtections": {"defaultDisabled": ["DaemonSetPods"]}}, ""),
    ({"evictDaemonSetPods": True, "podProtections": {"extraEnabled": ["PodsWithPVC"]}}, ""),
    ({"podProtections": {"extraEnabled": ["InvalidPolicy"]}}, "podProtections.extraEnabled"),
    ({"podProtections": {"extraEnabled": ["PodsWithPVCC"]}}, "podProtections.extraEnabled"),
    ({"podProtections": {"extraEnabled": ["DaemonSetPods"]}}, "podProtections.extraEnabled"),
    ({"podProtections": {"defaultDisabled": ["InvalidPolicy"]}}, "podProtections.defaultDisabled"),
    ({"podProtections": {"defaultDisabled": ["PodsWithLocalStorag"]}}, "podProtections.defaultDisabled"),
    ({"podProtections": {"defaultDisabled": ["PodsWithPVC"]}}, "podProtections.defaultDisabled"),
    ({"podProtections": {"extraEnabled": ["PodsWithPVC", "PodsWithPVC"]}}, "podProtections.extraEnabled"),
    ({"podProtections": {"defaultDisabled": ["PodsWithLocalStorage", "PodsWithLocalStorage"]}},
     "podProtections.defaultDisabled"),
    # upstream aggregates all four errors; we stop at the first, which is upstream's first too
    ({"noEvictionPolicy": "invalid-no-eviction-policy",
      "podProtections": {"extraEnabled": ["PodsWithPVC", "PodsWithPVC"],
                         "defaultDisabled": ["PodsWithLocalStorage", "PodsWithLocalStorage", "PodsWithoutPDB"]}},
     "noEvictionPolicy"),
    ({"podProtections": {"extraEnabled": ["PodsWithPVC"], "config": {"PodsWithPVC": {"protectedStorageClasses": [
        {"name": ""}, {"name": "protected-storage-class-0"}, {"name": ""}]}}}},
     "podProtections.config.PodsWithPVC.protectedStorageClasses[0].name"),
    ({"podProtections": {"config": {"PodsWithPVC": {"protectedClasses": []}}}},
     "podProtections.config.PodsWithPVC.protectedClasses"),
    ({"evictPods": True}, "evictPods"),  # args are decoded strictly
    ({"minPodAge": "fifty minutes"}, "minPodAge"),
    ({"minReplicas": -1}, "minReplicas"),
    ({"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}, "labelSelector"),
])
def test_validation_errors(args, field):
    with pytest.raises(PolicyError) as info:
        load_policy(policy(evictor_args=args), {})
    assert info.value.field == (f"{FIELD}.{field}" if field else FIELD)


@pytest.mark.parametrize("args", [
    {"podProtections": {"defaultDisabled": [], "extraEnabled": []}},
    {"podProtections": {"defaultDisabled": ["DaemonSetPods", "PodsWithLocalStorage"],
                        "extraEnabled": ["PodsWithPVC"]}},
    {"podProtections": {"extraEnabled": ["PodsWithPVC"]}},
    {"minReplicas": 1},  # upstream only logs that 1 disables the check
    # empty class names only matter when PodsWithPVC is enabled
    {"podProtections": {"config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": ""}]}}}},
    {"evictLocalStoragePods": False, "podProtections": {"extraEnabled": ["PodsWithPVC"]}},
    {"nodeSelector": "NodeSelector", "evictLocalStoragePods": True, "evictDaemonSetPods": True,
     "evictSystemCriticalPods": True, "ignorePvcPods": True, "evictFailedBarePods": True,
     "priorityThreshold": {"value": 800}, "nodeFit": True, "ignorePodsWithoutPDB": True},
])
def test_valid_args(args):
    validate_args(args, "args")
    load_policy(policy(evictor_args=args), {})


def test_defaults_leave_the_args_alone():
    """TestSetDefaults_DefaultEvictorArgs: SetDefaults is a no-op; only the threshold is resolved to a value."""
    args = {"nodeSelector": "NodeSelector", "evictLocalStoragePods": True, "priorityThreshold": {"value": 800}}
    loaded = load_policy(policy(evictor_args=dict(args)), {})
    assert loaded.profiles[0].args["DefaultEvictor"] == args
    assert load_policy(policy(evictor_args={}), {}).profiles[0].args["DefaultEvictor"] == {
        "priorityThreshold": {"value": CRITICAL}}


def test_null_volume_sources_are_absent():
    """``emptyDir: null`` decodes to a nil pointer upstream: not local storage, and a null PVC is no PVC."""
    pod = ut_pod("p", set_normal_owner, lambda p: p["spec"].update(volumes=[
        {"name": "a", "emptyDir": None}, {"name": "b", "hostPath": None},
        {"name": "c", "persistentVolumeClaim": None}]))
    assert filtered([pod], {"ignorePvcPods": True})
