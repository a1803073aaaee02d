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
    ({"objective": {"type": "jmespath", "expression": "candidates[?evictionz < `3`] | [0].name"}},
     "reads 'evictionz', which is not a candidate figure; did you mean 'evictions'?"),
    ({"objective": {"type": "jmespath", "expression": "min_by(candidates, &evictionz).name"}},
     "reads 'evictionz', which is not a candidate figure; did you mean 'evictions'?"),
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
    assert found["placement"] is True, "the default objective compares spreads: they are measured after placement"
    shared["placement"] = True
    grid = sum(1 for low in search["low"] for high in search["high"] if low < high)
    searched = [c for c in found["candidates"] if "thresholds" in c]
    assert len(searched) == grid
    # the operator's presets Low, Medium and High are on the grid: each planned as a candidate of its own
    assert [c["operator_equivalent_of"] for c in found["candidates"] if "operator_equivalent_of" in c] == [
        "LowNodeUtilization-10-30", "LowNodeUtilization-20-50", "LowNodeUtilization-40-70"]
    points = {c["name"]: (c["evictions"], final(c)) for c in searched if not c["cycle_skipped"]
              and not c["plugin_errors"] and not c["unplaced"]}
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
        expected = None if preset is None else {
            "managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
            "profiles": ["LifecycleAndUtilization"],
            "profileCustomizations": {"devLowNodeUtilizationThresholds": preset}}
        assert point["kubedescheduler"] == expected, point


def final(figures: dict[str, Any]) -> float:
    spread = figures["spread"]
    return (spread["after_placement"] or spread["after_evictions"])["cpu"]


def aged_policy(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", **(extra or {}),
            "profiles": [{"name": "aged", "pluginConfig": [{"name": "PodLifeTime",
                                                            "args": {"maxPodLifeTimeSeconds": 60}}],
                          "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}


# LowNodeUtilization on measured usage, with no metrics given: the plugin reports an error and evicts nothing
MEASURED_WITHOUT_METRICS = {**LNU_POLICY, "profiles": [{**LNU_POLICY["profiles"][0], "pluginConfig": [{
    "name": "LowNodeUtilization", "args": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50},
                                           "metricsUtilization": {"source": "KubernetesMetrics"}}}]}]}
FLAWED = [{"name": "skipped", "policy": aged_policy({"nodeSelector": "no-such-label=x"})},
          {"name": "plugin-error", "policy": MEASURED_WITHOUT_METRICS},
          {"name": "aged", "policy": aged_policy()}]


@pytest.mark.parametrize("objective", [
    {"type": "jmespath", "expression": "min_by(candidates, &evictions).name"},
    {"type": "jmespath", "expression": "candidates[0].name"},
    {"type": "lowest_spread"},
])
def test_a_skipped_cycle_or_a_plugin_error_never_wins_and_the_result_says_why(
        objective: dict[str, Any], tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": build_cluster(10, 8, seed=5, now=NOW)}))
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": {
        "snapshot": str(snapshot), "now": NOW, "candidates": FLAWED, "objective": objective, "placement": False},
        "register": "whatif"}])
    compared = results["whatif"]
    assert not compared.get("failed"), compared.get("msg")
    figures = {c["name"]: c for c in compared["candidates"]}
    # the flawed candidates evict nothing: before the fix, the fewest evictions and the first listed were theirs
    assert figures["skipped"]["cycle_skipped"] and figures["skipped"]["evictions"] == 0
    assert figures["plugin-error"]["plugin_errors"] == 1 and figures["plugin-error"]["evictions"] == 0
    assert figures["aged"]["evictions"] > 0
    assert compared["best"] == "aged", compared["best_reason"]
    assert compared["excluded"] == [{"name": "skipped", "reasons": ["its cycle is skipped"]},
                                    {"name": "plugin-error", "reasons": ["1 plugin error(s)"]}]
    assert ": aged" in compared["best_reason"]
    assert "; excluded: skipped (its cycle is skipped); plugin-error (1 plugin error(s))" in compared["best_reason"]


def test_replacements_with_nowhere_to_go_rank_before_the_spread(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": build_cluster(10, 8, seed=4, now=NOW)}))
    untouched = {"name": "untouched", "policy": aged_policy()}
    untouched["policy"]["profiles"][0]["pluginConfig"][0]["args"]["maxPodLifeTimeSeconds"] = 10 ** 10
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": {
        "snapshot": str(snapshot), "now": NOW, "candidates": [FLAWED[2], untouched],
        "objective": {"type": "lowest_spread"}}, "register": "whatif"}])
    compared = results["whatif"]
    assert not compared.get("failed"), compared.get("msg")
    aged, kept = compared["candidates"]
    assert aged["unplaced"] > 0 and kept["unplaced"] == 0, "some of the aged pods' replacements fit nowhere"
    assert final(aged) < final(kept), "counting the Pending pods as gone, evicting them looks more balanced"
    assert compared["best"] == "untouched", compared["best_reason"]
    assert compared["excluded"] == []


def test_spread_objectives_are_measured_after_placement_unless_turned_off(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": build_cluster(10, 8, seed=11, now=NOW)}))
    shared = {"snapshot": str(snapshot), "now": NOW, "candidates": CANDIDATES[:2]}
    by_evictions = {"type": "jmespath", "expression": "min_by(candidates, &evictions).name"}
    _process, results = run_tasks(tmp_path, [
        {"descheduler.fleet.whatif": shared, "register": "default"},
        {"descheduler.fleet.whatif": {**shared, "placement": False}, "register": "turned_off"},
        {"descheduler.fleet.whatif": {**shared, "objective": by_evictions}, "register": "no_spread"},
        {"descheduler.fleet.plan": {"snapshot": str(snapshot), "now": NOW, "placement": True,
                                    **policy_option(CANDIDATES[0])}, "register": "alone"}])
    default, turned_off, no_spread = results["default"], results["turned_off"], results["no_spread"]
    for result in (default, turned_off, no_spread):
        assert not result.get("failed"), result.get("msg")
    assert default["placement"] is True
    assert all(c["spread"]["after_placement"] is not None for c in default["candidates"])
    assert default["candidates"][0]["spread"] == candidate_figures(results["alone"])["spread"]
    assert "ignores where the evicted pods go" not in default["best_reason"]
    assert turned_off["placement"] is False
    assert all(c["spread"]["after_placement"] is None for c in turned_off["candidates"])
    assert turned_off["best_reason"].endswith("(the spread ignores where the evicted pods go: placement is false)")
    assert any("ignoring where their replacements land" in w for w in turned_off["whatif_warnings"])
    assert no_spread["placement"] is False, "an objective that reads no spread needs no placement"


def test_an_unknown_figure_fails_before_the_cluster_is_read(tmp_path: Path) -> None:
    options = {"snapshot": str(tmp_path / "missing.json"), "now": NOW, "candidates": CANDIDATES[:1],
               "objective": {"type": "jmespath", "expression": "min_by(candidates, &evictionz).name"}}
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": options, "register": "whatif",
                                              "ignore_errors": True}])
    failed = results["whatif"]
    assert failed["failed"] is True
    assert failed["msg"].startswith("objective.expression: 'min_by(candidates, &evictionz).name' reads 'evictionz', "
                                    "which is not a candidate figure; did you mean 'evictions'? use one of name, "
                                    "evictions,"), failed["msg"]
    assert (failed["field"], failed["value"]) == ("objective.expression", "evictionz")


def medium_search(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A threshold search whose one point is the operator's Medium preset, on a cluster with pods older than the
    preset's PodLifeTime: the point's options and the search's result."""
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": build_cluster(10, 8, seed=5, now=NOW)}))
    shared = {"snapshot": str(snapshot), "now": NOW, "placement": True}
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.whatif": {
        **shared, "threshold_search": {"policy": LNU_POLICY, "low": [20], "high": [50]}}, "register": "search"}])
    assert not results["search"].get("failed"), results["search"].get("msg")
    return shared, results["search"]


def test_a_points_operator_equivalent_is_planned_with_what_its_preset_adds(tmp_path: Path) -> None:
    shared, found = medium_search(tmp_path)
    [point] = found["pareto"]
    spec = point["kubedescheduler"]
    assert spec["deschedulingIntervalSeconds"] == 3600 and spec["managementState"] == "Managed"
    (tmp_path / "alone").mkdir()
    _process, results = run_tasks(tmp_path / "alone", [
        {"descheduler.fleet.plan": {**shared, "kubedescheduler": spec}, "register": "alone"}])
    alone = results["alone"]
    assert not alone.get("failed"), alone.get("msg")  # plan takes the suggested spec as is
    figures = candidate_figures(alone)
    equivalent = point["operator_equivalent"]
    assert equivalent["name"] == "LowNodeUtilization-20-50-operator"
    assert (equivalent["evictions"], equivalent["by_plugin"], equivalent["final_spread"]) == (
        figures["evictions"], figures["by_plugin"], final(figures))
    # LifecycleAndUtilization brings PodLifeTime (and the restarts plugin): the spec is not the point's cycle
    assert equivalent["adds"] == {plugin: count for plugin, count in figures["by_plugin"].items()
                                  if plugin != "LowNodeUtilization"}
    assert equivalent["adds"].get("PodLifeTime", 0) > 0
    assert equivalent["evictions"] > point["evictions"]
    listed = {c["name"]: c for c in found["candidates"]}
    assert listed[equivalent["name"]]["operator_equivalent_of"] == point["name"]


@pytest.fixture
def operator_standin(kube: Any) -> Any:
    from operator_support import operator_for

    yield from operator_for(kube)


def test_the_suggested_spec_is_accepted_by_kubedescheduler_as_is(kube: Any, operator_standin: Any,
                                                                 tmp_path: Path) -> None:
    from operator_support import get_kd, kd_task

    _shared, found = medium_search(tmp_path)
    spec = found["pareto"][0]["kubedescheduler"]
    (tmp_path / "apply").mkdir()
    process, results = run_tasks(tmp_path / "apply", [kd_task(kube, "would_create", spec=spec)], check=True)
    assert process.returncode == 0, process.stdout[-3000:]
    assert results["would_create"]["changed"] is True
    assert results["would_create"]["msg"] == "would create KubeDescheduler openshift-kube-descheduler-operator/cluster"
    assert get_kd(kube) is None, "check mode"
