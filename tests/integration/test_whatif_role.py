"""The whatif role over a small fleet of snapshot clusters, one of them broken, through ansible-playbook: each
cluster's candidates compared (as the module compares them), a fleet summary naming each cluster's best candidate,
the broken cluster marked and the playbook failing after the summary (JSON, Markdown, HTML) is written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from playbook import REPO, run_playbook

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
CANDIDATES = [
    {"name": "lifecycle", "kubedescheduler": {"deschedulingIntervalSeconds": 3600,
                                              "profiles": ["LifecycleAndUtilization"]}},
    {"name": "duplicates", "kubedescheduler": {"deschedulingIntervalSeconds": 3600,
                                               "profiles": ["TopologyAndDuplicates"]}},
]


def snapshot(tmp_path: Path, name: str, seed: int) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": build_cluster(8, 8, seed=seed, now=NOW)}))
    return str(path)


def test_each_cluster_gets_its_best_candidate_and_a_broken_one_fails_after_the_summary(tmp_path: Path) -> None:
    hosts = {"east": {"whatif_snapshot": snapshot(tmp_path, "east", 5)},
             "west": {"whatif_snapshot": snapshot(tmp_path, "west", 9)},
             "broken": {"whatif_snapshot": str(tmp_path / "missing.json")}}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "whatif_report_dir": str(tmp_path / "out"), "whatif_now": NOW,
        "whatif_candidates": CANDIDATES, "whatif_objective": {"type": "fewest_evictions", "target_spread": 100}}}}))
    process = run_playbook(REPO / "playbooks/whatif.yml", "-i", str(inventory))
    assert process.returncode != 0, "a cluster failed: the playbook must not end green"
    assert "broken: the what-if failed: snapshot: file" in process.stdout
    fleet = json.loads((tmp_path / "out" / "whatif-fleet.json").read_text())
    rows = {row["cluster"]: row for row in fleet["clusters"]}
    assert rows["broken"]["ok"] is False and "missing.json" in rows["broken"]["error"]
    for name in ("east", "west"):
        written = json.loads((tmp_path / "out" / name / "whatif.json").read_text())
        assert rows[name]["ok"] is True
        assert rows[name]["best"] == written["best"]
        evictions = {c["name"]: c["evictions"] for c in written["candidates"]}
        assert evictions[written["best"]] == min(evictions.values()), "all reach spread 100: the fewest evictions win"
        assert [c["name"] for c in rows[name]["candidates"]] == ["lifecycle", "duplicates"]
        assert (tmp_path / "out" / name / "lifecycle" / "plan.json").exists()
    summary = (tmp_path / "out" / "whatif-fleet.md").read_text()
    assert f"| [east](east/whatif.html) | {rows['east']['best']} |" in summary and "| broken | **FAILED** |" in summary
    html = (tmp_path / "out" / "whatif-fleet.html").read_text()
    assert '<a href="west/whatif.html">west</a>' in html and "Error: snapshot: file" in html
    totals = {total["name"]: total for total in fleet["candidates"]}
    assert totals["lifecycle"]["evictions"] == sum(c["evictions"] for name in ("east", "west")
                                                   for c in rows[name]["candidates"] if c["name"] == "lifecycle")
    assert sorted(totals["lifecycle"]["best_on"] + totals["duplicates"]["best_on"]) == ["east", "west"]
