"""The plan module's placement preview through real ansible-playbook runs: from a snapshot with a scheduler
configuration file, from a live cluster, and the option errors a user sees."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from playbook import REPO, run_tasks

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
KUBEDESCHEDULER = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                   "profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"]}
BINPACK = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [
    {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                   {"name": "memory", "weight": 1}]}}}]}]}


def _snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(build_cluster(30, 12, seed=5, now=NOW)))
    return path


def _assert_placement(plan: dict) -> None:
    assert plan["evictions"], "the generated cluster should give evictions"
    verdict = plan["placement"]
    assert verdict["evictions"] == len(plan["evictions"])
    assert verdict["placed"] + verdict["unplaced"] + verdict["not_replaced"] == len(plan["evictions"])
    node_names = {n["name"] for n in plan["utilization"]["nodes"]}
    for eviction in plan["evictions"]:
        placement = eviction["placement"]
        if placement["outcome"] == "placed":
            assert placement["node"] in node_names
            assert placement["node"] in placement["tied_nodes"]
            assert placement["same_node"] == (placement["node"] == eviction["node"])
        else:
            assert placement["node"] is None and placement["reason"]
    for state in ("before", "after_evictions", "after_placement"):
        assert verdict["spread"][state]["cpu"]["stddev"] is not None
    assert all("after_placement" in n for n in plan["utilization"]["nodes"])


def test_snapshot_plan_with_binpack_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(yaml.safe_dump(BINPACK))
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "placement": True, "scheduler_config": str(config),
                                       "report_dir": str(tmp_path / "report")}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-2000:]
    plan = results["plan"]
    _assert_placement(plan)
    fit = plan["placement"]["schedulers"]["default-scheduler"]
    assert fit["scores"]["NodeResourcesFit"] == 1
    html = (tmp_path / "report" / "plan.html").read_text()
    assert "after placement" in html.lower()


def test_placement_off_returns_no_placement(tmp_path: Path) -> None:
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:]
    assert "placement" not in results["plan"]
    assert all("placement" not in e for e in results["plan"]["evictions"])


def test_scheduler_config_without_placement_is_refused(tmp_path: Path) -> None:
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "scheduler_config": BINPACK}, "register": "plan",
            "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["plan"]["failed"] is True
    assert "set placement: true" in results["plan"]["msg"]


def test_bad_scheduler_config_names_the_field(tmp_path: Path) -> None:
    bad = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                           "args": {"scoringStrategy": {"type": "Binpack"}}}]}]}
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "placement": True, "scheduler_config": bad},
            "register": "plan", "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["plan"]["failed"] is True
    message = results["plan"]["msg"]
    assert "scheduler_config.profiles[0].pluginConfig.NodeResourcesFit.args.scoringStrategy.type" in message
    assert "'Binpack'" in message and "MostAllocated" in message


def test_live_cluster_plan_with_placement(kube: Any, tmp_path: Path) -> None:
    seeded = getattr(kube, "is_emulator", False)
    if seeded:
        kube.load(build_cluster(20, 10, seed=7, now=NOW))
    task = {"descheduler.fleet.plan": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                       "kubedescheduler": KUBEDESCHEDULER, "now": NOW, "placement": True},
            "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-2000:]
    plan = results["plan"]
    if seeded or plan["evictions"]:  # a cluster of the tester's may have nothing to evict
        _assert_placement(plan)
    assert plan["placement"]["evictions"] == len(plan["evictions"])
