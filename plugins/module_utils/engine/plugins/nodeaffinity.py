"""RemovePodsViolatingNodeAffinity (Deschedule)."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    evict_per_node,
    optional_label_selector,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    fits_any_node,
    matches_node_selector,
    preferred_weight,
)

NAME = "RemovePodsViolatingNodeAffinity"
ARG_FIELDS = ("nodeAffinityType", "namespaces", "labelSelector")
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    types = reader.string_list("nodeAffinityType")
    if not types:
        raise PolicyError(f"{field}.nodeAffinityType", types, f"must list {REQUIRED} and/or {PREFERRED}")
    # other values pass validation upstream: the plugin logs "Invalid nodeAffinityType" and skips them (see deschedule)
    reader.namespaces()
    reader.label_selector()


def set_defaults(args: dict) -> dict:
    return args


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)
    nodes = handle.nodes
    usage = handle.state.usage
    for affinity_type in args["nodeAffinityType"]:
        if affinity_type == REQUIRED:
            _run_required(handle, pod_filter, nodes, usage)
        elif affinity_type == PREFERRED:
            _run_preferred(handle, pod_filter, nodes, usage)
        else:
            handle.error(f"Invalid nodeAffinityType {affinity_type!r} skipped; expected {REQUIRED} or {PREFERRED}")


def _run_required(handle: PluginHandle, pod_filter: PodFilter, nodes: list, usage: Any) -> None:
    def candidates():
        for node in nodes:
            def violates(pod: Pod, node=node) -> bool:
                return pod.has_required_affinity and not matches_node_selector(pod, node)

            yield node.name, [p for p in handle.pods_on_node(node.name)
                              if pod_filter.accepts(p, violates) and fits_any_node(p, nodes, usage)]

    evict_per_node(handle, candidates(),
                   lambda p: f"node {p.node_name} no longer matches the pod's required node affinity/nodeSelector")


def _run_preferred(handle: PluginHandle, pod_filter: PodFilter, nodes: list, usage: Any) -> None:
    weights: dict[int, tuple[int, int]] = {}

    def candidates():
        for node in nodes:
            def better_elsewhere(pod: Pod, node=node) -> bool:
                if not pod.preferred_node_terms:
                    return False
                here = preferred_weight(pod, node)
                best = max([0, *(preferred_weight(pod, n) for n in nodes)])  # upstream's best starts at 0
                weights[pod.index] = (here, best)
                return best > here

            yield node.name, [p for p in handle.pods_on_node(node.name)
                              if pod_filter.accepts(p, better_elsewhere) and fits_any_node(p, nodes, usage)]

    def reason(pod: Pod) -> str:
        here, best = weights.get(pod.index, (0, 0))
        return f"preferred node affinity weight {here} on {pod.node_name} < {best} on another node"

    evict_per_node(handle, candidates(), reason)
