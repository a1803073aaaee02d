"""Where upstream's order is unspecified, and how sure each planned eviction is (the plan's ``samples``).

The real descheduler evicts different pods from one cycle to the next on an unchanged cluster, because several
orders it walks are not specified:

- the node list comes from the node informer's cache (a Go map), in a new order every cycle;
- the pods of a node come from the pods-by-node indexer (a set, i.e. a Go map), in a new order on every call;
- plugins iterate Go maps (RemoveDuplicates' owners and their nodes, topology spread's namespaces and the set of
  pods marked for eviction);
- ``sort.Slice`` is not stable, so pods or domains that compare equal come out in any order;
- a pod evicted by one plugin may still be listed by the plugins after it in the same cycle: the descheduler's
  views are informer caches that learn of the eviction asynchronously (in dry-run mode the sandbox deletes the
  pod from a fake client whose informer catches up later; in Automatic mode the pod stays listed while it
  terminates). Whether they caught up is a race.

``Order`` is the single policy for all of these. ``DETERMINISTIC`` is the fixed order the engine has always used
(nodes by name, pods by namespace/name, stable sorts with explicit tie-breaks): it is sample 0 and the plan's
default. A sampling ``Order`` draws, from a seeded generator, the order a fresh descheduler's Go maps give:

- a map of up to 8 entries is a single group of 8 slots filled in insertion order, and iteration starts at a
  uniformly random slot and wraps around, so the order is a rotation of the insertion order (the identity being the
  most likely); a bigger map is a swiss table whose layout depends on its random hash seed and on the insertion
  order (``go_map_layout`` emulates it; its orders match Go 1.26's frequencies), iterated the same way;
- the dry-run sandbox's informers receive nodes and pods in the order the real informers deliver them: client-go
  (since 1.35) streams the initial list (WatchList) into a temporary map filled in API order (name,
  namespace/name) and hands on one iteration of it. So the pods-by-node index is filled in that iteration's order,
  and so is the node index (a set of the nodes the node selector admits), iterated again for every cycle's node
  list: two iterations of the name order. Measured on upstream v0.36 (3 nodes of one pod each, a cap of one
  eviction, 18 processes of 8 cycles): 5 processes took another node than the first in name order in most of
  their cycles, which one iteration never gives;
- ``sort.Slice`` is deterministic given its input, so the order of equal elements follows from the map order that
  listed them: insertion sort up to 12 elements, which keeps ties in input order for a strict comparator and
  reverses them for one answering "less" on equal elements (the priority sort, the pods of a topology domain);
  past 12, pdqsort (its pivots, partitions and its breakPatterns generator seeded with the length) moves them in
  a way go_sort.py reproduces exactly, so sampled sorts run that port on the drawn input order.

A sampling ``Order`` also draws (on its own generator, so the orders above stay as they were) whether this cycle's
views lag: with a ``lag_window`` of W, a plugin's listings (and the node usage the utilization plugins count) still
hold the W latest pods evicted before it started, the ones the informers may not have caught up with (a second
eviction of such a pod fails, as upstream's does with NotFound), and DefaultEvictor's minReplicas count still holds
the W latest evictions at the moment it filters (framework.PluginHandle.owner_counts_for); without it, as in the
deterministic order, an evicted pod disappears from every later view. Half the sampled cycles lag, by 1 to 12
evictions or by all of them (the real descheduler was seen still counting the 6 pods PodLifeTime had just
evicted, in half of its runs on one cluster): how often and how far the race goes on a real cluster is not known,
so frequencies of evictions that depend on it are estimates, while the possible evictions cover the outcomes seen
on the real descheduler.

``sample_cycles`` runs the cycle once per sample on the same snapshot and policy and tallies, per pod, the share of
cycles that evicted it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from ansible_collections.descheduler.fleet.plugins.module_utils.engine import certainty
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.certainty import CERTAIN, LIKELY, judge
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.go_sort import sort_slice_by_key
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    priority_sort_key,
    sort_by_priority,
)

T = TypeVar("T")
MAX_SAMPLES = 1000
DEFAULT_SEED = 0
GO_MAP_GROUP_SLOTS = 8  # a Go map this small is one group (swiss table) or one bucket (before Go 1.24)
GO_MAP_FIRST_TABLE = 16  # slots of the table a small map grows into
GO_MAP_MAX_TABLE = 1024  # slots; past 7/8 of it Go splits the map into several tables (modelled as any order)
LAGGING_SHARE = 0.5  # sampled cycles whose later plugins still list the pods evicted just before them
# how many of the latest evictions those plugins still list; the last: every eviction of the cycle so far
LAG_WINDOWS = (1, 2, 3, 4, 6, 8, 12, 10**9)


class Order:
    """The order of one simulated cycle wherever upstream leaves it unspecified."""

    def __init__(self, rng: Optional[random.Random] = None, lag_window: int = 0) -> None:
        self._rng = rng
        # how many of the latest evictions a plugin's views still list when it starts (0: none)
        self.lag_window = lag_window
        # per listed sequence (a node's pods): its items in insertion order and their map layout, for the cycle
        self._layouts: dict[int, tuple[list, list[Optional[int]]]] = {}
        self._index_ranks: Optional[dict[int, int]] = None

    @property
    def shuffled(self) -> bool:
        return self._rng is not None

    @property
    def evictions_lag(self) -> bool:
        return self.lag_window > 0

    def nodes(self, nodes: Sequence[T], selected: Callable[[T], bool], ready: Callable[[T], bool]) -> list[T]:
        """A cycle's node list from all nodes in name order: the node index (the ``selected`` ones, filled in the
        order of one iteration of a map filled in name order), iterated, keeping the ``ready`` ones."""
        if self._rng is None:
            return [node for node in nodes if selected(node) and ready(node)]
        delivered = self._go_map_order(list(nodes))
        indexed = [node for node in delivered if selected(node)]
        return [node for node in self._go_map_order(indexed) if ready(node)]

    def pods(self, pods: Sequence[Any], keep: Callable[[Any], bool], everyone: Sequence[Any] = ()) -> list[Any]:
        """The pods-by-node indexer's order over all pods of a node (terminal and already evicted ones included:
        they hold slots), keeping those ``keep`` admits.

        The informer's pod map (``everyone``, filled in API order) is iterated once to build the per-node index,
        so a node's set is filled in that iteration's order; its layout is drawn once per cycle and each listing
        starts at a new random slot of it.
        """
        if self._rng is None:
            return list(filter(keep, pods))  # every plugin lists every node's pods: filter's C loop is faster
        cached = self._layouts.get(id(pods))
        if cached is None:
            rank = self._index_rank(everyone or pods)
            ordered = sorted(pods, key=lambda pod: rank[pod.index])
            cached = self._layouts[id(pods)] = (ordered, go_map_layout(len(ordered), self._rng))
        ordered, slots = cached
        return [pod for pod in self._iterate(ordered, slots) if keep(pod)]

    def _index_rank(self, everyone: Sequence[Any]) -> dict[int, int]:
        """Position of each pod in the one iteration of the informer's pod map that built the node index."""
        if self._index_ranks is None:
            # inserted in API order, i.e. by the key string: "shop-dev/x" comes before "shop/x"
            in_api_order = sorted(everyone, key=lambda pod: f"{pod.namespace}/{pod.name}")
            iterated = self._go_map_order(in_api_order)
            self._index_ranks = {pod.index: position for position, pod in enumerate(iterated)}
        return self._index_ranks

    def keys(self, items: Iterable[T], fixed: Optional[list[T]] = None) -> list[T]:
        """A Go map's iteration order over ``items`` given in insertion order (``fixed``: the deterministic order,
        when it is not the insertion order)."""
        listed = list(items)
        if self._rng is None:
            return listed if fixed is None else fixed
        return self._go_map_order(listed)

    def sort(self, items: Iterable[T], key: Callable[[T], Any], tie_break: Optional[Callable[[T], Any]] = None,
             reverse: bool = False, ties_reversed: bool = False) -> list[T]:
        """sort.Slice by ``key`` over ``items`` in their current order. Deterministic: stable, ``tie_break`` orders
        equal elements. Sampled: the order Go's sort.Slice leaves them in (go_sort); ``ties_reversed`` for
        comparators answering "less" on equal elements."""
        if self._rng is None:
            if tie_break is None:
                return sorted(items, key=key, reverse=reverse)
            return sorted(items, key=lambda item: (key(item), tie_break(item)), reverse=reverse)
        return sort_slice_by_key(items, key, descending=reverse, equal_is_less=ties_reversed)

    def priority_sort(self, pods: list[T]) -> list[T]:
        """SortPodsBasedOnPriorityLowToHigh over ``pods`` in their listed order. Its comparator answers "less" for
        equal pods: up to 12 pods Go's insertion sort reverses their ties, past 12 pdqsort moves them (go_sort)."""
        if self._rng is None:
            return sort_by_priority(pods)  # type: ignore[arg-type]
        return sort_slice_by_key(pods, priority_sort_key, equal_is_less=True)  # type: ignore[arg-type]

    def _go_map_order(self, items: list[T]) -> list[T]:
        """Iteration order of a fresh Go map whose keys were inserted in ``items`` order."""
        if len(items) < 2:
            return items
        return self._iterate(items, go_map_layout(len(items), self._rng))  # type: ignore[arg-type]

    def _iterate(self, items: list[T], slots: list[Optional[int]]) -> list[T]:
        """One ``range`` over the map: from a uniformly random slot, around the whole slot array."""
        if not slots:  # too big to lay out: any order
            shuffled = list(items)
            self._rng.shuffle(shuffled)  # type: ignore[union-attr]
            return shuffled
        start = self._rng.randrange(len(slots))  # type: ignore[union-attr]
        rotated = slots[start:] + slots[:start]
        return [items[key] for key in rotated if key is not None]


def go_map_layout(count: int, rng: random.Random) -> list[Optional[int]]:
    """The slot array of a Go (swiss table) map after keys 0..count-1 were inserted in that order.

    Up to 8 keys fill one group's slots in insertion order. The 9th moves them into a 16-slot table by hash (a
    random 64-bit value per key: Go seeds each map's hash at random); a key goes to the first empty slot of the
    first group with one along the quadratic probe sequence from group ``(hash >> 7) & mask``, and the table
    doubles, re-placing its keys in slot order, when it would pass 7/8 full. Returns [] past one table.
    """
    if count <= GO_MAP_GROUP_SLOTS:
        return list(range(count)) + [None] * (GO_MAP_GROUP_SLOTS - count)
    if count > GO_MAP_MAX_TABLE * 7 // 8:
        return []
    hashes = [rng.getrandbits(64) for _unused in range(count)]
    slots: list[Optional[int]] = [None] * GO_MAP_FIRST_TABLE
    for key in range(GO_MAP_GROUP_SLOTS):
        _place(slots, hashes, key)
    room = GO_MAP_FIRST_TABLE * 7 // 8 - GO_MAP_GROUP_SLOTS
    for key in range(GO_MAP_GROUP_SLOTS, count):
        if room == 0:
            old, slots = slots, [None] * (len(slots) * 2)
            for moved in old:
                if moved is not None:
                    _place(slots, hashes, moved)
            room = len(slots) * 7 // 8 - key
        _place(slots, hashes, key)
        room -= 1
    return slots


def _place(slots: list[Optional[int]], hashes: list[int], key: int) -> None:
    mask = len(slots) // GO_MAP_GROUP_SLOTS - 1
    group = (hashes[key] >> 7) & mask
    step = 0
    while True:
        base = group * GO_MAP_GROUP_SLOTS
        for slot in range(base, base + GO_MAP_GROUP_SLOTS):
            if slots[slot] is None:
                slots[slot] = key
                return
        step += 1
        group = (group + step) & mask


DETERMINISTIC = Order()


def order_for_sample(sample: int, seed: int) -> Order:
    """Sample 0 is the deterministic order; sample i ≥ 1 a shuffling order seeded from (seed, i)."""
    if sample == 0:
        return DETERMINISTIC
    lag = random.Random(f"descheduler.fleet/{seed}/{sample}/lag")
    window = lag.choice(LAG_WINDOWS) if lag.random() < LAGGING_SHARE else 0
    return Order(random.Random(f"descheduler.fleet/{seed}/{sample}"), lag_window=window)


def check_sampling(samples: Any, seed: Any) -> tuple[int, int]:
    """Validated (samples, seed); errors name the option, the value and the fix."""
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise PolicyError("samples", samples, f"an integer from 1 (one deterministic cycle) to {MAX_SAMPLES}")
    if seed is None:
        seed = DEFAULT_SEED
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise PolicyError("seed", seed, "an integer (the same seed gives the same sampled cycles)")
    return samples, seed


class Tally:
    """Evictions counted over sampled cycles, per pod and per plugin."""

    def __init__(self) -> None:
        self.cycles = 0
        self.by_pod: dict[tuple[str, str], int] = {}
        self.first_entry: dict[tuple[str, str], dict] = {}
        self.plugins_by_pod: dict[tuple[str, str], dict[str, None]] = {}  # every "profile/plugin" that evicted it
        self.totals: list[int] = []
        self.per_plugin: dict[str, list[int]] = {}

    def add(self, evictions: Sequence[dict], plugin_keys: Iterable[str]) -> None:
        counts = {key: 0 for key in plugin_keys}
        for entry in evictions:
            pod = (entry["namespace"], entry["name"])
            self.by_pod[pod] = self.by_pod.get(pod, 0) + 1
            self.first_entry.setdefault(pod, entry)
            plugin = plugin_key(entry)
            self.plugins_by_pod.setdefault(pod, {})[plugin] = None
            counts[plugin] = counts.get(plugin, 0) + 1
        for plugin, count in counts.items():
            # a plugin first seen in a later cycle evicted nothing in the earlier ones
            self.per_plugin.setdefault(plugin, [0] * self.cycles).append(count)
        for plugin, series in self.per_plugin.items():
            if plugin not in counts:
                series.append(0)
        self.totals.append(len(evictions))
        self.cycles += 1


def plugin_key(entry: dict) -> str:
    return f"{entry['profile']}/{entry['plugin']}"


def spread(series: Sequence[int]) -> dict:
    return {"min": min(series), "max": max(series), "mean": round(sum(series) / len(series), 3)}


def annotate(evictions: list[dict], tally: Tally, exact: bool = False) -> None:
    """Each planned eviction gains its frequency, the frequency's bounds and its word (engine/certainty.py);
    ``exact``: the cycle is order-free (engine/order_free.py)."""
    for entry in evictions:
        pod = (entry["namespace"], entry["name"])
        entry.update(judge(tally.by_pod.get(pod, 0), tally.cycles, exact))
        entry["sampled_plugins"] = sorted(tally.plugins_by_pod.get(pod, ()))


def describe(evictions: list[dict], tally: Tally, seed: int, exact: bool = False) -> dict:
    """The plan's ``sampling`` block (docs/plan-format.md); ``evictions`` is the default plan (sample 0)."""
    planned = {(e["namespace"], e["name"]) for e in evictions}
    others = []
    for pod, count in tally.by_pod.items():
        if pod in planned:
            continue
        entry = tally.first_entry[pod]
        others.append({
            "namespace": pod[0], "name": pod[1], "node": entry["node"], "owner": entry["owner"],
            "plugin": entry["plugin"], "profile": entry["profile"], "reason": entry["reason"],
            **judge(count, tally.cycles, exact), "sampled_plugins": sorted(tally.plugins_by_pod[pod]),
        })
    others.sort(key=lambda e: (-e["frequency"], e["namespace"], e["name"]))
    words = Counter(e["likelihood"] for e in [*evictions, *others])
    return {
        "samples": tally.cycles,
        "seed": seed,
        "certain": words[CERTAIN],
        "possible": len(tally.by_pod) - words[CERTAIN],  # every pod some cycle evicts that is not certain
        "likely": words[LIKELY],
        "confidence": certainty.describe(exact),
        "evictions_per_cycle": spread(tally.totals),
        "by_plugin": {plugin: spread(series) for plugin, series in sorted(tally.per_plugin.items())},
        "other_possible_evictions": others,
    }
