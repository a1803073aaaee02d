"""The flow one call of the whatif module follows: check every candidate, read the cluster once, plan each candidate
on that one read at one time, put the figures side by side and name the candidate that meets the objective.

Each candidate's plan is computed exactly as the plan module computes it (the same snapshot, time, samples, seed
and placement request), so its figures are those of a separate plan run. Shared between them: the read, and what
does not depend on the policy or is the same for candidates that agree up to some plugin (engine/shared_cycle.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused, keep_until_exit
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import moment_of
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.shared_cycle import SharedCycles
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import (
    PlanRequestError,
    kubedescheduler_field_warnings,
    placement_request,
    plan_policy,
    read_input,
    rendered_policy,
    why_nothing_may_be_evicted,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan_metrics import MetricsReads
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import candidate_figures, final_spread
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.objective import (
    Objective,
    choose,
    excluded_candidates,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.report import write_whatif_report
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.thresholds import (
    added_evictions,
    operator_candidates,
    pareto_front,
    threshold_candidates,
)

POLICY_OPTIONS = {"policy": "DeschedulerPolicy", "kubedescheduler": "KubeDescheduler"}
SPREAD_WITHOUT_PLACEMENT = ("placement: false: the objective compares spreads with the evicted pods simply gone, "
                            "ignoring where their replacements land (which rewards evicting more); leave placement "
                            "unset or true to measure the spread after placement")


def run_whatif(params: Mapping[str, Any], process_exits_after: bool = False) -> dict[str, Any]:
    """The whatif module's work. ``process_exits_after``: as run_plan's (runner/plan.py), the snapshot is then left
    to the operating system."""
    candidates = read_candidates(params.get("candidates"), allow_none=bool(params.get("threshold_search")))
    searched = _searched(params.get("threshold_search"), {c["name"] for c in candidates})
    candidates += searched + _operator_equivalents(searched, {c["name"] for c in candidates})
    objective = Objective.from_options(params.get("objective"))
    params, placement_note = _with_placement(params, objective)
    placement = placement_request(params)
    warnings = [warning for candidate in candidates if candidate["kind"] == "KubeDescheduler"
                for warning in kubedescheduler_field_warnings(candidate["policy"], params.get("field_validation"),
                                                              option=f"candidates[{candidate['name']}]"
                                                                     ".kubedescheduler")]
    now = params.get("now") or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # one time for every candidate
    snapshot, read_warnings, source, identity, api_client = read_input(params, placement)
    with gc_paused():  # while the snapshot is alive, no collection walks it between candidates (see run_plan)
        plans = plan_candidates(snapshot, candidates, now, params, placement, api_client)
    if process_exits_after:
        keep_until_exit(snapshot)
    del snapshot  # not read after the plans
    figures = [{"name": name, **candidate_figures(plan), "warnings": _plan_warnings(plan)}
               for name, plan in plans.items()]
    for entry, candidate in zip(figures, candidates, strict=True):
        entry.update({key: candidate[key] for key in ("thresholds", "operator_equivalent_of") if key in candidate})
    best, reason = choose(objective, figures)
    if placement_note:
        reason += f" ({placement_note})"
    result = {"now": now, "source": source, "cluster_identity": identity.as_dict(), "candidates": figures,
              "objective": objective.__dict__, "best": best, "best_reason": reason,
              "excluded": excluded_candidates(figures), "placement": placement is not None,
              "warnings": read_warnings + warnings + ([SPREAD_WITHOUT_PLACEMENT] if placement_note else [])}
    if searched:
        result["pareto"] = _pareto(figures, searched, objective.resource)
    if params.get("cluster_name"):
        result["cluster"] = params["cluster_name"]
    if params.get("report_dir"):
        with gc_paused():
            result["report_files"] = write_whatif_report(result, plans, params["report_dir"],
                                                         template_dir=params.get("report_template_dir"))
    return result


def plan_candidates(snapshot: Snapshot, candidates: list[dict[str, Any]], now: str, params: Mapping[str, Any],
                    placement: Any, api_client: Any) -> dict[str, dict]:
    """Each candidate's plan on the one read, by name, in the candidates' order; live metrics are read once."""
    shared = _shared_work(snapshot, candidates, now, params)
    reads = MetricsReads()
    plans = {}
    for index, candidate in enumerate(candidates):
        try:
            plans[candidate["name"]] = plan_policy(snapshot, candidate["policy"], candidate["kind"], now, params,
                                                   placement, api_client, shared, reads)
        except EngineError as error:
            raise PlanRequestError(f"candidates[{index}] ({candidate['name']}): {error}") from error
    return plans


def _shared_work(snapshot: Snapshot, candidates: list[dict[str, Any]], now: str,
                 params: Mapping[str, Any]) -> SharedCycles:
    """What the candidates' plans share (engine/shared_cycle.py), told which policies come, in order, so that it
    keeps the cycle states where one departs from an earlier one. A policy that does not load is left out here:
    its own plan reports the error."""
    shared = SharedCycles(snapshot, moment_of(now))
    policies = []
    for candidate in candidates:
        try:
            document = rendered_policy(snapshot, candidate["policy"], candidate["kind"], params)
            policies.append(load_policy(document, snapshot.priority_classes))
        except EngineError:
            continue
    shared.expect(policies)
    return shared


def _with_placement(params: Mapping[str, Any], objective: Objective) -> tuple[Mapping[str, Any], str]:
    """The params with placement decided: unset, it is on when the objective compares spreads (a spread without the
    replacements rewards evicting). Turned off for such an objective, the note the result carries says so."""
    reads_spread = objective.reads_spread()
    if params.get("placement") is None:
        return {**params, "placement": reads_spread}, ""
    if reads_spread and not params["placement"]:
        return params, "the spread ignores where the evicted pods go: placement is false"
    return params, ""


def _operator_equivalents(searched: list[dict[str, Any]], taken: set[str]) -> list[dict[str, Any]]:
    """The searched points' operator equivalents, each a candidate planned as the operator would run it."""
    equivalents = operator_candidates(searched)
    clash = sorted(taken & {c["name"] for c in equivalents})
    if clash:
        raise PlanRequestError(f"candidates: {', '.join(clash)} is also the name of a threshold_search point's "
                               "operator equivalent; rename the candidate")
    return equivalents


def _searched(search: Any, taken: set[str]) -> list[dict[str, Any]]:
    """The candidates of a threshold search (none without one); their names must not be the user's."""
    if not search:
        return []
    searched = threshold_candidates(search)
    clash = sorted(taken & {c["name"] for c in searched})
    if clash:
        raise PlanRequestError(f"candidates: {', '.join(clash)} is also the name of a threshold_search point; "
                               "rename the candidate")
    return searched


def _pareto(figures: list[dict[str, Any]], searched: list[dict[str, Any]], resource: str) -> list[dict[str, Any]]:
    """The front among the searched points: each with its thresholds, figures and operator equivalent (its spec and
    the figures of planning that spec, with the evictions of the plugins its profile adds)."""
    by_name = {entry["name"]: entry for entry in figures}
    points = {candidate["name"]: candidate for candidate in searched}
    # among equal points the first listed stands for them: list those the operator can express first
    preferred = sorted(searched, key=lambda candidate: candidate["operator_spec"] is None)
    front = pareto_front([by_name[c["name"]] for c in preferred], resource)
    return [{"name": name, "thresholds": by_name[name]["thresholds"], "evictions": by_name[name]["evictions"],
             "final_spread": final_spread(by_name[name], resource), "kubedescheduler": points[name]["operator_spec"],
             "operator_equivalent": _equivalent_figures(points[name], by_name, resource)} for name in front]


def _equivalent_figures(point: Mapping[str, Any], by_name: Mapping[str, Mapping[str, Any]],
                        resource: str) -> Any:
    equivalent = next((entry for entry in by_name.values() if entry.get("operator_equivalent_of") == point["name"]),
                      None)
    if equivalent is None:
        return None
    return {"name": equivalent["name"], "evictions": equivalent["evictions"],
            "final_spread": final_spread(equivalent, resource), "by_plugin": equivalent["by_plugin"],
            "adds": added_evictions(point["policy"], equivalent), "cycle_skipped": equivalent["cycle_skipped"]}


def read_candidates(value: Any, allow_none: bool = False) -> list[dict[str, Any]]:
    """Each candidate's name, policy and kind; every mistake is named before anything is read."""
    if allow_none and not value:
        return []
    if not isinstance(value, list) or not value:
        raise PlanRequestError("candidates: give a list of candidates, each {name, policy} or {name, kubedescheduler}"
                               " (or a threshold_search)")
    candidates, seen = [], set()
    for index, entry in enumerate(value):
        where = f"candidates[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise PlanRequestError(f"{where}: needs a name (a non-empty string) and one of policy, kubedescheduler")
        name = entry["name"]
        if name in seen:
            raise PlanRequestError(f"{where}.name: {name!r} is used twice; give each candidate its own name")
        seen.add(name)
        given = [option for option in POLICY_OPTIONS if entry.get(option) is not None]
        if len(given) != 1:
            raise PlanRequestError(f"{where} ({name}): give exactly one of policy (a DeschedulerPolicy) or "
                                   f"kubedescheduler (a KubeDescheduler spec), got {', '.join(given) or 'neither'}")
        unknown = sorted(set(entry) - {"name", *POLICY_OPTIONS})
        if unknown:
            raise PlanRequestError(f"{where} ({name}): unknown key(s) {', '.join(unknown)}; a candidate has name "
                                   "and policy or kubedescheduler")
        if not isinstance(entry[given[0]], Mapping):
            raise PlanRequestError(f"{where}.{given[0]} ({name}): expected a mapping, got {entry[given[0]]!r}")
        candidates.append({"name": name, "policy": dict(entry[given[0]]), "kind": POLICY_OPTIONS[given[0]]})
    return candidates


def _plan_warnings(plan: Mapping[str, Any]) -> list[str]:
    no_op = why_nothing_may_be_evicted(plan)
    return list(plan.get("warnings") or []) + [warning for found in no_op.values() for warning in found]
