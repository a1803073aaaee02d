"""Which candidate the objective names: lowest spread under an eviction cap, fewest evictions reaching a spread, and
no candidate when none meets it; a skipped cycle, a plugin error or unplaced replacements never win, JMESPath included;
an expression naming an unknown figure fails before anything is planned."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import (
    DOCUMENTED_FIGURES,
    candidate_figures,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.objective import (
    Objective,
    choose,
    excluded_candidates,
)


def figures_of(evictions: int, final_cpu: float, skipped: bool = False) -> dict[str, Any]:
    return {"evictions": evictions, "cycle_skipped": skipped,
            "spread": {"before": {"cpu": 30.0}, "after_evictions": {"cpu": final_cpu}, "after_placement": None}}


@pytest.mark.parametrize(("objective", "best"), [
    ({"type": "lowest_spread"}, "wide"),
    ({"type": "lowest_spread", "max_evictions": 10}, "narrow"),
    ({"type": "fewest_evictions", "target_spread": 15}, "narrow"),
    ({"type": "fewest_evictions", "target_spread": 1}, None),
])
def test_the_objective_names_the_best_candidate(objective: dict[str, Any], best: str | None) -> None:
    candidates = [{"name": "none", **figures_of(0, 30.0)}, {"name": "narrow", **figures_of(8, 14.0)},
                  {"name": "wide", **figures_of(40, 5.0)}, {"name": "skipped", **figures_of(0, 0.0, skipped=True)}]
    name, reason = choose(Objective.from_options(objective), candidates)
    assert name == best, reason
    assert (f"{name} (" in reason) if best else reason.startswith("no candidate meets the objective")


EXCLUSIONS = [({"cycle_skipped": True}, "its cycle is skipped"), ({"plugin_errors": 2}, "2 plugin error(s)")]
OBJECTIVES = [{"type": "lowest_spread"}, {"type": "fewest_evictions", "target_spread": 50},
              {"type": "jmespath", "expression": "min_by(candidates, &evictions).name"},
              {"type": "jmespath", "expression": "candidates[0].name"}]


@pytest.mark.parametrize(("flaw", "reason"), EXCLUSIONS)
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_an_excluded_candidate_never_wins_and_the_reason_says_why(
        objective: dict[str, Any], flaw: dict[str, Any], reason: str) -> None:
    # the flawed candidate is listed first, with no evictions and the lowest spread: it would win every objective
    flawed = {"name": "flawed", **figures_of(0, 1.0), **flaw}
    candidates = [flawed, {"name": "sound", **figures_of(5, 10.0)}]
    name, why = choose(Objective.from_options(objective), candidates)
    assert name == "sound", why
    assert why.endswith(f"; excluded: flawed ({reason})")
    assert excluded_candidates(candidates) == [{"name": "flawed", "reasons": [reason]}]


@pytest.mark.parametrize("objective", OBJECTIVES[:2])
def test_fewer_replacements_with_nowhere_to_go_rank_before_any_spread_or_eviction_count(
        objective: dict[str, Any]) -> None:
    # stranded would win on spread and evictions, but 3 of its pods' replacements would stay Pending
    candidates = [{"name": "stranded", **figures_of(0, 1.0), "unplaced": 3},
                  {"name": "less-stranded", **figures_of(5, 10.0), "unplaced": 1},
                  {"name": "other", **figures_of(9, 20.0), "unplaced": 1}]
    name, why = choose(Objective.from_options(objective), candidates)
    assert name == "less-stranded"
    assert why.endswith("(5 evictions, final cpu spread 10.0, 1 replacement(s) with nowhere to go)")
    assert excluded_candidates(candidates) == []


def test_an_expression_sees_only_the_candidates_left() -> None:
    candidates = [{"name": "skipped", **figures_of(0, 1.0, skipped=True)}, {"name": "sound", **figures_of(5, 10.0)}]
    name, _why = choose(Objective.from_options({"type": "jmespath", "expression": "length(candidates) == `1` && "
                                                "candidates[0].name || `null`"}), candidates)
    assert name == "sound"


@pytest.mark.parametrize(("expression", "field", "closest"), [
    ("candidates[?evictionz < `3`] | [0].name", "evictionz", "evictions"),
    ("min_by(candidates, &evictionz).name", "evictionz", "evictions"),
    ("max_by(candidates, &spread.after_placment.cpu).name", "after_placment", "after_placement"),
    ("min_by(candidates, &most_pods_one_workload_losses).name", "most_pods_one_workload_losses",
     "most_pods_one_workload_loses"),
])
def test_an_unknown_field_fails_before_anything_naming_it_and_the_closest_figure(
        expression: str, field: str, closest: str) -> None:
    with pytest.raises(FleetError) as raised:
        Objective.from_options({"type": "jmespath", "expression": expression})
    message = str(raised.value)
    assert f"reads {field!r}, which is not a candidate figure; did you mean {closest!r}?" in message
    assert "use one of name, evictions, by_plugin" in message
    assert raised.value.user_details() == {"field": "objective.expression", "value": field}


@pytest.mark.parametrize("expression", [
    "candidates[?by_plugin.PodLifeTime > `0`] | [0].name",
    "min_by(candidates[?by_namespace.\"shop-1\" < `2`], &spread.after_placement.memory).name",
    "{best: min_by(candidates, &evictions)}.best.name",
    "candidates[?thresholds.low == `20` && !cycle_skipped].name | [0]",
])
def test_expressions_over_documented_figures_and_the_clusters_own_names_are_accepted(expression: str) -> None:
    Objective.from_options({"type": "jmespath", "expression": expression})


def test_a_syntax_error_fails_before_anything() -> None:
    with pytest.raises(FleetError, match=r"objective.expression: 'min_by\(' is not a valid JMESPath expression"):
        Objective.from_options({"type": "jmespath", "expression": "min_by("})


@pytest.mark.parametrize(("objective", "reads_spread"), [
    ({"type": "lowest_spread"}, True), ({"type": "fewest_evictions", "target_spread": 5}, True),
    ({"type": "jmespath", "expression": "min_by(candidates, &evictions).name"}, False),
    ({"type": "jmespath", "expression": "min_by(candidates, &spread.after_evictions.cpu).name"}, True),
])
def test_objectives_comparing_spreads_are_known(objective: dict[str, Any], reads_spread: bool) -> None:
    assert Objective.from_options(objective).reads_spread() is reads_spread


def test_every_documented_figure_is_a_figure_of_a_plan_and_in_the_modules_return_doc() -> None:
    import yaml
    from ansible_collections.descheduler.fleet.plugins.modules import whatif

    produced = set(candidate_figures({})) | {"name", "warnings", "thresholds", "operator_equivalent_of"}
    assert set(DOCUMENTED_FIGURES) == produced
    documented = " ".join(yaml.safe_load(whatif.RETURN)["candidates"]["description"])
    assert [figure for figure in DOCUMENTED_FIGURES if f"C({figure})" not in documented] == []
