"""The placement preview's scheduling cycle, fast: the same Decision as ``framework.schedule`` (the straightforward
path, kept as the reference and for explanations), computed with what does not change between replacements kept.

Between two replacements only the node that took the previous one changes. So:
- the static filters (taints, node selector/affinity, cordon) are evaluated once per pod signature into the list of
  nodes that pass them, with per-plugin prefix counts of the rejected ones (``rejected_by`` over any node range);
- the scores that depend on the pod only through a few numbers (its requests: NodeResourcesFit,
  BalancedAllocation) or not on node state at all (taints, node labels: TaintToleration, NodeAffinity) are kept per
  node in columns keyed by those numbers; a node's entries are forgotten when a pod is bound to or unbound from it
  (``Cluster.changes``);
- a plugin offers ``window_scores(pod, cluster, window, columns)`` when it can score the feasible nodes this way;
  the others are scored exactly as ``framework.score_nodes`` does.
When no node fits, the reference path computes the decision, so the FitError message is upstream's.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, repeat
from operator import add, and_, itemgetter, mul
from typing import Any, Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    Decision,
    Profile,
    StaticCache,
    num_feasible_nodes_to_find,
    plugin_scores,
    schedule,
    static_results,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.noderesources import (
    NodeResourcesFit,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

ZERO = 0


def _values(column: list, indexes: list[int]) -> tuple:
    return itemgetter(*indexes)(column) if len(indexes) > 1 else tuple(column[i] for i in indexes)


# columns kept for node-state-dependent scores (one per request shape and plugin); the least recently used go first
MAX_CHANGING_COLUMNS = 400


class StaticView:
    """For one pod signature: the nodes passing the static filters (in scheduler order), and per filter plugin the
    running count of the nodes it rejected, so the rejections of any range of nodes are two lookups."""

    __slots__ = ("passing", "prefix")

    def __init__(self, failures: list[Optional[tuple[str, tuple[str, ...]]]]) -> None:
        self.passing = [i for i, failure in enumerate(failures) if failure is None]
        self.prefix: dict[str, list[int]] = {}
        for name in sorted({f[0] for f in failures if f is not None}):
            running = [0]
            count = 0
            for failure in failures:
                if failure is not None and failure[0] == name:
                    count += 1
                running.append(count)
            self.prefix[name] = running

    def rejected(self, start: int, processed: int, total: int) -> dict[str, int]:
        """Nodes each static plugin rejected among the ``processed`` nodes from ``start`` (wrapping around)."""
        end = start + processed
        result = {}
        for name, running in self.prefix.items():
            if end <= total:
                count = running[end] - running[start]
            else:
                count = running[total] - running[start] + running[end - total]
            if count:
                result[name] = count
        return result


class Columns:
    """Per-node values cached across replacements, each column under a key that captures everything of the pod the
    value depends on. ``fixed`` columns depend on node spec only (labels, taints); ``changing`` ones on what is
    bound to the node too, and lose a node's entry when the cluster records a change on it."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.fixed_columns: dict[Any, list] = {}
        self.changing_columns: dict[Any, tuple[list, list[int]]] = {}  # key → (values, [changes seen])

    def fixed(self, key: Any, window: list[int], compute: Callable[[list[NodeInfo]], list]) -> list:
        column = self.fixed_columns.get(key)
        if column is None:
            column = self.fixed_columns[key] = [None] * len(self.cluster.nodes)
        return self._pick(column, window, compute)

    def changing(self, key: Any, window: list[int], compute: Callable[[list[NodeInfo]], list]) -> list:
        changes = self.cluster.changes
        entry = self.changing_columns.pop(key, None)  # re-inserted last: the dict's order is the LRU order
        if entry is None:
            entry = ([None] * len(self.cluster.nodes), [len(changes)])
            if len(self.changing_columns) >= MAX_CHANGING_COLUMNS:
                del self.changing_columns[next(iter(self.changing_columns))]
        self.changing_columns[key] = entry
        column, seen = entry
        if seen[0] < len(changes):
            if len(changes) - seen[0] > len(column):
                column[:] = [None] * len(column)
            else:
                for index in changes[seen[0]:]:
                    column[index] = None
            seen[0] = len(changes)
        return self._pick(column, window, compute)

    def _pick(self, column: list, window: list[int], compute: Callable[[list[NodeInfo]], list]) -> list:
        picked = list(itemgetter(*window)(column)) if len(window) > 1 else [column[window[0]]]
        if None in picked:
            missing = [j for j, value in enumerate(picked) if value is None]
            nodes = self.cluster.nodes
            for j, value in zip(missing, compute([nodes[window[j]] for j in missing]), strict=True):
                picked[j] = column[window[j]] = value
        return picked


class FastScheduler:
    """Schedules replacements on one cluster, one after the other, as ``framework.schedule`` would."""

    def __init__(self, cluster: Cluster, cache: Optional[StaticCache] = None) -> None:
        self.cluster = cluster
        self.cache = cache or StaticCache()
        self.columns = Columns(cluster)
        self.views: dict[tuple, StaticView] = {}
        self.names = [n.name for n in cluster.nodes]
        # free pods, cpu (millis) and memory per node, as NodeResourcesFit.filter computes them
        self.free_pods = [0] * len(cluster.nodes)
        self.free_cpu = [0] * len(cluster.nodes)
        self.free_memory = [0] * len(cluster.nodes)
        self.room_seen = len(cluster.changes)
        self._update_room(range(len(cluster.nodes)))

    def schedule(self, profile: Profile, pod: SchedPod) -> Decision:
        cluster = self.cluster
        total = len(cluster.nodes)
        if total == 0:
            return schedule(profile, pod, cluster, self.cache)
        static_plugins = [p for p in profile.filters if getattr(p, "static", False)]
        dynamic = []
        for plugin in profile.filters:
            if not getattr(plugin, "static", False):
                state = plugin.pre_filter(pod, cluster)
                if state is not SKIP:
                    dynamic.append((plugin, state))
        view = self._view(static_plugins, pod)
        wanted = num_feasible_nodes_to_find(profile.percentage, total) if profile.scorers else 1
        start = cluster.next_start % total
        split = bisect_left(view.passing, start)
        order = view.passing[split:] + view.passing[:split]
        window, failed = self._scan(pod, order, dynamic, wanted)
        if not window:  # the reference path names every filter's reasons (FitError)
            cluster.next_start = start
            return schedule(profile, pod, cluster, self.cache)
        processed = (window[-1] - start) % total + 1 if len(window) >= wanted else total
        cluster.next_start = (start + processed) % total
        rejected = view.rejected(start, processed, total)
        for name, count in failed.items():
            rejected[name] = rejected.get(name, 0) + count
        rejected = dict(sorted(rejected.items()))
        if len(window) == 1:
            name = self.names[window[0]]
            return Decision(name, [name], "the only feasible node", rejected, processed)
        totals = self._score(profile, pod, window)
        best = max(totals)
        tied = sorted(map(self.names.__getitem__, compress(window, map(best.__eq__, totals))))
        reason = f"highest score {best} of {len(window)} feasible nodes"
        return Decision(tied[0], tied, reason, rejected, processed)

    def _view(self, plugins: list, pod: SchedPod) -> StaticView:
        failures = static_results(plugins, pod, self.cluster, self.cache)
        view = self.views.get(id(failures))
        if view is None:  # the failures list lives as long as the cache, so its id is a stable key
            view = self.views[id(failures)] = StaticView(failures)
        return view

    def _scan(self, pod: SchedPod, order: list[int], dynamic: list, wanted: int) -> tuple[list[int], dict[str, int]]:
        """The first ``wanted`` nodes of ``order`` the dynamic filters pass, and how many each filter rejected."""
        nodes = self.cluster.nodes
        if not dynamic:
            return order[:wanted], {}
        failed: dict[str, int] = {}
        window: list[int] = []
        plugin, state = dynamic[0]
        if len(dynamic) == 1 and isinstance(plugin, NodeResourcesFit) and not state[2] and not state[3]:
            # only cpu, memory and the pod count to check (NodeResourcesFit.filter), for as many nodes at a time
            # as are still wanted: the scan never looks past the last node it needs
            self._sync_room()
            position = rejected = 0
            while len(window) < wanted and position < len(order):
                chunk = order[position:position + wanted - len(window)]
                position += len(chunk)
                fitting = self._fitting(chunk, state[0], state[1])
                rejected += len(chunk) - len(fitting)
                window += fitting
            if rejected:
                failed[plugin.name] = rejected
            return window, failed
        for index in order:
            node = nodes[index]
            for plugin, state in dynamic:
                if plugin.filter(pod, state, node):
                    failed[plugin.name] = failed.get(plugin.name, 0) + 1
                    break
            else:
                window.append(index)
                if len(window) >= wanted:
                    break
        return window, failed

    def _sync_room(self) -> None:
        """Bring the free pods, cpu and memory of the nodes changed since the last call up to date."""
        changes = self.cluster.changes
        if self.room_seen < len(changes):
            self._update_room(set(changes[self.room_seen:]))
            self.room_seen = len(changes)

    def _update_room(self, indexes: Iterable[int]) -> None:
        nodes = self.cluster.nodes
        for index in indexes:
            node = nodes[index]
            self.free_pods[index] = node.alloc_pods - len(node.pods)
            self.free_cpu[index] = node.alloc_cpu - node.req_cpu
            self.free_memory[index] = node.alloc_memory - node.req_memory

    def _fitting(self, chunk: list[int], cpu: int, memory: int) -> list[int]:
        """The nodes of ``chunk`` with room for one more pod and for its cpu and memory (when it asks any)."""
        fits: Any = map(ZERO.__lt__, _values(self.free_pods, chunk))
        if cpu > 0:
            fits = map(and_, fits, map(cpu.__le__, _values(self.free_cpu, chunk)))
        if memory > 0:
            fits = map(and_, fits, map(memory.__le__, _values(self.free_memory, chunk)))
        return list(compress(chunk, fits))

    def _score(self, profile: Profile, pod: SchedPod, window: list[int]) -> list[int]:
        totals = [0] * len(window)
        feasible: Optional[list[NodeInfo]] = None
        for plugin, weight in profile.scorers:
            fast = getattr(plugin, "window_scores", None)
            scores = fast(pod, self.cluster, window, self.columns) if fast else None
            if scores is None:
                if feasible is None:
                    feasible = [self.cluster.nodes[i] for i in window]
                scores = plugin_scores(plugin, pod, self.cluster, feasible)
            if scores is SKIP:
                continue
            weighted = scores if weight == 1 else map(mul, scores, repeat(weight))
            totals = list(map(add, totals, weighted))
        return totals
