"""The fleet summary of a dry run: one row per cluster (fleet-summary.json, .md and a self-contained .html).

Each cluster entry is what the dry_run role records: {"cluster", "ok", "error", "plan", "report_dir"}; "plan" may be
the whole plan or only some of its parts (the summary). The templates fleet.md and fleet.html lay it out. No Ansible
imports; Jinja2.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Optional
from urllib.parse import quote

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import markdown_text
from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import mini_bar_fill
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    PLAN_FILES,
    read_plan,
    to_json,
    write_report_files,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_scale import limits_reached
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_bool,
    as_count,
    as_dict,
    as_list,
    as_text,
    ranked,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import render

FLEET_FILES = {"json": "fleet-summary.json", "markdown": "fleet-summary.md", "html": "fleet-summary.html"}
FORMAT_VERSION = 1
TOP = 3
STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_SKIPPED = "skipped-cycle"
ROW_TONES = {STATUS_FAILED: "failed", STATUS_SKIPPED: "skipped"}


# --- data -------------------------------------------------------------------------------------------------------------


def summarize_fleet(clusters: list[dict], *, out_dir: Optional[str] = None) -> dict:
    """The fleet table as data: one row per cluster (status ok/failed/skipped-cycle, evictions in total and by plugin,
    top namespaces and owners, limits hit, error and warning counts, link to its report) and the fleet totals.

    The statuses partition the fleet: clusters_ok + clusters_failed + clusters_skipped == clusters_total. Links are
    relative to ``out_dir`` when given (where the summary is written), else the report's path as recorded.
    """
    rows = [_cluster_row(entry, index, out_dir) for index, entry in enumerate(as_list(clusters), start=1)]
    statuses = Counter(row["status"] for row in rows)
    by_plugin: Counter = Counter()
    for row in rows:
        by_plugin.update(row["by_plugin"])
    return {
        "format_version": FORMAT_VERSION,
        "clusters": rows,
        "clusters_total": len(rows),
        "clusters_ok": statuses[STATUS_OK],
        "clusters_failed": statuses[STATUS_FAILED],
        "clusters_skipped": statuses[STATUS_SKIPPED],
        "evictions_total": sum(row["evictions"] or 0 for row in rows),
        "evictions_by_plugin": dict(ranked(by_plugin.items())),
        "vms_to_migrate_total": sum(row["vms_to_migrate"] or 0 for row in rows),
    }


def _cluster_row(entry: Any, index: int, out_dir: Optional[str]) -> dict:
    if not isinstance(entry, dict):
        return _failed_row(f"#{index}", "not a cluster record (expected a mapping)")
    name = as_text(entry.get("cluster")) or f"#{index}"
    if not as_bool(entry.get("ok")):
        return _failed_row(name, as_text(entry.get("error")) or "unknown error")
    whole = _whole_plan(entry.get("plan"))
    view = read_plan(whole, name)
    return {
        "cluster": name,
        "status": STATUS_SKIPPED if view.skipped else STATUS_OK,
        "error": None,
        "now": view.now or None,
        "skip_reason": view.skip_reason or None,
        "evictions": view.total,
        "by_plugin": dict(view.by_plugin),
        "top_namespaces": [{"name": n, "evictions": c} for n, c in view.by_namespace[:TOP]],
        "top_owners": [{"name": n, "evictions": c} for n, c in view.by_owner[:TOP]],
        "limits_hit": {"total": view.limits_hit.total, "node": view.limits_hit.nodes,
                       "namespace": view.limits_hit.namespaces},
        # what the plan report says: each limit reached (flagged, or sparing pods) with the pods it spared
        "limits_reached": [limit.describe() for limit in limits_reached(
            as_dict(as_dict(whole.get("summary")).get("limits")), as_dict(whole.get("spared")).get("by_reason"))],
        "errors": len(view.errors),
        "warnings": len(view.warnings),
        "since_previous": _since_previous(whole.get("since_previous")),
        "vms_to_migrate": as_count(as_dict(whole.get("summary")).get("vms_to_migrate")),
        "report": report_link(entry.get("report_dir"), out_dir),
    }


def _since_previous(changes: Any) -> Optional[dict]:
    """The counts of what changed since the previous run's plan (report/plan_diff.py), None without one."""
    if not isinstance(changes, dict):
        return None
    drift = as_dict(as_dict(changes.get("utilization_drift")).get("cpu"))
    return {"previous_now": changes.get("previous_now"), "new": len(as_list(changes.get("new"))),
            "gone": len(as_list(changes.get("gone"))), "moved": len(as_list(changes.get("moved"))),
            "cpu_drift_mean": drift.get("mean")}


def changes_text(changes: dict) -> str:
    drift = changes["cpu_drift_mean"]
    text = f"{changes['new']} new, {changes['gone']} gone, {changes['moved']} moved to another plugin"
    return text + ("" if drift is None else f"; CPU requested share {drift:+.2f} points on average")


def _failed_row(name: str, error: str) -> dict:
    return {"cluster": name, "status": STATUS_FAILED, "error": error, "now": None, "skip_reason": None,
            "evictions": None, "by_plugin": {}, "top_namespaces": [], "top_owners": [],
            "limits_hit": {"total": False, "node": [], "namespace": []}, "limits_reached": [], "errors": 0,
            "warnings": 0, "report": None, "since_previous": None,
            "vms_to_migrate": None}


def _whole_plan(plan: Any) -> dict:
    """The module accepts the plan or only its summary part: a bare summary is wrapped back into a plan."""
    plan = as_dict(plan)
    if "summary" not in plan and ("by_plugin" in plan or "total" in plan):
        return {"summary": plan}
    return plan


def report_link(report_dir: Any, out_dir: Optional[str], page: str = PLAN_FILES["html"]) -> Optional[str]:
    """The path of a cluster's report page (its plan.html, or ``page``), relative to out_dir when given."""
    if not isinstance(report_dir, str) or not report_dir:
        return None
    target = os.path.join(report_dir, page)
    if out_dir:
        try:
            target = os.path.relpath(os.path.abspath(target), os.path.abspath(out_dir))
        except ValueError:  # another drive (Windows): keep the absolute path
            target = os.path.abspath(target)
    return target.replace(os.sep, "/")


def href(link: str) -> str:
    return quote(link, safe="/.:-_~")


# --- files ------------------------------------------------------------------------------------------------------------


def write_fleet_summary(clusters: list[dict], out_dir: str, *, template_dir: Optional[str] = None) -> dict[str, str]:
    """Write fleet-summary.json, fleet-summary.md and fleet-summary.html into out_dir (created if needed, each file
    written atomically); ``template_dir`` holds templates that replace the shipped ones of the same name. Returns
    {"json": path, "markdown": path, "html": path}."""
    fleet = summarize_fleet(clusters, out_dir=out_dir)
    return write_report_files(out_dir, FLEET_FILES, lambda: {
        "json": to_json(fleet), "markdown": render_fleet_markdown(fleet, template_dir=template_dir),
        "html": render_fleet_html(fleet, template_dir=template_dir)})


# --- shared wording ---------------------------------------------------------------------------------------------------


def counts_text(counts: Any) -> str:
    if isinstance(counts, dict):
        return ", ".join(f"{name} {count}" for name, count in counts.items()) or "—"
    return ", ".join(f"{item['name']} {item['evictions']}" for item in counts) or "—"


def limits_cell(row: dict) -> str:
    return "; ".join(row.get("limits_reached") or []) or "—"


def fleet_line(fleet: dict) -> str:
    vms = fleet.get("vms_to_migrate_total") or 0
    migrations = f" {vms} of them are VMs that will live-migrate." if vms else ""
    return (f"{fleet['clusters_total']} clusters: {fleet['clusters_ok']} ok, {fleet['clusters_failed']} failed, "
            f"{fleet['clusters_skipped']} skipped cycle. {fleet['evictions_total']} evictions planned in total."
            f"{migrations} Dry run: no pod was evicted.")


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- rendering ------------------------------------------------------------------------------------------------------


def render_fleet_markdown(fleet: dict, *, template_dir: Optional[str] = None) -> str:
    rows = [_markdown_row(row) for row in fleet["clusters"]]
    return render("fleet.md", template_dir, **_context(fleet), markdown_rows=rows)


def render_fleet_html(fleet: dict, *, template_dir: Optional[str] = None) -> str:
    largest = max((row["evictions"] or 0 for row in fleet["clusters"]), default=0)
    rows = [_html_row(row, largest) for row in fleet["clusters"]]
    return render("fleet.html", template_dir, **_context(fleet), rows=rows)


def _context(fleet: dict) -> dict[str, Any]:
    changed = [dict(row, changes=changes_text(row["since_previous"])) for row in fleet["clusters"]
               if row.get("since_previous")]
    failed = [row for row in fleet["clusters"] if row["status"] == STATUS_FAILED]
    return {"fleet": fleet, "fleet_line": fleet_line(fleet), "totals": list(fleet["evictions_by_plugin"].items()),
            "changed": changed, "failed": failed, "failed_names": [row["cluster"] for row in failed],
            "changes": [f"{row['cluster']} (since {row['since_previous']['previous_now']}): {row['changes']}"
                        for row in changed]}


def _markdown_row(row: dict) -> list[str]:
    """The cells of a cluster's row, escaped here: the cluster cell holds a link."""
    name = markdown_text(row["cluster"]).replace("[", "\\[").replace("]", "\\]")
    cluster = f"[{name}]({href(row['report'])})" if row["report"] else name
    if row["status"] == STATUS_FAILED:
        status = f"**FAILED**: {markdown_text(short(row['error']))}"
    elif row["status"] == STATUS_SKIPPED:
        status = f"skipped cycle ({markdown_text(row['skip_reason'] or 'no reason given')})"
    else:
        status = "ok"
    cells = [counts_text(row["by_plugin"]), counts_text(row["top_namespaces"]), counts_text(row["top_owners"]),
             limits_cell(row)]
    evictions = "—" if row["evictions"] is None else str(row["evictions"])
    problems = "—" if row["status"] == STATUS_FAILED else f"{row['errors']} / {row['warnings']}"
    return [cluster, status, evictions, *(markdown_text(c) for c in cells), problems]


def _html_row(row: dict, largest: int) -> dict[str, Any]:
    """A cluster's row as fleet.html shows it: a failed cluster has only its error, across the other columns."""
    count = row["evictions"] or 0
    return {
        "cluster": row["cluster"], "link": href(row["report"]) if row["report"] else None,
        "tone": ROW_TONES.get(row["status"], ""), "failed": row["status"] == STATUS_FAILED, "error": row["error"],
        "status": row["status"], "status_label": "skipped cycle" if row["status"] == STATUS_SKIPPED else "ok",
        "skip_reason": row["skip_reason"], "evictions": count, "bar": mini_bar_fill(count, largest, 80),
        "by_plugin": _count_entries(row["by_plugin"]), "top_namespaces": _count_entries(row["top_namespaces"]),
        "top_owners": _count_entries(row["top_owners"]), "limits": limits_cell(row),
        "problems": f"{row['errors']} / {row['warnings']}",
    }


def _count_entries(counts: Any) -> list[str]:
    items = counts.items() if isinstance(counts, dict) else [(i["name"], i["evictions"]) for i in counts]
    return [f"{name}: {count}" for name, count in items]
