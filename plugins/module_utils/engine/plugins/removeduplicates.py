"""RemoveDuplicates (Balance): spread pods of one owner (same images) evenly over the nodes they can run on."""

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
EXTENSION_POINT = "balance"
ARG_FIELDS = ("namespaces", "excludeOwnerKinds")

OwnerKey = tuple[str, str, str, str]


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.string_list("excludeOwnerKinds")


def set_defaults(args: dict) -> dict:
    return args


def _placement_signature(pod: Pod) -> tuple:
    return (repr(pod.tolerations), repr(pod.required_node_terms), repr(sorted(pod.node_selector.items())))


def target_nodes(duplicates: dict[str, list[Pod]], nodes: list[Node]) -> list[str]:
    """Nodes where the distinct duplicates could land; a pod counts only when more than one node matches."""
    distinct: dict[tuple, Pod] = {}
    for pods in duplicates.values():
        for pod in pods:
            distinct.setdefault(_placement_signature(pod), pod)
    targets: dict[str, None] = {}
    for pod in distinct.values():
        matching = [n.name for n in nodes
                    if tolerates_all(pod.tolerations, n.taints, {"NoSchedule", "NoExecute"})
                    and matches_node_selector(pod, n)]
        if len(matching) > 1:
            targets.update(dict.fromkeys(matching))
    return list(targets)


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    excluded_kinds = set(args.get("excludeOwnerKinds") or [])
    pod_filter = PodFilter(handle, include, exclude)
    occurrences: dict[OwnerKey, int] = {}
    duplicates: dict[OwnerKey, dict[str, list[Pod]]] = {}
    for node in handle.nodes:
        _collect_node(handle, node, pod_filter, excluded_kinds, occurrences, duplicates)
    for owner_key, by_node in duplicates.items():
        targets = target_nodes(by_node, handle.nodes)
        if len(targets) < 2:
            continue
        upper_avg = math.ceil(occurrences[owner_key] / len(targets))
        namespace, kind, name, _ = owner_key
        for node_name, pods in by_node.items():
            if len(pods) + 1 <= upper_avg:
                continue
            reason = (f"duplicate of {kind} {namespace}/{name}: {len(pods) + 1} on {node_name}, "
                      f"fair share {upper_avg} over {len(targets)} nodes")
            for pod in pods[upper_avg - 1:]:
                try:
                    handle.evict(pod, reason)
                except LimitError as exc:
                    if exc.scope == "total":
                        return
                    break


def _collect_node(handle: PluginHandle, node: Node, pod_filter: PodFilter, excluded_kinds: set,
                  occurrences: dict, duplicates: dict) -> None:
    seen_keys: list[list[str]] = []
    for pod in handle.pods_on_node(node.name):
        if not pod.owners or any(o.kind in excluded_kinds for o in pod.owners) or not pod.images:
            continue
        if not pod_filter.accepts(pod):
            continue
        images = sorted(pod.images)
        images_hash = "#".join(images)
        keys = []
        for ref in pod.owners:
            owner_key = (pod.namespace, ref.kind, ref.name, images_hash)
            occurrences[owner_key] = occurrences.get(owner_key, 0) + 1
            keys.extend(f"{pod.namespace}/{ref.kind}/{ref.name}/{image}" for image in images)
        keys.sort()
        if keys in seen_keys:
            for ref in pod.owners:
                owner_key = (pod.namespace, ref.kind, ref.name, images_hash)
                duplicates.setdefault(owner_key, {}).setdefault(node.name, []).append(pod)
        else:
            seen_keys.append(keys)
