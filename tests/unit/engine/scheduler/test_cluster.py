"""The scheduler view's bookkeeping: Cluster.matching keeps per-selector pod counts across binds and unbinds, and
Cluster.load builds the starting point.

Both the fast path and the reference path read these counts (topology spread domains, inter-pod affinity terms), so
the comparison of the two paths in test_incremental_schedule.py cannot catch a wrong count: here each call is
checked against a count from scratch over the bound pods."""

from __future__ import annotations

import random
from typing import Any, Callable, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    compile_label_selector,
    required_values,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler import cluster as cluster_module
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod
from schedtest import cluster, node, pod, sched

NAMESPACES = ("shop", "batch", "web")
APPS = ("cart", "search", "db")


def from_scratch(state: Any, namespaces: Optional[tuple], predicate: Callable[[SchedPod], bool]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for namespace, pods in state.pods_by_namespace.items():
        if namespaces is not None and namespace not in namespaces:
            continue
        for bound in pods.values():
            if predicate(bound):
                index = state.location[bound.key].index
                counts[index] = counts.get(index, 0) + 1
    return counts


Selector = tuple[Any, Optional[tuple], Callable[[SchedPod], bool], Optional[tuple[str, frozenset]]]


def selectors() -> list[Selector]:
    """(key, namespaces, predicate, narrowing): per app in one namespace and anywhere, read through the label
    index or not, two apps through it, and every pod not terminating."""
    result: list[Selector] = []
    for app in APPS:
        def is_app(p: SchedPod, app: str = app) -> bool:
            return p.labels.get("app") == app
        for narrowing in (None, ("app", frozenset([app]))):
            result.append((("app", app, "shop", narrowing), ("shop",), is_app, narrowing))
            result.append((("app", app, None, narrowing), None, is_app, narrowing))
    result.append((("cart or db", "shop+web"), ("shop", "web"), lambda p: p.labels.get("app") in ("cart", "db"),
                   ("app", frozenset(["cart", "db"]))))
    result.append((("live", "batch+web"), ("batch", "web"), lambda p: not p.terminating, None))
    return result


def random_pod(rng: random.Random, nodes: list[str]) -> SchedPod:
    meta = {"deletionTimestamp": "2026-11-24T00:00:00Z"} if rng.random() < 0.1 else {}
    obj = pod(node_name=rng.choice(nodes), namespace=rng.choice(NAMESPACES), labels={"app": rng.choice(APPS)})
    obj["metadata"].update(meta)
    return sched(obj)


@pytest.mark.parametrize("seed", range(4))
def test_matching_counts_equal_a_count_from_scratch_after_every_bind_and_unbind(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(12)]
    state = cluster([node(n, {"cpu": "8", "memory": "32Gi"}) for n in names])
    bound: list[SchedPod] = []
    for _unused in range(40):
        placed = random_pod(rng, names)
        state.bind(placed, rng.choice(names))
        bound.append(placed)
    checked = 0
    for _unused in range(400):
        if bound and rng.random() < 0.4:  # an eviction, sometimes a replacement right after
            gone = bound.pop(rng.randrange(len(bound)))
            state.unbind(gone)
            if rng.random() < 0.5:
                replacement = gone.replacement()
                state.bind(replacement, rng.choice(names))
                bound.append(replacement)
        else:
            placed = random_pod(rng, names)
            state.bind(placed, rng.choice(names))
            bound.append(placed)
        for key, namespaces, predicate, narrowing in rng.sample(selectors(), 3):  # some keys skip many moves
            found = state.matching(key, namespaces, predicate, narrowing)
            assert found == from_scratch(state, namespaces, predicate), key
            checked += 1
    assert checked == 1200


def _view_of(state: Any) -> tuple:
    nodes = [(n.name, n.req_cpu, n.req_memory, n.nonzero_cpu, n.nonzero_memory, n.pod_count,
              sorted(p.key for p in n.affinity_pods)) for n in state.nodes]
    return (nodes, {k: n.name for k, n in state.location.items()}, state.owner_counts,
            {ns: sorted(pods) for ns, pods in state.pods_by_namespace.items()}, state.affinity_pod_count)


def test_load_makes_the_view_binding_one_by_one_makes_and_logs_no_change() -> None:
    rng = random.Random("load")
    names = [f"n{i}" for i in range(6)]
    running = [(random_pod(rng, names), rng.choice(names)) for _unused in range(60)]
    loaded = cluster([node(n, {"cpu": "8", "memory": "32Gi"}) for n in names])
    loaded.load(running)
    bound = cluster([node(n, {"cpu": "8", "memory": "32Gi"}) for n in names])
    for placed, name in running:
        bound.bind(placed, name)
    assert _view_of(loaded) == _view_of(bound)
    assert loaded.changes == [] and loaded.moves == []  # the starting point, not moves to replay
    for key, namespaces, predicate, narrowing in selectors():  # and counts start from it
        assert loaded.matching(key, namespaces, predicate, narrowing) == from_scratch(bound, namespaces, predicate)


def test_matching_survives_forgetting_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_MATCHING_ENTRIES the least recently used selector is forgotten and counted again when asked."""
    monkeypatch.setattr(cluster_module, "MAX_MATCHING_ENTRIES", 2)
    rng = random.Random("forget")
    names = [f"n{i}" for i in range(5)]
    state = cluster([node(n, {"cpu": "8", "memory": "32Gi"}) for n in names])
    for _unused in range(200):
        state.bind(random_pod(rng, names), rng.choice(names))
        key, namespaces, predicate, narrowing = rng.choice(selectors())
        assert state.matching(key, namespaces, predicate, narrowing) == from_scratch(state, namespaces, predicate)
    assert len(state._matching) <= 2


def test_matching_leaves_out_nodes_whose_pods_all_left() -> None:
    names = ["a", "b"]
    state = cluster([node(n, {"cpu": "8", "memory": "32Gi"}) for n in names])
    first = sched(pod(node_name="a", namespace="shop", labels={"app": "cart"}))
    state.bind(first, "a")
    for key, namespaces, predicate, narrowing in selectors()[:2]:
        assert state.matching(key, namespaces, predicate, narrowing) == {state.by_name["a"].index: 1}
    state.unbind(first)
    for key, namespaces, predicate, narrowing in selectors()[:2]:
        assert state.matching(key, namespaces, predicate, narrowing) == {}


@pytest.mark.parametrize(("selector", "expected"), [
    ({"matchLabels": {"app": "cart", "tier": "web"}}, ("app", frozenset(["cart"]))),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]},
                           {"key": "tier", "operator": "In", "values": ["web"]}]}, ("tier", frozenset(["web"]))),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]}, None),
    ({}, None),
    (None, None),
])
def test_required_values_names_the_narrowest_in_requirement(selector: Any, expected: Any) -> None:
    assert required_values(compile_label_selector(selector)) == expected
