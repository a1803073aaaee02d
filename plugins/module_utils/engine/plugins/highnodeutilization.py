"""HighNodeUtilization (Balance): empty under-utilized nodes so the cluster can be compacted and scaled down.

The Volcano descheduler (Policy.flavor "volcano") runs upstream v0.27.1's HighNodeUtilization, vendored unchanged
(volcano-sh/descheduler go.mod, pkg/descheduler/setupplugins.go). It differs from upstream HEAD's in two ways that
change a plan, both modelled here:

- its args have no ``evictionModes`` (added later) and plugin args are decoded strictly: the policy does not load;
- a node is underutilized when every resource's requests are at most ``int64(pct × 0.01 × allocatable)`` (cpu in
  millis), with cpu, memory and pods missing from ``thresholds`` at 100%. HEAD compares ``requests / allocatable ×
  100`` with the percentage, and only for the resources named: at a boundary (900m of 3 cores against 30%) HEAD's
  float gives 30.000000000000004 (not under) where v0.27.1's whole millis give 900 ≤ 900 (under), and a node
  requesting more than its allocatable of an unnamed resource is never underutilized in v0.27.1.

The rest is the same: destinations (schedulable and not underutilized) filled to 100% of allocatable, sources by
usage ascending, pods by priority then QoS, taints/namespace/PreEvictionFilter checks, and the evictor's node limit
ending a node (v0.27.1 checks it after each pod, HEAD at the next eviction: the same pods are evicted).
"""

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
ARG_FIELDS = ("thresholds", "numberOfNodes", "evictableNamespaces", "evictionModes")
ONLY_THRESHOLDING = "OnlyThresholdingResources"
VOLCANO = "volcano"


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


def validate_volcano(args: dict, field: str) -> None:
    """What upstream v0.27.1 (vendored by the Volcano descheduler) refuses on top of HEAD's checks."""
    if "evictionModes" in args:
        raise PolicyError(f"{field}.evictionModes", args["evictionModes"],
                          'strict decoding error: unknown field "evictionModes": the Volcano descheduler runs '
                          "upstream v0.27.1's HighNodeUtilization, which has no evictionModes (remove it)")


def set_defaults(args: dict) -> dict:
    return args


def balance(handle: PluginHandle, args: dict[str, Any]) -> None:
    thresholds = {str(k): float(v) for k, v in args["thresholds"].items()}
    resources = nu.resources_for(thresholds)
    infos = nu.node_infos(handle, resources)
    if handle.state.flavor == VOLCANO:
        under, destinations = _classify_v0271(handle, infos, thresholds, resources)
    else:
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
    for info in nu.sort_by_usage(under, ascending=True, order=handle.order):
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
    return _split(handle, infos, lambda info: all(info.pct.get(r, 0.0) <= thresholds[r] for r in thresholds))


def _classify_v0271(handle: PluginHandle, infos: list[nu.NodeInfo], thresholds: dict[str, float],
                    resources: list[str]) -> tuple[list[nu.NodeInfo], list[nu.NodeInfo]]:
    """Upstream v0.27.1: every resource (cpu, memory, pods at 100% unless named) at most its absolute threshold,
    int64(pct × 0.01 × allocatable) in whole millis of cpu, bytes, pods or units."""
    filled = {r: thresholds.get(r, 100.0) for r in resources}
    return _split(handle, infos, lambda info: all(
        info.usage.get(r, 0) <= int(filled[r] * 0.01 * info.capacity.get(r, 0)) for r in resources))


def _split(handle: PluginHandle, infos: list[nu.NodeInfo],
           is_under: Callable[[nu.NodeInfo], bool]) -> tuple[list[nu.NodeInfo], list[nu.NodeInfo]]:
    """Underutilized nodes, and the schedulable others as destinations; each node noted with its class."""
    under, destinations = [], []
    for info in infos:
        if is_under(info):
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
