"""RemovePodsViolatingTopologySpreadConstraint (Balance): move pods out of topology domains above the ideal average.

Upstream iterates Go maps (namespaces, domains, the marked set) and sorts unstably; the deterministic plan walks
namespaces by name, domains by (size, value) and pods in listing order, and its sorts are stable (spec §0). Ties may
therefore pick different pods than a real run; the counts are the same. Sampled cycles draw these orders at random
through ``handle.order`` (engine/sampling.py).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    Selector,
    compile_label_selector,
    matches,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    optional_label_selector,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    NodeUsage,
    fit_failure,
    matches_node_selector,
    tolerates_all,
)

NAME = "RemovePodsViolatingTopologySpreadConstraint"
ARG_FIELDS = ("namespaces", "labelSelector", "constraints", "topologyBalanceNodeFit")
ALLOWED_CONSTRAINTS = ("DoNotSchedule", "ScheduleAnyway")
DO_NOT_SCHEDULE_EFFECTS = {"NoSchedule", "NoExecute"}
R_NO_FIT = "topology spread: does not fit a node in a smaller domain"


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


def _terms_key(terms: Optional[list]) -> Optional[tuple]:
    # None (no required affinity: every node) must stay distinct from () (no terms: no node)
    return None if terms is None else tuple(terms)


def _tolerations_key(tolerations: list[dict]) -> tuple:
    return tuple(tuple(sorted((k, str(v)) for k, v in t.items())) for t in tolerations)


class Constraint:
    """One distinct constraint of a namespace (upstream's internal topologySpreadConstraint)."""

    def __init__(self, raw: dict, pod: Pod) -> None:
        self.max_skew = int(raw.get("maxSkew") or 0)
        self.topology_key = str(raw.get("topologyKey") or "")
        self.selector = _constraint_selector(raw, pod)
        honor_affinity = (raw.get("nodeAffinityPolicy") or "Honor") == "Honor"
        honor_taints = (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor"
        self.affinity_pod: Optional[Pod] = pod if honor_affinity else None
        self.tolerations: Optional[list[dict]] = pod.tolerations if honor_taints else None
        # Which nodes the inclusion policies admit; constraints sharing it share the eligible-node list.
        self.inclusion = (
            (tuple(sorted(pod.node_selector.items())), _terms_key(pod.required_node_terms)) if honor_affinity else None,
            _tolerations_key(pod.tolerations) if honor_taints else None,
        )
        # deep-equal twins are processed once; like upstream, whenUnsatisfiable is not part of the identity
        self.identity = (self.max_skew, self.topology_key, self.selector, self.inclusion)

    def includes_node(self, node: Node) -> bool:
        """matchNodeInclusionPolicies: the declaring pod's required affinity and, if honored, its tolerations."""
        if self.affinity_pod is not None and not matches_node_selector(self.affinity_pod, node):
            return False
        return self.tolerations is None or tolerates_all(self.tolerations, node.taints, DO_NOT_SCHEDULE_EFFECTS)


def _constraint_selector(raw: dict, pod: Pod) -> Selector:
    """The labelSelector (nil matches nothing) plus key=value for each matchLabelKeys key the pod carries."""
    selector = compile_label_selector(raw.get("labelSelector"))
    if selector is None:
        return None  # upstream's merge keeps a Nothing selector as it is
    extra = tuple((key, "In", frozenset([pod.labels[key]])) for key in raw.get("matchLabelKeys") or []
                  if key in pod.labels)
    return selector + extra


def fit_signature(pod: Pod) -> tuple:
    """Everything NodeFit reads of a pod on a node other than its own; equal signatures fit the same nodes.

    Keep it in step with predicates.fit_failure: a pod field that check starts reading belongs here too.
    """
    anti_affinity = (pod.namespace, pod.name, repr(pod.anti_affinity_terms)) if pod.anti_affinity_terms else None
    return (tuple(sorted(pod.requests.items())), tuple(sorted(pod.node_selector.items())),
            _terms_key(pod.required_node_terms), _tolerations_key(pod.tolerations), anti_affinity)


class _Scan:
    __slots__ = ("fitting", "position", "skipped")

    def __init__(self) -> None:
        self.fitting: list[str] = []  # nodes known to fit this signature
        self.position = 0  # next node not yet probed
        self.skipped: list[Node] = []  # probed only by pods living there (own node): unknown for the others


class FitsAnyOtherNode:
    """PodFitsAnyOtherNode over a fixed node list while no pod moves (the marking phase).

    Pods of one workload share a fit signature, so each node is probed at most once per signature instead of once
    per pod and per sort comparison; the answers are the same as probing every node for every pod.
    """

    def __init__(self, nodes: list[Node], usage: NodeUsage, signatures: dict[int, tuple]) -> None:
        self.nodes = nodes
        self.usage = usage
        self.signatures = signatures
        self.scans: dict[tuple, _Scan] = {}
        self.by_pod: dict[int, bool] = {}

    def __call__(self, pod: Pod) -> bool:
        known = self.by_pod.get(pod.index)
        if known is None:
            known = self.by_pod[pod.index] = self._search(pod)
        return known

    def _signature(self, pod: Pod) -> tuple:
        signature = self.signatures.get(pod.index)
        if signature is None:
            signature = self.signatures[pod.index] = fit_signature(pod)
        return signature

    def _search(self, pod: Pod) -> bool:
        scan = self.scans.setdefault(self._signature(pod), _Scan())
        if any(name != pod.node_name for name in scan.fitting):
            return True
        for node in [n for n in scan.skipped if n.name != pod.node_name]:
            scan.skipped.remove(node)
            if self._fits(scan, pod, node):
                return True
        while scan.position < len(self.nodes):
            node = self.nodes[scan.position]
            scan.position += 1
            if node.name == pod.node_name:
                scan.skipped.append(node)  # NodeFit skips the resource check on the pod's own node
            elif self._fits(scan, pod, node):
                return True
        return False

    def _fits(self, scan: _Scan, pod: Pod, node: Node) -> bool:
        if fit_failure(pod, node, self.usage) is not None:
            return False
        scan.fitting.append(node.name)
        return True


class _Namespace:
    """The listed pods of one namespace, indexed by label so a selector visits only the pods it could match."""

    def __init__(self, pods: list[Pod]) -> None:
        self.pods = pods
        self.by_label: dict[str, dict[str, list[Pod]]] = {}

    def candidates(self, selector: Selector) -> Iterable[Pod]:
        """A superset of the pods matching selector, in listing order (domain order depends on it)."""
        for key, operator, values in selector or ():
            if operator == "In":
                by_value = self._by_value(key)
                if len(values) == 1:
                    return by_value.get(next(iter(values)), [])
                wanted = set(values)
                return [p for p in self.pods if p.labels.get(key) in wanted]
        return self.pods

    def _by_value(self, key: str) -> dict[str, list[Pod]]:
        by_value = self.by_label.get(key)
        if by_value is None:  # one pass per label key that some constraint selects on
            by_value = self.by_label[key] = {}
            for pod in self.pods:
                if key in pod.labels:
                    by_value.setdefault(pod.labels[key], []).append(pod)
        return by_value


class _Run:
    """State shared by every constraint of one plugin run."""

    def __init__(self, handle: PluginHandle, node_fit: bool) -> None:
        self.handle = handle
        self.node_fit = node_fit
        self.nodes = {n.name: n for n in handle.nodes}
        self.eligible: dict[Any, list[Node]] = {}
        self.by_value: dict[tuple, dict[str, list[Node]]] = {}
        self.signatures: dict[int, tuple] = {}
        self.marked: dict[int, tuple[Pod, str]] = {}

    def eligible_nodes(self, constraint: Constraint) -> list[Node]:
        """filterEligibleNodes, cached: the inclusion policies depend only on the declaring pod's placement."""
        nodes = self.eligible.get(constraint.inclusion)
        if nodes is None:
            nodes = self.eligible[constraint.inclusion] = [n for n in self.handle.nodes if constraint.includes_node(n)]
        return nodes

    def eligible_by_value(self, constraint: Constraint) -> dict[str, list[Node]]:
        """Eligible nodes having the topology key, grouped by its value in node order."""
        cache_key = (constraint.inclusion, constraint.topology_key)
        groups = self.by_value.get(cache_key)
        if groups is None:
            groups = self.by_value[cache_key] = {}
            key = constraint.topology_key
            for node in self.eligible_nodes(constraint):
                if key in node.labels:
                    groups.setdefault(node.labels[key], []).append(node)
        return groups


def balance(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector, use_pre_eviction=False)
    wanted = set(args.get("constraints") or ["DoNotSchedule"])
    state = _Run(handle, bool(args.get("topologyBalanceNodeFit", True)))
    by_namespace: dict[str, list[Pod]] = {}
    for node in handle.nodes:
        for pod in handle.pods_on_node(node.name):
            if pod_filter.namespace_ok(pod) and pod_filter.labels_ok(pod) and handle.filter(pod, record=False):
                by_namespace.setdefault(pod.namespace, []).append(pod)
    for namespace in handle.order.keys(by_namespace, fixed=sorted(by_namespace)):  # GroupByNamespace: a Go map
        pods = by_namespace[namespace]
        constraints = _constraints(handle, pods, wanted)
        if constraints:
            indexed = _Namespace(pods)
            for constraint in constraints:
                _balance_constraint(state, constraint, indexed)
    _evict_marked(handle, pod_filter, state.marked)


def _constraints(handle: PluginHandle, pods: list[Pod], wanted: set) -> list[Constraint]:
    """The namespace's distinct constraints, in first-declared order."""
    found: dict[tuple, Optional[Constraint]] = {}
    for pod in pods:
        for raw in pod.spread_constraints:
            if raw.get("whenUnsatisfiable") not in wanted:
                continue
            # replicas declare the same constraint: build each distinct (text, pod-specific parts) once
            shape = (repr(raw), _pod_parts(raw, pod))
            if shape in found:
                continue
            try:
                found[shape] = Constraint(raw, pod)
            except ValueError as exc:  # upstream logs the bad selector and goes on
                found[shape] = None
                handle.state.warnings.append(f"{NAME}: pod {pod.key}: topology spread constraint skipped: {exc}")
    distinct: dict[tuple, Constraint] = {}
    for constraint in found.values():
        if constraint is not None:
            distinct.setdefault(constraint.identity, constraint)
    return list(distinct.values())


def _pod_parts(raw: dict, pod: Pod) -> tuple:
    """What a Constraint takes from its declaring pod besides the constraint text."""
    label_values = tuple(pod.labels.get(key) for key in raw.get("matchLabelKeys") or ())
    affinity = None
    if (raw.get("nodeAffinityPolicy") or "Honor") == "Honor":
        affinity = (tuple(sorted(pod.node_selector.items())), _terms_key(pod.required_node_terms))
    honor_taints = (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor"
    return label_values, affinity, _tolerations_key(pod.tolerations) if honor_taints else None


def _balance_constraint(state: _Run, constraint: Constraint, namespace: _Namespace) -> None:
    key = constraint.topology_key
    # every eligible node's value is a domain, even an empty one
    domains: dict[str, list[Pod]] = {value: [] for value in state.eligible_by_value(constraint)}
    total = 0
    for pod in namespace.candidates(constraint.selector):
        node = state.nodes.get(pod.node_name)
        if pod.terminating or node is None or key not in node.labels or not matches(constraint.selector, pod.labels):
            continue
        # a pod's domain exists even when its node fails the inclusion policies
        domains.setdefault(node.labels[key], []).append(pod)
        total += 1
    if not domains:
        return
    sizes = [len(d) for d in domains.values()]
    if max(sizes) - min(sizes) <= constraint.max_skew:
        return
    _balance_domains(state, constraint, domains, total)


def domain_pod_order(pod: Pod) -> tuple:
    """sortDomains, for evictable pods: with nodeSelector/affinity first, then ascending priority, nil first.

    Pods are taken from the end, so upstream picks the highest-priority pods without selector or affinity first.
    """
    return (0 if pod.selector_or_affinity else 1, pod.priority is not None, pod.priority or 0)


def _balance_domains(state: _Run, constraint: Constraint, domains: dict[str, list[Pod]], total: int) -> None:
    """balanceDomains: the i/j walk over domains sorted by size, marking pods to move from j to i."""
    ideal = total / len(domains)
    order = state.handle.order  # domains come from a Go map and both sorts are sort.Slice upstream
    ordered = order.sort(((value, order.sort(pods, domain_pod_order, ties_reversed=True))
                          for value, pods in order.keys(domains.items())),
                         key=lambda item: len(item[1]), tie_break=lambda item: item[0])
    fits = _below_average_fit(state, constraint, ordered, ideal)
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
        move = int(min(above, below, math.ceil((skew - constraint.max_skew) / 2)))
        if move <= 0:
            i += 1
            continue
        reason = (f"topology spread {constraint.topology_key}: domain {ordered[j][0]} has {len(ordered[j][1])} "
                  f"matching pods, {ordered[i][0]} has {len(ordered[i][1])} (maxSkew {constraint.max_skew})")
        chosen = take_fitting_last(ordered[j][1], move, fits)
        for pod in chosen:
            if state.node_fit and not fits(pod):
                state.handle.spare(pod, R_NO_FIT)
                continue  # still counted as moved, as upstream
            state.marked.setdefault(pod.index, (pod, reason))
        ordered[i][1].extend(chosen)


def _below_average_fit(state: _Run, constraint: Constraint, ordered: list, ideal: float) -> Callable[[Pod], bool]:
    """PodFitsAnyOtherNode over nodesBelowIdealAvg (eligible nodes of domains under the average, sized once)."""
    below_values = [value for value, pods in ordered if len(pods) < ideal]
    checker: list[FitsAnyOtherNode] = []

    def fits(pod: Pod) -> bool:
        if not checker:  # built on first use: most constraints move nothing
            groups = state.eligible_by_value(constraint)
            below_nodes = [node for value in below_values for node in groups.get(value, ())]
            checker.append(FitsAnyOtherNode(below_nodes, state.handle.state.usage, state.signatures))
        return checker[0](pod)
    return fits


def take_fitting_last(source: list[Pod], move: int, fits: Callable[[Pod], bool]) -> list[Pod]:
    """Remove and return the last ``move`` pods of source after a stable sort that puts fitting pods last.

    Only as many pods are probed as needed, and source keeps its order: a stable partition of the remainder gives
    the same later picks as upstream's partitioned slice.
    """
    fitting: list[int] = []
    for position in range(len(source) - 1, -1, -1):
        if len(fitting) == move:
            break
        if fits(source[position]):
            fitting.append(position)
    others: list[int] = []
    if len(fitting) < move:  # every pod was probed: the rest comes from the end of the non-fitting ones
        taken = set(fitting)
        others = [k for k in range(len(source) - 1, -1, -1) if k not in taken][:move - len(fitting)]
    chosen_positions = sorted(others) + sorted(fitting)
    chosen = [source[k] for k in chosen_positions]
    removed = set(chosen_positions)
    source[:] = [pod for k, pod in enumerate(source) if k not in removed]
    return chosen


def _evict_marked(handle: PluginHandle, pod_filter: PodFilter, marked: dict[int, tuple[Pod, str]]) -> None:
    """Evict the marked pods; a node at its limit is skipped from then on, the total limit ends the plugin."""
    full_nodes: set[str] = set()
    for pod, reason in handle.order.keys(marked.values()):  # a Go map (set) upstream
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
