"""The what-if across a fleet: whatif-fleet.json, whatif-fleet.md and a self-contained whatif-fleet.html.

Each cluster entry is what the whatif role records from the whatif module: {"cluster", "ok", "error", "best",
"best_reason", "candidates", "report_dir", "cluster_identity"}. The summary puts the candidates side by side per
cluster and over the fleet (totals per candidate, the clusters where it is the best), names each cluster's best
candidate and why, lists the failed clusters with their error and links each cluster's whatif.html. The templates
whatif_fleet.md and whatif_fleet.html lay it out, rendered like every other report (report/templating.py), so
``template_dir`` replaces them as it replaces the others. No Ansible imports.
"""

from __future__ import annotations

import statistics
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import href, report_link
from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import markdown_text
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import to_json, write_report_files
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_bool,
    as_count,
    as_dict,
    as_list,
    as_number,
    as_text,
    dicts_in,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import render
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import SPREAD_RESOURCES, final_spread
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.report import (
    HEADERS,
    WHATIF_FILES,
    candidates_chart,
    rows,
)

WHATIF_FLEET_FILES = {"json": "whatif-fleet.json", "markdown": "whatif-fleet.md", "html": "whatif-fleet.html"}
FORMAT_VERSION = 1
TOTAL_HEADERS = ("Candidate", "Best on", "Planned on", "Evictions", "VMs migrated", "PDB-blocked",
                 "Workloads touched", "Most one workload loses", "Unplaced", "Final CPU spread (mean / max)",
                 "Final memory spread (mean / max)", "Cycle skipped on")
BEST_HEADERS = ("Cluster", "Best candidate", "Why", "Report")
NONE = "—"


# --- data -------------------------------------------------------------------------------------------------------------


def summarize_whatif_fleet(clusters: list[dict], *, out_dir: Optional[str] = None) -> dict:
    """The fleet what-if as data: one row per cluster (its candidates' figures, best candidate and why, or its error;
    a link to its whatif.html), one total per candidate over the clusters that planned it, and the counts.

    clusters_ok + clusters_failed == clusters_total; clusters_without_best counts the compared clusters where no
    candidate met the objective. Links are relative to ``out_dir`` when given (where the summary is written).
    """
    rows_ = [_cluster_row(entry, index, out_dir) for index, entry in enumerate(as_list(clusters), start=1)]
    names = _candidate_names(rows_)
    ok = [row for row in rows_ if row["ok"]]
    return {
        "format_version": FORMAT_VERSION,
        "kind": "whatif",
        "clusters": rows_,
        "candidates": [_candidate_total(name, ok) for name in names],
        "clusters_total": len(rows_),
        "clusters_ok": len(ok),
        "clusters_failed": len(rows_) - len(ok),
        "clusters_without_best": sum(1 for row in ok if not row["best"]),
    }


def _cluster_row(entry: Any, index: int, out_dir: Optional[str]) -> dict:
    if not isinstance(entry, dict):
        return _failed_row(f"#{index}", "not a cluster record (expected a mapping)")
    name = as_text(entry.get("cluster")) or f"#{index}"
    if not as_bool(entry.get("ok")):
        return _failed_row(name, as_text(entry.get("error")) or "unknown error")
    report_dir = entry.get("report_dir")
    return {
        "cluster": name, "ok": True, "error": None,
        "best": as_text(entry.get("best")) or None, "best_reason": as_text(entry.get("best_reason")),
        "candidates": [_candidate(figures) for figures in dicts_in(entry.get("candidates"))],
        "cluster_identity": entry.get("cluster_identity"),
        "report_dir": report_dir if isinstance(report_dir, str) and report_dir else None,
        "report": report_link(report_dir, out_dir, WHATIF_FILES["html"]),
    }


def _failed_row(name: str, error: str) -> dict:
    return {"cluster": name, "ok": False, "error": error, "best": None, "best_reason": None, "candidates": [],
            "cluster_identity": None, "report_dir": None, "report": None}


def _candidate(figures: dict) -> dict:
    """A candidate's figures as the whatif module returns them, the missing ones filled in (a hand-made record
    still renders): counts 0, spreads and the placement-only figures null."""
    spread = as_dict(figures.get("spread"))
    return {
        **figures,
        "name": as_text(figures.get("name")) or "?",
        **{key: as_count(figures.get(key)) for key in ("evictions", "workloads_touched",
                                                       "most_pods_one_workload_loses", "vms_to_migrate",
                                                       "spared_by_pdb")},
        "certain": figures.get("certain"), "possible": figures.get("possible"), "likely": figures.get("likely"),
        "spread": {state: _resources(spread.get(state)) for state in ("before", "after_evictions", "after_placement")},
        "unplaced": None if figures.get("unplaced") is None else as_count(figures.get("unplaced")),
        "cycle_skipped": as_bool(figures.get("cycle_skipped")),
    }


def _resources(measured: Any) -> Optional[dict]:
    if not isinstance(measured, dict):
        return None
    return {resource: as_number(measured.get(resource)) for resource in SPREAD_RESOURCES}


def _candidate_names(cluster_rows: list[dict]) -> list[str]:
    """Every candidate named by a cluster, in the order they are first listed."""
    names: dict[str, None] = {}
    for row in cluster_rows:
        names.update((candidate["name"], None) for candidate in row["candidates"])
    return list(names)


def _candidate_total(name: str, ok_rows: list[dict]) -> dict:
    """One candidate over the fleet: sums of its counts, the most pods one workload loses anywhere, its final spread
    (mean and max over the clusters) and the clusters where it is the best or where its cycle is skipped."""
    planned = [(row["cluster"], candidate) for row in ok_rows for candidate in row["candidates"]
               if candidate["name"] == name]
    figures = [candidate for _cluster, candidate in planned]
    unplaced = [candidate["unplaced"] for candidate in figures if candidate["unplaced"] is not None]
    return {
        "name": name,
        "clusters": len(planned),
        "best_on": [row["cluster"] for row in ok_rows if row["best"] == name],
        **{key: sum(candidate[key] for candidate in figures)
           for key in ("evictions", "vms_to_migrate", "spared_by_pdb", "workloads_touched")},
        "most_pods_one_workload_loses": max((c["most_pods_one_workload_loses"] for c in figures), default=0),
        "unplaced": sum(unplaced) if unplaced else None,
        "final_spread": {resource: _mean_and_max([final_spread(c, resource) for c in figures])
                         for resource in SPREAD_RESOURCES},
        "cycle_skipped_on": [cluster for cluster, candidate in planned if candidate["cycle_skipped"]],
    }


def _mean_and_max(values: list[Optional[float]]) -> dict[str, Optional[float]]:
    known = [value for value in values if value is not None]
    if not known:
        return {"mean": None, "max": None}
    return {"mean": round(statistics.fmean(known), 2), "max": max(known)}


# --- files ------------------------------------------------------------------------------------------------------------


def write_whatif_fleet_summary(clusters: list[dict], out_dir: str, *,
                               template_dir: Optional[str] = None) -> dict[str, str]:
    """Write whatif-fleet.json, whatif-fleet.md and whatif-fleet.html into out_dir (created if needed; every file
    rendered before any is written, each written atomically); ``template_dir`` holds templates that replace the
    shipped ones of the same name. Returns {"json": path, "markdown": path, "html": path}."""
    fleet = summarize_whatif_fleet(clusters, out_dir=out_dir)
    return write_report_files(out_dir, WHATIF_FLEET_FILES, lambda: {
        "json": to_json(fleet), "markdown": render_whatif_fleet_markdown(fleet, template_dir=template_dir),
        "html": render_whatif_fleet_html(fleet, template_dir=template_dir)})


# --- wording ----------------------------------------------------------------------------------------------------------


def fleet_line(fleet: dict) -> str:
    wins = "; ".join(f"{total['name']} best on {len(total['best_on'])}" for total in fleet["candidates"])
    without = fleet["clusters_without_best"]
    return (f"{fleet['clusters_total']} clusters: {fleet['clusters_ok']} compared, {fleet['clusters_failed']} failed"
            + (f", {without} where no candidate meets the objective" if without else "") + ". "
            + (f"{len(fleet['candidates'])} candidates: {wins}. " if fleet["candidates"] else "")
            + "A what-if only plans: no pod was evicted.")


def evictions_text(count: int) -> str:
    return f"{count} eviction" + ("" if count == 1 else "s")


def _spread_text(value: Optional[float]) -> str:
    return NONE if value is None else f"{value:.2f}"


def _mean_max_text(spread: dict) -> str:
    return NONE if spread["mean"] is None else f"{spread['mean']:.2f} / {spread['max']:.2f}"


def _clusters_text(names: list[str]) -> str:
    return f"{len(names)} ({', '.join(names)})" if names else "0"


def total_rows(fleet: dict) -> list[list[Any]]:
    return [[t["name"], _clusters_text(t["best_on"]), t["clusters"], t["evictions"], t["vms_to_migrate"],
             t["spared_by_pdb"], t["workloads_touched"], t["most_pods_one_workload_loses"],
             NONE if t["unplaced"] is None else t["unplaced"], _mean_max_text(t["final_spread"]["cpu"]),
             _mean_max_text(t["final_spread"]["memory"]), ", ".join(t["cycle_skipped_on"]) or NONE]
            for t in fleet["candidates"]]


def _matrix_cell(row: dict, name: str) -> Optional[dict]:
    """One cluster's figures for one candidate, as the side-by-side table shows them (None: not planned there)."""
    for candidate in row["candidates"]:
        if candidate["name"] == name:
            return {"evictions": candidate["evictions"], "spread": _spread_text(final_spread(candidate, "cpu")),
                    "best": name == row["best"], "skipped": candidate["cycle_skipped"]}
    return None


def _matrix_text(cell: Optional[dict]) -> str:
    if cell is None:
        return NONE
    text = f"{evictions_text(cell['evictions'])}, CPU spread {cell['spread']}"
    return text + (" (cycle skipped)" if cell["skipped"] else "") + (" **best**" if cell["best"] else "")


# --- rendering --------------------------------------------------------------------------------------------------------


def render_whatif_fleet_markdown(fleet: dict, *, template_dir: Optional[str] = None) -> str:
    context = _context(fleet)
    names = [total["name"] for total in fleet["candidates"]]
    best_rows = [_markdown_best_row(row) for row in fleet["clusters"]]
    matrix = [[_markdown_link(row), *(_matrix_text(_matrix_cell(row, name)) for name in names)]
              for row in fleet["clusters"] if row["ok"]]
    return render("whatif_fleet.md", template_dir, **context, markdown_best_rows=best_rows, markdown_matrix=matrix)


def render_whatif_fleet_html(fleet: dict, *, template_dir: Optional[str] = None) -> str:
    names = [total["name"] for total in fleet["candidates"]]
    matrix = [[{"cluster": row["cluster"], "link": _href(row)}, *(_matrix_cell(row, name) for name in names)]
              for row in fleet["clusters"] if row["ok"]]
    return render("whatif_fleet.html", template_dir, **_context(fleet), matrix=matrix)


def _context(fleet: dict) -> dict[str, Any]:
    """What both templates receive: ``fleet`` (the data), the line under the title, the totals' cells, and per
    compared cluster its section (link, best, why, the candidates' cells as whatif.html shows them)."""
    failed = [row for row in fleet["clusters"] if not row["ok"]]
    sections = [{"cluster": row["cluster"], "anchor": f"cluster-{number}", "link": _href(row), "best": row["best"],
                 "best_reason": row["best_reason"], "rows": rows(row), "chart": candidates_chart(row, compact=True)}
                for number, row in enumerate(fleet["clusters"], start=1) if row["ok"]]
    return {"fleet": fleet, "fleet_line": fleet_line(fleet), "total_headers": TOTAL_HEADERS,
            "totals": total_rows(fleet), "best_headers": BEST_HEADERS,
            "best_rows": [dict(row, link=_href(row)) for row in fleet["clusters"]],
            "matrix_headers": ["Cluster", *(total["name"] for total in fleet["candidates"])],
            "cluster_headers": HEADERS, "sections": sections, "failed": failed,
            "failed_names": [row["cluster"] for row in failed]}


def _href(row: dict) -> Optional[str]:
    return href(row["report"]) if row["report"] else None


def _markdown_link(row: dict) -> str:
    """The cluster's name (escaped here) linked to its whatif.html when it has one."""
    name = markdown_text(row["cluster"]).replace("[", "\\[").replace("]", "\\]")
    return f"[{name}]({_href(row)})" if row["report"] else name


def _markdown_best_row(row: dict) -> list[str]:
    if not row["ok"]:
        return [_markdown_link(row), "**FAILED**", markdown_text(row["error"])]
    return [_markdown_link(row), markdown_text(row["best"] or "none"), markdown_text(row["best_reason"])]
