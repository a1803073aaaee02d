"""NodeResourcesFit: the resources filter and its scoring strategies (LeastAllocated, MostAllocated — binpack —
and RequestedToCapacityRatio), with the integer arithmetic of upstream's noderesources package."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    go_round,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodeResourcesFit"
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # requested can exceed capacity because pods without requests count the defaults
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def weighted_scorer(per_resource: Callable[[int, int], int], weights: list[int]
                    ) -> Callable[[list[int], list[int]], int]:
    def scorer(requested: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            total += per_resource(requested[i], capacity) * weights[i]
            weight_sum += weights[i]
        return total // weight_sum if weight_sum else 0
    return scorer


def broken_linear(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    def function(utilization: int) -> int:
        for i, (point, score) in enumerate(shape):
            if utilization <= point:
                if i == 0:
                    return shape[0][1]
                previous_point, previous_score = shape[i - 1]
                step = (score - previous_score) * (utilization - previous_point)
                return previous_score + int(step / (point - previous_point))  # Go division truncates
        return shape[-1][1]
    return function


def ratio_scorer(shape: list[tuple[int, int]], weights: list[int]) -> Callable[[list[int], list[int]], int]:
    raw = broken_linear([(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            score = resource_score(requested[i], capacity)
            if score > 0:
                total += score * weights[i]
                weight_sum += weights[i]
        return go_round(total / weight_sum) if weight_sum else 0
    return scorer


def parse_resources(raw: Any, field: str) -> list[tuple[str, int]]:
    if raw is None:
        return list(DEFAULT_RESOURCES)
    if not isinstance(raw, list) or not raw:
        raise PolicyError(field, raw, "a non-empty list of {name, weight} (weight 1..100)")
    result = []
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, Mapping) else None
        weight = item.get("weight", 1) if isinstance(item, Mapping) else None
        if not name or not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
            raise PolicyError(f"{field}[{i}]", item, "each resource needs a name and an integer weight 1..100")
        result.append((str(name), weight))
    return result


def pod_and_node_amounts(pod: SchedPod, node: NodeInfo, resource: str, use_requested: bool) -> tuple[int, int]:
    """(allocatable, node requested + pod request) for one resource; (0, 0) skips it (calculateResourceAllocatable
    Request: non-zero requests for cpu/memory unless use_requested; an extended resource the pod asks none of)."""
    if resource == "cpu":
        if use_requested:
            return node.alloc_cpu, node.req_cpu + pod.request_milli_cpu()
        return node.alloc_cpu, node.nonzero_cpu + pod.nonzero_cpu
    if resource == "memory":
        if use_requested:
            return node.alloc_memory, node.req_memory + pod.request_value("memory")
        return node.alloc_memory, node.nonzero_memory + pod.nonzero_memory
    if resource == "ephemeral-storage":
        return node.alloc_ephemeral, node.req_ephemeral + pod.request_value(resource)
    request = pod.request_value(resource)
    if request == 0 or resource not in node.alloc_scalar:
        return 0, 0
    return node.alloc_scalar[resource], node.req_scalar.get(resource, 0) + request


class _NoPod:
    """What the cpu/memory scoring reads of a pod, for a pod that asks nothing."""

    nonzero_cpu = nonzero_memory = 0


NO_POD: Any = _NoPod()


class NodeResourcesFit:
    name = NAME
    static = False

    def __init__(self, args: Optional[Mapping[str, Any]] = None, field: str = "pluginConfig.NodeResourcesFit") -> None:
        args = args or {}
        strategy = args.get("scoringStrategy") or {}
        self.strategy = strategy.get("type") or "LeastAllocated"
        if self.strategy not in STRATEGIES:
            raise PolicyError(f"{field}.args.scoringStrategy.type", self.strategy, f"one of {', '.join(STRATEGIES)}")
        self.resources = parse_resources(strategy.get("resources"), f"{field}.args.scoringStrategy.resources")
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        weights = [w for _unused, w in self.resources]
        # the usual resources (cpu and memory, any weights) take a shorter path: most of the preview's time
        self.cpu_memory = [r for r, _unused in self.resources] == ["cpu", "memory"]
        self.per_resource = least_requested_score if self.strategy == "LeastAllocated" else most_requested_score
        if self.strategy == "LeastAllocated":
            self.scorer = weighted_scorer(least_requested_score, weights)
        elif self.strategy == "MostAllocated":
            self.scorer = weighted_scorer(most_requested_score, weights)
        else:
            self.scorer = ratio_scorer(_shape(strategy, field), weights)

    # ---- filter (fitsRequest) ----
    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        scalar = {k: v for k, v in pod.scalar_requests().items()
                  if k not in self.ignored and k.split("/", 1)[0] not in self.ignored_groups}
        return (pod.request_milli_cpu(), pod.request_value("memory"), pod.request_value("ephemeral-storage"), scalar)

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        cpu, memory, ephemeral, scalar = state
        reasons = []
        if node.pod_count + 1 > node.alloc_pods:
            reasons.append("Too many pods")
        if cpu == 0 and memory == 0 and ephemeral == 0 and not scalar:
            return tuple(reasons) or None
        if cpu > 0 and cpu > node.alloc_cpu - node.req_cpu:
            reasons.append("Insufficient cpu")
        if memory > 0 and memory > node.alloc_memory - node.req_memory:
            reasons.append("Insufficient memory")
        if ephemeral > 0 and ephemeral > node.alloc_ephemeral - node.req_ephemeral:
            reasons.append("Insufficient ephemeral-storage")
        for name, amount in scalar.items():
            if amount > node.alloc_scalar.get(name, 0) - node.req_scalar.get(name, 0):
                reasons.append(f"Insufficient {name}")
        return tuple(reasons) or None

    # ---- score ----
    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        return None

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        if self.cpu_memory and self.strategy != "RequestedToCapacityRatio":
            return self._cpu_memory_score(pod, node)
        requested = []
        allocatable = []
        for resource, _unused in self.resources:
            alloc, req = pod_and_node_amounts(pod, node, resource, use_requested=False)
            allocatable.append(alloc)
            requested.append(req)
        return self.scorer(requested, allocatable)

    def normalize(self, state: Any, scores: list[int]) -> None:
        return None

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> list[int]:
        """Batch: the score depends on the node's requests and on these numbers of the pod only."""
        key = (NAME, id(self), pod.nonzero_cpu, pod.nonzero_memory, pod.ephemeral, tuple(sorted(pod.scalar.items())))
        return columns.changing(key, window, lambda nodes: self.score_many(pod, None, nodes))

    def score_bounds(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Optional[list[int]]:
        """Batch: LeastAllocated scores a node lower the more the pod asks, so its score with no pod added (which
        changes only when the node does) bounds it from above."""
        if not (self.cpu_memory and self.strategy == "LeastAllocated"):
            return None
        return columns.changing((NAME, "bound", id(self)), window, lambda nodes: self.score_many(NO_POD, None, nodes))

    def score_many(self, pod: SchedPod, state: Any, nodes: list[NodeInfo]) -> list[int]:
        if not (self.cpu_memory and self.strategy != "RequestedToCapacityRatio"):
            return [self.score(pod, state, n) for n in nodes]
        (_unused, cpu_weight), (_unused, memory_weight) = self.resources
        both = cpu_weight + memory_weight
        per_resource = self.per_resource
        cpu, memory = pod.nonzero_cpu, pod.nonzero_memory
        result = []
        if self.strategy == "LeastAllocated":  # least_requested_score inlined: this runs for most feasible nodes
            for n in nodes:
                cpu_alloc, memory_alloc = n.alloc_cpu, n.alloc_memory
                if cpu_alloc and memory_alloc:
                    cpu_req, memory_req = n.nonzero_cpu + cpu, n.nonzero_memory + memory
                    cpu_score = (cpu_alloc - cpu_req) * MAX_NODE_SCORE // cpu_alloc if cpu_req <= cpu_alloc else 0
                    memory_score = ((memory_alloc - memory_req) * MAX_NODE_SCORE // memory_alloc
                                    if memory_req <= memory_alloc else 0)
                    result.append((cpu_score * cpu_weight + memory_score * memory_weight) // both)
                else:
                    result.append(self._cpu_memory_score(pod, n))
            return result
        for n in nodes:
            if n.alloc_cpu and n.alloc_memory:
                result.append((per_resource(n.nonzero_cpu + cpu, n.alloc_cpu) * cpu_weight
                               + per_resource(n.nonzero_memory + memory, n.alloc_memory) * memory_weight) // both)
            else:
                result.append(self._cpu_memory_score(pod, n))
        return result

    def _cpu_memory_score(self, pod: SchedPod, node: NodeInfo) -> int:
        """weighted_scorer for [cpu, memory] without building lists (same integer arithmetic)."""
        (_unused, cpu_weight), (_unused, memory_weight) = self.resources
        total = weight_sum = 0
        if node.alloc_cpu:
            total += self.per_resource(node.nonzero_cpu + pod.nonzero_cpu, node.alloc_cpu) * cpu_weight
            weight_sum += cpu_weight
        if node.alloc_memory:
            total += self.per_resource(node.nonzero_memory + pod.nonzero_memory, node.alloc_memory) * memory_weight
            weight_sum += memory_weight
        return total // weight_sum if weight_sum else 0


def _shape(strategy: Mapping[str, Any], field: str) -> list[tuple[int, int]]:
    where = f"{field}.args.scoringStrategy.requestedToCapacityRatio.shape"
    shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape")
    if not isinstance(shape, list) or not shape:
        raise PolicyError(where, shape, "a list of {utilization 0..100, score 0..10}, utilization increasing")
    points = []
    for i, point in enumerate(shape):
        try:
            utilization, score = int(point["utilization"]), int(point["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise PolicyError(f"{where}[{i}]", point, "needs integer utilization and score") from exc
        if not 0 <= utilization <= 100 or not 0 <= score <= 10 or (points and utilization <= points[-1][0]):
            raise PolicyError(f"{where}[{i}]", point, "utilization 0..100 increasing, score 0..10")
        points.append((utilization, score))
    return points
