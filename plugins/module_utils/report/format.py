"""How the reports write numbers and text: compact numbers and percentages, shortened names, class-name tokens and
inline Markdown. Pure stdlib; the templates use these as filters (templating.py)."""

from __future__ import annotations

import html
import re
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_text


def number(value: float, digits: int = 2) -> str:
    """Compact number for SVG coordinates and labels: 12.0 -> '12', 12.345 -> '12.35'."""
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def percent(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{number(value, 1)}%"


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


def html_text(value: Any) -> str:
    """A value as HTML text: escaped as html.escape does (&quot; and &#x27;, not markupsafe's &#34;), None as
    nothing. The HTML templates print every value this way (templating.py); rows written in Python use it too."""
    return html.escape("" if value is None else str(value), quote=True)


def css_token(text: Any) -> str:
    """A string safe to use inside a class name (classes come from data such as node classes)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "none"


def markdown_text(value: Any) -> str:
    """Inline Markdown: backslashes, pipes and '<' escaped (no table breaks, no raw HTML), one line."""
    text = as_text(value).replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")
    return " ".join(text.split())


def markdown_cell(value: Any) -> str:
    """A Markdown table cell: inline text, or one space when empty (the row keeps its columns)."""
    return markdown_text(value) or " "
