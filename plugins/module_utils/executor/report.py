"""A cluster's eviction result as ``evict-result.json`` and a human ``evict-result.md``. Pure stdlib."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping, Optional

RESULT_FILES = {"json": "evict-result.json", "markdown": "evict-result.md"}
STATUS_ORDER = ("evicted", "migrated", "would_evict", "would_migrate", "blocked_by_pdb", "skipped", "failed")


def write_evict_report(result: Mapping[str, Any], report_dir: str, cluster: Optional[str] = None) -> dict:
    os.makedirs(report_dir, exist_ok=True)
    files = {kind: os.path.join(report_dir, name) for kind, name in RESULT_FILES.items()}
    _write_atomically(files["json"], json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    _write_atomically(files["markdown"], render_markdown(result, cluster))
    return files


def render_markdown(result: Mapping[str, Any], cluster: Optional[str] = None) -> str:
    counts = result.get("counts") or {}
    title = f"# Eviction result: {cluster}" if cluster else "# Eviction result"
    lines = [title, ""]
    if result.get("check_mode"):
        lines += ["*Check mode: server-side dry run, nothing was evicted.*", ""]
    if result.get("stopped"):
        lines += [f"**Stopped ({result.get('stop_reason')}):** {result.get('stop_message')}", ""]
    lines += ["| Outcome | Pods |", "| --- | ---: |"]
    lines += [f"| {status} | {counts.get(status, 0)} |" for status in STATUS_ORDER if counts.get(status)]
    lines += [f"| **total** | {counts.get('total', 0)} |", ""]
    lines += _skipped_section(result) + _placements_section(result) + _pods_section(result)
    journal = result.get("journal") or {}
    if journal.get("path"):
        lines += [f"Journal: `{journal['path']}` (run {journal.get('run_id')})", ""]
    return "\n".join(lines)


def _skipped_section(result: Mapping[str, Any]) -> list[str]:
    reasons = result.get("skipped_by_reason") or {}
    if not reasons:
        return []
    return ["## Skipped, by reason", ""] + [f"- {code}: {count}" for code, count in reasons.items()] + [""]


def _placements_section(result: Mapping[str, Any]) -> list[str]:
    placements = result.get("placements") or {}
    items = placements.get("items") or []
    if not items:
        return []
    lines = ["## Where they went", "",
             f"{placements.get('moved', 0)} moved to another node, {placements.get('same_node', 0)} landed on the "
             "same node again.", "",
             "| Namespace | Evicted | From | To | Same node |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {i['namespace']} | {i['evicted']} | {i['from_node']} | {i['to_node']} | "
              f"{'yes' if i.get('same_node') else 'no'} |" for i in items]
    return lines + [""]


def _pods_section(result: Mapping[str, Any]) -> list[str]:
    lines = ["## Pods", "", "| # | Pod | Node | Status | Detail |", "| ---: | --- | --- | --- | --- |"]
    for pod in result.get("pods") or []:
        detail = pod.get("error") or pod.get("reason") or ""
        lines.append(f"| {pod.get('order')} | {pod.get('namespace')}/{pod.get('name')} | {pod.get('node') or ''} | "
                     f"{pod.get('status')} | {_cell(detail)} |")
    return lines + [""]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")[:300]


def _write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".evict-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
