"""HighNodeUtilization (Balance): empty under-utilized nodes so the cluster can be compacted and scaled down."""

from __future__ import annotations

from typing import Any, Callable

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.lownodeutilization import (
    APPROPRIATE,
    UNDER,
    validate_thresholds,
)

NAME = "HighNodeUtilization"
EXTENSION_POINT = "balance"
ARG_FIELDS = ("thresholds", "numberOfNodes", "evictableNamespaces", "evictionModes")
ONLY_THRESHOLDING = "OnlyThresholdingResources"


def validate(args: dict, field: str) -> None:
    if "metricsUtilization" in args:  # a common mistake: say why, not only "unknown field"
        raise PolicyError(f"{field}.metricsUtilization", args["metricsUtilization"],
                          "HighNodeUtilization has no metricsUtilization upstream (it reads requests only, and strict "
                          "decoding refuses the field); use LowNodeUtilization for actual utilization")
    reader = ArgsReader(args, field, ARG_FIELDS)
    validate_thresholds(args.get("thresholds"), f"{field}.thresholds")
    reader.integer("numberOfNodes")  # a plain int upstream: negative values are accepted and act like 0
    reader.namespaces("evictableNamespaces", include_allowed=False)
    reader.string_list("evictionModes", (ONLY_THRESHOLDING,))


def set_defaults(args: dict) -> dict:
    return args


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    thresholds = {str(k): float(v) for k, v in args["thresholds"].items()}
    resources = nu.resources_for(thresholds)
    infos = nu.node_infos(handle, resources)
    under, destinations = _classify(handle, infos, thresholds)
    if not under or len(under) <= int(args.get("numberOfNodes") or 0) or len(under) == len(infos) or not destinations:
        return
    # destinations are capped at 100% of every threshold resource, i.e. their full capacity
    full = {r: 100.0 for r in thresholds}
    for info in destinations:
        info.cap = nu.absolute_cap(full, info.capacity, resources)
    available = {r: sum(i.cap.get(r, 0) - i.usage.get(r, 0) for i in destinations) for r in resources}
    _included, excluded = ArgsReader(args, NAME, ARG_FIELDS).namespaces("evictableNamespaces", include_allowed=False)
    destination_taints = [i.node.taints for i in destinations]
    removable = _removable(handle, thresholds, ONLY_THRESHOLDING in (args.get("evictionModes") or []))
    for info in nu.sort_by_usage(under, ascending=True):
        pods = [p for p in handle.pods_on_node(info.node.name) if removable(p)]
        if not pods:
            continue
        ordered = handle.order.priority_sort(pods)
        if not nu.evict_from_node(handle, info, ordered, resources, available, destination_taints,
                                  excluded, _keep_going, _reason(info, thresholds)):
            return


def _classify(handle: PluginHandle, infos: list[nu.NodeInfo],
              thresholds: dict[str, float]) -> tuple[list[nu.NodeInfo], list[nu.NodeInfo]]:
    """Under: every threshold resource ≤ its threshold (unschedulable nodes too); destinations: the schedulable rest."""
    under, destinations = [], []
    for info in infos:
        if all(info.pct.get(r, 0.0) <= thresholds[r] for r in thresholds):
            under.append(info)
            handle.note(info.node.name, UNDER)
        else:
            if not info.node.unschedulable:
                destinations.append(info)
            handle.note(info.node.name, APPROPRIATE)
    return under, destinations


def _removable(handle: PluginHandle, thresholds: dict[str, float], only_thresholding: bool) -> Callable[[Pod], bool]:
    """The evictor Filter, ANDed in OnlyThresholdingResources mode with "some container requests a threshold key"."""
    keys = set(thresholds)

    def removable(pod: Pod) -> bool:
        if only_thresholding and not (pod.container_request_keys & keys):
            return False
        return handle.filter(pod)

    return removable


def _keep_going(_info: nu.NodeInfo, available: dict[str, int]) -> bool:
    """Only the destinations' room counts: an under node is emptied for as long as the rest can take its pods."""
    return nu.all_available(available)


def _reason(info: nu.NodeInfo, thresholds: dict[str, float]) -> str:
    """E.g. "node n3 at cpu 10% ≤ threshold 30%, pods 10% ≤ threshold 30%"."""
    parts = [f"{r} {nu.fmt_pct(info.pct.get(r, 0.0))} ≤ threshold {nu.fmt_pct(t)}" for r, t in thresholds.items()]
    return f"node {info.node.name} at " + ", ".join(parts)
