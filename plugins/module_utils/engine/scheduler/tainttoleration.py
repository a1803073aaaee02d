"""TaintToleration: filter NoSchedule/NoExecute taints; score untolerated PreferNoSchedule taints (fewer wins)."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import tolerates_taint
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    SparseScores,
    default_normalize_score,
    default_normalized,
    in_window_range,
    window_positions,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "TaintToleration"
REASON = "node(s) had untolerated taint(s)"  # v1.36 no longer names the taint
_FILTER_EFFECTS = ("NoSchedule", "NoExecute")


def untolerated_taint(tolerations: list, taints: list) -> Optional[dict]:
    """v1helper.FindMatchingUntoleratedTaint for the NoSchedule/NoExecute effects."""
    for taint in taints:
        if taint.get("effect") not in _FILTER_EFFECTS:
            continue
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return taint
    return None


def prefer_tolerations(tolerations: list) -> list:
    """The tolerations that can tolerate a PreferNoSchedule taint (that effect, or any effect)."""
    return [t for t in tolerations if (t.get("effect") or "") in ("", "PreferNoSchedule")]


def count_intolerable_prefer_no_schedule(prefer: list, taints: list) -> int:
    count = 0
    for taint in taints:
        if taint.get("effect") != "PreferNoSchedule":
            continue
        if not any(tolerates_taint(t, taint) for t in prefer):
            count += 1
    return count


class TaintToleration:
    name = NAME
    static = True

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        return None

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        return None if untolerated_taint(pod.model.tolerations, node.taints) is None else (REASON,)

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        return prefer_tolerations(pod.model.tolerations)

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        return count_intolerable_prefer_no_schedule(state, node.taints) if node.taints else 0

    def score_many(self, pod: SchedPod, state: Any, nodes: list[NodeInfo]) -> list[int]:
        return [count_intolerable_prefer_no_schedule(state, n.taints) if n.taints else 0 for n in nodes]

    def normalize(self, state: Any, scores: list[int]) -> None:
        default_normalize_score(scores, reverse=True)

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: only nodes with a PreferNoSchedule taint can have a raw score above 0, so the window scores
        the maximum everywhere except on those few (default_normalize_score, reversed)."""
        tainted = list(window_positions(window, in_window_range(cluster.prefer_no_schedule, window)))
        if not tainted:
            return MAX_NODE_SCORE
        prefer = prefer_tolerations(pod.model.tolerations)
        # taints do not change during the preview: a node's raw score per set of tolerations is computed once
        known = columns.memo((NAME, repr(prefer)))
        nodes = cluster.nodes
        raw = {}
        for index, j in tainted:
            score = known.get(index)
            if score is None:
                score = known[index] = count_intolerable_prefer_no_schedule(prefer, nodes[index].taints)
            raw[j] = score
        highest = max(raw.values())
        if highest == 0:
            return MAX_NODE_SCORE
        return SparseScores(MAX_NODE_SCORE, {j: default_normalized(score, highest, True) for j, score in raw.items()})
