"""InterPodAffinity: required pod affinity/anti-affinity (the pod's and existing pods') filter; preferred terms
(both directions) and existing pods' required affinity (hardPodAffinityWeight) score."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import MAX_NODE_SCORE, SKIP
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"


def _add(counts: dict, key: str, node: NodeInfo, amount: int) -> None:
    value = node.labels.get(key)
    if value is not None:
        counts[(key, value)] = counts.get((key, value), 0) + amount


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
        if cluster.affinity_pod_count == 0 and not pod.affinity and not pod.anti_affinity:
            return SKIP
        namespaces = cluster.namespace_labels
        existing_anti: dict = {}
        affinity_counts: dict = {}
        anti_counts: dict = {}
        for node in cluster.nodes:
            for other in node.affinity_pods:
                for term in other.anti_affinity:
                    if term.matches(pod, namespaces):
                        _add(existing_anti, term.topology_key, node, 1)
            if pod.affinity or pod.anti_affinity:
                for other in node.pods:
                    for term in pod.affinity:
                        if term.matches(other, namespaces):
                            _add(affinity_counts, term.topology_key, node, 1)
                    for term in pod.anti_affinity:
                        if term.matches(other, namespaces):
                            _add(anti_counts, term.topology_key, node, 1)
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
        scores: dict = {}
        for node in cluster.nodes:
            for other in node.pods if has_preferred else node.affinity_pods:
                for term in pod.preferred_affinity:
                    if term.matches(other, namespaces):
                        _add(scores, term.topology_key, node, term.weight)
                for term in pod.preferred_anti_affinity:
                    if term.matches(other, namespaces):
                        _add(scores, term.topology_key, node, -term.weight)
                if not other.has_affinity:
                    continue
                if self.hard_weight > 0:
                    for term in other.affinity:
                        if term.matches(pod, namespaces):
                            _add(scores, term.topology_key, node, self.hard_weight)
                for term in other.preferred_affinity:
                    if term.matches(pod, namespaces):
                        _add(scores, term.topology_key, node, term.weight)
                for term in other.preferred_anti_affinity:
                    if term.matches(pod, namespaces):
                        _add(scores, term.topology_key, node, -term.weight)
        return scores if scores else SKIP

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
            scores[i] = int(MAX_NODE_SCORE * ((score - lowest) / spread)) if spread > 0 else 0
