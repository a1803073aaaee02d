"""The scheduler plugin contract (upstream k8s pkg/scheduler/framework/interface.go) and its registry type.

A plugin object is built per scheduler profile by its registration's ``new(args, field, extra)`` (``field`` names
its pluginConfig for errors, ``extra`` carries what the plan adds, e.g. ``node_cpu_usage`` for Trimaran) and runs at
the extension points it is registered for (docs/extending/add-a-scheduler-plugin.md):

- ``filter``: ``FilterPlugin``: PreFilter, then Filter per node: the reasons a node cannot take the pod (None or an
  empty tuple: it can). ``static`` plugins read only the pod's and the node's spec: their results are cached per pod
  shape, so pre_filter is not called for them;
- ``score``: ``ScorePlugin``: PreScore, Score per feasible node, then NormalizeScore (``normalize``, or
  ``normalize_nodes`` for a plugin that needs the nodes, as upstream's NodeScoreList carries them).

Optional fast forms (scheduler/incremental_schedule.py) must give exactly what the plain methods give: ``score_many``
(Score of many nodes in one call), ``window_scores`` / ``score_bounds`` (scores or upper bounds over the feasible
window), ``filter_window`` (Filter over many nodes), ``placed`` (told where a replacement landed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Protocol, runtime_checkable

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.registry import NamedRegistry
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

FILTER, SCORE = "filter", "score"


@runtime_checkable
class FilterPlugin(Protocol):
    name: str
    static: bool

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        """The state filter() reads; helper.SKIP to skip the plugin, helper.Unresolvable when no node can fit."""

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        """The state score() reads; helper.SKIP to skip the plugin."""

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        ...


@runtime_checkable
class NormalizeScore(Protocol):
    def normalize(self, state: Any, scores: list[int]) -> None:
        """Scale ``scores`` (one per feasible node, in place) to 0..100."""


@runtime_checkable
class NormalizeNodeScores(Protocol):
    def normalize_nodes(self, state: Any, nodes: list[NodeInfo], scores: list[int]) -> None:
        """NormalizeScore for a plugin that needs the nodes the scores belong to."""


PROTOCOLS: dict[str, tuple[type, ...]] = {FILTER: (FilterPlugin,), SCORE: (ScorePlugin,)}
Factory = Callable[[Mapping[str, Any], str, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Registration:
    """One plugin: upstream's registry entry (name → PluginFactory), with the extension points it implements."""

    name: str
    extension_points: tuple[str, ...]
    new: Factory

    def implements(self, point: str) -> bool:
        return point in self.extension_points


class Registry(NamedRegistry[Registration]):
    """Plugin name → Registration (upstream frameworkruntime.Registry)."""

    what = "scheduler plugin"


def without_args(plugin: Callable[[], Any]) -> Factory:
    """The factory of a plugin that takes no args."""
    def new(args: Mapping[str, Any], field: str, extra: Mapping[str, Any]) -> Any:
        return plugin()
    return new


def with_args(plugin: Callable[[Mapping[str, Any], str], Any]) -> Factory:
    """The factory of a plugin built from its args (``field`` names them in errors)."""
    def new(args: Mapping[str, Any], field: str, extra: Mapping[str, Any]) -> Any:
        return plugin(args, field)
    return new
