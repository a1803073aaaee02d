"""The metrics source contract (upstream nodeutilization usageClient) and its registry type.

A metrics source tells LowNodeUtilization how much each node uses and how much evicting a pod frees, from one kind of
input: the pods' requests, or actual usage the plan was given (engine/metrics.py ``ActualUsage``: NodeMetrics and
PodMetrics objects, Prometheus answers). ``metricsUtilization.source`` names it; the sources are registered, one
line each, in engine/plugins/nodeutilization_metrics.py (docs/extending/add-a-metrics-source.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Protocol, runtime_checkable

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.registry import NamedRegistry


@runtime_checkable
class UsageClient(Protocol):
    """One plugin run's reader (upstream usageClient). Amounts are in the units upstream compares: cpu millis,
    memory bytes, pods a count, ``MetricResource`` an integer percentage."""

    mode: str

    def node(self, node: Node) -> dict[str, int]:
        """The node's usage of each resource the run compares; raises metrics.UsageUnavailable (upstream's
        message) when the source has none for it."""

    def pod(self, pod: Pod) -> Optional[dict[str, int]]:
        """What evicting the pod frees; None when the source cannot tell (one eviction per node then, as upstream);
        raises metrics.UsageUnavailable when the pod has no usage (upstream skips it)."""


@dataclass(frozen=True)
class MetricsSource:
    """A registered source. ``new(handle, args, resources)`` builds the run's UsageClient or raises
    metrics.UsageUnavailable (e.g. the policy has no metricsProviders entry for it); ``resources(thresholds)`` are
    the resources a run compares, given the threshold names; ``records_reading``: the plan shows what it read."""

    name: str
    new: Callable[[Any, Mapping[str, Any], list[str]], UsageClient]
    resources: Callable[[list[str]], list[str]]
    records_reading: bool = True


class MetricsSources(NamedRegistry[MetricsSource]):
    """Source name → MetricsSource, in registration order."""

    what = "metrics source"
