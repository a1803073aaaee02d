"""The placement preview's scheduling cycle, fast: the same Decision as ``framework.schedule`` (the straightforward
path, kept as the reference and for explanations), computed with what does not change between replacements kept.

Between two replacements only the node that took the previous one changes. So:
- the static filters (taints, node selector/affinity, cordon) are evaluated once per pod signature into the list of
  nodes that pass them, with per-plugin prefix counts of the rejected ones (``rejected_by`` over any node range);
- the scores that depend on the pod only through a few numbers (its requests: NodeResourcesFit,
  BalancedAllocation) or not on node state at all (taints, node labels: TaintToleration, NodeAffinity) are kept per
  node in columns keyed by those numbers; a node's entries are forgotten when a pod is bound to or unbound from it
  (``Cluster.changes``);
- a plugin offers ``window_scores(pod, cluster, window, columns)`` when it can score the feasible nodes this way
  (a list, one int when every node scores the same, or SparseScores when all but a few do); the others are
  scored exactly as ``framework.score_nodes`` does.
When no node fits, the reference path computes the decision, so the FitError message is upstream's.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from itertools import chain, compress, filterfalse, islice, repeat
from operator import add, and_, eq, itemgetter, le, lt, mul
from typing import Any, Callable, Optional

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
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    SKIP,
    SparseScores,
    Unresolvable,
)
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
    value depends on. ``fixed`` columns depend on node spec only (labels, taints): they are computed for every node
    at first use (their keys take few values). ``changing`` ones depend on what is bound to the node too, are filled
    as windows need them and lose a node's entry when the cluster records a change on it. Both return a tuple, in
    window order."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.fixed_columns: dict[Any, list] = {}
        self.changing_columns: dict[Any, tuple[list, list[int]]] = {}  # key → (values, [changes seen])
        self.memos: dict[Any, dict] = {}
        self._window: list[int] = []
        self._window_size = 0
        self._getter: Callable[[list], tuple] = tuple

    def fixed(self, key: Any, window: list[int], compute: Callable[[list[NodeInfo]], list]) -> tuple:
        column = self.fixed_columns.get(key)
        if column is None:
            column = self.fixed_columns[key] = list(compute(self.cluster.nodes))
        return self._get(window)(column)

    def label_values(self, key: str, window: list[int]) -> tuple:
        """Each window node's value of label ``key`` (None without it): one column per key for every plugin."""
        return self.fixed(("label", key), window, lambda nodes: [n.labels.get(key) for n in nodes])

    def memo(self, key: Any) -> dict:
        """A dict kept for the cluster's lifetime under ``key``: per node values a plugin fills as it needs them."""
        found = self.memos.get(key)
        if found is None:
            found = self.memos[key] = {}
        return found

    def changing(self, key: Any, window: list[int], compute: Callable[[list[NodeInfo]], list]) -> tuple:
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
        picked = self._get(window)(column)
        if None not in picked:
            return picked
        values = list(picked)
        missing = _positions_of_none(picked)
        nodes = self.cluster.nodes
        for j, value in zip(missing, compute([nodes[window[j]] for j in missing]), strict=True):
            values[j] = column[window[j]] = value
        return tuple(values)

    def _get(self, window: list[int]) -> Callable[[list], tuple]:
        """A getter of the window's entries of a column, made once per window (the window is a new list per
        replacement, and every plugin reads several columns over it)."""
        if window is not self._window or len(window) != self._window_size:
            self._window, self._window_size = window, len(window)
            if len(window) == 1:
                only = window[0]
                self._getter = lambda column: (column[only],)
            else:
                self._getter = itemgetter(*window)
        return self._getter


class FastScheduler:
    """Schedules replacements on one cluster, one after the other, as ``framework.schedule`` would."""

    def __init__(self, cluster: Cluster, cache: Optional[StaticCache] = None) -> None:
        self.cluster = cluster
        self.cache = cache or StaticCache()
        self.columns = Columns(cluster)
        self.views: dict[tuple, StaticView] = {}
        self.names = [n.name for n in cluster.nodes]
        self.room = Room(cluster)
        self.plugin_plans: dict[int, ProfilePlan] = {}

    def _plan(self, profile: Profile) -> ProfilePlan:
        plan = self.plugin_plans.get(id(profile))
        if plan is None or plan.profile is not profile:
            plan = self.plugin_plans[id(profile)] = ProfilePlan(profile)
        return plan

    def schedule(self, profile: Profile, pod: SchedPod) -> Decision:
        cluster = self.cluster
        total = len(cluster.nodes)
        if total == 0:
            return schedule(profile, pod, cluster, self.cache)
        plan = self._plan(profile)
        dynamic = []
        for plugin in plan.dynamic_filters:
            state = plugin.pre_filter(pod, cluster)
            if isinstance(state, Unresolvable):
                return schedule(profile, pod, cluster, self.cache)
            if state is not SKIP:
                dynamic.append((plugin, state))
        view = self._view(plan.static_filters, pod)
        wanted = num_feasible_nodes_to_find(profile.percentage, total) if profile.scorers else 1
        start = cluster.next_start % total
        window, failed = self._scan(pod, view.passing, bisect_left(view.passing, start), dynamic, wanted)
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
        best, best_nodes = self._best(plan, pod, window)
        tied = sorted(map(self.names.__getitem__, best_nodes))
        reason = f"highest score {best} of {len(window)} feasible nodes"
        return Decision(tied[0], tied, reason, rejected, processed)

    def _view(self, plugins: list, pod: SchedPod) -> StaticView:
        failures = static_results(plugins, pod, self.cluster, self.cache)
        view = self.views.get(id(failures))
        if view is None:  # the failures list lives as long as the cache, so its id is a stable key
            view = self.views[id(failures)] = StaticView(failures)
        return view

    def _scan(self, pod: SchedPod, passing: list[int], split: int, dynamic: list, wanted: int
              ) -> tuple[list[int], dict[str, int]]:
        """The first ``wanted`` nodes the dynamic filters pass, of ``passing`` read from ``split`` on and wrapping
        around (the scheduler's order from its start index), and how many each filter rejected."""
        nodes = self.cluster.nodes
        if not dynamic:
            return _wrapped(passing, split, 0, wanted), {}
        failed: dict[str, int] = {}
        window: list[int] = []
        plugin, state = dynamic[0]
        if not (isinstance(plugin, NodeResourcesFit) and not state[2] and not state[3]):
            for index in chain(islice(passing, split, None), islice(passing, split)):
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
        # NodeResourcesFit comes first and checks only cpu, memory and the pod count: it runs on as many nodes at a
        # time as are still wanted (so the scan never looks past the last node it needs), the later filters on
        # the nodes it passes, in order
        self.room.sync()
        later = dynamic[1:]
        position = 0
        while len(window) < wanted and position < len(passing):
            chunk = _wrapped(passing, split, position, wanted - len(window))
            position += len(chunk)
            fitting = self.room.fitting(chunk, state[0], state[1])
            if len(fitting) < len(chunk):
                failed[plugin.name] = failed.get(plugin.name, 0) + len(chunk) - len(fitting)
            if not later:
                window += fitting
                continue
            for other, other_state in later:  # each filter on the nodes the previous ones passed
                if not fitting:
                    break
                batch = getattr(other, "filter_window", None)
                passes = batch(pod, other_state, fitting, self.columns) if batch is not None else None
                if passes is None:  # no batch form (or not for this pod): node by node
                    passes = [not other.filter(pod, other_state, nodes[index]) for index in fitting]
                survivors = list(compress(fitting, passes))
                if len(survivors) < len(fitting):
                    failed[other.name] = failed.get(other.name, 0) + len(fitting) - len(survivors)
                fitting = survivors
            window += fitting
        return window, failed

    def _best(self, plan: ProfilePlan, pod: SchedPod, window: list[int]) -> tuple[int, list[int]]:
        """The highest total score over the window and the nodes that have it.

        Plugins scored without normalization may offer ``score_bounds``: an upper bound of their score per node
        from what does not depend on the pod (a node's score with no pod added). Their exact scores are then computed
        only for the nodes whose bounded total reaches the exact total of the most promising node: every node with
        the best total is among them, so the result is the same as scoring all."""
        exact_scores = []  # (scores, weight) of the plugins scored exactly on every node
        sparse = []  # (SparseScores, weight)
        offset = 0  # what the plugins that score every node alike add
        bound_scores = []
        bound_offset = 0
        bounded = []  # (plugin, weight, its bound: one int for every node or a list over the window)
        feasible: Optional[list[NodeInfo]] = None
        for plugin, weight, bounds, fast in plan.scorers:
            scores = bounds(pod, self.cluster, window, self.columns) if bounds else None
            if scores is SKIP:
                continue
            if isinstance(scores, int):  # one bound for every node
                bounded.append((plugin, weight, scores))
                bound_offset += scores * weight
                continue
            if scores is not None:
                bounded.append((plugin, weight, scores))
                bound_scores.append((scores, weight))
                continue
            scores = fast(pod, self.cluster, window, self.columns) if fast else None
            if scores is None:
                if feasible is None:
                    feasible = [self.cluster.nodes[i] for i in window]
                scores = plugin_scores(plugin, pod, self.cluster, feasible)
            if scores is SKIP:
                continue
            if isinstance(scores, int):  # the same score on every node
                offset += scores * weight
            elif isinstance(scores, SparseScores):
                offset += scores.base * weight
                sparse.append((scores, weight))
            elif scores.count(scores[0]) == len(scores):
                offset += scores[0] * weight
            else:
                exact_scores.append((scores, weight))
        # the totals are kept without the parts every node shares (offset), added back where compared
        exact = _weighted_total(exact_scores, len(window))
        for scores, weight in sparse:
            for j, score in scores.others.items():
                exact[j] += (score - scores.base) * weight
        if not bounded:
            best = max(exact)
            return best + offset, list(compress(window, map(eq, repeat(best), exact)))
        upper = _weighted_total(bound_scores, len(window), exact) if bound_scores else exact
        top = upper.index(max(upper))
        lowest_best = self._exact_totals(pod, window, [top], exact, bounded)[0]
        candidates = list(compress(range(len(window)), map(le, repeat(lowest_best - bound_offset), upper)))
        totals = self._exact_totals(pod, window, candidates, upper, bounded, bound_offset, keep_from=lowest_best)
        best = max(totals)
        window_best = [window[j] for j, total in zip(candidates, totals, strict=True) if total == best]
        return best + offset, window_best

    def _exact_totals(self, pod: SchedPod, window: list[int], positions: list[int], start: list[int],
                      bounded: list, start_offset: int = 0, keep_from: Optional[int] = None) -> list[int]:
        """The exact totals at ``positions`` (window positions). ``start`` + ``start_offset`` is, per position, the
        total of the plugins scored exactly, plus the bounded plugins' bounds when ``keep_from`` is given: the
        bounds are then replaced by exact scores one plugin at a time, and after each plugin the positions that can
        no longer reach ``keep_from`` are dropped (from ``positions`` too: the totals of the rest are returned)."""
        totals = [start[j] + start_offset for j in positions]
        for plugin, weight, bound in bounded:
            scores = plugin.score_many(pod, None, [self.cluster.nodes[window[j]] for j in positions])
            if keep_from is None:
                totals = _weighted_sum(totals, scores, weight)
                continue
            if isinstance(bound, int):
                totals = [total + (score - bound) * weight for total, score in zip(totals, scores, strict=True)]
            else:
                totals = [total + (score - bound[j]) * weight
                          for total, score, j in zip(totals, scores, positions, strict=True)]
            if min(totals) < keep_from:
                kept = [i for i, total in enumerate(totals) if total >= keep_from]
                if kept:  # the node keep_from was taken from always stays, unless a bound were broken
                    positions[:] = [positions[i] for i in kept]
                    totals = [totals[i] for i in kept]
        return totals


class ProfilePlan:
    """What the fast path looks up on a profile's plugins, once per profile instead of once per replacement."""

    __slots__ = ("profile", "static_filters", "dynamic_filters", "scorers")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile  # kept alive: the plans are found by the profile's id
        self.static_filters = [p for p in profile.filters if getattr(p, "static", False)]
        self.dynamic_filters = [p for p in profile.filters if not getattr(p, "static", False)]
        # (plugin, weight, its score_bounds or None, its window_scores or None)
        self.scorers = [(plugin, weight, getattr(plugin, "score_bounds", None), getattr(plugin, "window_scores", None))
                        for plugin, weight in profile.scorers]


class Room:
    """Free pods, cpu (millis) and memory per node, as NodeResourcesFit.filter computes them, with the nodes kept
    sorted by free cpu and by free memory: the nodes too small for a pod are a short prefix of each, so a run of
    nodes is checked by looking at those few instead of at every node of the run."""

    # past this many too-small nodes, checking every node of the run is cheaper
    MAX_EXCLUDED = 64

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        size = len(cluster.nodes)
        self.free_pods = [0] * size
        self.free_cpu = [0] * size
        self.free_memory = [0] * size
        self.full: set[int] = set()  # nodes without room for one more pod
        self.seen = len(cluster.changes)
        for index in range(size):
            self._measure(index)
        self.by_cpu = sorted(zip(self.free_cpu, range(size), strict=True))
        self.by_memory = sorted(zip(self.free_memory, range(size), strict=True))

    def sync(self) -> None:
        """Bring the nodes changed since the last call up to date."""
        changes = self.cluster.changes
        if self.seen < len(changes):
            for index in set(changes[self.seen:]):
                cpu, memory = self.free_cpu[index], self.free_memory[index]
                self._measure(index)
                _move(self.by_cpu, (cpu, index), (self.free_cpu[index], index))
                _move(self.by_memory, (memory, index), (self.free_memory[index], index))
            self.seen = len(changes)

    def _measure(self, index: int) -> None:
        node = self.cluster.nodes[index]
        self.free_pods[index] = node.alloc_pods - node.pod_count
        self.free_cpu[index] = node.alloc_cpu - node.req_cpu
        self.free_memory[index] = node.alloc_memory - node.req_memory
        if self.free_pods[index] <= 0:
            self.full.add(index)
        else:
            self.full.discard(index)

    def fitting(self, chunk: list[int], cpu: int, memory: int) -> list[int]:
        """The nodes of ``chunk`` with room for one more pod and for its cpu and memory (when it asks any)."""
        small_cpu = bisect_left(self.by_cpu, (cpu, -1)) if cpu > 0 else 0
        small_memory = bisect_left(self.by_memory, (memory, -1)) if memory > 0 else 0
        if small_cpu + small_memory + len(self.full) > self.MAX_EXCLUDED:
            return self._fitting_each(chunk, cpu, memory)
        excluded = set(self.full)
        excluded.update(index for _free, index in self.by_cpu[:small_cpu])
        excluded.update(index for _free, index in self.by_memory[:small_memory])
        if not excluded:
            return chunk
        return list(filterfalse(excluded.__contains__, chunk))

    def _fitting_each(self, chunk: list[int], cpu: int, memory: int) -> list[int]:
        fits: Any = map(lt, repeat(ZERO), _values(self.free_pods, chunk))
        if cpu > 0:
            fits = map(and_, fits, map(le, repeat(cpu), _values(self.free_cpu, chunk)))
        if memory > 0:
            fits = map(and_, fits, map(le, repeat(memory), _values(self.free_memory, chunk)))
        return list(compress(chunk, fits))


def _positions_of_none(values: tuple) -> list[int]:
    """Where ``values`` holds None: usually the one or two nodes changed since the last window, so searched for
    with tuple.index (in C) instead of reading every entry in Python."""
    found = []
    position = -1
    try:
        while True:
            position = values.index(None, position + 1)
            found.append(position)
    except ValueError:
        return found


def _wrapped(ordered: list[int], split: int, position: int, count: int) -> list[int]:
    """``count`` entries from ``position`` of ``ordered`` rotated to start at ``split`` (without rotating it: a
    scan usually reads a tenth of the nodes)."""
    begin = split + position
    size = len(ordered)
    if begin >= size:
        return ordered[begin - size:begin - size + min(count, size - position)]
    chunk = ordered[begin:begin + count]
    if len(chunk) < count:
        chunk += ordered[:min(count - len(chunk), split)]
    return chunk


def _move(ordered: list, old: tuple, new: tuple) -> None:
    """Replace ``old`` by ``new`` in a sorted list."""
    if old == new:
        return
    del ordered[bisect_left(ordered, old)]
    insort(ordered, new)


def _weighted_total(scores: list[tuple[Any, int]], size: int, start: Optional[list[int]] = None) -> list[int]:
    """Σ weight × scores per node (a new list), added to ``start`` when given."""
    total = start
    for values, weight in scores:
        weighted = values if weight == 1 else map(mul, values, repeat(weight))
        total = list(weighted) if total is None else list(map(add, total, weighted))
    return [0] * size if total is None else total


def _weighted_sum(totals: list[int], scores: list[int], weight: int) -> list[int]:
    return list(map(add, totals, scores if weight == 1 else map(mul, scores, repeat(weight))))
