"""RemovePodsViolatingInterPodAntiAffinity (Deschedule): evicts the pod that owns a violated required term."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import EVICTED, PluginHandle
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
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import anti_affinity_namespaces

NAME = "RemovePodsViolatingInterPodAntiAffinity"
ARG_FIELDS = ("namespaces", "labelSelector")


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.label_selector()


def set_defaults(args: dict) -> dict:
    return args


class _TermPods:
    """The listed pods one term selects, grouped the way hasSameLabelValue compares nodes.

    A pod on a node carrying the topology key shares a domain with every pod under the same value; a pod on a node
    without it only with the pods on that very node.
    """

    def __init__(self, topology_key: str) -> None:
        self.key = topology_key
        self.groups: dict[tuple[str, str], dict[int, Pod]] = {}

    def _group(self, node: Node) -> tuple[str, str]:
        if self.key in node.labels:
            return "value", node.labels[self.key]
        return "node", node.name

    def add(self, pod: Pod, node: Node) -> None:
        self.groups.setdefault(self._group(node), {})[pod.index] = pod

    def discard(self, pod: Pod, node: Node) -> None:
        self.groups.get(self._group(node), {}).pop(pod.index, None)

    def partner(self, pod: Pod, node: Node) -> Optional[Pod]:
        """The first selected pod in the pod's domain with a different name (upstream skips same-named pods)."""
        for other in self.groups.get(self._group(node), {}).values():
            if other.name != pod.name:
                return other
        return None


class Partners:
    """The pods that can be partners (NS ∧ LS, no evictor filter), indexed per distinct term.

    Replicas of one workload share their terms, so each term's pods are gathered once instead of scanning the
    namespace for every pod; evicted pods leave every index, as upstream drops them from its namespace map.
    """

    def __init__(self, by_namespace: dict[str, dict[int, Pod]], nodes: dict[str, Node]) -> None:
        self.by_namespace = by_namespace
        self.nodes = nodes
        self.labels: dict[tuple[str, str], dict[str, list[Pod]]] = {}
        self.terms: dict[tuple, _TermPods] = {}
        self.terms_by_namespace: dict[str, list[_TermPods]] = {}

    def find(self, pod: Pod, node: Node) -> Optional[tuple[Pod, dict]]:
        """The first (partner, term) that makes the pod's required anti-affinity fail, or None."""
        for term in pod.anti_affinity_terms:
            try:
                selector = compile_label_selector(term.get("labelSelector"))
            except ValueError:
                return None  # upstream gives up on the pod at the first unparsable selector
            namespaces = tuple(sorted(anti_affinity_namespaces(pod, term)))
            selected = self._term_pods(namespaces, selector, str(term.get("topologyKey") or ""))
            partner = selected.partner(pod, node)
            if partner is not None:
                return partner, term
        return None

    def remove(self, pod: Pod) -> None:
        self.by_namespace.get(pod.namespace, {}).pop(pod.index, None)
        node = self.nodes[pod.node_name]
        for selected in self.terms_by_namespace.get(pod.namespace, ()):
            selected.discard(pod, node)

    def _term_pods(self, namespaces: tuple[str, ...], selector: Selector, topology_key: str) -> _TermPods:
        cache_key = (namespaces, selector, topology_key)
        selected = self.terms.get(cache_key)
        if selected is None:
            selected = self.terms[cache_key] = _TermPods(topology_key)
            for namespace in namespaces:
                self.terms_by_namespace.setdefault(namespace, []).append(selected)
                for other in self._candidates(namespace, selector):
                    if matches(selector, other.labels):
                        selected.add(other, self.nodes[other.node_name])
        return selected

    def _candidates(self, namespace: str, selector: Selector) -> Iterable[Pod]:
        """The live pods of the namespace that could match, in listing order."""
        live = self.by_namespace.get(namespace, {})
        if selector is None:
            return ()
        for key, operator, values in selector:
            if operator == "In" and len(values) == 1:
                by_value = self._by_value(namespace, key)
                return [p for p in by_value.get(next(iter(values)), ()) if p.index in live]
        return list(live.values())

    def _by_value(self, namespace: str, key: str) -> dict[str, list[Pod]]:
        by_value = self.labels.get((namespace, key))
        if by_value is None:
            by_value = self.labels[(namespace, key)] = {}
            for pod in self.by_namespace.get(namespace, {}).values():
                if key in pod.labels:
                    by_value.setdefault(pod.labels[key], []).append(pod)
        return by_value


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)
    nodes = {n.name: n for n in handle.nodes}
    by_namespace: dict[str, dict[int, Pod]] = {}
    by_node: dict[str, list[Pod]] = {}
    for node in handle.nodes:
        for pod in handle.pods_on_node(node.name):
            if pod_filter.namespace_ok(pod) and pod_filter.labels_ok(pod):
                by_namespace.setdefault(pod.namespace, {})[pod.index] = pod
                by_node.setdefault(node.name, []).append(pod)
    partners = Partners(by_namespace, nodes)
    for node in handle.nodes:
        # only pods owning a term can be evicted; upstream sorts the node's whole list, whose ties (sampled) move
        # them; a stable sort of just them keeps their relative order
        listed = by_node.get(node.name, [])
        ordered = handle.order.priority_sort(listed if handle.order.shuffled else
                                             [p for p in listed if p.anti_affinity_terms])
        owners = [p for p in ordered if p.anti_affinity_terms]
        if not _deschedule_node(handle, node, owners, partners):
            return


def _deschedule_node(handle: PluginHandle, node: Node, pods: list[Pod], partners: Partners) -> bool:
    """Evict the node's violators, lowest priority first. False once the total limit ends the plugin."""
    for pod in pods:
        violation = partners.find(pod, node)
        if violation is None or not handle.filter(pod) or not handle.pre_evict(pod):
            continue
        partner, term = violation
        reason = (f"violates its required pod anti-affinity with {partner.namespace}/{partner.name} "
                  f"(topologyKey {term.get('topologyKey', '')})")
        try:
            if handle.evict(pod, reason) == EVICTED:
                partners.remove(pod)  # later pods no longer see it as a partner
        except LimitError as exc:
            if exc.scope == "total":
                return False
            return True  # node limit: next node
    return True
