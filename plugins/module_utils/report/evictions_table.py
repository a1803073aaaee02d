"""The evictions table of a plan report, built to scale to tens of thousands of evictions.

plan.md lists the first ``PAGE_SIZE`` evictions and says how many more plan.json holds. plan.html holds every row:
the first ``PAGE_SIZE`` in the table and the others in a ``<details>`` under it, so the page stays readable with
JavaScript off. With JavaScript on, a small inline script gathers the rows into one table shown ``PAGE_SIZE`` at a
time, with a filter on namespace, pod, node and plugin. A sampled plan (``samples`` > 1) adds a frequency column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import (
    Markup,
    element,
    empty,
    escape,
    join,
    table,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.markdown import markdown_table
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_dict,
    as_number,
    as_text,
)

PAGE_SIZE = 200
FREQUENCY = "Frequency"
HEADERS = ("#", "Pod", "Node", "Owner", "Plugin", "Profile", "Reason")
FILTERED = ("Pod", "Node", "Plugin")  # the pod cell reads "namespace/name": the filter covers namespaces too
NOWRAP = ("Node", "Plugin", "Profile")
EMPTY_TEXT = "No pod would be evicted."
FREQUENCY_NOTE = "Frequency: the share of the sampled cycles that evict the pod (see How sure)."

# Runs once, where it stands (the end of the evictions section). Moves every row into the first table, then shows
# one page of the rows that match the filter. No external resource; the rows are already in the document.
PAGER_SCRIPT = """
(function () {
  var section = document.currentScript.parentNode;
  var tools = section.querySelector(".pager-tools");
  var size = Number(tools.getAttribute("data-page-size"));
  var columns = tools.getAttribute("data-columns").split(" ").map(Number);
  var bodies = section.querySelectorAll("tbody");
  var body = bodies[0];
  var rows = [];
  for (var b = 0; b < bodies.length; b++) {
    for (var r = 0; r < bodies[b].rows.length; r++) {
      rows.push(bodies[b].rows[r]);
    }
  }
  var keys = rows.map(function (row) {
    return columns.map(function (c) { return row.cells[c].textContent; }).join(" ").toLowerCase();
  });
  var input = tools.querySelector("input");
  var status = tools.querySelector(".pager-status");
  var previous = tools.querySelector("[data-step='-1']");
  var next = tools.querySelector("[data-step='1']");
  var matches = rows;
  var page = 0;
  function show() {
    var pages = Math.max(1, Math.ceil(matches.length / size));
    page = Math.min(Math.max(page, 0), pages - 1);
    var start = page * size;
    var shown = matches.slice(start, start + size);
    var fragment = document.createDocumentFragment();
    shown.forEach(function (row) { fragment.appendChild(row); });
    body.textContent = "";
    body.appendChild(fragment);
    status.textContent = matches.length
      ? "Evictions " + (start + 1) + "\\u2013" + (start + shown.length) + " of " + matches.length
      : "No eviction matches the filter.";
    previous.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  input.addEventListener("input", function () {
    var text = input.value.trim().toLowerCase();
    matches = text ? rows.filter(function (row, index) { return keys[index].indexOf(text) !== -1; }) : rows;
    page = 0;
    show();
  });
  previous.addEventListener("click", function () { page -= 1; show(); });
  next.addEventListener("click", function () { page += 1; show(); });
  section.querySelector(".pager-more").hidden = true;
  section.querySelector(".pager-note").hidden = true;
  tools.hidden = false;
  show();
})();
"""


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


# --- Markdown ---------------------------------------------------------------------------------------------------------


def markdown_section(evictions: Sequence[Eviction]) -> str:
    with_frequency = has_frequencies(evictions)
    rows = [_cells(e, e.pod, with_frequency) for e in evictions[:PAGE_SIZE]]
    parts = ["## Evictions", FREQUENCY_NOTE if with_frequency else "",
             markdown_table(table_headers(with_frequency), rows, EMPTY_TEXT)]
    rest = len(evictions) - PAGE_SIZE
    if rest > 0:
        parts.append(f"_The first {PAGE_SIZE} of {len(evictions):,} evictions are listed; {rest:,} more are in "
                     "plan.json._")
    return "\n\n".join(part for part in parts if part)


# --- HTML -------------------------------------------------------------------------------------------------------------


def _pod_cell(eviction: Eviction) -> Markup:
    if not eviction.namespace:
        return escape(eviction.name)
    return join([element("span", f"{eviction.namespace}/", class_="ns"), eviction.name])


def _html_table(evictions: Sequence[Eviction], headers: tuple[str, ...]) -> Markup:
    with_frequency = FREQUENCY in headers
    numeric = (0, headers.index(FREQUENCY)) if with_frequency else (0,)
    rows = [_cells(e, _pod_cell(e), with_frequency) for e in evictions]
    return table(headers, rows, numeric=numeric, nowrap=tuple(headers.index(h) for h in NOWRAP),
                 empty_text=EMPTY_TEXT)


def _pager_tools(headers: tuple[str, ...]) -> Markup:
    """The filter box and page buttons: hidden until the script runs, so no dead control shows without it."""
    label = "Filter the evictions by namespace, pod, node or plugin"
    controls = [empty("input", type="search", placeholder="Filter: namespace, pod, node or plugin", aria_label=label),
                element("button", "‹ Previous", type="button", data_step="-1"),
                element("span", "", class_="pager-status", aria_live="polite"),
                element("button", "Next ›", type="button", data_step="1")]
    return element("div", controls, class_="pager-tools", hidden=True, data_page_size=PAGE_SIZE,
                   data_columns=" ".join(str(headers.index(h)) for h in FILTERED))


def html_section(evictions: Sequence[Eviction], total: int) -> Markup:
    headers = table_headers(has_frequencies(evictions))
    heading = element("h2", f"Evictions ({total})", id="evictions")
    note = element("p", FREQUENCY_NOTE, class_="muted") if FREQUENCY in headers else ""
    first = _html_table(evictions[:PAGE_SIZE], headers)
    if len(evictions) <= PAGE_SIZE:
        return element("section", [heading, note, first])
    rest = evictions[PAGE_SIZE:]
    paging = element("p", f"The first {PAGE_SIZE} of {len(evictions):,} evictions; the other {len(rest):,} are "
                          "under the table.", class_="muted pager-note")
    more = element("details", [element("summary", f"Evictions {PAGE_SIZE + 1:,}–{len(evictions):,}"),
                               _html_table(rest, headers)], class_="pager-more")
    return element("section", [heading, note, paging, _pager_tools(headers), first, more,
                               element("script", Markup(PAGER_SCRIPT))])
