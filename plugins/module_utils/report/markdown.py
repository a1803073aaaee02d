"""Markdown helpers of the plan reports: inline text that cannot break a table, and tables. Pure stdlib."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_text


def markdown_text(value: Any) -> str:
    """Inline Markdown: backslashes, pipes and '<' escaped (no table breaks, no raw HTML), one line."""
    text = as_text(value).replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")
    return " ".join(text.split())


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], empty_text: str = "None.") -> str:
    lines = ["| " + " | ".join(markdown_text(h) for h in headers) + " |",
             "| " + " | ".join(["---"] * len(headers)) + " |"]
    body = ["| " + " | ".join(markdown_text(cell) or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines + body) if body else f"_{empty_text}_"
