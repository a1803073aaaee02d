"""RemovePodsViolatingTopologySpreadConstraint (Balance)."""

from __future__ import annotations

import math
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import compile_label_selector, matches
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    optional_label_selector,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    fits_any_other_node,
    matches_node_selector,
    tolerates_all,
)

NAME = "RemovePodsViolatingTopologySpreadConstraint"
EXTENSION_POINT = "balance"
ARG_FIELDS = ("namespaces", "labelSelector", "constraints", "topologyBalanceNodeFit")
ALLOWED_CONSTRAINTS = ("DoNotSchedule", "ScheduleAnyway")


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.label_selector()
    reader.string_list("constraints", ALLOWED_CONSTRAINTS)
    if args.get("topologyBalanceNodeFit") is not None:
        reader.boolean("topologyBalanceNodeFit")


def set_defaults(args: dict) -> dict:
    if not args.get("constraints"):
        args["constraints"] = ["DoNotSchedule"]
    if args.get("topologyBalanceNodeFit") is None:
        args["topologyBalanceNodeFit"] = True
    return args


class Constraint:
    """One distinct constraint of a namespace, with the declaring pod's inclusion-policy data."""

    def __init__(self, raw: dict, pod: Pod) -> None:
        self.max_skew = int(raw.get("maxSkew") or 0)
        self.topology_key = str(raw.get("topologyKey") or "")
        selector = compile_label_selector(raw.get("labelSelector")) if raw.get("labelSelector") is not None else None
        if selector is not None:
            extra = tuple((key, "In", frozenset([pod.labels[key]])) for key in raw.get("matchLabelKeys") or []
                          if key in pod.labels)
            selector = selector + extra
        self.selector = selector
        self.honor_affinity = (raw.get("nodeAffinityPolicy") or "Honor") == "Honor"
        self.honor_taints = (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor"
        self.affinity_pod: Optional[Pod] = pod if self.honor_affinity else None
        self.tolerations = pod.tolerations if self.honor_taints else None
        self.identity = (
            self.max_skew, self.topology_key, repr(self.selector), raw.get("whenUnsatisfiable"),
            repr((sorted(pod.node_selector.items()), repr(pod.required_node_terms))) if self.honor_affinity else None,
            repr(self.tolerations) if self.honor_taints else None,
        )

    def includes_node(self, node: Node) -> bool:
        if self.affinity_pod is not None and not matches_node_selector(self.affinity_pod, node):
            return False
        if self.tolerations is not None and not tolerates_all(self.tolerations, node.taints,
                                                              {"NoSchedule", "NoExecute"}):
            return False
        return True


def run(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector, use_pre_eviction=False)
    wanted = set(args.get("constraints") or ["DoNotSchedule"])
    node_fit = bool(args.get("topologyBalanceNodeFit", True))
    nodes = {n.name: n for n in handle.nodes}
    by_namespace: dict[str, list[Pod]] = {}
    for node in handle.nodes:
        for pod in handle.pods_on_node(node.name):
            if pod_filter.namespace_ok(pod) and pod_filter.labels_ok(pod) and handle.filter(pod, record=False):
                by_namespace.setdefault(pod.namespace, []).append(pod)
    marked: dict[int, tuple[Pod, str]] = {}
    for namespace in sorted(by_namespace):
        pods = by_namespace[namespace]
        for constraint in _constraints(pods, wanted):
            _balance_constraint(handle, constraint, pods, nodes, node_fit, marked)
    _evict_marked(handle, pod_filter, marked)


def _constraints(pods: list[Pod], wanted: set) -> list[Constraint]:
    found: dict[tuple, Constraint] = {}
    for pod in pods:
        for raw in pod.spread_constraints:
            if raw.get("whenUnsatisfiable", "DoNotSchedule") not in wanted:
                continue
            constraint = Constraint(raw, pod)
            found.setdefault(constraint.identity, constraint)
    return list(found.values())


def _balance_constraint(handle: PluginHandle, constraint: Constraint, pods: list[Pod], nodes: dict[str, Node],
                        node_fit: bool, marked: dict) -> None:
    key = constraint.topology_key
    domains: dict[str, list[Pod]] = {}
    for node in handle.nodes:
        if key in node.labels and constraint.includes_node(node):
            domains.setdefault(node.labels[key], [])
    total = 0
    for pod in pods:
        node = nodes.get(pod.node_name)
        if pod.terminating or node is None or key not in node.labels or not matches(constraint.selector, pod.labels):
            continue
        domains.setdefault(node.labels[key], []).append(pod)
        total += 1
    if not domains:
        return
    sizes = [len(d) for d in domains.values()]
    if max(sizes) - min(sizes) <= constraint.max_skew:
        return
    eligible = [n for n in handle.nodes if constraint.includes_node(n)]
    _balance_domains(handle, constraint, domains, total, eligible, node_fit, marked)


def _domain_pod_order(pod: Pod) -> tuple:
    # pods with nodeSelector/affinity first; then ascending priority, nil first; eviction takes from the end
    return (0 if pod.selector_or_affinity else 1, pod.priority is not None, pod.priority or 0)


def _balance_domains(handle: PluginHandle, constraint: Constraint, domains: dict[str, list[Pod]], total: int,
                     eligible: list[Node], node_fit: bool, marked: dict) -> None:
    ideal = total / len(domains)
    ordered = sorted(((value, sorted(pods, key=_domain_pod_order)) for value, pods in domains.items()),
                     key=lambda item: (len(item[1]), item[0]))
    key = constraint.topology_key
    below_values = {value for value, pods in ordered if len(pods) < ideal}
    below_nodes = [n for n in eligible if n.labels.get(key) in below_values]
    usage = handle.state.usage
    i, j = 0, len(ordered) - 1
    while i < j:
        if len(ordered[j][1]) <= ideal:
            j -= 1
        skew = len(ordered[j][1]) - len(ordered[i][1])
        if skew <= constraint.max_skew:
            i += 1
            continue
        above = math.ceil(len(ordered[j][1]) - ideal)
        below = math.ceil(ideal - len(ordered[i][1]))
        move = int(min(min(above, below), math.ceil((skew - constraint.max_skew) / 2)))
        if move <= 0:
            i += 1
            continue
        source = ordered[j][1]
        fits = {p.index: fits_any_other_node(p, below_nodes, usage) for p in source}
        source.sort(key=lambda p: fits[p.index])
        chosen = source[len(source) - move:]
        reason = (f"topology spread {key}: domain {ordered[j][0]} has {len(source)} matching pods, "
                  f"{ordered[i][0]} has {len(ordered[i][1])} (maxSkew {constraint.max_skew})")
        for pod in chosen:
            if node_fit and not fits[pod.index]:
                handle.spare(pod, "topology spread: does not fit a node in a smaller domain")
                continue
            marked.setdefault(pod.index, (pod, reason))
        del source[len(source) - move:]
        ordered[i][1].extend(chosen)


def _evict_marked(handle: PluginHandle, pod_filter: PodFilter, marked: dict) -> None:
    full_nodes: set[str] = set()
    for pod, reason in marked.values():
        if pod.node_name in full_nodes:
            continue
        if not (pod_filter.namespace_ok(pod) and pod_filter.labels_ok(pod) and handle.filter(pod)):
            continue
        if not handle.pre_evict(pod):
            continue
        try:
            handle.evict(pod, reason)
        except LimitError as exc:
            if exc.scope == "total":
                return
            full_nodes.add(pod.node_name)
