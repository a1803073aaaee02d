"""RemoveDuplicates (Balance): spread pods of one owner (same images) evenly over the nodes they can run on.

Upstream walks owners and nodes as Go maps; the deterministic plan takes them in first-seen order (nodes by name, pods
by namespace/name), so when a limit cuts a pass short the evicted pods may differ from a real run, not their number;
sampled cycles (engine/sampling.py) draw these orders at random.
"""

from __future__ import annotations

import math
from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import PodFilter
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    matches_node_selector,
    tolerates_all,
)

NAME = "RemoveDuplicates"
ARG_FIELDS = ("namespaces", "excludeOwnerKinds")
DO_NOT_SCHEDULE_EFFECTS = {"NoSchedule", "NoExecute"}

OwnerKey = tuple[str, str, str, str]  # namespace, owner kind, owner name, imagesHash


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.string_list("excludeOwnerKinds")


def set_defaults(args: dict) -> dict:
    return args


def _placement_signature(pod: Pod) -> tuple:
    """Tolerations, required node affinity and nodeSelector: pods equal here land on the same nodes."""
    return (repr(pod.tolerations), repr(pod.required_node_terms), repr(sorted(pod.node_selector.items())))


class TargetNodes:
    """getTargetNodes, with the feasible nodes of each placement signature computed once per plugin run."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes
        self.by_signature: dict[tuple, frozenset] = {}

    def count(self, duplicates: dict[str, list[Pod]]) -> int:
        """How many nodes the distinct duplicates could land on; a pod counts only when more than one node does."""
        distinct: dict[tuple, Pod] = {}
        for pods in duplicates.values():
            for pod in pods:
                distinct.setdefault(_placement_signature(pod), pod)
        sets = []
        for signature, pod in distinct.items():
            feasible = self.by_signature.get(signature)
            if feasible is None:
                feasible = self.by_signature[signature] = self._feasible(pod)
            sets.append(feasible)
        return len(sets[0]) if len(sets) == 1 else len(frozenset().union(*sets))

    def _feasible(self, pod: Pod) -> frozenset:
        # unschedulable nodes are not excluded, as upstream
        matching = frozenset(n.name for n in self.nodes
                             if tolerates_all(pod.tolerations, n.taints, DO_NOT_SCHEDULE_EFFECTS)
                             and matches_node_selector(pod, n))
        return matching if len(matching) > 1 else frozenset()


def balance(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    excluded_kinds = set(args.get("excludeOwnerKinds") or [])
    pod_filter = PodFilter(handle, include, exclude)
    occurrences: dict[OwnerKey, int] = {}
    duplicates: dict[OwnerKey, dict[str, list[Pod]]] = {}
    for node in handle.nodes:
        _collect_node(handle, node, pod_filter, excluded_kinds, occurrences, duplicates)
    targets = TargetNodes(handle.nodes)
    for owner_key, by_node in handle.order.keys(duplicates.items()):  # a Go map upstream
        target_count = targets.count(by_node)
        if target_count < 2:
            continue
        upper_avg = math.ceil(occurrences[owner_key] / target_count)
        if not _evict_owner(handle, owner_key, by_node, upper_avg, target_count):
            return


def _evict_owner(handle: PluginHandle, owner_key: OwnerKey, by_node: dict[str, list[Pod]], upper_avg: int,
                 target_count: int) -> bool:
    """Keep the original plus upper_avg-1 duplicates per node. False once the total limit ends the plugin."""
    namespace, kind, name, _images_hash = owner_key
    for node_name, pods in handle.order.keys(by_node.items()):  # a Go map upstream
        if len(pods) + 1 <= upper_avg:
            continue
        reason = (f"duplicate of {kind} {namespace}/{name}: {len(pods) + 1} on {node_name}, "
                  f"fair share {upper_avg} over {target_count} nodes")
        for pod in pods[upper_avg - 1:]:
            try:
                handle.evict(pod, reason)
            except LimitError as exc:
                if exc.scope == "total":
                    return False
                break  # node limit: next node of this owner
    return True


def _collect_node(handle: PluginHandle, node: Node, pod_filter: PodFilter, excluded_kinds: set,
                  occurrences: dict, duplicates: dict) -> None:
    """Count owner keys over the node's evictable pods; a pod whose key list was already seen here is a duplicate."""
    seen_keys: set[tuple[str, ...]] = set()
    for pod in handle.pods_on_node(node.name):
        if not pod.owners or any(o.kind in excluded_kinds for o in pod.owners) or not pod.images:
            continue
        if not pod_filter.accepts(pod):
            continue
        images = sorted(pod.images)
        images_hash = "#".join(images)
        owner_keys = [(pod.namespace, ref.kind, ref.name, images_hash) for ref in pod.owners]
        for owner_key in owner_keys:
            occurrences[owner_key] = occurrences.get(owner_key, 0) + 1
        keys = tuple(sorted(f"{pod.namespace}/{ref.kind}/{ref.name}/{image}" for ref in pod.owners for image in images))
        if keys not in seen_keys:
            seen_keys.add(keys)
            continue
        for owner_key in owner_keys:  # a pod with several owners is listed (and may be tried) once per owner
            duplicates.setdefault(owner_key, {}).setdefault(node.name, []).append(pod)
