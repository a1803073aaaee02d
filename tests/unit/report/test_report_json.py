"""to_json, the layout of every report's JSON (plan.json, whatif.json, the fleet summaries)."""

from __future__ import annotations

import json
from datetime import datetime

from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import to_json


def eviction(order: int) -> dict:
    return {"order": order, "namespace": "shop", "name": f"web-{order}", "node": "worker-1",
            "owner": {"kind": "ReplicaSet", "name": "web"}, "plugin": "PodLifeTime", "reason": "age 2d > 1d"}


def plan(evictions: int) -> dict:
    return {"now": "2026-11-28T12:00:00Z", "summary": {"total": evictions, "by_node": {"worker-1": evictions}},
            "policy": {"profiles": [{"name": "p", "pluginConfig": [{"name": "PodLifeTime", "args": {}}]}]},
            "cycle": {"nodes": ["worker-1", "worker-2"], "skipped": False}, "errors": [],
            "evictions": [eviction(order) for order in range(1, evictions + 1)]}


def test_a_large_plan_has_one_eviction_per_line_and_reads_back_the_same() -> None:
    data = plan(500)
    text = to_json(data)
    assert json.loads(text) == data
    lines = text.splitlines()
    start = lines.index('  "evictions": [')
    rows = lines[start + 1:start + 501]
    assert [json.loads(row.strip().rstrip(",")) for row in rows] == data["evictions"]
    assert lines[start + 501] == "  ]"
    assert text.endswith("}\n")


def test_the_small_parts_stay_indented_a_key_per_line() -> None:
    lines = to_json(plan(3)).splitlines()
    assert '  "summary": {' in lines and '    "total": 3,' in lines
    assert '  "policy": {' in lines and '        "name": "p",' in lines  # a short list of mappings: laid out
    assert '    "nodes": ["worker-1", "worker-2"],' in lines  # plain values on one line
    assert '  "errors": [],' in lines
    assert '    {' in lines, "three evictions: each laid out as a mapping, not one per line"


def test_non_ascii_numbers_and_odd_values_are_written_as_json_would() -> None:
    data = {"naïve": "ü", "n": 1.5, "none": None, "flag": True, 3: "three", "when": datetime(2026, 11, 28)}
    read = json.loads(to_json(data))
    assert read == {"naïve": "ü", "n": 1.5, "none": None, "flag": True, "3": "three", "when": "2026-11-28 00:00:00"}
    assert "naïve" in to_json(data), "not escaped: people read these files"


def test_keys_json_cannot_hold_and_cycles_fall_back_to_plain_data() -> None:
    assert json.loads(to_json({("a", "b"): 1})) == {"('a', 'b')": 1}
    looped: dict = {"name": "loop"}
    looped["self"] = looped
    read = json.loads(to_json(looped))
    assert read["name"] == "loop" and isinstance(read["self"], dict)
