"""VolumeBinding and VolumeZone: a replacement goes where its bound volumes can follow (pkg/scheduler/framework/
plugins/volumebinding and volumezone, v1.36), the PreFilter rejections stop the pod before any node, and a snapshot
without PersistentVolumes says the volumes were not checked."""

from __future__ import annotations

import copy
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    StaticCache,
    load_profiles,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.incremental_schedule import (
    FastScheduler,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
    NO_VOLUMES,
    PlacementRequest,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.storage import Storage
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.volumebinding import (
    REASON_NODE_CONFLICT,
    VolumeBinding,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.volumezone import (
    REASON,
    VolumeZone,
    label_zones,
)
from schedtest import cluster, filter_reasons, node, pod, sched

NOW = "2026-11-22T12:00:00Z"
OLD = "2026-11-01T00:00:00Z"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def worker(name: str, zone: Optional[str] = None, cpu: str = "4", **labels: str) -> dict:
    all_labels = {HOST: name, **labels}
    if zone:
        all_labels[ZONE] = zone
    return node(name, {"cpu": cpu, "memory": "8Gi"}, labels=all_labels)


def claim(name: str, volume: str = "", deleting: bool = False) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = OLD
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": {"volumeName": volume} if volume else {}}


def volume(name: str, labels: Optional[dict] = None, pinned: Optional[dict] = None) -> dict:
    spec: dict[str, Any] = {}
    if pinned:
        key, values = next(iter(pinned.items()))
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}}
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec}


def with_claims(*claims: str, **fields: Any) -> dict:
    spec = {"volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}
    return pod("incoming", requests=[{"cpu": "100m", "memory": "128Mi"}], spec=spec, **fields)


def view(nodes: list[dict], storage_objects: list[dict]) -> Any:
    state = cluster(nodes)
    state.storage = Storage.from_objects(storage_objects)
    return state


NODES = [worker("a1", "a"), worker("a2", "a"), worker("b1", "b"), worker("plain")]


def test_a_bound_volume_pinned_to_a_node_lets_only_that_node_pass() -> None:
    state = view(NODES, [claim("data", "pv-local"), volume("pv-local", pinned={HOST: ["b1"]})])
    assert filter_reasons(VolumeBinding(), with_claims("data"), state) == {
        "a1": (REASON_NODE_CONFLICT,), "a2": (REASON_NODE_CONFLICT,), "b1": None, "plain": (REASON_NODE_CONFLICT,)}


def test_every_bound_volume_must_match_and_unbound_claims_are_not_checked() -> None:
    state = view(NODES, [claim("one", "pv-a"), volume("pv-a", pinned={ZONE: ["a"]}),
                         claim("two", "pv-a1"), volume("pv-a1", pinned={HOST: ["a1", "b1"]}),
                         claim("later")])  # unbound: dynamic provisioning or delayed binding decides
    reasons = filter_reasons(VolumeBinding(), with_claims("one", "two", "later"), state)
    assert [name for name, reason in reasons.items() if reason is None] == ["a1"]


def test_volume_zone_labels_admit_their_zones_and_nodes_without_zone_labels() -> None:
    state = view(NODES, [claim("data", "pv-z"), volume("pv-z", labels={ZONE: "a__c"})])
    assert filter_reasons(VolumeZone(), with_claims("data"), state) == {
        "a1": None, "a2": None, "b1": (REASON,), "plain": None}


def test_a_beta_zone_label_on_the_volume_is_matched_by_the_nodes_ga_label() -> None:
    state = view(NODES, [claim("data", "pv-z"), volume("pv-z", labels={BETA_ZONE: "b"})])
    assert filter_reasons(VolumeZone(), with_claims("data"), state) == {
        "a1": (REASON,), "a2": (REASON,), "b1": None, "plain": None}


def test_label_zones_splits_multi_zone_values_and_ignores_malformed_ones() -> None:
    assert label_zones("a__ b__c") == {"a", "b", "c"}
    assert label_zones("a____b") is None  # an empty zone: upstream ignores the label


def test_prefilter_rejections_stop_the_pod_before_any_node() -> None:
    profile = load_profiles(None)["default-scheduler"]
    cases = {
        "missing-claim": ([], 'persistentvolumeclaim "data" not found'),
        "deleting-claim": ([claim("data", "pv-x", deleting=True)], 'persistentvolumeclaim "data" is being deleted'),
        # VolumeBinding's PreFilter passes, VolumeZone's cannot read the volume: its error names it
        "missing-volume": ([claim("data", "pv-gone")], 'persistentvolume "pv-gone" not found'),
    }
    for case, (objects, message) in cases.items():
        state = view(NODES, objects + [volume("unrelated")])
        state.next_start = 2
        for scheduler in (lambda p, s=state: schedule(profile, p, s, StaticCache()),
                          lambda p, s=state: FastScheduler(s).schedule(profile, p)):
            decision = scheduler(sched(with_claims("data")))
            assert decision.node is None, case
            assert decision.reason == f"0/4 nodes are available: {message}.", case
            assert decision.evaluated == 0 and state.next_start == 2, case  # no node looked at, start index kept


def test_a_missing_volume_fails_every_node_when_only_volume_binding_runs() -> None:
    config = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {"filter": {
        "disabled": [{"name": "VolumeZone"}]}}}]}
    profile = load_profiles(config)["default-scheduler"]
    state = view(NODES, [claim("data", "pv-gone"), volume("unrelated")])
    decision = schedule(profile, sched(with_claims("data")), state, StaticCache())
    assert decision.node is None
    assert decision.reason == ("0/4 nodes are available: 4 node(s) unavailable due to one or more pvc(s) bound to "
                               "non-existent pv(s).")


def _stateful_plan(objects: list[dict]) -> dict:
    lifetime = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "p", "pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 3600}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}
    return compute_plan(copy.deepcopy(objects), lifetime, NOW, placement=PlacementRequest())


def _db_pod() -> dict:
    obj = pod("db-0", node_name="busy", requests=[{"cpu": "1", "memory": "1Gi"}],
              spec={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]})
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                           "uid": "db-uid", "controller": True}]
    obj["metadata"]["creationTimestamp"] = OLD
    return obj


def test_a_replacement_pinned_by_its_local_volume_comes_back_to_its_node() -> None:
    """The emptier node would win on scores; the local volume brings the StatefulSet pod back where it was."""
    busy_load = pod("load", node_name="busy", requests=[{"cpu": "2", "memory": "4Gi"}])
    busy_load["metadata"]["creationTimestamp"] = NOW
    nodes = [worker("busy", "a"), worker("idle", "a")]
    storage = [claim("data-db-0", "pv-local"), volume("pv-local", pinned={HOST: ["busy"]})]
    plan = _stateful_plan(nodes + [busy_load, _db_pod()] + storage)
    placement = plan["evictions"][0]["placement"]
    assert (placement["node"], placement["same_node"]) == ("busy", True)
    assert NO_VOLUMES not in plan["placement"]["not_modeled"]

    without_volumes = _stateful_plan(nodes + [busy_load, _db_pod(), storage[0]])
    placement = without_volumes["evictions"][0]["placement"]
    assert (placement["node"], placement["same_node"]) == ("idle", False)
    assert NO_VOLUMES in without_volumes["placement"]["not_modeled"]
