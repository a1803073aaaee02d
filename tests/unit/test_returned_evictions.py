"""The plan module's result holds at most return_evictions evictions (#51 item 3): the bound, all or none, what the
result says about the rest, and every wrong value refused before anything is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import (
    DEFAULT_RETURNED_EVICTIONS,
    PlanRequestError,
    returned_evictions_bound,
    run_plan,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = "2026-11-22T12:00:00Z"


@pytest.fixture(scope="module")
def params() -> dict[str, Any]:
    policy = yaml.safe_load((EXAMPLES / "policies" / "plain-k8s-policy.yaml").read_text())
    return {"snapshot": str(EXAMPLES / "snapshots" / "plain-k8s.yaml"), "policy": policy, "now": NOW}


@pytest.mark.parametrize("value, bound", [
    (None, DEFAULT_RETURNED_EVICTIONS), (True, None), ("all", None), ("ALL", None), ("yes", None),
    (False, 0), ("none", 0), ("false", 0), (0, 0), (3, 3), ("25", 25),
])
def test_return_evictions_reads_as_a_bound(value: Any, bound: Any) -> None:
    assert returned_evictions_bound(value) == bound


@pytest.mark.parametrize("value", ["lots", -1, 2.5, [], {"all": True}, "-3"])
def test_a_wrong_return_evictions_names_the_field_the_value_and_the_choices(value: Any, params: dict) -> None:
    with pytest.raises(PlanRequestError) as raised:
        run_plan({**params, "snapshot": "/nonexistent/file.json", "return_evictions": value})  # refused before the read
    assert raised.value.field == "return_evictions" and raised.value.value == value
    assert str(raised.value).startswith(f"return_evictions: {value!r} is not all, none or a number")


def test_the_bound_keeps_the_first_evictions_and_says_where_the_rest_are(params: dict, tmp_path: Path) -> None:
    whole = run_plan({**params, "return_evictions": "all"})
    total = whole["summary"]["total"]
    assert total > 3 and len(whole["evictions"]) == total and whole["evictions_left_out"] == 0
    assert whole["evictions_file"] is None and "entries" in whole["seal"]
    bounded = run_plan({**params, "return_evictions": 3, "report_dir": str(tmp_path)})
    assert bounded["evictions"] == whole["evictions"][:3] and bounded["evictions_left_out"] == total - 3
    assert bounded["evictions_file"] == str(tmp_path / "plan.json")
    written = json.loads(Path(bounded["evictions_file"]).read_text())
    assert written["evictions"] == whole["evictions"] and written["seal"] == whole["seal"]
    assert bounded["seal"] == {key: value for key, value in whole["seal"].items() if key != "entries"}
    assert not any("return_evictions" in warning for warning in bounded["warnings"])


def test_without_a_report_the_result_warns_that_no_file_holds_the_rest(params: dict) -> None:
    bounded = run_plan({**params, "return_evictions": 2})
    total = bounded["summary"]["total"]
    assert len(bounded["evictions"]) == 2 and bounded["evictions_file"] is None
    assert f"the result holds the first 2 of {total} evictions and no plan.json was written" in bounded["warnings"][-1]
    counts = run_plan({**params, "return_evictions": "none"})  # asked for none: nothing to warn about
    assert "evictions" not in counts and counts["evictions_left_out"] == total
    assert not any("return_evictions" in warning for warning in counts["warnings"])


def test_a_plan_within_the_bound_is_returned_whole_with_its_full_seal(params: dict) -> None:
    default = run_plan(params)
    assert default["summary"]["total"] <= DEFAULT_RETURNED_EVICTIONS
    assert default["evictions_left_out"] == 0 and len(default["seal"]["entries"]) == len(default["evictions"])
