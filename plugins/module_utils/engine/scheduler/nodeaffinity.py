"""NodeAffinity: filter on spec.nodeSelector and required node affinity; score the preferred terms' weights."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    matches_node_selector,
    preferred_weight,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    SKIP,
    Memo,
    default_normalize_score,
    default_normalized,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"


class NodeAffinity:
    name = NAME
    static = True

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        return None

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        return None if matches_node_selector(pod.model, node) else (REASON,)  # type: ignore[arg-type]

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        return None if pod.model.preferred_node_terms else SKIP

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        return preferred_weight(pod.model, node)  # type: ignore[arg-type]

    def normalize(self, state: Any, scores: list[int]) -> None:
        default_normalize_score(scores, reverse=False)

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: the raw score depends on the node's labels and the pod's preferred terms only."""
        if not pod.model.preferred_node_terms:
            return SKIP
        key = (NAME, tuple(pod.model.preferred_node_terms))
        scores = columns.fixed(key, window, lambda nodes: [self.score(pod, None, n) for n in nodes])
        highest = max(scores)
        if highest == 0:
            return 0  # default_normalize_score leaves every node at 0
        return list(map(Memo(lambda raw: default_normalized(raw, highest, False)).__getitem__, scores))
