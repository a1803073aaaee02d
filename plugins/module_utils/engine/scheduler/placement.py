"""Placement preview: where the replacements of the planned evictions land, and whether the cluster is better.

After the cycle's evictions, each replacement pod (a copy of the evicted pod without its node: what a ReplicaSet,
StatefulSet, ReplicationController or Job creates) is scheduled one at a time, in eviction order, by the profile its
``schedulerName`` names; the node it lands on takes its requests before the next one is placed. A bare pod is not
replaced; a DaemonSet pod is recreated on its own node.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import UsageUnavailable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    Decision,
    Profile,
    StaticCache,
    load_profiles,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.imagelocality import (
    NAME as IMAGE_LOCALITY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.imagelocality import ImageStates
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.incremental_schedule import (
    FastScheduler,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
    ExtrasIndex,
    SchedPod,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.storage import Storage

REPLACED_BY_CONTROLLER = ("ReplicaSet", "StatefulSet", "ReplicationController", "Job")
RESOURCES = ("cpu", "memory", "pods")
VOLCANO_SCHEDULER = "volcano"  # the schedulerName of pods the Volcano scheduler places (its Helm chart's default)
VOLUME_FILTERS = ("VolumeBinding", "VolumeZone")
NO_IMAGES = ("ImageLocality: no node of the snapshot lists its images (status.images), so every node scores 0 "
             "(a live plan reads them with placement on; keep them in a snapshot file)")
NO_VOLUMES = ("VolumeBinding, VolumeZone: the snapshot has no PersistentVolumes, so volume node affinity and zones "
              "are not checked (a live plan lists them with placement on; add them to a snapshot file)")
CAVEATS = (
    "Nodes are taken in name order, zones interleaved, and the search starts where the previous one stopped; the "
    "real scheduler's node order and start differ, so in clusters of 100+ nodes (where it scores only a share of the "
    "feasible nodes) the tied nodes are the best of the nodes this preview looked at.",
    "Default topology spreading counts pods of the same controller (the snapshot has no Services/ReplicaSets).",
)


class PlacementRequest:
    """What the plan needs to preview placement: the scheduler configuration and the extras of the raw pods."""

    def __init__(self, scheduler_config: Optional[Mapping[str, Any]] = None, extras: Optional[ExtrasIndex] = None,
                 node_cpu_usage: Optional[Callable[[str], Optional[int]]] = None, reference: bool = False) -> None:
        self.scheduler_config = scheduler_config
        self.extras = extras
        self.node_cpu_usage = node_cpu_usage
        # True: every replacement through framework.schedule, the straightforward path (tests compare the two)
        self.reference = reference

    def record_objects(self, objects: list) -> None:
        """Keep what placement reads of the raw pods (call before the objects are reduced to a Snapshot)."""
        if self.extras is None:
            self.extras = ExtrasIndex.from_objects(objects, self._uses_trimaran())

    def recording(self, slim: Callable[[dict], Any], nodes_first: bool = True) -> Callable[[dict], Any]:
        """A hook for objects as they are listed or read: keep the pod's extras, then reduce it with ``slim``.
        ``nodes_first``: whether every Node comes before the pods (a listing), see ExtrasIndex."""
        if self.extras is None:
            self.extras = ExtrasIndex(self._uses_trimaran(), nodes_first)
        extras = self.extras

        def hook(obj: dict) -> Any:
            extras.record(obj)
            return slim(obj)
        return hook

    def _uses_trimaran(self) -> bool:
        return "TargetLoadPacking" in repr(self.scheduler_config or "")

    def annotate(self, plan: dict, snapshot: Any, state: Any) -> None:
        annotate_plan(self, plan, snapshot, state)


def build_cluster(snapshot: Any, extras: Optional[ExtrasIndex]) -> tuple[Cluster, dict[int, SchedPod]]:
    """The scheduler's view of the snapshot, and the view of each bound pod by its snapshot index."""
    cluster = Cluster(snapshot.nodes.values(), snapshot.namespaces)
    cluster.storage = Storage.from_snapshot(snapshot)
    cluster.images = ImageStates.from_nodes(cluster.nodes, extras.node_images if extras else None)
    lookup = extras.by_key if extras else {}
    by_name = cluster.by_name
    by_index = {pod.index: SchedPod(pod, lookup.get(pod.key)) for pod in snapshot.pods
                if pod.node_name in by_name and not pod.terminal}
    cluster.load((sched, sched.model.node_name) for sched in by_index.values())
    return cluster, by_index


def replacement_of(pod: SchedPod) -> SchedPod:
    return pod.replacement()


def preview_placement(snapshot: Any, evicted: Mapping[int, dict], evictions: list[dict],
                      request: PlacementRequest) -> dict:
    """Annotate each eviction with ``placement`` and return the plan's ``placement`` section."""
    profiles = load_profiles(request.scheduler_config, {"node_cpu_usage": request.node_cpu_usage})
    cluster, by_index = build_cluster(snapshot, request.extras)
    entry_pod: dict[int, SchedPod] = {}
    for index, entry in evicted.items():
        pod = by_index.get(index)
        if pod is not None:
            cluster.unbind(pod)
            entry_pod[id(entry)] = pod
    added = {name: {"cpu": 0, "memory": 0, "pods": 0} for name in cluster.by_name}
    cache = StaticCache()
    if request.reference:
        def scheduler(profile: Profile, pod: SchedPod) -> Decision:
            return schedule(profile, pod, cluster, cache)
    else:
        scheduler = FastScheduler(cluster, cache).schedule
    used: dict[str, Profile] = {}
    for entry in evictions:
        pod = entry_pod.get(id(entry))
        entry["placement"] = _place(pod, entry, cluster, profiles, scheduler, used, added)
    verdict = _verdict(evictions, used)
    if cluster.storage is None and any(p.name in VOLUME_FILTERS for u in used.values() for p in u.filters):
        verdict["not_modeled"].append(NO_VOLUMES)
    if cluster.images is None and any(p.name == IMAGE_LOCALITY for u in used.values() for p, _unused in u.scorers):
        verdict["not_modeled"].append(NO_IMAGES)
    return {"added": added, "verdict": verdict}


def _place(pod: Optional[SchedPod], entry: dict, cluster: Cluster, profiles: Mapping[str, Profile],
           scheduler: Callable[[Profile, SchedPod], Decision], used: dict[str, Profile], added: dict) -> dict:
    if pod is None:
        return _result(None, entry, [], "the pod is not in the scheduler's view (no node or terminal)", "unplaced")
    kind = pod.owner_kind
    if kind == "DaemonSet":
        replacement = replacement_of(pod)
        _bind(cluster, replacement, entry["node"], added, None)
        return _result(entry["node"], entry, [entry["node"]], "a DaemonSet recreates its pod on the same node",
                       "placed")
    if kind not in REPLACED_BY_CONTROLLER:
        why = "a bare pod is not recreated" if not kind else f"owner kind {kind} is not known to recreate the pod"
        return _result(None, entry, [], why, "not_replaced")
    profile = profiles.get(pod.scheduler_name)
    if profile is None and pod.scheduler_name == VOLCANO_SCHEDULER:
        return _result(None, entry, [], "schedulerName 'volcano': the Volcano scheduler's actions and plugins "
                       "(binpack, usage, gang scheduling) are not modelled, so where it places the pod is not "
                       "predicted", "unplaced")
    if profile is None:
        return _result(None, entry, [], f"schedulerName {pod.scheduler_name!r} has no profile in scheduler_config; "
                       "give the KubeSchedulerConfiguration that scheduler runs", "unplaced")
    used[profile.scheduler_name] = profile
    replacement = replacement_of(pod)
    decision = scheduler(profile, replacement)
    if decision.node is None:
        result = _result(None, entry, [], decision.reason, "unplaced")
        result["rejected_by"] = decision.rejected_by
        return result
    _bind(cluster, replacement, decision.node, added, profile)
    result = _result(decision.node, entry, decision.tied, decision.reason, "placed")
    result["scheduler"] = profile.scheduler_name
    return result


def _bind(cluster: Cluster, pod: SchedPod, node_name: str, added: dict, profile: Optional[Profile]) -> None:
    cluster.bind(pod, node_name)
    totals = added.setdefault(node_name, {"cpu": 0, "memory": 0, "pods": 0})
    totals["cpu"] += pod.requests.get("cpu", 0)
    totals["memory"] += pod.requests.get("memory", 0)
    totals["pods"] += 1
    for plugin, _unused in profile.scorers if profile else ():
        if hasattr(plugin, "placed"):
            plugin.placed(pod, node_name)


def _result(node: Optional[str], entry: dict, tied: list[str], reason: str, outcome: str) -> dict:
    return {"node": node, "same_node": node is not None and node == entry.get("node"), "tied_nodes": tied,
            "reason": reason, "outcome": outcome}


def _verdict(evictions: list[dict], used: Mapping[str, Profile]) -> dict:
    outcomes = [e["placement"] for e in evictions]
    notes = sorted({n for p in used.values() for n in p.notes})
    return {
        "evictions": len(evictions),
        "placed": sum(1 for p in outcomes if p["outcome"] == "placed"),
        "same_node": sum(1 for p in outcomes if p["same_node"]),
        "unplaced": sum(1 for p in outcomes if p["outcome"] == "unplaced"),
        "not_replaced": sum(1 for p in outcomes if p["outcome"] == "not_replaced"),
        "ties": sum(1 for p in outcomes if len(p["tied_nodes"]) > 1),
        "schedulers": {name: profile.describe() for name, profile in sorted(used.items())},
        "not_modeled": notes,
        "caveats": list(CAVEATS),
    }


def add_placement_utilization(nodes: list[dict], added: Mapping[str, Mapping[str, int]]) -> None:
    """Per node: requests after the replacements landed, in the plan's units, and as percentages."""
    for node in nodes:
        extra = added.get(node["name"], {})
        after = node["requested_after"]
        requested = {
            "cpu": after["cpu"] + scaled("cpu", extra.get("cpu", 0)),
            "memory": after["memory"] + scaled("memory", extra.get("memory", 0)),
            "pods": after["pods"] + extra.get("pods", 0),
        }
        node["requested_after_placement"] = requested
        node["after_placement"] = {
            r: round(requested[r] / node["allocatable"][r] * 100, 2) if node["allocatable"].get(r) else None
            for r in RESOURCES
        }


def spread(nodes: list[dict], state: str) -> dict:
    """Population standard deviation and max−min of the utilization percentages across nodes."""
    result = {}
    for resource in RESOURCES:
        values = [n[state][resource] for n in nodes if n[state].get(resource) is not None]
        if not values:
            result[resource] = {"stddev": None, "range": None}
            continue
        mean = sum(values) / len(values)
        deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        result[resource] = {"stddev": round(deviation, 2), "range": round(max(values) - min(values), 2)}
    return result


def spread_summary(nodes: list[dict]) -> dict:
    """Spread before, after the evictions and after placement, over schedulable nodes."""
    considered = [n for n in nodes if not n.get("unschedulable")]
    summary = {state: spread(considered, key) for state, key in
               (("before", "before"), ("after_evictions", "after"), ("after_placement", "after_placement"))}
    summary["improved"] = {
        r: (summary["after_placement"][r]["stddev"] is not None
            and summary["after_placement"][r]["stddev"] < summary["before"][r]["stddev"])
        for r in ("cpu", "memory")
    }
    return summary


def annotate_plan(request: PlacementRequest, plan: dict, snapshot: Any, state: Any) -> None:
    """Add ``placement`` to each eviction, per-node utilization after placement and the plan's verdict."""
    if request.node_cpu_usage is None:
        request.node_cpu_usage = _metrics_cpu_lookup(snapshot)
    outcome = preview_placement(snapshot, state.evicted, plan["evictions"], request)
    add_placement_utilization(plan["utilization"]["nodes"], outcome["added"])
    verdict = outcome["verdict"]
    verdict["spread"] = spread_summary(plan["utilization"]["nodes"])
    plan["placement"] = verdict


def _metrics_cpu_lookup(snapshot: Any) -> Optional[Callable[[str], Optional[int]]]:
    actual = getattr(snapshot, "actual", None)
    if actual is None:
        return None

    def lookup(node_name: str) -> Optional[int]:
        try:
            return int(actual.node_usage(node_name)["cpu"])
        except UsageUnavailable:  # no NodeMetrics for the node: TargetLoadPacking scores it 0
            return None
    return lookup
