"""Trimaran TargetLoadPacking (scheduler-plugins, score): packs nodes up to a target CPU utilization measured by
metrics, then spreads. The Secondary Scheduler Operator's example profile runs it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import milli_value, parse_quantity
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MIN_NODE_SCORE,
    go_round,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "TargetLoadPacking"
DEFAULT_TARGET = 40
DEFAULT_CPU_REQUEST = 1000
DEFAULT_MULTIPLIER = 1.5
# node name → CPU usage in millis (None: no metrics for the node) and CPU capacity in millis
UsageLookup = Callable[[str], Optional[int]]


def predicted_cpu(pod: SchedPod, default_millis: int, multiplier: float) -> int:
    """Σ containers (limit if set, else request × multiplier, else the default) + overhead."""
    # without recorded containers every container asks cpu and sets no limit: the sum is the pod's request
    containers, overhead = pod.container_cpu or (((pod.request_milli_cpu() or None, None),), 0)
    total = 0.0
    for request, limit in containers:
        if limit is not None:
            total += limit
        elif request is not None:
            total += request * multiplier
        else:
            total += default_millis
    return int(total) + overhead


def target_load_score(used: float, predicted: int, capacity: int, target: int) -> int:
    if capacity <= 0:
        return MIN_NODE_SCORE
    percent = 100 * (used + predicted) / capacity
    if percent > 100:
        return MIN_NODE_SCORE
    if percent <= target:
        return go_round((100 - target) * percent / target + target)
    return go_round(target * (100 - percent) / (100 - target))


class TargetLoadPacking:
    name = NAME

    def __init__(self, args: Mapping[str, Any], field: str, usage: Optional[UsageLookup]) -> None:
        target = args.get("targetUtilization", DEFAULT_TARGET)
        if not isinstance(target, int) or isinstance(target, bool) or not 0 < target < 100:
            raise PolicyError(f"{field}.args.targetUtilization", target, "an integer percentage 1..99")
        self.target = target
        try:
            self.default_cpu = milli_value(parse_quantity(
                (args.get("defaultRequests") or {}).get("cpu", f"{DEFAULT_CPU_REQUEST}m")))
            self.multiplier = float(args.get("defaultRequestsMultiplier", DEFAULT_MULTIPLIER))
        except ValueError as exc:
            raise PolicyError(f"{field}.args", dict(args), f"defaultRequests.cpu a quantity, "
                              f"defaultRequestsMultiplier a number: {exc}") from exc
        self.usage = usage
        self.added: dict[str, int] = {}  # predicted CPU of the replacement pods placed so far, per node

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        return predicted_cpu(pod, self.default_cpu, self.multiplier)

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        used = self.usage(node.name) if self.usage else None
        if used is None:
            return MIN_NODE_SCORE  # no metrics for the node: upstream scores it 0
        return target_load_score(used + self.added.get(node.name, 0), state, node.alloc_cpu, self.target)

    def normalize(self, state: Any, scores: list[int]) -> None:
        return None

    def placed(self, pod: SchedPod, node_name: str) -> None:
        amount = predicted_cpu(pod, self.default_cpu, self.multiplier)
        self.added[node_name] = self.added.get(node_name, 0) + amount


def new(args: Mapping[str, Any], field: str, extra: Mapping[str, Any]) -> TargetLoadPacking:
    """The registry's factory: the plan gives the nodes' measured CPU as ``extra["node_cpu_usage"]``.
    (LoadVariationRiskBalancing is not registered: it needs usage standard deviations the metrics input lacks.)"""
    return TargetLoadPacking(args, field, extra.get("node_cpu_usage"))
