"""A cluster's eviction result as ``evict-result.json`` and a human ``evict-result.md`` (the template evict.md lays
it out, report/templating.py renders it)."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_atomically
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import render

RESULT_FILES = {"json": "evict-result.json", "markdown": "evict-result.md"}
STATUS_ORDER = ("evicted", "migrated", "would_evict", "would_migrate", "blocked_by_pdb", "skipped", "failed")


def write_evict_report(result: Mapping[str, Any], report_dir: str, cluster: Optional[str] = None, *,
                       template_dir: Optional[str] = None) -> dict:
    """evict-result.json and evict-result.md in report_dir; ``template_dir`` holds an evict.md that replaces the
    shipped one."""
    os.makedirs(report_dir, exist_ok=True)
    files = {kind: os.path.join(report_dir, name) for kind, name in RESULT_FILES.items()}
    markdown = render_markdown(result, cluster, template_dir=template_dir)  # a bad template: nothing written
    write_atomically(files["json"], json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    write_atomically(files["markdown"], markdown)
    return files


def render_markdown(result: Mapping[str, Any], cluster: Optional[str] = None, *,
                    template_dir: Optional[str] = None) -> str:
    counts = result.get("counts") or {}
    placements = result.get("placements") or {}
    journal = result.get("journal") or {}
    pods = [(pod.get("order"), f"{pod.get('namespace')}/{pod.get('name')}", pod.get("node") or "", pod.get("status"),
             _cell(pod.get("error") or pod.get("reason") or "")) for pod in result.get("pods") or []]
    return render("evict.md", template_dir, result=result, cluster=cluster, pods=pods, total=counts.get("total", 0),
                  outcomes=[(status, counts[status]) for status in STATUS_ORDER if counts.get(status)],
                  skipped_by_reason=list((result.get("skipped_by_reason") or {}).items()),
                  placements=_placements(placements) if placements.get("items") else None,
                  journal={"path": journal["path"], "run_id": journal.get("run_id")} if journal.get("path") else None)


def _placements(placements: Mapping[str, Any]) -> dict[str, Any]:
    rows = [(i["namespace"], i["evicted"], i["from_node"], i["to_node"], "yes" if i.get("same_node") else "no")
            for i in placements["items"]]
    return {"moved": placements.get("moved", 0), "same_node": placements.get("same_node", 0), "rows": rows}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")[:300]
