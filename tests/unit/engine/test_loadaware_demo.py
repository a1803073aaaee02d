"""The CCE-style demo cluster (examples/generate_cce_volcano.py) plans through the plan runner as the demo does."""

from __future__ import annotations

import json
from pathlib import Path

from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import run_plan

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = "2026-11-22T12:00:00Z"


def demo_plan(**extra: object) -> dict:
    policy = json.loads((EXAMPLES / "policies" / "cce-volcano-addon.json").read_text())
    return run_plan({"snapshot": str(EXAMPLES / "snapshots" / "cce-volcano.json"), "policy": policy, "now": NOW,
                     "prometheus_result": str(EXAMPLES / "metrics" / "cce-volcano-prometheus.json"), **extra})


def test_demo_plans_loadaware_without_errors_or_missing_data():
    plan = demo_plan()
    assert plan["errors"] == [] and plan["warnings"] == []
    classes = {n["name"]: n["classes"]["ProfileName/LoadAware"] for n in plan["utilization"]["nodes"]}
    assert classes == {"cce-node-1": "overutilized", "cce-node-2": "overutilized", "cce-node-3": "appropriate",
                       "cce-node-4": "underutilized", "cce-node-5": "underutilized", "cce-node-6": "appropriate"}
    evicted = {(e["node"], e["name"]) for e in plan["evictions"]}
    assert ("cce-node-1", "web-7c9d8-a1") in evicted  # node 1's biggest cpu user
    assert {node for node, _name in evicted} == {"cce-node-1", "cce-node-2"}
    spared = plan["spared"]["by_reason"]
    assert "data/redis-0" in spared["has a PersistentVolumeClaim"]["examples"]


def test_demo_samples_show_the_choice_on_the_node_over_both_targets():
    """cce-node-2 is over cpu and memory: which one Volcano records first (a Go map) decides the pod order."""
    plan = demo_plan(samples=60, seed=0)
    by_name = {e["name"]: e for e in plan["evictions"]}
    assert by_name["web-7c9d8-a1"]["certain"] is True
    uncertain = [e for e in plan["evictions"] + plan["sampling"]["other_possible_evictions"] if not e["certain"]]
    assert uncertain and all(e["node"] == "cce-node-2" for e in uncertain)
    assert plan["sampling"]["evictions_per_cycle"]["min"] < plan["sampling"]["evictions_per_cycle"]["max"]
