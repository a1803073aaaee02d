"""The what-if across a fleet (whatif/fleet.py): totals per candidate over the clusters that planned it, the clusters
where each is the best, failed clusters with their error, links to each cluster's whatif.html; rendered by the
shared templating helper, so a user's template directory replaces its templates and HTML escapes the data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import ReportTemplateError
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.fleet import (
    summarize_whatif_fleet,
    write_whatif_fleet_summary,
)

HOSTILE = "<script>alert(1)</script>"


def candidate(name: str, evictions: int, final_cpu: float, *, placed: Optional[float] = None, vms: int = 0,
              pdb: int = 0, skipped: bool = False) -> dict[str, Any]:
    return {"name": name, "evictions": evictions, "workloads_touched": evictions // 2,
            "most_pods_one_workload_loses": min(evictions, 3), "vms_to_migrate": vms, "spared_by_pdb": pdb,
            "certain": None, "possible": None, "cycle_skipped": skipped, "plugin_errors": 0, "warnings": [],
            "spread": {"before": {"cpu": 30.0, "memory": 20.0}, "after_evictions": {"cpu": final_cpu, "memory": 18.0},
                       "after_placement": None if placed is None else {"cpu": placed, "memory": 17.0}},
            "unplaced": None if placed is None else 1}


def fleet_records(tmp_path: Path) -> list[dict[str, Any]]:
    return [
        {"cluster": "east", "ok": True, "best": "wide", "best_reason": "lowest cpu spread: wide",
         "report_dir": str(tmp_path / "east"),
         "candidates": [candidate("narrow", 4, 20.0, vms=1), candidate("wide", 10, 30.0, placed=8.0, pdb=2)]},
        {"cluster": "west", "ok": True, "best": "narrow", "best_reason": "lowest cpu spread: narrow",
         "report_dir": str(tmp_path / "west"),
         "candidates": [candidate("narrow", 2, 12.0), candidate("wide", 0, 40.0, skipped=True)]},
        {"cluster": "south", "ok": True, "best": None, "best_reason": "no candidate meets the objective",
         "report_dir": str(tmp_path / "south"), "candidates": [candidate("narrow", 1, 50.0)]},
        {"cluster": "broken", "ok": False, "error": "snapshot: file missing.json does not exist"},
    ]


def test_the_fleet_totals_sum_each_candidate_over_the_clusters_that_planned_it(tmp_path: Path) -> None:
    fleet = summarize_whatif_fleet(fleet_records(tmp_path), out_dir=str(tmp_path))
    assert (fleet["clusters_total"], fleet["clusters_ok"], fleet["clusters_failed"],
            fleet["clusters_without_best"]) == (4, 3, 1, 1)
    narrow, wide = fleet["candidates"]
    assert (narrow["name"], narrow["clusters"], narrow["evictions"], narrow["vms_to_migrate"]) == ("narrow", 3, 7, 1)
    assert narrow["best_on"] == ["west"] and wide["best_on"] == ["east"]
    assert (wide["clusters"], wide["evictions"], wide["spared_by_pdb"], wide["unplaced"]) == (2, 10, 2, 1)
    assert narrow["unplaced"] is None  # never previewed: no count, not zero
    # the final spread is after placement when previewed (east's wide: 8.0), else after the evictions
    assert wide["final_spread"]["cpu"] == {"mean": 24.0, "max": 40.0}
    assert narrow["final_spread"]["cpu"] == {"mean": round((20.0 + 12.0 + 50.0) / 3, 2), "max": 50.0}
    assert wide["cycle_skipped_on"] == ["west"]
    rows = {row["cluster"]: row for row in fleet["clusters"]}
    assert rows["east"]["report"] == "east/whatif.html"
    assert rows["broken"] == {"cluster": "broken", "ok": False, "error": "snapshot: file missing.json does not exist",
                              "best": None, "best_reason": None, "candidates": [], "cluster_identity": None,
                              "report_dir": None, "report": None}


def test_the_three_files_say_the_same(tmp_path: Path) -> None:
    files = write_whatif_fleet_summary(fleet_records(tmp_path), str(tmp_path))
    assert json.loads(Path(files["json"]).read_text(encoding="utf-8"))["candidates"][0]["best_on"] == ["west"]
    markdown = Path(files["markdown"]).read_text(encoding="utf-8")
    assert "| [east](east/whatif.html) | wide | lowest cpu spread: wide |" in markdown
    assert "| broken | **FAILED** | snapshot: file missing.json does not exist |" in markdown
    assert "| [west](west/whatif.html) | 2 evictions, CPU spread 12.00 **best** | 0 evictions, CPU spread 40.00 " \
           "(cycle skipped) |" in markdown
    html = Path(files["html"]).read_text(encoding="utf-8")
    assert '<th scope="row"><a href="east/whatif.html">east</a></th><td class="best-candidate">' \
           '<span class="badge tone-green">wide</span>' in html
    assert "Error: snapshot: file missing.json does not exist" in html
    assert "<td>1 (east)</td>" in html  # wide is the best on east


def test_a_user_template_directory_replaces_the_fleet_templates_and_html_escapes(tmp_path: Path) -> None:
    records = fleet_records(tmp_path)
    records[0]["candidates"][0]["name"] = HOSTILE
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "whatif_fleet.md").write_text("{{ fleet.clusters_ok }} of {{ fleet.clusters_total }}\n",
                                               encoding="utf-8")
    (templates / "style.css").write_text("body { color: rebeccapurple; }\n", encoding="utf-8")
    files = write_whatif_fleet_summary(records, str(tmp_path / "out"), template_dir=str(templates))
    assert Path(files["markdown"]).read_text(encoding="utf-8") == "3 of 4\n"
    html = Path(files["html"]).read_text(encoding="utf-8")
    assert "rebeccapurple" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script" not in html


def test_a_broken_template_fails_before_any_file_is_written(tmp_path: Path) -> None:
    (tmp_path / "whatif_fleet.html").write_text("{% if %}\n", encoding="utf-8")
    with pytest.raises(ReportTemplateError, match="report template whatif_fleet.html"):
        write_whatif_fleet_summary(fleet_records(tmp_path), str(tmp_path / "out"), template_dir=str(tmp_path))
    assert os.listdir(tmp_path / "out") == []


def test_a_hand_made_record_still_renders(tmp_path: Path) -> None:
    records = [{"cluster": "lab", "ok": True, "best": "a", "candidates": [{"name": "a", "evictions": "3"}]},
               "not a record"]
    fleet = summarize_whatif_fleet(records)
    assert fleet["candidates"][0]["evictions"] == 3 and fleet["clusters"][1]["ok"] is False
    files = write_whatif_fleet_summary(records, str(tmp_path))
    assert "| lab | a |" in Path(files["markdown"]).read_text(encoding="utf-8")
