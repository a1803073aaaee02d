"""samples: N — the cycle re-run in the orders upstream could use, and how often each pod is evicted.

Each case below is a cluster where upstream provably has a choice (which duplicate is "the original", which of
several equal-usage pods goes first, which node a per-node cap stops on) or provably has none. For the sampled
cycles the tests assert what any upstream run satisfies, not which pod a given order picks.
"""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import go_sort, sampling
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.cycle import run_cycle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind
from builders import (
    build_node,
    build_pod,
    policy,
    set_creation,
    set_labels,
    set_pod_anti_affinity,
    set_rs_owner,
)

NOW = "2026-11-22T12:00:00Z"
NOW_TS = 1_795_348_800.0  # NOW as a timestamp
SAMPLES = 40


def rs_pod(name: str, node_name: str, cpu: int = 100, rs: str = "rs") -> dict:
    return build_pod(name, cpu, 0, node_name, lambda p: set_rs_owner(p, rs, f"{rs}-uid"))


def duplicates_cluster(count: int = 4) -> list[dict]:
    """n1 runs ``count`` identical replicas, n2 none: RemoveDuplicates keeps ceil(count/2) on n1."""
    nodes = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    return nodes + [rs_pod(f"web-{i}", "n1") for i in range(count)]


def duplicates_policy(**top_level: Any) -> dict:
    return policy(("RemoveDuplicates", "balance", {}), **top_level)


def lnu_cluster() -> list[dict]:
    """n1 at 80% cpu with four equal 20% pods; n2 and n3 empty. Evicting one pod brings n1 to the 60% target."""
    nodes = [build_node(name, 1000, 10**9, 10) for name in ("n1", "n2", "n3")]
    return nodes + [rs_pod(f"p{i}", "n1", cpu=200, rs=f"rs{i}") for i in range(4)]


def lnu_policy() -> dict:
    args = {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 61}}
    return policy(("LowNodeUtilization", "balance", args))


def frequencies(plan: dict) -> dict[str, float]:
    """Pod name → frequency, over the planned and the other possible evictions."""
    found = {e["name"]: e["frequency"] for e in plan["evictions"]}
    found.update({e["name"]: e["frequency"] for e in plan["sampling"]["other_possible_evictions"]})
    return found


def sampled_states(objects: list[dict], document: dict, samples: int = SAMPLES, seed: int = 0) -> list:
    snapshot = Snapshot(objects)
    loaded = load_policy(document, snapshot.priority_classes)
    return [run_cycle(snapshot, loaded, NOW_TS, sampling.order_for_sample(i, seed))[0] for i in range(samples)]


# --- RemoveDuplicates: which replica is "the original" depends on the indexer's order ---

def test_duplicates_every_replica_may_go_and_two_always_do():
    plan = compute_plan(duplicates_cluster(), duplicates_policy(), NOW, samples=SAMPLES, seed=7)
    found = frequencies(plan)
    assert sorted(found) == ["web-0", "web-1", "web-2", "web-3"]
    assert all(0 < f < 1 for f in found.values())
    assert sum(found.values()) == pytest.approx(2.0)
    assert plan["sampling"]["evictions_per_cycle"] == {"min": 2, "max": 2, "mean": 2.0}
    assert plan["sampling"]["certain"] == 0
    assert plan["sampling"]["possible"] == 4


def test_duplicates_each_sampled_cycle_is_a_valid_upstream_plan():
    for state in sampled_states(duplicates_cluster(5), duplicates_policy()):
        evicted = state.evictions
        # 5 on n1 over 2 target nodes: upper average 3, so 2 of the 4 duplicates go, all from n1
        assert len(evicted) == 2
        assert {e["node"] for e in evicted} == {"n1"}
        assert len({e["name"] for e in evicted}) == 2


# Measured on upstream: the descheduler built from kubernetes-sigs/descheduler 7d2b28bf (Go 1.26.8), run 150 times as
# one-shot `--dry-run` processes against a real kube-apiserver v1.36.3 holding this cluster; counted over the runs
# whose dry-run sandbox had every pod when the cycle ran (a run that starts too early sees fewer and evicts none).
# Pairs of replicas evicted by RemoveDuplicates (web-i → "i"):
UPSTREAM_DUPLICATES_PLUS_8 = {"23": 16, "13": 10, "03": 8, "12": 8, "01": 7, "02": 1}  # + 8 bare pods, 50 runs
# Measured again on the suite's upstream v0.36.0 (its dry-run sandbox mirrors the real informers): 80 fresh
# processes whose first cycle saw all 4 pods (it evicted 2), the cluster alone.
UPSTREAM_DUPLICATES_ONLY = {"23": 32, "12": 18, "01": 15, "03": 15}


def evicted_pairs(objects: list[dict], samples: int = 2000) -> dict[str, float]:
    snapshot = Snapshot(objects)
    loaded = load_policy(duplicates_policy(), snapshot.priority_classes)
    pairs: dict[str, int] = {}
    for sample in range(1, samples + 1):
        state, _unused = run_cycle(snapshot, loaded, NOW_TS, sampling.order_for_sample(sample, 8))
        pair = "".join(sorted(e["name"][-1] for e in state.evictions))
        pairs[pair] = pairs.get(pair, 0) + 1
    return {pair: count / samples for pair, count in pairs.items()}


def shares(counts: dict[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {pair: count / total for pair, count in counts.items()}


def test_duplicate_choices_follow_upstreams_measured_runs():
    """The informer's pod map is iterated once to build the node index, whose set is iterated again to list: with 4
    pods in all, both are one-group maps, so only rotations of the API order occur (never 0+2 or 1+3), as measured;
    with 12 pods the pod map is a swiss table and any pair can go, the API order's last pair still the likeliest."""
    alone = evicted_pairs(duplicates_cluster())
    assert set(alone) == set(UPSTREAM_DUPLICATES_ONLY)
    measured = shares(UPSTREAM_DUPLICATES_ONLY)
    assert all(abs(alone[pair] - measured[pair]) < 0.15 for pair in measured)
    fillers = [build_pod(f"filler-{i}", 10, 0, "n2", namespace="aaa") for i in range(8)]
    crowded = evicted_pairs(duplicates_cluster() + fillers)
    measured = shares(UPSTREAM_DUPLICATES_PLUS_8)
    assert set(crowded) == {"01", "02", "03", "12", "13", "23"}
    assert max(crowded, key=crowded.get) == max(measured, key=measured.get) == "23"
    assert all(abs(crowded[pair] - measured[pair]) < 0.1 for pair in measured)


def test_per_node_cap_among_equal_duplicates_frequencies_add_up_to_the_cap():
    plan = compute_plan(duplicates_cluster(), duplicates_policy(maxNoOfPodsToEvictPerNode=1), NOW,
                        samples=SAMPLES, seed=3)
    found = frequencies(plan)
    assert len(found) == 4
    assert all(0 < f < 1 for f in found.values())
    assert sum(found.values()) == pytest.approx(1.0)
    assert plan["summary"]["total"] == 1
    assert plan["sampling"]["by_plugin"] == {"test/RemoveDuplicates": {"min": 1, "max": 1, "mean": 1.0}}


# --- LowNodeUtilization: equal-usage pods, the priority sort is sort.Slice over the indexer's order ---

def test_low_node_utilization_equal_pods_share_one_eviction():
    plan = compute_plan(lnu_cluster(), lnu_policy(), NOW, samples=SAMPLES, seed=11)
    found = frequencies(plan)
    assert sorted(found) == ["p0", "p1", "p2", "p3"]
    assert all(0 < f < 1 for f in found.values())
    assert sum(found.values()) == pytest.approx(1.0)


# Measured the same way: which of the 4 equal pods LowNodeUtilization evicted, over 72 complete one-shot dry runs.
UPSTREAM_EQUAL_PODS = {"p3": 39, "p2": 14, "p1": 12, "p0": 7}


def test_low_node_utilization_picks_as_upstreams_measured_runs():
    """The priority sort answers "less" for equal pods, so Go's insertion sort reverses the listing: the pod last in
    API order (p3) goes most often, as measured; a stable sort would make p0 the likeliest."""
    snapshot = Snapshot(lnu_cluster())
    loaded = load_policy(lnu_policy(), snapshot.priority_classes)
    picks: dict[str, int] = {}
    for sample in range(1, 2001):
        state, _unused = run_cycle(snapshot, loaded, NOW_TS, sampling.order_for_sample(sample, 2))
        assert len(state.evictions) == 1
        picks[state.evictions[0]["name"]] = picks.get(state.evictions[0]["name"], 0) + 1
    model, measured = shares(picks), shares(UPSTREAM_EQUAL_PODS)
    assert max(model, key=model.get) == max(measured, key=measured.get) == "p3"
    assert all(abs(model[name] - measured[name]) < 0.12 for name in measured)


def test_low_node_utilization_sampled_cycles_are_valid():
    for state in sampled_states(lnu_cluster(), lnu_policy()):
        assert len(state.evictions) == 1
        assert state.evictions[0]["node"] == "n1"
        classes = state.plugin_notes["test/LowNodeUtilization"]
        assert classes == {"n1": "overutilized", "n2": "underutilized", "n3": "underutilized"}


# --- deterministic cases stay certain ---

def test_a_choice_free_plan_is_certain_in_every_sample():
    """Oldest first: PodLifeTime sorts by creation time, and distinct times leave upstream no choice. The cap
    refuses a pod, so the engine cannot tell that no order matters: certain by evidence, 40 of 40 cycles."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    for index, stamp in enumerate(("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z")):
        pod = rs_pod(f"old-{index}", f"n{index % 2 + 1}", rs=f"rs{index}")
        set_creation(pod, stamp)
        objects.append(pod)
    document = policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 3600}), maxNoOfPodsToEvictTotal=2)
    plan = compute_plan(objects, document, NOW, samples=SAMPLES)
    assert [e["name"] for e in plan["evictions"]] == ["old-0", "old-1"]
    assert all(e["certain"] and e["frequency"] == 1.0 for e in plan["evictions"])
    assert plan["sampling"]["confidence"]["order_free"] is False
    assert plan["sampling"]["other_possible_evictions"] == []
    assert (plan["sampling"]["certain"], plan["sampling"]["possible"]) == (2, 0)


def test_duplicates_without_a_cap_on_a_spread_owner_are_certain():
    """Two replicas on each of two nodes: already balanced, nothing is ever evicted."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    objects += [rs_pod(f"web-{i}", f"n{i % 2 + 1}") for i in range(4)]
    plan = compute_plan(objects, duplicates_policy(), NOW, samples=10)
    assert plan["evictions"] == []
    assert plan["sampling"]["evictions_per_cycle"] == {"min": 0, "max": 0, "mean": 0.0}


# --- the default plan and reproducibility ---

def test_one_sample_is_todays_plan_exactly():
    cluster = duplicates_cluster()
    default = compute_plan(cluster, duplicates_policy(), NOW)
    one = compute_plan(cluster, duplicates_policy(), NOW, samples=1, seed=5)
    assert one == default
    assert "sampling" not in one and "frequency" not in one["evictions"][0]


def test_sampled_plan_keeps_the_deterministic_evictions():
    cluster = duplicates_cluster()
    default = compute_plan(cluster, duplicates_policy(), NOW)
    sampled = compute_plan(cluster, duplicates_policy(), NOW, samples=SAMPLES)
    added = ("frequency", "frequency_bounds", "likelihood", "certain", "sampled_plugins")
    strip = [{k: v for k, v in e.items() if k not in added} for e in sampled["evictions"]]
    assert strip == default["evictions"]


def test_same_seed_same_frequencies():
    cluster = duplicates_cluster(6)
    first = compute_plan(cluster, duplicates_policy(), NOW, samples=12, seed=1)
    again = compute_plan(cluster, duplicates_policy(), NOW, samples=12, seed=1)
    assert first["sampling"] == again["sampling"]
    assert first["sampling"]["seed"] == 1


def keep_all(_item: object) -> bool:
    return True


def test_a_small_go_map_iterates_in_a_rotation_of_its_insertion_order():
    """Up to 8 keys sit in one group of 8 slots; iteration starts at a random slot: 3 keys → identity 6/8."""
    drawn = [tuple(sampling.order_for_sample(i, 0).keys(["a", "b", "c"])) for i in range(1, 4001)]
    assert set(drawn) == {("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")}
    assert drawn.count(("a", "b", "c")) / len(drawn) == pytest.approx(6 / 8, abs=0.03)
    assert drawn.count(("c", "a", "b")) / len(drawn) == pytest.approx(1 / 8, abs=0.02)
    assert sampling.order_for_sample(0, 0).nodes(["c", "a", "b"], keep_all, keep_all) == ["c", "a", "b"]


# Measured on upstream v0.36 with the suite's control plane: 3 nodes holding one pod each, PodLifeTime with a cap of
# one eviction, 18 descheduler processes of 8 dry-run cycles each: which node's pod each cycle took.
UPSTREAM_FIRST_NODE = {"n0": 80, "n1": 43, "n2": 21}


def test_the_node_list_is_two_map_iterations_of_the_name_order():
    """The real informer hands its streamed nodes on in one iteration of a map filled in name order; the sandbox's
    node index is filled in that order and iterated each cycle: the first node in name order leads 38/64 of the
    cycles (one iteration would give 6/8), the others 13/64 each, as measured."""
    drawn = [sampling.order_for_sample(i, 0).nodes(["n0", "n1", "n2"], keep_all, keep_all)[0] for i in range(1, 8001)]
    model, measured = shares({name: drawn.count(name) for name in set(drawn)}), shares(UPSTREAM_FIRST_NODE)
    assert model["n0"] == pytest.approx(38 / 64, abs=0.02) and model["n1"] == pytest.approx(13 / 64, abs=0.02)
    assert all(abs(model[name] - measured[name]) < 0.12 for name in measured)


def test_nodes_the_selector_leaves_out_hold_no_slot_in_the_node_index():
    """Only selected nodes enter the index: with "b" left out, "a", "c" fill its first two slots."""
    drawn = [tuple(sampling.order_for_sample(i, 0).nodes(["a", "b", "c"], lambda n: n != "b", keep_all))
             for i in range(1, 4001)]
    assert set(drawn) == {("a", "c"), ("c", "a")}
    # ("c", "a"): the stream's iteration starts on b or c (2/8) and the index's on its first slot or an empty one
    # (7/8), or the stream keeps a first (6/8) and the index's starts on c (1/8): 20/64
    assert drawn.count(("c", "a")) / len(drawn) == pytest.approx(20 / 64, abs=0.03)


def test_a_big_go_map_iterates_in_any_order():
    items = list(range(9))
    drawn = {tuple(sampling.order_for_sample(i, 0).keys(items)) for i in range(1, 200)}
    assert len(drawn) > 150  # 9! orders: not a handful of rotations


def test_removed_entries_keep_their_slots():
    """An evicted pod leaves a hole: the others keep the rotation of the original slots."""
    drawn = {tuple(sampling.order_for_sample(i, 0).nodes(["a", "b", "c", "d"], keep_all, lambda p: p != "b"))
             for i in range(1, 400)}
    assert drawn == {("a", "c", "d"), ("c", "d", "a"), ("d", "a", "c")}


def test_go_insertion_sort_reverses_ties_of_a_comparator_saying_less_on_equals():
    items = [("x", 1), ("y", 0), ("z", 1), ("w", 0)]
    sampled = sampling.order_for_sample(1, 0)
    assert sampled.sort(items, key=lambda i: i[1]) == [("y", 0), ("w", 0), ("x", 1), ("z", 1)]
    assert sampled.sort(items, key=lambda i: i[1], ties_reversed=True) == [("w", 0), ("y", 0), ("z", 1), ("x", 1)]
    long = [(str(n), n % 2) for n in range(13)]  # past 12 elements Go's pdqsort: deterministic (test_go_sort.py)
    firsts = {sampling.order_for_sample(sample, 0).sort(long, key=lambda i: i[1])[0] for sample in range(1, 60)}
    assert firsts == {go_sort.sort_slice(long, lambda a, b: a[1] < b[1])[0]}
    for sample in range(1, 20):
        ordered = sampling.order_for_sample(sample, 0).sort(long, key=lambda i: i[1])
        assert [i[1] for i in ordered] == sorted(i[1] for i in long)  # still sorted by the key


def test_deterministic_sort_breaks_ties_and_shuffled_sort_keeps_the_key_order():
    items = [("b", 1), ("a", 1), ("c", 0)]
    assert sampling.DETERMINISTIC.sort(items, key=lambda i: i[1], tie_break=lambda i: i[0]) == [
        ("c", 0), ("a", 1), ("b", 1)]
    for sample in range(1, 20):
        ordered = sampling.order_for_sample(sample, 0).sort(items, key=lambda i: i[1])
        assert ordered[0] == ("c", 0)


@pytest.mark.parametrize("samples, seed, field", [
    (0, None, "samples"), (-3, None, "samples"), (True, None, "samples"), ("10", None, "samples"),
    (sampling.MAX_SAMPLES + 1, None, "samples"), (2, "abc", "seed"), (2, 1.5, "seed"),
])
def test_bad_samples_or_seed_is_an_error_naming_the_option(samples: Any, seed: Any, field: str):
    with pytest.raises(PolicyError) as caught:
        compute_plan(duplicates_cluster(), duplicates_policy(), NOW, samples=samples, seed=seed)
    assert caught.value.field == field
    assert str(samples if field == "samples" else seed) in str(caught.value)


# --- topology spread: domains of equal size, the marked set and the domain's pod sort are unordered upstream ---

def spread_cluster() -> list[dict]:
    """Zone a holds 3 replicas spread with maxSkew 1 over zones a, b, c; b and c hold none: 2 must move."""
    objects = [build_node(name, 4000, 10**9, 20, lambda n, z=zone: n["metadata"]["labels"].update(zone=z))
               for name, zone in (("a1", "a"), ("b1", "b"), ("c1", "c"))]
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "web"}}}

    def shape(pod: dict) -> None:
        set_rs_owner(pod)
        pod["metadata"]["labels"] = {"app": "web"}
        pod["spec"]["topologySpreadConstraints"] = [constraint]
    return objects + [build_pod(f"web-{i}", 100, 0, "a1", shape) for i in range(3)]


# Measured the same way: the pair of replicas the topology spread plugin evicted, over 78 complete one-shot runs.
UPSTREAM_SPREAD_PAIRS = {"web-0,web-1": 52, "web-1,web-2": 14, "web-0,web-2": 12}


def test_topology_spread_choices_follow_upstreams_measured_runs():
    """The domain's pods are taken from the end after a sort whose comparator says "less" on equals (so reversed):
    the first two in API order go most often, as measured."""
    snapshot = Snapshot(spread_cluster())
    loaded = load_policy(policy(("RemovePodsViolatingTopologySpreadConstraint", "balance", {})),
                         snapshot.priority_classes)
    pairs: dict[str, int] = {}
    for sample in range(1, 2001):
        state, _unused = run_cycle(snapshot, loaded, NOW_TS, sampling.order_for_sample(sample, 5))
        pair = ",".join(sorted(e["name"] for e in state.evictions))
        pairs[pair] = pairs.get(pair, 0) + 1
    model, measured = shares(pairs), shares(UPSTREAM_SPREAD_PAIRS)
    assert set(model) == set(measured)
    assert max(model, key=model.get) == max(measured, key=measured.get) == "web-0,web-1"
    assert all(abs(model[pair] - measured[pair]) < 0.12 for pair in measured)


def test_topology_spread_moves_two_of_three_equal_replicas():
    document = policy(("RemovePodsViolatingTopologySpreadConstraint", "balance", {}))
    plan = compute_plan(spread_cluster(), document, NOW, samples=SAMPLES, seed=2)
    found = frequencies(plan)
    assert sorted(found) == ["web-0", "web-1", "web-2"]
    assert all(0 < f < 1 for f in found.values())
    assert sum(found.values()) == pytest.approx(2.0)
    for state in sampled_states(spread_cluster(), document):
        assert len(state.evictions) == 2 and {e["node"] for e in state.evictions} == {"a1"}


# --- every plugin under shuffled orders, on a generated cluster with limits ---

def generated_cluster() -> list[dict]:
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "examples" / "generate_cluster.py"
    spec = importlib.util.spec_from_file_location("generate_cluster", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_cluster"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module.build_cluster(40, 12, seed=5, now=NOW)


OPENSHIFT = {"profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"],
             "deschedulingIntervalSeconds": 3600, "mode": "Predictive"}


def test_every_sampled_cycle_of_all_profiles_keeps_upstreams_invariants():
    objects = generated_cluster()
    plan = compute_plan_for_kind(objects, OPENSHIFT, NOW, policy_kind="KubeDescheduler", samples=12, seed=9)
    document = plan["policy"]
    snapshot = Snapshot(objects)
    loaded = load_policy(document, snapshot.priority_classes)
    per_node_limit = loaded.max_per_node
    totals = []
    for sample in range(12):
        state, _unused = run_cycle(snapshot, loaded, NOW_TS, sampling.order_for_sample(sample, 9))
        names = [(e["namespace"], e["name"]) for e in state.evictions]
        assert len(names) == len(set(names))  # a pod is evicted at most once per cycle
        if per_node_limit is not None:
            by_node: dict[str, int] = {}
            for entry in state.evictions:
                by_node[entry["node"]] = by_node.get(entry["node"], 0) + 1
            assert max(by_node.values(), default=0) <= per_node_limit
        if loaded.max_total is not None:
            assert len(names) <= loaded.max_total
        assert state.errors == []
        totals.append(len(names))
    spread = plan["sampling"]["evictions_per_cycle"]
    assert (spread["min"], spread["max"]) == (min(totals), max(totals))  # the same cycles as compute_plan's
    # the plan's sample 0 is the deterministic cycle
    assert totals[0] == plan["summary"]["total"]
    frequencies = [e["frequency"] for e in plan["evictions"]]
    frequencies += [e["frequency"] for e in plan["sampling"]["other_possible_evictions"]]
    assert sum(frequencies) == pytest.approx(plan["sampling"]["evictions_per_cycle"]["mean"], abs=1e-3)


def test_pods_enter_the_informer_in_api_key_order():
    """The informer receives pods by their key "namespace/name": "shop-dev/b" sorts before "shop/a" (the snapshot's
    own order is by namespace, then name). Two one-group maps in a row keep b first with 7/8·7/8 + 1/8·1/8."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20),
               build_pod("a", 100, 0, "n1", namespace="shop"), build_pod("b", 100, 0, "n1", namespace="shop-dev")]
    snapshot = Snapshot(objects)
    assert [p.key for p in snapshot.pods_by_node["n1"]] == ["shop/a", "shop-dev/b"]
    drawn = [tuple(p.key for p in sampling.order_for_sample(i, 0).pods(snapshot.pods_by_node["n1"], keep_all,
                                                                       snapshot.pods))
             for i in range(1, 2001)]
    assert drawn.count(("shop-dev/b", "shop/a")) / len(drawn) == pytest.approx(50 / 64, abs=0.03)


# Measured with go1.26.8: 50,000 fresh map[string]struct{} of keys k0..k9 inserted in order, the share of ranges
# starting at each key (13993, 7903, 4939, 3935, 3474, 3258, 3194, 3104, 3096, 3104).
GO_FIRST_KEY_SHARE_10 = (0.280, 0.158, 0.099, 0.079, 0.069, 0.065, 0.064, 0.062, 0.062, 0.062)


def test_a_fresh_swiss_table_starts_where_go_1_26_starts():
    items = list(range(10))
    firsts = [sampling.order_for_sample(i, 3).keys(items)[0] for i in range(1, 20001)]
    for key, share in enumerate(GO_FIRST_KEY_SHARE_10):
        assert firsts.count(key) / len(firsts) == pytest.approx(share, abs=0.012)


def test_a_node_with_many_pods_keeps_one_layout_per_cycle():
    """Several plugins list the same node's pods in one cycle: one map, so each listing is a rotation of another."""
    objects = [build_node("n1", 4000, 10**9, 50), build_node("n2", 4000, 10**9, 50)]
    objects += [build_pod(f"p{i:02d}", 10, 0, "n1") for i in range(20)]
    snapshot = Snapshot(objects)
    order = sampling.order_for_sample(1, 0)
    first = [p.name for p in order.pods(snapshot.pods_by_node["n1"], keep_all)]
    for _listing in range(5):
        again = [p.name for p in order.pods(snapshot.pods_by_node["n1"], keep_all)]
        start = again.index(first[0])
        assert again[start:] + again[:start] == first


# --- evictions the next plugin may not have seen yet ---

def lagging_cluster() -> list[dict]:
    """Two replicas on n1 that repel each other (required anti-affinity over the hostname) and are duplicates."""
    def replica(pod: dict) -> None:
        set_rs_owner(pod, "web", "web-uid")
        set_labels(pod, app="web")
        set_pod_anti_affinity(pod, "app", "web", "kubernetes.io/hostname")

    nodes = [build_node(name, 4000, 10**9, 20, lambda n, name=name: set_labels(n, **{"kubernetes.io/hostname": name}))
             for name in ("n1", "n2")]
    return nodes + [build_pod(f"web-{i}", 100, 0, "n1", replica) for i in range(2)]


def lagging_policy() -> dict:
    return policy(("RemovePodsViolatingInterPodAntiAffinity", "deschedule", {}), ("RemoveDuplicates", "balance", {}))


def test_a_later_plugin_may_still_see_a_pod_evicted_before_it():
    """Seen on the real descheduler (test_upstream_agreement, seed 10): the anti-affinity plugin evicted one replica
    and RemoveDuplicates, in the same cycle, still counted it and evicted the other as a duplicate."""
    states = sampled_states(lagging_cluster(), lagging_policy(), samples=60, seed=3)
    by_count: dict[int, list] = {}
    for index, state in enumerate(states):
        lag = sampling.order_for_sample(index, 3).evictions_lag
        by_count.setdefault(len(state.evictions), []).append((lag, state))
        if not lag:
            assert len(state.evictions) == 1  # the evicted replica is gone: the other has no duplicate left
    assert len(states[0].evictions) == 1 and not sampling.order_for_sample(0, 3).evictions_lag
    both = by_count.get(2, [])
    assert both and all(lag for lag, _state in both)
    for _lag, state in both:
        assert [e["plugin"] for e in state.evictions] == ["RemovePodsViolatingInterPodAntiAffinity", "RemoveDuplicates"]
        assert {e["name"] for e in state.evictions} == {"web-0", "web-1"}
    plan = compute_plan(lagging_cluster(), lagging_policy(), NOW, samples=60, seed=3)
    assert plan["sampling"]["evictions_per_cycle"]["max"] == 2


def test_each_possible_eviction_names_every_plugin_that_took_it():
    plan = compute_plan(lagging_cluster(), lagging_policy(), NOW, samples=60, seed=3)
    entries = plan["evictions"] + plan["sampling"]["other_possible_evictions"]
    by_name = {e["name"]: e["sampled_plugins"] for e in entries}
    # each replica is evicted by the anti-affinity plugin in some cycles, and by RemoveDuplicates in a lagging one
    assert set(by_name) == {"web-0", "web-1"}
    assert {p for plugins in by_name.values() for p in plugins} == {"test/RemovePodsViolatingInterPodAntiAffinity",
                                                                    "test/RemoveDuplicates"}
    for entry in entries:
        assert f"{entry['profile']}/{entry['plugin']}" in entry["sampled_plugins"]


def min_replicas_cluster() -> list[dict]:
    """Two replicas of "web" at 60% cpu, one on n1 and one on n2; n3-n5 empty. Each of n1 and n2 is over the 50%
    target until its replica goes, so LowNodeUtilization tries to evict both."""
    nodes = [build_node(name, 1000, 10**9, 10) for name in ("n1", "n2", "n3", "n4", "n5")]
    return nodes + [rs_pod("web-0", "n1", cpu=600, rs="web"), rs_pod("web-1", "n2", cpu=600, rs="web")]


def min_replicas_policy() -> dict:
    args = {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}
    return policy(("LowNodeUtilization", "balance", args), evictor_args={"minReplicas": 2})


def test_min_replicas_may_still_count_a_replica_evicted_just_before():
    """Seen on the real descheduler (test_upstream_agreement, rich seed 34): minReplicas counts an owner's pods in
    the informer's index, which may not have caught up with the eviction made a moment earlier. Without the lag the
    second replica is protected (1 left < 2); with it, both go."""
    states = sampled_states(min_replicas_cluster(), min_replicas_policy(), samples=60, seed=5)
    counts = {sampling.order_for_sample(index, 5).evictions_lag: set() for index in range(60)}
    for index, state in enumerate(states):
        lag = sampling.order_for_sample(index, 5).evictions_lag
        counts[lag].add(len(state.evictions))
        if not lag:
            assert len(state.evictions) == 1
            assert "fewer replicas than minReplicas" in state.spared.by_reason
    assert counts[False] == {1} and 2 in counts[True]
    plan = compute_plan(min_replicas_cluster(), min_replicas_policy(), NOW, samples=60, seed=5)
    assert len(plan["evictions"]) == 1  # the plan itself is the deterministic cycle
    assert plan["sampling"]["evictions_per_cycle"]["max"] == 2
    assert set(frequencies(plan)) == {"web-0", "web-1"}


def long_lag_cluster() -> list[dict]:
    """n1: five old 100m pods (PodLifeTime's) and a young 400m one, 90% cpu; n2 empty. Once the old pods are gone n1
    is at 40%, under the 80% target; it is over it only while LowNodeUtilization still counts 5 of them."""
    def old(pod: dict) -> None:
        set_rs_owner(pod, pod["metadata"]["name"], f"{pod['metadata']['name']}-uid")
        set_creation(pod, "2026-11-20T12:00:00Z")

    def young(pod: dict) -> None:
        set_rs_owner(pod, "young", "young-uid")
        set_creation(pod, NOW)

    nodes = [build_node(name, 1000, 10**9, 20) for name in ("n1", "n2")]
    return nodes + [build_pod(f"old-{i}", 100, 0, "n1", old) for i in range(5)] + [build_pod("young", 400, 0, "n1",
                                                                                             young)]


def test_a_plugin_may_still_count_every_pod_the_previous_one_evicted():
    """Seen on the real descheduler (rich seed 81, 3 runs of 6): LowNodeUtilization still counted all 6 pods
    PodLifeTime had evicted just before it. Cycles whose views lag by 5 or more evict the young pod too."""
    document = policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 3600}),
                      ("LowNodeUtilization", "balance", {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}}))
    states = sampled_states(long_lag_cluster(), document, samples=40, seed=2)
    windows = [sampling.order_for_sample(index, 2).lag_window for index in range(40)]
    for window, state in zip(windows, states, strict=True):
        names = sorted(e["name"] for e in state.evictions)
        assert names == sorted([f"old-{i}" for i in range(5)] + (["young"] if window >= 5 else []))
    assert any(window >= 5 for window in windows)
    plan = compute_plan(long_lag_cluster(), document, NOW, samples=40, seed=2)
    assert plan["sampling"]["evictions_per_cycle"]["max"] == 6


def restarts_then_utilization_cluster() -> list[dict]:
    """n1 at 90% cpu: three 300m replicas of different owners, two restarting; n2 empty."""
    def restarting(pod: dict) -> None:
        set_rs_owner(pod, f"rs-{pod['metadata']['name']}", f"uid-{pod['metadata']['name']}")
        pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": 20}]

    def calm(pod: dict) -> None:
        set_rs_owner(pod, "rs-calm", "uid-calm")

    nodes = [build_node(name, 1000, 10**9, 20) for name in ("n1", "n2")]
    return nodes + [build_pod("crashy-1", 300, 0, "n1", restarting), build_pod("crashy-2", 300, 0, "n1", restarting),
                    build_pod("calm", 300, 0, "n1", calm)]


def test_utilization_after_other_evictions_may_still_count_the_evicted_pods():
    """Seen on the real descheduler (test_upstream_agreement, seed 25): after RemovePodsHavingTooManyRestarts took
    two pods off a node, LowNodeUtilization sometimes still found the node over its target and evicted a third."""
    document = policy(("RemovePodsHavingTooManyRestarts", "deschedule", {"podRestartThreshold": 10}),
                      ("LowNodeUtilization", "balance", {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}))
    states = sampled_states(restarts_then_utilization_cluster(), document, samples=40, seed=5)
    assert any(sampling.order_for_sample(index, 5).evictions_lag for index in range(40))
    for index, state in enumerate(states):
        plugins = [e["plugin"] for e in state.evictions]
        assert plugins[:2] == ["RemovePodsHavingTooManyRestarts"] * 2
        if not sampling.order_for_sample(index, 5).evictions_lag:
            assert len(plugins) == 2  # 30% left on n1: under the 50% target
        else:
            assert plugins[2:] == ["LowNodeUtilization"]  # n1 still listed at 90%
            assert state.evictions[2]["name"] == "calm"
