"""Shared predicates (upstream pkg/utils and pkg/descheduler/node): tolerations, node selection, node fit."""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    compile_label_selector,
    matches,
    node_term_matches,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import milli_value, value

PREFER_NO_EVICTION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
_QOS_RANK = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}
# content.IsDecimalInteger: canonical form only ("05", "+5", " 5" and "1_0" are rejected, unlike Python's int())
_DECIMAL_INTEGER = re.compile(r"(0|-?[1-9][0-9]*)")
_INT64 = (-(2**63), 2**63 - 1)


def tolerates_taint(toleration: Mapping, taint: Mapping) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    if operator in ("Lt", "Gt"):
        tol_value, taint_value = _int64(toleration.get("value")), _int64(taint.get("value"))
        if tol_value is None or taint_value is None:
            return False
        return taint_value < tol_value if operator == "Lt" else taint_value > tol_value
    return False


def _int64(text: object) -> Optional[int]:
    """A toleration/taint value for Lt/Gt: a canonical decimal int64, else None (upstream logs and says no)."""
    raw = "" if text is None else str(text)
    if not _DECIMAL_INTEGER.fullmatch(raw):
        return None
    number = int(raw)
    return number if _INT64[0] <= number <= _INT64[1] else None


def tolerates_all(tolerations: Iterable[Mapping], taints: Iterable[Mapping], effects: Optional[set] = None) -> bool:
    """Every taint (optionally only those with an effect in ``effects``) is tolerated by some toleration."""
    tolerations = list(tolerations)
    for taint in taints:
        if effects is not None and taint.get("effect") not in effects:
            continue
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return False
    return True


def matches_node_selector(pod: Pod, node: Node) -> bool:
    """PodMatchNodeSelector: spec.nodeSelector and the required node affinity."""
    for key, expected in pod.node_selector.items():
        if node.labels.get(key) != expected:
            return False
    return matches_required_affinity(pod, node)


def matches_required_affinity(pod: Pod, node: Node) -> bool:
    if pod.required_node_terms is None:
        return True
    terms = [t for t in pod.required_node_terms if t is not None]
    return any(node_term_matches(term, node.labels, node.name) for term in terms)


def preferred_weight(pod: Pod, node: Node) -> int:
    return sum(
        weight for weight, term in pod.preferred_node_terms
        if term is not None and node_term_matches(term, node.labels, node.name)
    )


def priority_sort_key(pod: Pod) -> tuple:
    """SortPodsBasedOnPriorityLowToHigh as a total order (upstream's comparator is not strict; see docs)."""
    return (
        pod.priority is not None,
        pod.priority or 0,
        _QOS_RANK.get(pod.qos, 1),
        PREFER_NO_EVICTION in pod.annotations,
    )


def sort_by_priority(pods: list[Pod]) -> list[Pod]:
    return sorted(pods, key=priority_sort_key)


def anti_affinity_namespaces(pod: Pod, term: Mapping) -> set[str]:
    namespaces = term.get("namespaces") or []
    return set(namespaces) if namespaces else {pod.namespace}


class NodeUsage:
    """Live requests per node (non-terminal pods), kept up to date as the simulation evicts pods."""

    def __init__(self, pods_by_node: Mapping[str, list[Pod]]) -> None:
        self.used: dict[str, dict[str, int]] = {}
        self.count: dict[str, int] = {}
        self.live: dict[str, list[Pod]] = {}
        for node_name, pods in pods_by_node.items():
            self.live[node_name] = [p for p in pods if not p.terminal]
            totals: dict[str, int] = {}
            for pod in self.live[node_name]:
                for key, amount in pod.requests.items():
                    totals[key] = totals.get(key, 0) + amount
            self.used[node_name] = totals
            self.count[node_name] = len(self.live[node_name])

    def remove(self, pod: Pod) -> None:
        live = self.live.get(pod.node_name)
        if live is None or pod.terminal:
            return
        try:
            live.remove(pod)
        except ValueError:
            return
        totals = self.used[pod.node_name]
        for key, amount in pod.requests.items():
            totals[key] = totals.get(key, 0) - amount
        self.count[pod.node_name] -= 1


def fit_failure(pod: Pod, node: Node, usage: NodeUsage) -> Optional[str]:
    """NodeFit: None when the pod fits, else why not (in upstream's check order)."""
    if node.unschedulable:
        return "node is unschedulable"
    if not matches_node_selector(pod, node):
        return "pod node selector/affinity does not match"
    if not tolerates_all(pod.tolerations, node.taints, {"NoSchedule", "NoExecute"}):
        return "untolerated taint"
    if pod.anti_affinity_terms and _violates_anti_affinity(pod, node, usage):
        return "pod anti-affinity"
    if pod.node_name != node.name:
        return _resource_failure(pod, node, usage)
    return None


def _violates_anti_affinity(pod: Pod, node: Node, usage: NodeUsage) -> bool:
    others = usage.live.get(node.name, [])
    for term in pod.anti_affinity_terms:
        if term.get("topologyKey", "") not in node.labels:
            continue
        selector = compile_label_selector(term.get("labelSelector"))
        namespaces = anti_affinity_namespaces(pod, term)
        for other in others:
            if other.name != pod.name and other.namespace in namespaces and matches(selector, other.labels):
                return True
    return False


def _resource_failure(pod: Pod, node: Node, usage: NodeUsage) -> Optional[str]:
    """fitsRequest: ``pods`` first, then every requested resource (value-0 keys too), compared in millis."""
    used = usage.used.get(node.name, {})
    allocatable = node.status_allocatable  # NodeFit reads status.allocatable only, never capacity
    pods_available = value(allocatable.get("pods", 0)) - usage.count.get(node.name, 0)
    for resource in ("pods", *[r for r in pod.requests if r != "pods"]):
        if resource == "pods":
            available = pods_available * 1000
        elif resource == "cpu":
            available = milli_value(allocatable.get("cpu", 0)) - milli_value(used.get("cpu", 0))
        elif resource == "memory" or resource in allocatable:
            available = (value(allocatable.get(resource, 0)) - value(used.get(resource, 0))) * 1000
        else:
            available = 0  # an extended resource the node does not offer
        if milli_value(pod.requests.get(resource, 0)) > available:
            return f"insufficient {resource}"
    if pods_available <= 0:
        return "insufficient pods"
    return None


def fits_any_other_node(pod: Pod, nodes: Iterable[Node], usage: NodeUsage) -> bool:
    return any(node.name != pod.node_name and fit_failure(pod, node, usage) is None for node in nodes)


def fits_any_node(pod: Pod, nodes: Iterable[Node], usage: NodeUsage) -> bool:
    return any(fit_failure(pod, node, usage) is None for node in nodes)
