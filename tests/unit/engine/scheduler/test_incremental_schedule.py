"""The placement preview's fast path (incremental_schedule.FastScheduler) decides exactly as the straightforward path
(framework.schedule): same node, ties, reason, rejections per filter and nodes looked at, replacement after
replacement, on many random clusters; and whole plans with placement are identical either way."""

from __future__ import annotations

import copy
import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    StaticCache,
    load_profiles,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP, window_positions
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.incremental_schedule import (
    Columns,
    FastScheduler,
    _positions_of_none,
    _wrapped,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
    PlacementRequest,
    build_cluster,
    replacement_of,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import ExtrasIndex
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from schedtest import node, pod, sched

NOW = "2026-11-22T12:00:00Z"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"  # on half the nodes: spreading over it ignores (or counts as "") the others
DRAIN = {"key": "drain", "value": "true", "effect": "NoSchedule"}
IMAGES = [("registry.local/web", 40 * 2**20), ("registry.local/db", 700 * 2**20), ("registry.local/ml", 3 * 2**30),
          ("registry.local/tiny", 5 * 2**20)]
CONFIGS: dict[str, Any] = {
    "default": None,
    "most-allocated": {"kind": "KubeSchedulerConfiguration", "profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]},
    "ratio-30-percent": {"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 30, "profiles": [{
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
                {"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}}]}]},
    "reweighted": {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {"score": {
        "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
        "enabled": [{"name": "PodTopologySpread", "weight": 5}, {"name": "TaintToleration", "weight": 1}]}}}]},
}


def random_cluster(rng: random.Random, nodes: int) -> list[dict]:
    """Nodes in 1-3 zones (some without a zone label), taints of every effect, cordons, tight and roomy nodes;
    owned pods with all the scheduling features the preview models, some without requests."""
    zones = [f"z{i}" for i in range(rng.randint(1, 3))]
    objects = []
    for i in range(nodes):
        labels = {HOST: f"n{i:03d}", "disk": rng.choice(["ssd", "hdd"])}
        if rng.random() < 0.9:
            labels[ZONE] = rng.choice(zones)
        if rng.random() < 0.5:
            labels[RACK] = f"r{rng.randrange(4)}"
        taints = []
        if rng.random() < 0.1:
            taints.append({"key": "team", "value": "a", "effect": rng.choice(["NoSchedule", "PreferNoSchedule"])})
        if rng.random() < 0.1:
            taints.append(DRAIN)
        capacity = {"cpu": str(rng.choice([1, 2, 4, 8])), "memory": f"{rng.choice([2, 4, 16])}Gi",
                    "pods": str(rng.choice([3, 8, 110]))}
        if rng.random() < 0.2:
            capacity["example.com/gpu"] = "2"
        objects.append(node(f"n{i:03d}", capacity, labels=labels, taints=taints, unschedulable=rng.random() < 0.03))
        if rng.random() < 0.7:  # ImageLocality: some images on some nodes, a few big enough to count
            objects[-1]["status"]["images"] = [{"names": [f"{image}:latest", f"{image}:v1"], "sizeBytes": size}
                                               for image, size in rng.sample(IMAGES, rng.randint(1, len(IMAGES)))]
    apps = [f"app{i}" for i in range(max(2, nodes // 3))]
    for i in range(nodes * rng.randint(2, 4)):
        app = rng.choice(apps)
        requests = rng.choice([[], [{"cpu": "100m"}], [{"cpu": "250m", "memory": "256Mi"}],
                               [{"cpu": "500m", "memory": "1Gi"}, {"memory": "128Mi"}],
                               [{"cpu": "1", "memory": "2Gi", "example.com/gpu": "1"}]])
        spec = _scheduling(rng, app)
        if rng.random() < 0.15:
            spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-p{i}"}}]
            objects += _volume(rng, f"data-p{i}", nodes, zones)
        objects.append(pod(f"p{i}", node_name=f"n{rng.randrange(nodes):03d}", requests=requests,
                           labels={"app": app}, owner=app, spec=spec))
        for container in objects[-1]["spec"]["containers"]:
            container["image"] = rng.choice(IMAGES)[0] + rng.choice(["", ":v1", ":v2"])
    return objects


def _volume(rng: random.Random, claim: str, nodes: int, zones: list[str]) -> list[dict]:
    """A claim and its volume: pinned to a node or zones by node affinity, zone-labelled, free, missing (no PV),
    or the claim unbound."""
    kind = rng.choice(["node", "zones", "label", "free", "missing", "unbound"])
    bound = {"volumeName": f"pv-{claim}"} if kind != "unbound" else {}
    objects = [{"kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": "default"}, "spec": bound}]
    volume: dict[str, Any] = {"kind": "PersistentVolume", "metadata": {"name": f"pv-{claim}", "labels": {}},
                              "spec": {}}
    if kind == "node":
        volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOST, "operator": "In", "values": [f"n{rng.randrange(nodes):03d}"]}]}]}}
    elif kind == "zones":
        volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": rng.sample(zones, 1)}]}]}}
    elif kind == "label":
        volume["metadata"]["labels"][ZONE] = "__".join(rng.sample(zones, rng.randint(1, len(zones))))
    if kind not in ("missing", "unbound"):
        objects.append(volume)
    return objects


def _scheduling(rng: random.Random, app: str) -> dict:
    spec: dict[str, Any] = {}
    affinity: dict[str, Any] = {}
    roll = rng.random()
    if roll < 0.15:
        keys = rng.sample([ZONE, HOST, RACK], rng.randint(1, 2))
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.randint(1, 2), "topologyKey": key,
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": app}}} for key in keys]
    elif roll < 0.25:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": app}}}]}
    elif roll < 0.35:
        term = {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": app}}}
        affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": term}]}
    if rng.random() < 0.15:
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 50), "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}
    if rng.random() < 0.1:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rng.random() < 0.15:
        spec["tolerations"] = [{"key": "team", "operator": "Exists"}]
    if rng.random() < 0.05:
        spec["containers"] = [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    if affinity:
        spec["affinity"] = affinity
    return spec


def decisions_both_ways(objects: list[dict], config: Any, rng: random.Random) -> list[Any]:
    """Replaces a random half of the owned pods one at a time through both paths, checking each decision; returns
    the decisions."""
    snapshot = Snapshot(copy.deepcopy(objects))
    extras = ExtrasIndex.from_objects(objects)
    fast_cluster, fast_pods = build_cluster(snapshot, extras)
    reference_cluster, reference_pods = build_cluster(snapshot, extras)
    victims = sorted(rng.sample(sorted(fast_pods), len(fast_pods) // 2))
    for index in victims:
        fast_cluster.unbind(fast_pods[index])
        reference_cluster.unbind(reference_pods[index])
    fast_profile = load_profiles(config)["default-scheduler"]
    reference_profile = load_profiles(config)["default-scheduler"]
    fast = FastScheduler(fast_cluster)
    cache = StaticCache()
    decisions = []
    for index in victims:
        fast_pod, reference_pod = replacement_of(fast_pods[index]), replacement_of(reference_pods[index])
        got = fast.schedule(fast_profile, fast_pod)
        want = schedule(reference_profile, reference_pod, reference_cluster, cache)
        assert (got.node, got.tied, got.reason, got.rejected_by, got.evaluated) == (
            want.node, want.tied, want.reason, want.rejected_by, want.evaluated), fast_pod.key
        assert fast_cluster.next_start == reference_cluster.next_start
        if want.node is not None:
            fast_cluster.bind(fast_pod, got.node)
            reference_cluster.bind(reference_pod, want.node)
        decisions.append(want)
    return decisions


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_each_decision_equals_the_reference_path_on_random_clusters(config: str) -> None:
    decisions = []
    images_mattered = False
    for seed in range(8):
        rng = random.Random(f"{config}-{seed}")
        nodes = rng.choice([3, 12, 40, 120, 260])  # 100+ nodes: only a share of the feasible nodes is scored
        objects = random_cluster(rng, nodes)
        before = rng.getstate()
        found = decisions_both_ways(objects, CONFIGS[config], rng)
        decisions += found
        if not images_mattered:  # the same replacements without node images: ImageLocality changed some choices
            for obj in objects:
                obj.get("status", {}).pop("images", None)
            rng.setstate(before)
            images_mattered = [d.tied for d in decisions_both_ways(objects, CONFIGS[config], rng)] != [
                d.tied for d in found]
    assert images_mattered
    # what the fast path shortcuts did happen: no node fits, one fits, ties, scans stopped early with rejections
    assert len(decisions) > 300
    assert any(d.node is None and d.reason.startswith("0/") for d in decisions)
    assert any(d.reason == "the only feasible node" for d in decisions)
    assert any(len(d.tied) > 1 for d in decisions)
    assert any(d.node is not None and d.rejected_by and d.evaluated < 260 for d in decisions)
    # the volume filters took part: pinned volumes rejected nodes, a missing volume stopped a pod at PreFilter
    assert any("VolumeBinding" in d.rejected_by or "VolumeZone" in d.rejected_by for d in decisions)
    assert any('persistentvolume "pv-' in d.reason for d in decisions)


def _drain_policy() -> dict:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "drain", "pluginConfig": [{"name": "RemovePodsViolatingNodeTaints", "args": {}}],
        "plugins": {"deschedule": {"enabled": ["RemovePodsViolatingNodeTaints"]}}}]}


def _generator() -> Any:
    path = Path(__file__).resolve().parents[4] / "examples" / "generate_cluster.py"
    spec = importlib.util.spec_from_file_location("generate_cluster", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["generate_cluster"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("seed,nodes,config", [(1, 150, "default"), (2, 220, "most-allocated"),
                                               (3, 120, "ratio-30-percent"), (4, 180, "reweighted")])
def test_whole_plans_are_identical_on_generated_clusters(seed: int, nodes: int, config: str) -> None:
    """A drain of a quarter of a generated cluster, planned with placement through each path."""
    objects = _generator().build_cluster(nodes, 12, seed=seed, now=NOW, flavor="openshift")
    for obj in [o for o in objects if o.get("kind") == "Node"][::4]:
        obj.setdefault("spec", {}).setdefault("taints", []).append(dict(DRAIN))
    plans = [compute_plan(copy.deepcopy(objects), _drain_policy(), NOW,
                          placement=PlacementRequest(CONFIGS[config], reference=reference))
             for reference in (False, True)]
    fast, reference = plans
    assert len(fast["evictions"]) >= 50
    assert [e["placement"] for e in fast["evictions"]] == [e["placement"] for e in reference["evictions"]]
    assert fast["utilization"]["nodes"] == reference["utilization"]["nodes"]
    assert fast["placement"] == reference["placement"]
    assert fast["placement"]["placed"] > 0


def test_score_bounds_are_upper_bounds_of_the_scores() -> None:
    """The fast path only scores exactly the nodes whose bounded total can reach the best: the bounds must hold for
    any node load and any request, including requests bigger than the node."""
    rng = random.Random("bounds")
    objects = random_cluster(rng, 60)
    for obj in objects:
        if obj["kind"] == "Node" and rng.random() < 0.3:
            obj["status"]["allocatable"]["cpu"] = obj["status"]["capacity"]["cpu"] = "0"  # no cpu at all
    state = build_cluster(Snapshot(copy.deepcopy(objects)), ExtrasIndex.from_objects(objects))[0]
    columns = Columns(state)
    window = list(range(len(state.nodes)))
    profile = load_profiles(None)["default-scheduler"]
    plugins = [p for p, _unused in profile.scorers if hasattr(p, "score_bounds")]
    assert {p.name for p in plugins} == {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
    checked = 0
    for _unused in range(300):
        cpu, memory = rng.choice(["0", "10m", "300m", "2", "12"]), rng.choice(["0", "64Mi", "3Gi", "40Gi"])
        incoming = sched(pod(requests=[{"cpu": cpu, "memory": memory}]))
        for plugin in plugins:
            bounds = plugin.score_bounds(incoming, state, window, columns)
            if bounds is SKIP:
                continue
            scores = plugin.score_many(incoming, None, state.nodes)
            if isinstance(bounds, int):  # one bound for every node
                bounds = [bounds] * len(scores)
            assert all(s <= b for s, b in zip(scores, bounds, strict=True)), (plugin.name, cpu, memory)
            checked += 1
        target = rng.choice(state.nodes)  # the bounds follow the nodes as pods land on them
        state.bind(incoming, target.name)
    assert checked > 500


def test_window_positions_finds_nodes_in_a_wrapped_window() -> None:
    """A window lists node indexes ascending from the scan's start and wraps around once."""
    rng = random.Random("positions")
    for _unused in range(2000):
        passing = sorted(rng.sample(range(200), rng.randint(1, 50)))
        split = rng.randint(0, len(passing))
        window = [i for i in passing[split:] + passing[:split] if rng.random() < 0.7] or passing[:1]
        wanted = rng.sample(range(200), 20)
        assert dict(window_positions(window, wanted)) == {i: window.index(i) for i in wanted if i in window}


def test_wrapped_reads_the_rotated_order_without_rotating() -> None:
    """The scan reads the passing nodes from the start index on, wrapping around, a chunk at a time."""
    rng = random.Random("wrapped")
    for _unused in range(5000):
        passing = sorted(rng.sample(range(200), rng.randint(1, 40)))
        split = rng.randint(0, len(passing))  # bisect may return len(passing): the order starts at the first node
        rotated = passing[split:] + passing[:split]
        position, count = rng.randint(0, len(passing)), rng.randint(1, 45)
        assert _wrapped(passing, split, position, count) == rotated[position:position + count]


def test_positions_of_none_finds_every_missing_entry() -> None:
    rng = random.Random("none")
    for _unused in range(2000):
        values = tuple(None if rng.random() < rng.choice([0.0, 0.01, 0.3, 1.0]) else rng.randint(0, 9)
                       for _unused in range(rng.randint(0, 60)))
        assert _positions_of_none(values) == [j for j, value in enumerate(values) if value is None]
