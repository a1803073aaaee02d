"""A run in a directory store: each cluster's objects apart, the plan back for the evict step, the fleet entries of
every slice, and a cluster planned twice found and refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.store import runs
from ansible_collections.descheduler.fleet.plugins.module_utils.store.backends import DirectoryStore
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import StoreError

EVICTIONS = [{"namespace": "shop", "name": "web-1", "node": "n1", "plugin": "PodLifeTime"}]


def plan(uid: str) -> str:
    return json.dumps({"now": "2026-11-26T12:00:00Z", "cluster_identity": {"uid": uid, "server": "https://x"},
                       "summary": {"total": 1, "by_plugin": {"PodLifeTime": 1}}, "evictions": EVICTIONS})


def entry(cluster: str, ok: bool = True) -> dict:
    return {"cluster": cluster, "ok": ok, "error": None if ok else "unreachable", "report_dir": f"/r/{cluster}",
            "plan": {"summary": {"total": 1, "by_plugin": {"PodLifeTime": 1}}, "evictions": EVICTIONS} if ok else None}


def test_each_cluster_has_its_own_objects_and_the_summary_no_evictions(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    refs = runs.save_plan(store, "r1", entry("east"), slice_id="s1", plan_text=plan("uid-east"))
    runs.save_plan(store, "r1", entry("west"), slice_id="s2", plan_text=plan("uid-west"))
    assert refs["plan"] == str(tmp_path / "runs/r1/clusters/east/uid-east/s1/plan.json")
    assert sorted(store.keys("runs/r1/")) == [
        "runs/r1/clusters/east/uid-east/s1/plan.json", "runs/r1/clusters/east/uid-east/s1/summary.json",
        "runs/r1/clusters/west/uid-west/s2/plan.json", "runs/r1/clusters/west/uid-west/s2/summary.json"]
    summary = json.loads(store.get("runs/r1/clusters/east/uid-east/s1/summary.json"))
    assert "evictions" not in summary["entry"]["plan"] and summary["plan_ref"] == refs["plan"]


def test_the_evict_step_gets_the_plan_and_stores_its_result_beside_it(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    runs.save_plan(store, "r1", entry("east"), slice_id="s1", plan_text=plan("uid-east"))
    loaded = runs.load_plan(store, "r1", "east", expected_uid="uid-east")
    assert loaded["plan"]["evictions"] == EVICTIONS and loaded["cluster_uid"] == "uid-east"
    with pytest.raises(StoreError, match="not other-uid") as caught:
        runs.load_plan(store, "r1", "east", expected_uid="other-uid")
    assert caught.value.field == "expected_cluster_uid"
    reference = runs.save_evict_result(store, "r1", "east", {"ok": True, "counts": {"evicted": 1}})
    assert reference.endswith("runs/r1/clusters/east/uid-east/s1/evict-result.json")
    entries, results = runs.fleet_entries(store, runs.read_run(store, "r1"))
    assert [e["cluster"] for e in entries] == ["east"] and results[0]["result"]["counts"] == {"evicted": 1}


def test_a_missing_or_failed_plan_is_refused(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    runs.save_plan(store, "r1", entry("down", ok=False), slice_id="s1", plan_text=None)
    runs.save_plan(store, "r1", entry("west"), slice_id="s1", plan_text=plan("uid-west"))
    with pytest.raises(StoreError, match="cluster: 'east' has no plan in run r1") as caught:
        runs.load_plan(store, "r1", "east")
    assert (caught.value.field, caught.value.value) == ("cluster", "east")
    assert "existing: down, west" in str(caught.value)
    with pytest.raises(StoreError, match="did you mean 'west'\\?") as caught:
        runs.save_evict_result(store, "r1", "wets", {"ok": True})
    with pytest.raises(StoreError, match="run_id: 'r2' is no run in the run store .*existing: r1\\)") as caught:
        runs.load_plan(store, "r2", "west")
    assert (caught.value.field, caught.value.value) == ("run_id", "r2")
    with pytest.raises(StoreError, match="its dry run in run r1 failed \\(unreachable\\)"):
        runs.load_plan(store, "r1", "down")
    entries, _results = runs.fleet_entries(store, runs.read_run(store, "r1"))
    assert entries[0]["ok"] is False and entries[0]["error"] == "unreachable"


def test_one_cluster_planned_by_two_slices_is_found_and_refused(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    runs.save_plan(store, "r1", entry("prod"), slice_id="s1", plan_text=plan("uid-prod"))
    runs.save_plan(store, "r1", entry("prod-alias"), slice_id="s2", plan_text=plan("uid-prod"))
    runs.save_plan(store, "r1", entry("east"), slice_id="s2", plan_text=plan("uid-east"))
    run = runs.read_run(store, "r1")
    assert run.planned_twice() == [{"by": "uid", "value": "uid-prod", "records": [
        {"cluster": "prod", "cluster_uid": "uid-prod", "slice": "s1"},
        {"cluster": "prod-alias", "cluster_uid": "uid-prod", "slice": "s2"}]}]
    for name in ("prod", "prod-alias"):
        with pytest.raises(StoreError, match="planned twice in run r1") as caught:
            runs.load_plan(store, "r1", name)
        assert caught.value.details["planned_twice"] == run.planned_twice()
    entries, _results = runs.fleet_entries(store, run)
    failed = {e["cluster"]: e["error"] for e in entries if not e["ok"]}
    assert sorted(failed) == ["prod", "prod-alias"]
    assert "also planned as prod-alias (slice s2" in failed["prod"]
    assert runs.load_plan(store, "r1", "east")["plan"]["evictions"] == EVICTIONS


def test_one_name_stored_by_two_slices_is_planned_twice(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    runs.save_plan(store, "r1", entry("prod"), slice_id="s1", plan_text=plan("uid-prod"))
    runs.save_plan(store, "r1", entry("prod"), slice_id="s1", plan_text=plan("uid-prod"))  # a re-run of a slice
    assert runs.read_run(store, "r1").planned_twice() == []
    runs.save_plan(store, "r1", entry("prod"), slice_id="s9", plan_text=plan("uid-prod"))
    assert [group["by"] for group in runs.read_run(store, "r1").planned_twice()] == ["name"]


def test_runs_are_apart(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    runs.save_plan(store, "r1", entry("east"), slice_id="s1", plan_text=plan("uid-east"))
    runs.save_plan(store, "r10", entry("east"), slice_id="s2", plan_text=plan("uid-east"))
    assert [r.cluster for r in runs.read_run(store, "r1").records] == ["east"]
    assert runs.read_run(store, "r1").planned_twice() == []


def test_the_summary_keeps_the_plan_seal_and_a_plan_replaced_after_it_is_refused(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    sealed = {**json.loads(plan("uid-east")), "seal": {"version": 1, "digest": "a" * 64, "entries": ["0" * 16]}}
    refs = runs.save_plan(store, "r1", entry("east"), slice_id="s1", plan_text=json.dumps(sealed))
    assert refs["plan_seal"] == {"version": 1, "digest": "a" * 64}, "the summary's seal has no per-eviction digests"
    summary = json.loads(store.get("runs/r1/clusters/east/uid-east/s1/summary.json"))
    assert summary["plan_seal"] == refs["plan_seal"]
    assert runs.load_plan(store, "r1", "east")["plan"]["seal"]["digest"] == "a" * 64
    store.put("runs/r1/clusters/east/uid-east/s1/plan.json", json.dumps({**sealed, "seal": {"digest": "b" * 64}}))
    with pytest.raises(StoreError, match=f"is sealed {'b' * 64}, but the summary .* names the plan sealed "
                                         f"{'a' * 64}: the plan was replaced after the dry run"):
        runs.load_plan(store, "r1", "east")
