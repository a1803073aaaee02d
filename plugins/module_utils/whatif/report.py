"""A what-if as whatif.json, whatif.md and a self-contained whatif.html: the candidates side by side on one cluster,
the best one named, and each candidate's full plan report under ``<report_dir>/<candidate>/``."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import element, page, table
from ansible_collections.descheduler.fleet.plugins.module_utils.report.markdown import markdown_table
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    to_json,
    write_atomically,
    write_plan_report,
)

WHATIF_FILES = {"json": "whatif.json", "markdown": "whatif.md", "html": "whatif.html"}
HEADERS = ("Candidate", "Evictions", "Workloads touched", "Most one workload loses", "VMs migrated",
           "Certain / possible", "CPU spread before", "CPU spread after", "Memory spread after", "Unplaced")


def write_whatif_report(result: Mapping[str, Any], plans: Mapping[str, dict], out_dir: str) -> dict[str, Any]:
    os.makedirs(out_dir, exist_ok=True)
    cluster = result.get("cluster")
    contents = {"json": to_json(result), "markdown": render_markdown(result), "html": render_html(result)}
    files: dict[str, Any] = {kind: os.path.join(out_dir, name) for kind, name in WHATIF_FILES.items()}
    for kind, text in contents.items():
        write_atomically(files[kind], text)
    files["plans"] = {name: write_plan_report(plan, os.path.join(out_dir, _directory(name)), cluster=cluster)
                      for name, plan in plans.items()}
    return files


def _directory(name: str) -> str:
    """A candidate's name as one safe path component."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "candidate"


def rows(result: Mapping[str, Any]) -> list[list[Any]]:
    return [[c["name"] + (" (best)" if c["name"] == result.get("best") else ""), c["evictions"],
             c["workloads_touched"], c["most_pods_one_workload_loses"], c["vms_to_migrate"], _certainty(c),
             _spread(c, "before", "cpu"), _spread(c, _final_state(c), "cpu"),
             _spread(c, _final_state(c), "memory"), "-" if c["unplaced"] is None else c["unplaced"]]
            for c in result.get("candidates") or []]


PARETO_HEADERS = ("Point", "Resources", "Low", "High", "Evictions", "Final spread", "KubeDescheduler equivalent")


def pareto_rows(result: Mapping[str, Any]) -> list[list[Any]]:
    return [[p["name"], ", ".join(p["thresholds"]["resources"]), p["thresholds"]["low"],
             "-" if p["thresholds"]["high"] is None else p["thresholds"]["high"], p["evictions"], p["final_spread"],
             _operator_text(p.get("kubedescheduler"))] for p in result.get("pareto") or []]


def _operator_text(spec: Optional[Mapping[str, Any]]) -> str:
    if not spec:
        return "none (a DeschedulerPolicy only)"
    customizations = ", ".join(f"{k}: {v}" for k, v in (spec.get("profileCustomizations") or {}).items())
    return f"{', '.join(spec.get('profiles') or [])} with {customizations}"


def _certainty(candidate: Mapping[str, Any]) -> str:
    if candidate.get("certain") is None:
        return "-"
    return f"{candidate['certain']} / {candidate['possible']}"


def _final_state(candidate: Mapping[str, Any]) -> str:
    return "after_placement" if candidate["spread"].get("after_placement") else "after_evictions"


def _spread(candidate: Mapping[str, Any], state: str, resource: str) -> str:
    value: Optional[float] = (candidate["spread"].get(state) or {}).get(resource)
    return "-" if value is None else f"{value:.2f}"


def _title(result: Mapping[str, Any]) -> str:
    return " — ".join(["What-if"] + [part for part in (result.get("cluster"), result.get("now")) if part])


def _verdict(result: Mapping[str, Any]) -> str:
    return result.get("best_reason") or ""


def render_markdown(result: Mapping[str, Any]) -> str:
    lines = [f"# {_title(result)}", "", f"**Best:** {_verdict(result)}", "",
             "Spread: the standard deviation of the nodes' requested share (percent) over schedulable nodes; "
             "\"after\" is after placement when previewed, else after the evictions.", "",
             markdown_table(HEADERS, rows(result))]
    if result.get("pareto"):
        lines += ["", "## Threshold search: Pareto front", "",
                  "No other point of the search is at least as good on both evictions and final spread and better "
                  "on one.", "", markdown_table(PARETO_HEADERS, pareto_rows(result))]
    warnings = [f"- {c['name']}: {w}" for c in result.get("candidates") or [] for w in c.get("warnings") or []]
    if warnings:
        lines += ["", "## Warnings", "", *warnings]
    return "\n".join(lines) + "\n"


def render_html(result: Mapping[str, Any]) -> str:
    body = [element("h1", _title(result)), element("p", [element("strong", "Best: "), _verdict(result)]),
            table(HEADERS, rows(result), numeric=tuple(range(1, len(HEADERS))))]
    if result.get("pareto"):
        body += [element("h2", "Threshold search: Pareto front"),
                 table(PARETO_HEADERS, pareto_rows(result), numeric=(2, 3, 4, 5))]
    warnings = [f"{c['name']}: {w}" for c in result.get("candidates") or [] for w in c.get("warnings") or []]
    if warnings:
        body += [element("h2", "Warnings"), element("ul", [element("li", w) for w in warnings])]
    return str(page(_title(result), body))
