"""HighNodeUtilization (Balance): empty under-utilized nodes so the cluster can be compacted and scaled down."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.lownodeutilization import (
    validate_thresholds,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import sort_by_priority

NAME = "HighNodeUtilization"
EXTENSION_POINT = "balance"
ARG_FIELDS = ("thresholds", "numberOfNodes", "evictableNamespaces", "evictionModes")
ONLY_THRESHOLDING = "OnlyThresholdingResources"


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    validate_thresholds(args.get("thresholds"), f"{field}.thresholds")
    reader.uint("numberOfNodes")
    reader.namespaces("evictableNamespaces", include_allowed=False)
    reader.string_list("evictionModes", (ONLY_THRESHOLDING,))


def set_defaults(args: dict) -> dict:
    return args


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    thresholds = {str(k): float(v) for k, v in args["thresholds"].items()}
    resources = nu.resources_for(thresholds)
    infos = []
    for node in handle.nodes:
        capacity = nu.node_capacity(node, resources)
        usage = nu.node_usage(handle, node, resources)
        infos.append(nu.NodeInfo(node, usage, capacity, nu.percentages(usage, capacity)))
    under = [i for i in infos if all(i.pct.get(r, 0.0) <= thresholds[r] for r in thresholds)]
    under_names = {i.node.name for i in under}
    destinations = [i for i in infos if i.node.name not in under_names and not i.node.unschedulable]
    for info in infos:
        handle.note(info.node.name, "underutilized" if info.node.name in under_names else "appropriately utilized")
    if not under or len(under) <= int(args.get("numberOfNodes") or 0) or len(under) == len(infos) or not destinations:
        return
    available = {r: sum(i.capacity.get(r, 0) - i.usage.get(r, 0) for i in destinations) for r in resources}
    under.sort(key=lambda i: sum(i.usage.get(r, 0) for r in resources))
    only_thresholding = ONLY_THRESHOLDING in (args.get("evictionModes") or [])
    _, excluded = ArgsReader(args, NAME, ARG_FIELDS).namespaces("evictableNamespaces", include_allowed=False)
    destination_taints = [i.node.taints for i in destinations]

    def removable(pod: Pod) -> bool:
        if only_thresholding and not (pod.container_request_keys & set(thresholds)):
            return False
        return handle.filter(pod)

    for info in under:
        pods = [p for p in handle.pods_on_node(info.node.name) if removable(p)]
        if not pods:
            continue
        parts = ", ".join(f"{r} {nu.fmt_pct(info.pct.get(r, 0.0))} ≤ {nu.fmt_pct(thresholds[r])}" for r in thresholds)
        reason = f"node {info.node.name} underutilized ({parts}): compacting"
        if not nu.evict_from_node(handle, info, sort_by_priority(pods), resources, available, destination_taints,
                                  excluded, _keep_going, reason):
            return


def _keep_going(_info: nu.NodeInfo, available: dict[str, int]) -> bool:
    return nu.all_available(available)
