"""The evictions table of a plan report, built to scale to tens of thousands of evictions.

plan.md lists the first ``PAGE_SIZE`` evictions and says how many more plan.json holds. plan.html holds every row:
the first ``PAGE_SIZE`` in the table and the others in a ``<details>`` under it, readable without any script. A
sampled plan (``samples`` > 1) adds a frequency column. The templates plan_evictions.html and .md lay it out.

The rows under the table are written here as HTML (``rest_html``), the markup macros.html's ``table`` writes for a
row, since a template engine's per-cell calls are too slow for them: 80,000 evictions took 14 s to render.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import html_text
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_dict,
    as_number,
    as_text,
)

PAGE_SIZE = 200
FREQUENCY = "Frequency"
HEADERS = ("#", "Pod", "Node", "Owner", "Plugin", "Profile", "Reason")
NOWRAP = ("Node", "Plugin", "Profile")
EMPTY_TEXT = "No pod would be evicted."
FREQUENCY_NOTE = "Frequency: the share of the sampled cycles that evict the pod (see How sure)."


@dataclass
class Eviction:
    order: str
    namespace: str
    name: str
    node: str
    owner_kind: str
    owner_name: str
    plugin: str
    profile: str
    reason: str
    frequency: Optional[float] = None  # only in a sampled plan: share of the cycles evicting the pod

    @property
    def pod(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def owner(self) -> str:
        return "/".join(part for part in (self.owner_kind, self.owner_name) if part)

    @property
    def owner_key(self) -> Optional[str]:
        """namespace/Kind/name, as the plan's summary.by_owner counts owners."""
        return f"{self.namespace}/{self.owner_kind}/{self.owner_name}" if self.owner_kind or self.owner_name else None


def read_eviction(item: Any, index: int) -> Optional[Eviction]:
    if not isinstance(item, dict):
        return None
    owner = as_dict(item.get("owner"))
    return Eviction(
        order=as_text(item.get("order", index)), namespace=as_text(item.get("namespace")),
        name=as_text(item.get("name")), node=as_text(item.get("node")), owner_kind=as_text(owner.get("kind")),
        owner_name=as_text(owner.get("name")), plugin=as_text(item.get("plugin")), profile=as_text(item.get("profile")),
        reason=as_text(item.get("reason")), frequency=as_number(item.get("frequency")),
    )


def has_frequencies(evictions: Sequence[Eviction]) -> bool:
    return any(e.frequency is not None for e in evictions)


def table_headers(with_frequency: bool) -> tuple[str, ...]:
    # the frequency goes before the reason, which is the long last column
    return (*HEADERS[:-1], FREQUENCY, HEADERS[-1]) if with_frequency else HEADERS


def frequency_text(frequency: Optional[float]) -> str:
    return "—" if frequency is None else f"{frequency * 100:.0f}%"


def _cells(eviction: Eviction, pod: Any, with_frequency: bool) -> tuple:
    frequency = (frequency_text(eviction.frequency),) if with_frequency else ()
    return (eviction.order, pod, eviction.node, eviction.owner or "—", eviction.plugin, eviction.profile,
            *frequency, eviction.reason)


def section(evictions: Sequence[Eviction], total: int, html_rows: bool = False) -> dict[str, Any]:
    """What the evictions templates show: the first page, the rest (with ``html_rows``, also as HTML rows), and how
    each column is laid out."""
    with_frequency = has_frequencies(evictions)
    headers = table_headers(with_frequency)
    numeric = (0, headers.index(FREQUENCY)) if with_frequency else (0,)
    nowrap = tuple(headers.index(h) for h in NOWRAP)
    first = list(evictions[:PAGE_SIZE])
    return {
        "total": total, "count": len(evictions), "page_size": PAGE_SIZE, "headers": headers,
        "with_frequency": with_frequency, "frequency_note": FREQUENCY_NOTE, "empty_text": EMPTY_TEXT,
        # the HTML rows hold the eviction itself in the pod column: the template writes its namespace apart
        "first": [_cells(e, e, with_frequency) for e in first],
        "rest": [_cells(e, e, with_frequency) for e in evictions[PAGE_SIZE:]],
        "rest_html": rows_html(evictions[PAGE_SIZE:], len(headers), with_frequency, numeric, nowrap)
        if html_rows else "",
        "markdown_rows": [_cells(e, e.pod, with_frequency) for e in first],
        "numeric": numeric,
        "nowrap": nowrap,
    }


def rows_html(evictions: Sequence[Eviction], columns: int, with_frequency: bool, numeric: Sequence[int],
              nowrap: Sequence[int]) -> str:
    """The <tr> rows of these evictions as plan_evictions.html's table writes them (a row header, the pod's namespace
    apart, the ``numeric`` and ``nowrap`` columns' classes), one per line."""
    closings = ["</th>"] + ["</td>"] * (columns - 1)
    # one format per table: each cell's opening tag and closing tag around a slot
    row = "<tr>" + "".join(_cell_opening(column, numeric, nowrap).replace("{", "{{").replace("}", "}}") + "{}"
                           + closings[column] for column in range(columns)) + "</tr>\n"
    lines = []
    for eviction in evictions:
        order, pod, *rest = _cells(eviction, _pod_html(eviction), with_frequency)
        lines.append(row.format(html_text(order), pod, *map(html_text, rest)))  # the pod cell is HTML already
    return "".join(lines)


def _cell_opening(column: int, numeric: Sequence[int], nowrap: Sequence[int]) -> str:
    classes = " ".join(name for name, on in (("num", column in numeric), ("nowrap", column in nowrap)) if on)
    return ("<th scope=\"row\"" if column == 0 else "<td") + (f' class="{classes}"' if classes else "") + ">"


def _pod_html(eviction: Eviction) -> str:
    name = html_text(eviction.name)
    return f'<span class="ns">{html_text(eviction.namespace)}/</span>{name}' if eviction.namespace else name
