"""Where upstream's order is unspecified, and how sure each planned eviction is (the plan's ``samples``).

The real descheduler evicts different pods from one cycle to the next on an unchanged cluster, because several
orders it walks are not specified:

- the node list comes from the node informer's cache (a Go map), in a new order every cycle;
- the pods of a node come from the pods-by-node indexer (a set, i.e. a Go map), in a new order on every call;
- plugins iterate Go maps (RemoveDuplicates' owners and their nodes, topology spread's namespaces and the set of
  pods marked for eviction);
- ``sort.Slice`` is not stable, so pods or domains that compare equal come out in any order.

``Order`` is the single policy for all of these. ``DETERMINISTIC`` is the fixed order the engine has always used
(nodes by name, pods by namespace/name, stable sorts with explicit tie-breaks): it is sample 0 and the plan's
default. A shuffling ``Order`` draws, from a seeded generator, one of the orders upstream could use; stable sorts of
shuffled lists put equal elements in random order, which covers the unstable sorts where the input is itself a
listing (priority sorts, nodes by usage, pods by age).

``sample_cycles`` runs the cycle once per sample on the same snapshot and policy and tallies, per pod, the share of
cycles that evicted it.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError

T = TypeVar("T")
MAX_SAMPLES = 1000
DEFAULT_SEED = 0


class Order:
    """The order of one simulated cycle wherever upstream leaves it unspecified."""

    def __init__(self, rng: Optional[random.Random] = None) -> None:
        self._rng = rng

    @property
    def shuffled(self) -> bool:
        return self._rng is not None

    def nodes(self, nodes: list[T]) -> list[T]:
        """The node lister's order (once per cycle, shared by every plugin)."""
        return self._shuffle(nodes)

    def pods(self, pods: list[T]) -> list[T]:
        """The pods-by-node indexer's order: a fresh one on every listing. ``pods`` may be shuffled in place."""
        if self._rng is not None and len(pods) > 1:
            self._rng.shuffle(pods)
        return pods

    def keys(self, items: Iterable[T]) -> list[T]:
        """A Go map's iteration order over ``items`` (given in the deterministic order)."""
        return self._shuffle(list(items))

    def sort(self, items: Iterable[T], key: Callable[[T], Any], tie_break: Optional[Callable[[T], Any]] = None,
             reverse: bool = False) -> list[T]:
        """sort.Slice by ``key``: equal elements end up in any order (``tie_break`` orders them deterministically)."""
        listed = list(items)
        if self._rng is not None:
            self._rng.shuffle(listed)
            return sorted(listed, key=key, reverse=reverse)
        if tie_break is None:
            return sorted(listed, key=key, reverse=reverse)
        return sorted(listed, key=lambda item: (key(item), tie_break(item)), reverse=reverse)

    def _shuffle(self, items: list[T]) -> list[T]:
        if self._rng is None or len(items) < 2:
            return items
        shuffled = list(items)
        self._rng.shuffle(shuffled)
        return shuffled


DETERMINISTIC = Order()


def order_for_sample(sample: int, seed: int) -> Order:
    """Sample 0 is the deterministic order; sample i ≥ 1 a shuffling order seeded from (seed, i)."""
    if sample == 0:
        return DETERMINISTIC
    return Order(random.Random(f"descheduler.fleet/{seed}/{sample}"))


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
        self.totals: list[int] = []
        self.per_plugin: dict[str, list[int]] = {}

    def add(self, evictions: Sequence[dict], plugin_keys: Iterable[str]) -> None:
        counts = {key: 0 for key in plugin_keys}
        for entry in evictions:
            pod = (entry["namespace"], entry["name"])
            self.by_pod[pod] = self.by_pod.get(pod, 0) + 1
            self.first_entry.setdefault(pod, entry)
            plugin = plugin_key(entry)
            counts[plugin] = counts.get(plugin, 0) + 1
        for plugin, count in counts.items():
            # a plugin first seen in a later cycle evicted nothing in the earlier ones
            self.per_plugin.setdefault(plugin, [0] * self.cycles).append(count)
        for plugin, series in self.per_plugin.items():
            if plugin not in counts:
                series.append(0)
        self.totals.append(len(evictions))
        self.cycles += 1

    def frequency(self, namespace: str, name: str) -> float:
        return round(self.by_pod.get((namespace, name), 0) / self.cycles, 4) if self.cycles else 0.0


def plugin_key(entry: dict) -> str:
    return f"{entry['profile']}/{entry['plugin']}"


def spread(series: Sequence[int]) -> dict:
    return {"min": min(series), "max": max(series), "mean": round(sum(series) / len(series), 3)}


def annotate(evictions: list[dict], tally: Tally) -> None:
    """Each planned eviction gains its frequency and whether every sampled cycle made it."""
    for entry in evictions:
        frequency = tally.frequency(entry["namespace"], entry["name"])
        entry["frequency"] = frequency
        entry["certain"] = frequency == 1.0


def describe(evictions: list[dict], tally: Tally, seed: int) -> dict:
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
            "frequency": round(count / tally.cycles, 4), "certain": False,
        })
    others.sort(key=lambda e: (-e["frequency"], e["namespace"], e["name"]))
    certain = sum(1 for e in evictions if e.get("certain"))
    return {
        "samples": tally.cycles,
        "seed": seed,
        "certain": certain,
        "possible": len(tally.by_pod) - certain,
        "evictions_per_cycle": spread(tally.totals),
        "by_plugin": {plugin: spread(series) for plugin, series in sorted(tally.per_plugin.items())},
        "other_possible_evictions": others,
    }
