"""InterPodAffinity: required pod affinity/anti-affinity (the pod's and existing pods') filter; preferred terms
(both directions) and existing pods' required affinity (hardPodAffinityWeight) score."""

from __future__ import annotations

from itertools import repeat
from operator import add, not_, or_
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import required_values
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    SKIP,
    Memo,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
    AffinityTerm,
    SchedPod,
)

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"


def _add(counts: dict, key: str, node: NodeInfo, amount: int) -> None:
    value = node.labels.get(key)
    if value is not None:
        counts[(key, value)] = counts.get((key, value), 0) + amount


def _namespaces(term: AffinityTerm) -> Optional[frozenset]:
    """The namespaces whose pods a term may select (None: any, through its namespaceSelector)."""
    return term.namespaces if term.namespace_selector is None else None


def _matching_all(terms: tuple[AffinityTerm, ...], cluster: Cluster) -> dict:
    """Required affinity: a bound pod counts, in every term's domain, only when it matches all the terms."""
    counts: dict = {}
    if not terms:
        return counts
    namespaces = cluster.namespace_labels
    per_node = cluster.matching((NAME, "all", tuple(t.identity for t in terms)), _namespaces(terms[0]),
                                lambda other: all(term.matches(other, namespaces) for term in terms),
                                required_values(terms[0].selector))
    for index, count in per_node.items():
        for term in terms:
            _add(counts, term.topology_key, cluster.nodes[index], count)
    return counts


def _matching_pods(terms: tuple[AffinityTerm, ...], cluster: Cluster, amount: Optional[int]) -> dict:
    """Per (topology key, value): bound pods each term selects, times ``amount`` (None: the term's weight).
    Only the namespaces a term can select are read (Cluster.matching keeps the counts per term)."""
    counts: dict = {}
    namespaces = cluster.namespace_labels
    for term in terms:
        weight = term.weight if amount is None else amount
        per_node = cluster.matching((NAME, term.identity), _namespaces(term),
                                    lambda other, term=term: term.matches(other, namespaces),
                                    required_values(term.selector))
        for index, count in per_node.items():
            _add(counts, term.topology_key, cluster.nodes[index], weight * count)
    return counts


class InterPodAffinity:
    name = NAME
    static = False

    def __init__(self, args: Optional[Mapping[str, Any]] = None, field: str = "pluginConfig.InterPodAffinity"
                 ) -> None:
        weight = (args or {}).get("hardPodAffinityWeight", 1)
        if not isinstance(weight, int) or isinstance(weight, bool) or not 0 <= weight <= 100:
            raise PolicyError(f"{field}.args.hardPodAffinityWeight", weight, "an integer 0..100")
        self.hard_weight = weight

    # ---- filter ----
    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        if not cluster.required_anti and not pod.affinity and not pod.anti_affinity:
            return SKIP
        namespaces = cluster.namespace_labels
        existing_anti: dict = {}
        for term, counts in cluster.required_anti.candidates(pod.namespace):
            if term.matches(pod, namespaces):
                for value, count in counts.items():
                    key = (term.topology_key, value)
                    existing_anti[key] = existing_anti.get(key, 0) + count
        if not existing_anti and not pod.affinity and not pod.anti_affinity:
            return SKIP  # filter() would pass every node
        affinity_counts = _matching_all(pod.affinity, cluster)
        anti_counts = _matching_pods(pod.anti_affinity, cluster, 1)
        matches_itself = all(term.matches(pod, namespaces) for term in pod.affinity)
        return existing_anti, affinity_counts, anti_counts, matches_itself

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        existing_anti, affinity_counts, anti_counts, matches_itself = state
        if not self._satisfies_affinity(pod, node, affinity_counts, matches_itself):
            return (REASON_AFFINITY,)
        for term in pod.anti_affinity:
            value = node.labels.get(term.topology_key)
            if value is not None and anti_counts.get((term.topology_key, value), 0) > 0:
                return (REASON_ANTI_AFFINITY,)
        if existing_anti:
            for key, value in node.labels.items():
                if existing_anti.get((key, value), 0) > 0:
                    return (REASON_EXISTING_ANTI,)
        return None

    def filter_window(self, pod: SchedPod, state: Any, indexes: list[int], columns: Any) -> Optional[list[bool]]:
        """Batch: filter() for many nodes at once (True: passes). Without required affinity of its own, a pod is
        kept off a node only by the topology values its anti-affinity terms and existing pods' terms forbid: one
        column of node label values per topology key. A pod with required affinity: None (filter() node by
        node)."""
        existing_anti, _affinity_counts, anti_counts, _matches_itself = state
        if pod.affinity:
            return None
        forbidden: dict[str, set[str]] = {}
        for counts in (anti_counts, existing_anti):
            for (key, value), count in counts.items():
                if count > 0:
                    forbidden.setdefault(key, set()).add(value)
        blocked: Any = repeat(False, len(indexes))
        for key, values in forbidden.items():
            column = columns.label_values(key, indexes)
            blocked = map(or_, blocked, map(values.__contains__, column))
        return list(map(not_, blocked))

    @staticmethod
    def _satisfies_affinity(pod: SchedPod, node: NodeInfo, counts: dict, matches_itself: bool) -> bool:
        found = True
        for term in pod.affinity:
            value = node.labels.get(term.topology_key)
            if value is None:
                return False
            if counts.get((term.topology_key, value), 0) <= 0:
                found = False
        # the first pod of a group that selects itself may land anywhere its terms' topology keys exist
        return found or (not counts and matches_itself)

    # ---- score ----
    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        has_preferred = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if not has_preferred and cluster.affinity_pod_count == 0:
            return SKIP
        namespaces = cluster.namespace_labels
        # the pod's preferred terms against bound pods (anti-affinity weights are negative)
        scores = _matching_pods(pod.preferred_affinity + pod.preferred_anti_affinity, cluster, None)
        # bound pods' terms against the pod: required affinity (hardPodAffinityWeight), preferred (their weight)
        indexes = [(cluster.required_affinity, self.hard_weight), (cluster.preferred, None)]
        for index, weight in indexes:
            if weight == 0:
                continue
            for term, counts in index.candidates(pod.namespace):
                if not term.matches(pod, namespaces):
                    continue
                amount = weight if weight is not None else term.weight
                for value, count in counts.items():
                    key = (term.topology_key, value)
                    scores[key] = scores.get(key, 0) + amount * count
        return scores if scores else SKIP

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: score() summed per topology key from a column of the nodes' values for that key, instead of
        reading every (key, value) of the state on every node."""
        state = self.pre_score(pod, cluster, [])
        if state is SKIP:
            return SKIP
        by_key: dict[str, dict[str, int]] = {}
        for (key, value), amount in state.items():
            by_key.setdefault(key, {})[value] = amount
        scores: Optional[list[int]] = None  # most pods' terms use one topology key: no list of zeros to add to
        for key, amounts in by_key.items():
            column = map(amounts.get, columns.label_values(key, window), repeat(0))
            scores = list(column) if scores is None else list(map(add, scores, column))
        if scores is None:
            return 0
        lowest, highest = min(scores), max(scores)
        if highest == lowest:
            return 0  # normalize() gives every node 0
        # normalize(), once per distinct raw score
        return list(map(Memo(lambda score: _normalized(score, lowest, highest - lowest)).__getitem__, scores))

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        total = 0
        for (key, value), amount in state.items():
            if node.labels.get(key) == value:
                total += amount
        return total

    def normalize(self, state: Any, scores: list[int]) -> None:
        if not scores:
            return
        lowest, highest = min(scores), max(scores)
        spread = highest - lowest
        for i, score in enumerate(scores):
            scores[i] = _normalized(score, lowest, spread) if spread > 0 else 0


def _normalized(score: int, lowest: int, spread: int) -> int:
    """NormalizeScore: a raw score's place between the window's lowest and highest, scaled to [0, 100]."""
    return int(MAX_NODE_SCORE * ((score - lowest) / spread))
