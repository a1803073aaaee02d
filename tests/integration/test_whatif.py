"""The whatif module through real ansible-playbook runs: candidates planned on one read give the figures of separate
plan runs (random generated clusters, and the suite's live control plane), the objective names the best candidate,
and bad candidates or objectives fail before anything is read."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import candidate_figures
from evict_helpers import create, namespace_object, node, ready_replicas, replicaset, wait_until_pods_are_older_than
from playbook import REPO, run_tasks

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
LIFECYCLE = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600, "profiles": ["LifecycleAndUtilization"]}
CANDIDATES = [
    {"name": "lifecycle", "kubedescheduler": LIFECYCLE},
    {"name": "lifecycle-high", "kubedescheduler": {**LIFECYCLE, "profileCustomizations": {
        "devLowNodeUtilizationThresholds": "High", "podLifetime": "48h"}}},
    {"name": "affinity-and-duplicates", "kubedescheduler": {
        **LIFECYCLE, "profiles": ["AffinityAndTaints", "TopologyAndDuplicates"]}},
    {"name": "restarts", "policy": {
        "apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "maxNoOfPodsToEvictPerNode": 2,
        "profiles": [{"name": "restarts",
                      "pluginConfig": [{"name": "RemovePodsHavingTooManyRestarts",
                                        "args": {"podRestartThreshold": 3}}],
                      "plugins": {"deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts"]}}}]}},
]


def policy_option(candidate: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in candidate.items() if key in ("policy", "kubedescheduler")}


def assert_same_as_separate_plans(results: dict[str, Any], candidates: list[dict[str, Any]],
                                  report_dir: Path) -> None:
    compared = results["whatif"]
    assert not compared.get("failed"), compared.get("msg")
    assert [c["name"] for c in compared["candidates"]] == [c["name"] for c in candidates]
    for index, figures in enumerate(compared["candidates"]):
        alone = results[f"plan_{index}"]
        assert not alone.get("failed"), alone.get("msg")
        expected = candidate_figures(alone)
        assert {key: figures[key] for key in expected} == expected, figures["name"]
        written = json.loads((report_dir / figures["name"] / "plan.json").read_text())
        assert [(e["namespace"], e["name"], e["plugin"], e.get("frequency")) for e in written["evictions"]] == [
            (e["namespace"], e["name"], e["plugin"], e.get("frequency")) for e in alone["evictions"]]


@pytest.mark.parametrize("seed", [3, 17, 41])
def test_candidates_give_the_figures_of_separate_plan_runs_on_random_clusters(seed: int, tmp_path: Path) -> None:
    chooser = random.Random(seed)
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": build_cluster(
        chooser.randint(6, 14), chooser.randint(5, 12), seed=seed, now=NOW)}))
    shared = {"snapshot": str(snapshot), "now": NOW, "samples": 4, "seed": seed, "placement": seed == 17}
    tasks = [{"descheduler.fleet.whatif": {**shared, "candidates": CANDIDATES, "report_dir": str(tmp_path / "out")},
              "register": "whatif"}]
    tasks += [{"descheduler.fleet.plan": {**shared, **policy_option(candidate)}, "register": f"plan_{index}"}
              for index, candidate in enumerate(CANDIDATES)]
    process, results = run_tasks(tmp_path, tasks)
    assert process.returncode == 0, process.stdout[-3000:]
    assert_same_as_separate_plans(results, CANDIDATES, tmp_path / "out")
    compared = results["whatif"]
    assert any(c["evictions"] for c in compared["candidates"]), "a cluster where some candidate evicts"
    if shared["placement"]:
        assert all(c["spread"]["after_placement"] is not None for c in compared["candidates"])
    for name in ("whatif.json", "whatif.md", "whatif.html"):
        assert (tmp_path / "out" / name).exists()
    assert f"**Best:** {compared['best_reason']}" in (tmp_path / "out" / "whatif.md").read_text()


AGED = [{"name": f"older-than-{seconds}s", "policy": {
    "apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
    "profiles": [{"name": "aged", "pluginConfig": [{"name": "PodLifeTime", "args": {
        "maxPodLifeTimeSeconds": seconds, "namespaces": {"include": ["shop"]}}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}} for seconds in (1, 10 ** 10)]


def test_candidates_on_a_live_cluster_give_the_figures_of_separate_plan_runs(kube: Any, tmp_path: Path) -> None:
    if getattr(kube, "is_external", False):
        pytest.skip("loads its own workload")
    kube.load([namespace_object("shop"), node("worker-1"), node("worker-2")])
    create(kube, replicaset("shop", "web", 3))
    wait_until_pods_are_older_than(ready_replicas(kube, "shop", "web", 3), 1)
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    now = "2030-01-01T00:00:00Z"  # one time for both runs: the pods' ages do not move between the reads
    tasks = [{"descheduler.fleet.whatif": {**connection, "now": now, "candidates": AGED,
                                           "report_dir": str(tmp_path / "out"),
                                           "objective": {"type": "jmespath",
                                                         "expression": "max_by(candidates, &evictions).name"}},
              "register": "whatif"}]
    tasks += [{"descheduler.fleet.plan": {**connection, "now": now, **policy_option(candidate)},
               "register": f"plan_{index}"} for index, candidate in enumerate(AGED)]
    process, results = run_tasks(tmp_path, tasks)
    assert process.returncode == 0, process.stdout[-3000:]
    assert_same_as_separate_plans(results, AGED, tmp_path / "out")
    compared = results["whatif"]
    assert compared["cluster_identity"]["uid"] == kube.get("Namespace", None, "kube-system")["metadata"]["uid"]
    assert [c["evictions"] for c in compared["candidates"]] == [3, 0]
    assert compared["best"] == "older-than-1s"


@pytest.mark.parametrize(("change", "message"), [
    ({"candidates": [CANDIDATES[0], CANDIDATES[0]]},
     "candidates[1].name: 'lifecycle' is used twice; give each candidate its own name"),
    ({"candidates": [{"name": "both", "policy": {}, "kubedescheduler": LIFECYCLE}]},
     "candidates[0] (both): give exactly one of policy (a DeschedulerPolicy) or kubedescheduler"),
    ({"candidates": [{"name": "typo", "kubedescheduler": {**LIFECYCLE, "profileCustomisations": {}}}]},
     "candidates[typo].kubedescheduler: 1 unknown field(s), nothing was planned"),
    ({"objective": {"type": "fewest_evictions"}}, "objective.target_spread: fewest_evictions needs the spread"),
    ({"objective": {"type": "jmespath", "expression": "candidates[0].evictions"}},
     "objective.expression: 'candidates[0].evictions' returned"),
])
def test_bad_candidates_and_objectives_fail_naming_the_field(change: dict[str, Any], message: str,
                                                             tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    objects = build_cluster(4, 4, seed=1, now=NOW)
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    options = {"snapshot": str(snapshot), "now": NOW, "candidates": CANDIDATES[:1], **change}
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": options, "register": "whatif",
                                              "ignore_errors": True}])
    assert results["whatif"]["failed"] is True
    assert message in results["whatif"]["msg"], results["whatif"]["msg"]


LNU_POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "balance", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50}}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


OPERATOR_PRESETS = {(10, 30): "Low", (20, 50): "Medium", (40, 70): "High"}


def with_thresholds(low: float, high: float, resources: list[str]) -> dict[str, Any]:
    """The base policy with its LowNodeUtilization thresholds set, built here independently of the module."""
    policy = json.loads(json.dumps(LNU_POLICY))
    args = policy["profiles"][0]["pluginConfig"][0]["args"]
    args["thresholds"] = dict.fromkeys(resources, low)
    args["targetThresholds"] = dict.fromkeys(resources, high)
    return policy


@pytest.mark.parametrize("seed", [7, 23])
def test_every_pareto_point_is_reproduced_by_planning_its_thresholds(seed: int, tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": build_cluster(12, 10, seed=seed, now=NOW)}))
    shared = {"snapshot": str(snapshot), "now": NOW}
    search = {"policy": LNU_POLICY, "low": [10, 20, 30, 40], "high": [30, 50, 70, 90]}
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": {**shared, "threshold_search": search},
                                              "register": "search"}])
    found = results["search"]
    assert not found.get("failed"), found.get("msg")
    assert len(found["candidates"]) == sum(1 for low in search["low"] for high in search["high"] if low < high)
    points = {c["name"]: (c["evictions"], final(c)) for c in found["candidates"]}
    front = found["pareto"]
    assert front, "a front always has a point"
    for point in front:  # nothing beats a front point on both figures
        evictions, spread = point["evictions"], point["final_spread"]
        assert not any(e <= evictions and s <= spread and (e, s) != (evictions, spread) for e, s in points.values())
    for evictions, spread in points.values():  # and every point is beaten or matched by the front
        assert any(p["evictions"] <= evictions and p["final_spread"] <= spread for p in front)

    (tmp_path / "replay").mkdir()
    tasks = [{"descheduler.fleet.plan": {**shared, "policy": with_thresholds(
        p["thresholds"]["low"], p["thresholds"]["high"], p["thresholds"]["resources"])}, "register": f"plan_{index}"}
        for index, p in enumerate(front)]
    _process, replayed = run_tasks(tmp_path / "replay", tasks)
    for index, point in enumerate(front):
        plan = candidate_figures(replayed[f"plan_{index}"])
        assert (plan["evictions"], final(plan)) == (point["evictions"], point["final_spread"]), point["name"]
        # the operator's LowNodeUtilization presets (cpu, memory and pods together)
        preset = OPERATOR_PRESETS.get((point["thresholds"]["low"], point["thresholds"]["high"]))
        expected = None if preset is None else {"profiles": ["LifecycleAndUtilization"], "profileCustomizations": {
            "devLowNodeUtilizationThresholds": preset}}
        assert point["kubedescheduler"] == expected, point


def final(figures: dict[str, Any]) -> float:
    spread = figures["spread"]
    return (spread["after_placement"] or spread["after_evictions"])["cpu"]
