"""Which candidate best meets the objective a team states, per cluster.

- ``lowest_spread``: the lowest final spread of ``resource``, among candidates with at most ``max_evictions``;
- ``fewest_evictions``: the fewest evictions, among candidates whose final spread of ``resource`` is at most
  ``target_spread``;
- ``jmespath``: an expression over ``{"candidates": [{"name": ..., <figures>}, ...]}`` that returns a name.

Ties go to fewer evictions, then the lower spread, then the candidate listed first. No candidate meeting the
objective is an answer too (``None`` with the reason), not an error.

A candidate whose cycle is skipped or whose plugins fail is excluded from every objective before it is evaluated,
the expression's included (``excluded_candidates`` says which and why). Replacements with nowhere to go rank first:
``lowest_spread`` and ``fewest_evictions`` prefer fewer of them to any spread or eviction count (a Pending pod is
counted as gone by the spread after placement, which flatters the candidate); an expression reads ``unplaced``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.expression import check_fields, fields_named
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import (
    SPREAD_RESOURCES,
    exclusion_reasons,
    final_spread,
)

OBJECTIVES = ("lowest_spread", "fewest_evictions", "jmespath")


class ObjectiveError(FleetError, ValueError):
    """An objective that cannot be evaluated (names the option and the fix)."""


@dataclass(frozen=True)
class Objective:
    type: str = "lowest_spread"
    resource: str = "cpu"
    max_evictions: Optional[int] = None
    target_spread: Optional[float] = None
    expression: Optional[str] = None

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]]) -> Objective:
        given = {key: value for key, value in (options or {}).items() if value is not None}
        objective = cls(**given)
        objective.check()
        return objective

    def check(self) -> None:
        if self.type not in OBJECTIVES:
            raise ObjectiveError(f"objective.type: {self.type!r} is not one of {', '.join(OBJECTIVES)}")
        if self.resource not in SPREAD_RESOURCES:
            raise ObjectiveError(f"objective.resource: {self.resource!r}; use one of {', '.join(SPREAD_RESOURCES)}")
        if self.type == "fewest_evictions" and self.target_spread is None:
            raise ObjectiveError("objective.target_spread: fewest_evictions needs the spread to reach (the standard "
                                 "deviation of the nodes' requested percent, for example 10)")
        if self.type == "jmespath" and not self.expression:
            raise ObjectiveError("objective.expression: jmespath needs an expression that returns a candidate "
                                 "name, for example \"min_by(candidates, &evictions).name\"")
        if self.type == "jmespath":
            check_fields(str(self.expression))

    def reads_spread(self) -> bool:
        """Whether the objective compares spreads (then placement decides it: the replacements land somewhere)."""
        if self.type == "jmespath":
            return "spread" in fields_named(str(self.expression))
        return True

    def describe(self) -> str:
        if self.type == "lowest_spread":
            cap = "" if self.max_evictions is None else f" with at most {self.max_evictions} evictions"
            return f"lowest {self.resource} spread{cap}"
        if self.type == "fewest_evictions":
            return f"fewest evictions reaching a {self.resource} spread of at most {self.target_spread}"
        return f"jmespath {self.expression}"


def excluded_candidates(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates no objective may choose, each with its name and reasons."""
    return [{"name": c["name"], "reasons": reasons} for c in candidates if (reasons := exclusion_reasons(c))]


def choose(objective: Objective, candidates: list[dict[str, Any]]) -> tuple[Optional[str], str]:
    """The best candidate's name (None when none meets the objective) and why. ``candidates``: name + figures.
    Excluded candidates (excluded_candidates) are filtered out first and the reason says so."""
    excluded = excluded_candidates(candidates)
    left_out = {entry["name"] for entry in excluded}
    eligible = [c for c in candidates if c["name"] not in left_out]
    if objective.type == "jmespath":
        best, reason = _by_expression(objective, eligible)
    else:
        best, reason = _ranked(objective, eligible)
    if excluded:
        reason += "; excluded: " + "; ".join(f"{e['name']} ({', '.join(e['reasons'])})" for e in excluded)
    return best, reason


def _ranked(objective: Objective, candidates: list[dict[str, Any]]) -> tuple[Optional[str], str]:
    resource = objective.resource
    scored = [(c, final_spread(c, resource)) for c in candidates]
    scored = [(c, value) for c, value in scored if value is not None]
    if objective.type == "lowest_spread":
        eligible = [(c, v) for c, v in scored
                    if objective.max_evictions is None or c["evictions"] <= objective.max_evictions]
        ranked = sorted(eligible, key=lambda item: (_unplaced(item[0]), item[1], item[0]["evictions"]))
    else:
        eligible = [(c, v) for c, v in scored if v <= float(objective.target_spread or 0)]
        ranked = sorted(eligible, key=lambda item: (_unplaced(item[0]), item[0]["evictions"], item[1]))
    if not ranked:
        return None, f"no candidate meets the objective ({objective.describe()})"
    best, value = ranked[0]  # a stable sort keeps equals in order: the candidate listed first wins
    unplaced = f", {_unplaced(best)} replacement(s) with nowhere to go" if _unplaced(best) else ""
    return best["name"], (f"{objective.describe()}: {best['name']} ({best['evictions']} evictions, final "
                          f"{resource} spread {value}{unplaced})")


def _unplaced(candidate: Mapping[str, Any]) -> int:
    return int(candidate.get("unplaced") or 0)


def _by_expression(objective: Objective, candidates: list[dict[str, Any]]) -> tuple[Optional[str], str]:
    import jmespath
    from jmespath.exceptions import JMESPathError

    names = [c["name"] for c in candidates]
    try:
        found = jmespath.search(str(objective.expression), {"candidates": candidates})
    except JMESPathError as error:  # parsed and its fields checked before: a type error over the figures
        raise ObjectiveError(f"objective.expression: {objective.expression!r} cannot be evaluated over the "
                             f"candidates' figures: {error}") from error
    if found is None:
        return None, f"no candidate meets the objective ({objective.describe()})"
    if found not in names:
        raise ObjectiveError(f"objective.expression: {objective.expression!r} returned {found!r}, not a candidate "
                             f"name ({', '.join(names)}); end it with .name")
    return str(found), f"{objective.describe()}: {found}"
