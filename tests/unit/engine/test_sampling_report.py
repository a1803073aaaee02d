"""samples through the plan runner (module options) and the report's certain vs possible evictions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    render_html,
    render_markdown,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import run_plan
from builders import build_node, build_pod, policy, set_creation, set_rs_owner

NOW = "2026-11-22T12:00:00Z"


def cluster() -> list[dict]:
    """4 equal replicas on n1 (2 of them go, which ones is upstream's choice) and one 2-day-old pod (always goes)."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    for i in range(4):
        web = build_pod(f"web-{i}", 100, 0, "n1", set_rs_owner)
        set_creation(web, "2026-11-22T11:00:00Z")
        objects.append(web)
    old = build_pod("old", 100, 0, "n2", lambda p: set_rs_owner(p, "batch", "batch-uid"))
    set_creation(old, "2026-11-20T12:00:00Z")
    return objects + [old]


def two_plugin_policy() -> dict:
    return policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400}),
                  ("RemoveDuplicates", "balance", {}))


def test_report_separates_certain_from_possible_evictions():
    plan = compute_plan(cluster(), two_plugin_policy(), NOW, samples=40, seed=4)
    text = render_markdown(plan)
    certain_part, possible_part = text.split("### Possible evictions")
    assert "## How sure (40 sampled cycles)" in text
    assert "| default/old | n2 | test/PodLifeTime | 100% | 91%–100% |" in certain_part.split("### Certain evictions")[1]
    assert "default/web-" not in certain_part.split("### Certain evictions")[1]
    possible_rows = [line for line in possible_part.splitlines() if line.startswith("| default/web-")]
    assert len(possible_rows) == 4
    # each with its word, frequency and interval, e.g. "| likely | 55% | 40%–70% |"
    assert all(re.search(r"\| (likely|possible) \| \d+% \| \d+%–\d+% \| (yes|no) \|$", row) for row in possible_rows)
    assert "test/RemoveDuplicates: 2–2 (mean 2.0) per cycle" in text
    assert "lower end of the frequency's 95% interval (Wilson score interval) is at least 90%" in text
    html = render_html(plan)
    assert 'id="sampling"' in html and "Possible evictions (4)" in html and "Certain evictions (1)" in html


def test_report_says_when_too_few_samples_leave_nothing_certain():
    """30 cycles that all evict the old pod: its frequency could still be 89%, so it is likely, not certain."""
    plan = compute_plan(cluster(), two_plugin_policy(), NOW, samples=30, seed=4)
    text = render_markdown(plan)
    assert "| default/old | n2 | test/PodLifeTime | likely | 100% | 89%–100% | yes |" in text
    assert "With fewer than 35 samples no eviction can be certain" in text
    assert "Certain evictions: 0; possible evictions: 5" in text


def test_report_of_an_order_free_plan_calls_its_frequencies_exact():
    objects = [node for node in cluster() if node["kind"] == "Node" or node["metadata"]["name"] == "old"]
    plan = compute_plan(objects, policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400})), NOW,
                        samples=2)
    text = render_markdown(plan)
    assert "| default/old | n2 | test/PodLifeTime | 100% | exact |" in text
    assert "every cycle evicts the same pods, so the frequencies are exact" in text
    assert "With fewer than" not in text


def test_report_of_one_cycle_has_no_sampling_section():
    plan = compute_plan(cluster(), two_plugin_policy(), NOW)
    assert "How sure" not in render_markdown(plan)
    assert 'id="sampling"' not in render_html(plan)


def test_runner_passes_samples_and_seed_from_module_options(tmp_path: Path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(cluster()))
    params = {"snapshot": str(snapshot), "policy": two_plugin_policy(), "now": NOW, "samples": 40, "seed": 9,
              "report_dir": str(tmp_path / "report")}
    plan = run_plan(params)
    assert plan["sampling"]["samples"] == 40 and plan["sampling"]["seed"] == 9
    assert {e["name"]: e["certain"] for e in plan["evictions"]}["old"] is True
    written = json.loads((tmp_path / "report" / "plan.json").read_text())
    assert written["sampling"] == plan["sampling"]
    assert "How sure (40 sampled cycles)" in (tmp_path / "report" / "plan.md").read_text()


def test_runner_without_samples_is_one_cycle_and_zero_is_refused(tmp_path: Path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(cluster()))
    params = {"snapshot": str(snapshot), "policy": two_plugin_policy(), "now": NOW, "samples": None, "seed": None}
    assert "sampling" not in run_plan(params)
    with pytest.raises(PolicyError, match="samples: invalid value 0"):
        run_plan({**params, "samples": 0})
