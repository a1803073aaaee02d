"""NodeResourcesBalancedAllocation (score): favours nodes whose resource fractions stay close to each other."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    SKIP,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.noderesources import (
    parse_resources,
    pod_and_node_amounts,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodeResourcesBalancedAllocation"


def balance(requested: list[int], allocatable: list[int]) -> int:
    """(1 - standard deviation of the resource fractions) × 100, fractions capped at 1."""
    fractions = []
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fractions.append(min(req / alloc, 1.0))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_score(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """The improvement in balance the pod brings, mapped to [50, 100] (upstream since v1.35: around 75 when the
    balance barely moves, towards 100 when it improves, towards 50 when it worsens)."""
    with_pod = balance(requested, allocatable)
    without_pod = balance(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


class BalancedAllocation:
    name = NAME

    def __init__(self, args: Optional[Mapping[str, Any]] = None,
                 field: str = "pluginConfig.NodeResourcesBalancedAllocation") -> None:
        self.resources = parse_resources((args or {}).get("resources"), f"{field}.args.resources")
        self.cpu_memory = [r for r, _unused in self.resources] == ["cpu", "memory"]

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        # a best-effort pod is not scored (kubernetes#129138: they would all pile onto one node)
        if all(_pod_request(pod, r) == 0 for r, _unused in self.resources):
            return SKIP
        return None

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        if self.cpu_memory and node.alloc_cpu and node.alloc_memory:
            return _two_resource_score(node.req_cpu, pod.cpu, node.alloc_cpu,
                                       node.req_memory, pod.memory, node.alloc_memory)
        requested = []
        allocated = []
        allocatable = []
        for resource, _unused in self.resources:
            alloc, req = pod_and_node_amounts(pod, node, resource, use_requested=True)
            allocatable.append(alloc)
            requested.append(req)
            allocated.append(req - _pod_request(pod, resource) if alloc else 0)
        return balanced_score(requested, allocated, allocatable)

    def score_many(self, pod: SchedPod, state: Any, nodes: list[NodeInfo]) -> list[int]:
        if not self.cpu_memory:
            return [self.score(pod, state, n) for n in nodes]
        cpu, memory = pod.cpu, pod.memory
        result = []
        for n in nodes:
            cpu_alloc, memory_alloc = n.alloc_cpu, n.alloc_memory
            if not (cpu_alloc and memory_alloc):
                result.append(self.score(pod, state, n))
                continue
            # _two_resource_score inlined: this loop runs for every feasible node of every replacement
            before_cpu, before_memory = n.req_cpu / cpu_alloc, n.req_memory / memory_alloc
            after_cpu, after_memory = (n.req_cpu + cpu) / cpu_alloc, (n.req_memory + memory) / memory_alloc
            with_pod = int((1 - abs((after_cpu if after_cpu < 1 else 1.0) - (after_memory if after_memory < 1 else 1.0))
                            / 2) * MAX_NODE_SCORE)
            without_pod = int((1 - abs((before_cpu if before_cpu < 1 else 1.0)
                                       - (before_memory if before_memory < 1 else 1.0)) / 2) * MAX_NODE_SCORE)
            result.append(MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2)
        return result

    def normalize(self, state: Any, scores: list[int]) -> None:
        return None

    def score_bounds(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: an upper bound of the score, the same for every node (an int). Adding the pod moves each
        resource fraction by at most request / allocatable, so the balance with the pod exceeds the balance without
        it by at most 50 × the larger move (+1 for the truncation to int); the score is at most 100. The bound of
        the node with the smallest allocatable holds for all (a per-node bound costs more than it saves)."""
        if self.pre_score(pod, cluster, []) is SKIP:
            return SKIP
        if not self.cpu_memory:
            return None
        cpu, memory = pod.cpu, pod.memory
        bound = MAX_NODE_SCORE // 2
        for cpu_alloc, memory_alloc in cluster.allocatable_shapes:
            if not (cpu_alloc and memory_alloc):
                return MAX_NODE_SCORE
            gain = math.floor(MAX_NODE_SCORE / 2 * max(cpu / cpu_alloc, memory / memory_alloc) + 1 + 1e-6)
            bound = max(bound, min(MAX_NODE_SCORE, MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + gain) // 2))
        return bound

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: the score depends on the node's requests and on the pod's requests only."""
        if self.pre_score(pod, cluster, []) is SKIP:
            return SKIP
        key = (NAME, id(self), pod.cpu, pod.memory, pod.ephemeral, tuple(sorted(pod.scalar.items())))
        return columns.changing(key, window, lambda nodes: self.score_many(pod, None, nodes))


def _two_resource_score(cpu: int, pod_cpu: int, cpu_alloc: int, memory: int, pod_memory: int,
                        memory_alloc: int) -> int:
    """balanced_score for cpu and memory (std of two fractions = half their difference), without lists."""
    with_pod = int((1 - abs(min((cpu + pod_cpu) / cpu_alloc, 1.0) - min((memory + pod_memory) / memory_alloc, 1.0))
                    / 2) * MAX_NODE_SCORE)
    without_pod = int((1 - abs(min(cpu / cpu_alloc, 1.0) - min(memory / memory_alloc, 1.0)) / 2) * MAX_NODE_SCORE)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


def _pod_request(pod: SchedPod, resource: str) -> int:
    return pod.request_milli_cpu() if resource == "cpu" else pod.request_value(resource)
