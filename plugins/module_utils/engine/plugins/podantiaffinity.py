"""RemovePodsViolatingInterPodAntiAffinity (Deschedule): evicts the pod that owns a violated required term."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import EVICTED, PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import compile_label_selector, matches
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    optional_label_selector,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    anti_affinity_namespaces,
    sort_by_priority,
)

NAME = "RemovePodsViolatingInterPodAntiAffinity"
EXTENSION_POINT = "deschedule"
ARG_FIELDS = ("namespaces", "labelSelector")


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.label_selector()


def set_defaults(args: dict) -> dict:
    return args


def _same_domain(first: Node, second: Node, key: str) -> bool:
    if first.name == second.name:
        return True
    return key in first.labels and key in second.labels and first.labels[key] == second.labels[key]


def find_violation(pod: Pod, by_namespace: dict[str, dict[str, Pod]], nodes: dict[str, Node]) -> Optional[tuple]:
    """The first (partner, term) that makes the pod's required anti-affinity fail, or None."""
    node = nodes.get(pod.node_name)
    if node is None:
        return None
    for term in pod.anti_affinity_terms:
        namespaces = anti_affinity_namespaces(pod, term)
        try:
            selector = compile_label_selector(term.get("labelSelector"))
        except ValueError:
            return None
        topology_key = term.get("topologyKey", "")
        for namespace in sorted(namespaces):
            for other in by_namespace.get(namespace, {}).values():
                if other.name == pod.name or not matches(selector, other.labels):
                    continue
                other_node = nodes.get(other.node_name)
                if other_node is not None and _same_domain(node, other_node, topology_key):
                    return other, term
    return None


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)
    nodes = {n.name: n for n in handle.nodes}
    by_namespace: dict[str, dict[str, Pod]] = {}
    by_node: dict[str, list[Pod]] = {}
    for node in handle.nodes:
        for pod in handle.pods_on_node(node.name):
            if pod_filter.namespace_ok(pod) and pod_filter.labels_ok(pod):
                by_namespace.setdefault(pod.namespace, {})[pod.name] = pod
                by_node.setdefault(node.name, []).append(pod)
    for node in handle.nodes:
        for pod in sort_by_priority(by_node.get(node.name, [])):
            if not pod.anti_affinity_terms:
                continue
            violation = find_violation(pod, by_namespace, nodes)
            if violation is None or not handle.filter(pod) or not handle.pre_evict(pod):
                continue
            partner, term = violation
            reason = (f"violates its required pod anti-affinity with {partner.namespace}/{partner.name} "
                      f"(topologyKey {term.get('topologyKey', '')})")
            try:
                if handle.evict(pod, reason) == EVICTED:
                    by_namespace.get(pod.namespace, {}).pop(pod.name, None)
            except LimitError as exc:
                if exc.scope == "total":
                    return
                break
