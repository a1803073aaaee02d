"""A what-if as whatif.json, whatif.md and a self-contained whatif.html: the candidates side by side on one cluster,
the best one named, and each candidate's full plan report under ``<report_dir>/<candidate>/``. The templates
whatif.md and whatif.html lay it out."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    to_json,
    write_plan_report,
    write_report_files,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.scatter_chart import (
    ScatterChart,
    inputs_from_figures,
    scatter_chart,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import render
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import final_spread

WHATIF_FILES = {"json": "whatif.json", "markdown": "whatif.md", "html": "whatif.html"}
HEADERS = ("Candidate", "Evictions", "Workloads touched", "Most one workload loses", "VMs migrated",
           "Certain / possible (likely)", "CPU spread before", "CPU spread after", "Memory spread after", "Unplaced")


def write_whatif_report(result: Mapping[str, Any], plans: Mapping[str, dict], out_dir: str, *,
                        template_dir: Optional[str] = None) -> dict[str, Any]:
    """whatif.json, .md and .html in out_dir and each candidate's plan report in a directory of its own;
    ``template_dir`` holds templates that replace the shipped ones of the same name."""
    cluster = result.get("cluster")
    files: dict[str, Any] = write_report_files(out_dir, WHATIF_FILES, lambda: {
        "json": to_json(result), "markdown": render_markdown(result, template_dir=template_dir),
        "html": render_html(result, template_dir=template_dir)})
    files["plans"] = {name: write_plan_report(plan, os.path.join(out_dir, _directory(name)), cluster=cluster,
                                              template_dir=template_dir)
                      for name, plan in plans.items()}
    return files


def _directory(name: str) -> str:
    """A candidate's name as one safe path component."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "candidate"


def rows(result: Mapping[str, Any]) -> list[list[Any]]:
    excluded = {entry["name"] for entry in result.get("excluded") or []}
    return [[c["name"] + (" (best)" if c["name"] == result.get("best") else "")
             + (" (excluded)" if c["name"] in excluded else ""), c["evictions"],
             c["workloads_touched"], c["most_pods_one_workload_loses"], c["vms_to_migrate"], _certainty(c),
             _spread(c, "before", "cpu"), _spread(c, _final_state(c), "cpu"),
             _spread(c, _final_state(c), "memory"), "-" if c["unplaced"] is None else c["unplaced"]]
            for c in result.get("candidates") or []]


PARETO_HEADERS = ("Point", "Resources", "Low", "High", "Evictions", "Final spread", "KubeDescheduler equivalent",
                  "Its evictions", "Its final spread", "What its profile adds")


def pareto_rows(result: Mapping[str, Any]) -> list[list[Any]]:
    return [[p["name"], ", ".join(p["thresholds"]["resources"]), p["thresholds"]["low"],
             "-" if p["thresholds"]["high"] is None else p["thresholds"]["high"], p["evictions"], p["final_spread"],
             _operator_text(p.get("kubedescheduler")), *_equivalent_cells(p.get("operator_equivalent"))]
            for p in result.get("pareto") or []]


def _equivalent_cells(equivalent: Optional[Mapping[str, Any]]) -> list[Any]:
    """The operator equivalent planned as its own candidate: its evictions, final spread and what its profile adds."""
    if not equivalent:
        return ["-", "-", "-"]
    adds = ", ".join(f"{plugin}: {count}" for plugin, count in sorted(equivalent["adds"].items())) or "nothing"
    return [equivalent["evictions"], "-" if equivalent["final_spread"] is None else equivalent["final_spread"], adds]


def _operator_text(spec: Optional[Mapping[str, Any]]) -> str:
    if not spec:
        return "none (a DeschedulerPolicy only)"
    customizations = ", ".join(f"{k}: {v}" for k, v in (spec.get("profileCustomizations") or {}).items())
    return (f"{', '.join(spec.get('profiles') or [])} with {customizations} (interval "
            f"{spec.get('deschedulingIntervalSeconds')} s, {spec.get('mode')})")


def _certainty(candidate: Mapping[str, Any]) -> str:
    if candidate.get("certain") is None:
        return "-"
    likely = "" if candidate.get("likely") is None else f" ({candidate['likely']})"
    return f"{candidate['certain']} / {candidate['possible']}{likely}"


def _final_state(candidate: Mapping[str, Any]) -> str:
    return "after_placement" if candidate["spread"].get("after_placement") else "after_evictions"


def _spread(candidate: Mapping[str, Any], state: str, resource: str) -> str:
    value: Optional[float] = (candidate["spread"].get(state) or {}).get(resource)
    return "-" if value is None else f"{value:.2f}"


def _title(result: Mapping[str, Any]) -> str:
    return " — ".join(["What-if"] + [part for part in (result.get("cluster"), result.get("now")) if part])


def _verdict(result: Mapping[str, Any]) -> str:
    return result.get("best_reason") or ""


def render_markdown(result: Mapping[str, Any], *, template_dir: Optional[str] = None) -> str:
    return render("whatif.md", template_dir, **_context(result))


def render_html(result: Mapping[str, Any], *, template_dir: Optional[str] = None) -> str:
    return render("whatif.html", template_dir, **_context(result))


def candidates_chart(result: Mapping[str, Any], *, compact: bool = False) -> Optional[ScatterChart]:
    """The candidates as points, evictions against the final spread of the objective's resource, the threshold
    search's Pareto front drawn through its points and the chosen candidate ringed (report/scatter_chart.py)."""
    resource = str(as_mapping(result.get("objective")).get("resource") or "cpu")
    names = {"cpu": "CPU", "memory": "memory"}
    spread_name = names.get(resource, resource)
    excluded = [entry.get("name") for entry in result.get("excluded") or [] if isinstance(entry, Mapping)]
    inputs = inputs_from_figures([c for c in result.get("candidates") or [] if isinstance(c, Mapping)],
                                 lambda figures: _final_spread_or_none(figures, resource), excluded)
    front = [point.get("name") for point in result.get("pareto") or [] if isinstance(point, Mapping)]
    where = f" on {result['cluster']}" if result.get("cluster") else ""
    label = f"Candidates{where}: evictions against final {spread_name} spread"
    if compact:
        return scatter_chart(inputs, result.get("best"), front, label=label, spread_name=spread_name, width=360,
                             height=220, compact=True)
    return scatter_chart(inputs, result.get("best"), front, label=label, spread_name=spread_name)


def _final_spread_or_none(figures: Mapping[str, Any], resource: str) -> Optional[float]:
    try:
        return final_spread(figures, resource)
    except (KeyError, TypeError, AttributeError):  # a hand-made record without spreads still renders
        return None


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _context(result: Mapping[str, Any]) -> dict[str, Any]:
    return {"result": result, "title": _title(result), "verdict": _verdict(result), "headers": HEADERS,
            "chart": candidates_chart(result),
            "rows": rows(result), "pareto_headers": PARETO_HEADERS,
            "pareto_rows": pareto_rows(result) if result.get("pareto") else [],
            "warnings": [f"{c['name']}: {w}" for c in result.get("candidates") or [] for w in c.get("warnings") or []]}
