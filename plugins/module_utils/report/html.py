"""Shared helpers for the self-contained HTML reports: escaping, elements, tables, badges and the inline SVG chart.

Every piece of text goes through ``escape``; only ``Markup`` (HTML built here) is inserted as is. The pages carry
their CSS inline and use no fonts or other external assets, so a report can be mailed or archived alone. The only
JavaScript is the inline pager of a long evictions table (evictions_table.py); the page reads the same without it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence


class Markup(str):
    """HTML that is already safe: ``escape`` leaves it alone."""


def escape(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[Any], separator: str = "") -> Markup:
    return Markup(escape(separator).join(escape(part) for part in parts))


def _attribute_name(name: str) -> str:
    # class_ -> class, data_node -> data-node, aria_label -> aria-label (viewBox keeps its case)
    return name.rstrip("_").replace("_", "-")


def attributes(attrs: Mapping[str, Any]) -> str:
    rendered = []
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        text = number(value) if isinstance(value, float) else value
        rendered.append(f' {_attribute_name(name)}="{escape(text)}"')
    return "".join(rendered)


def element(tag: str, content: Any = "", **attrs: Any) -> Markup:
    """<tag attrs>content</tag>; content is escaped unless it is Markup (or a list of parts)."""
    body = join(content) if isinstance(content, (list, tuple)) else escape(content)
    return Markup(f"<{tag}{attributes(attrs)}>{body}</{tag}>")


def empty(tag: str, **attrs: Any) -> Markup:
    """A self-closed element (SVG shapes, <meta>): <tag attrs/>."""
    return Markup(f"<{tag}{attributes(attrs)}/>")


def number(value: float, digits: int = 2) -> str:
    """Compact number for SVG coordinates and labels: 12.0 -> '12', 12.345 -> '12.35'."""
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def percent(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{number(value, 1)}%"


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


def css_token(text: Any) -> str:
    """A string safe to use inside a class name (classes come from data such as node classes)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "none"


@dataclass
class Spanning:
    """A table cell that spans several columns (a failed cluster's error across the columns it has no data for)."""

    content: Any
    columns: int


# --- tables, badges, figures ------------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: Optional[str] = None,
          row_header: bool = True, numeric: Sequence[int] = (), nowrap: Sequence[int] = (),
          row_classes: Optional[Sequence[str]] = None, empty_text: str = "None.") -> Markup:
    """A table with <th scope="col"> headers; the first cell of a row is its <th scope="row"> when row_header.
    ``numeric`` and ``nowrap`` name the columns (by index) that are right-aligned or kept on one line."""
    body = []
    for index, row in enumerate(rows):
        cells = []
        for column, cell in enumerate(row):
            css = " ".join(c for c, cols in (("num", numeric), ("nowrap", nowrap)) if column in cols) or None
            if isinstance(cell, Spanning):
                cells.append(element("td", cell.content, colspan=cell.columns))  # column styles do not apply
            elif row_header and column == 0:
                cells.append(element("th", cell, scope="row", class_=css))
            else:
                cells.append(element("td", cell, class_=css))
        row_class = row_classes[index] if row_classes and index < len(row_classes) else None
        body.append(element("tr", cells, class_=row_class or None))
    if not body:
        return element("p", empty_text, class_="muted")
    head = element("tr", [element("th", h, scope="col", class_="num" if i in numeric else None)
                          for i, h in enumerate(headers)])
    parts = [element("caption", caption)] if caption else []
    parts += [element("thead", head), element("tbody", body)]
    return element("div", element("table", parts), class_="table-wrap")


def badge(text: Any, tone: str = "neutral", title: Optional[str] = None) -> Markup:
    return element("span", text, class_=f"badge tone-{css_token(tone)}", title=title)


def key_figure(label: str, value: Any, tone: str = "neutral") -> Markup:
    return element("div", [element("div", value, class_="figure-value"), element("div", label, class_="figure-label")],
                   class_=f"figure tone-{css_token(tone)}")


def bullet_list(items: Iterable[Any], css_class: Optional[str] = None) -> Markup:
    entries = [element("li", item) for item in items]
    return element("ul", entries, class_=css_class) if entries else Markup("")


def page(title: str, body: Iterable[Any]) -> Markup:
    head = [
        empty("meta", charset="utf-8"),
        empty("meta", name="viewport", content="width=device-width, initial-scale=1"),
        empty("meta", name="color-scheme", content="light dark"),
        element("title", title),
        element("style", Markup(STYLE)),
    ]
    document = element("html", [element("head", head), element("body", element("main", list(body)))], lang="en")
    return Markup("<!DOCTYPE html>\n" + document + "\n")


# Class names from node classes and tones map onto these; light colours by default, dark ones when asked for.
STYLE = """
.chart .bar-before { fill-opacity: .35; } .chart .bar-after { fill-opacity: 1; }
.swatch.before { background: var(--cpu); opacity: .35; } .swatch.after { background: var(--cpu); }
:root { --bg: #ffffff; --fg: #1f2328; --muted: #636c76; --border: #d0d7de; --panel: #f6f8fa; --stripe: #f9fafb;
  --link: #0969da; --red: #cf222e; --red-bg: #ffebe9; --amber: #9a6700; --amber-bg: #fff8c5; --green: #1a7f37;
  --green-bg: #dafbe1; --blue: #0969da; --blue-bg: #ddf4ff; --grey-bg: #eaeef2;
  --cpu: #1f6feb; --memory: #8250df; --pods: #1a7f37; --other: #57606a; --track: #eef1f4;
  --low: #bf8700; --high: #cf222e; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #30363d; --panel: #161b22; --stripe: #121820;
    --link: #4493f8; --red: #ff7b72; --red-bg: #3d1418; --amber: #e3b341; --amber-bg: #3a2d0a; --green: #56d364;
    --green-bg: #12301c; --blue: #79c0ff; --blue-bg: #0c2d4f; --grey-bg: #21262d;
    --cpu: #58a6ff; --memory: #bc8cff; --pods: #3fb950; --other: #8b949e; --track: #1c2128;
    --low: #e3b341; --high: #ff7b72; }
  .chart .bar-before { fill-opacity: .5; } .swatch.before { opacity: .5; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45;
  font: 14px/1.45 -apple-system, "Segoe UI", system-ui, Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--border); }
h3 { font-size: 15px; margin: 18px 0 8px; }
a { color: var(--link); }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.meta { color: var(--muted); margin: 0 0 16px; }
nav { margin: 8px 0 0; font-size: 13px; }
nav a { margin-right: 14px; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0 8px; }
.figure { flex: 1 1 140px; border: 1px solid var(--border); border-radius: 8px; padding: 10px 14px;
  background: var(--panel); border-top: 4px solid var(--border); }
.figure-value { font-size: 26px; font-weight: 650; }
.figure-label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.figure.tone-red { border-top-color: var(--red); } .figure.tone-red .figure-value { color: var(--red); }
.figure.tone-amber { border-top-color: var(--amber); }
.figure.tone-green { border-top-color: var(--green); }
.figure.tone-blue { border-top-color: var(--blue); }
.notice { border: 1px solid var(--border); border-left: 5px solid var(--amber); background: var(--amber-bg);
  padding: 10px 14px; border-radius: 6px; margin: 12px 0; }
.notice.tone-red { border-left-color: var(--red); background: var(--red-bg); }
.columns { display: flex; flex-wrap: wrap; gap: 12px 40px; } .columns > * { flex: 0 1 auto; min-width: 220px; }
.columns > .limits { flex: 1 1 240px; max-width: 380px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 12px; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--border); }
thead th { background: var(--panel); position: sticky; top: 0; }
tbody tr:nth-child(even) { background: var(--stripe); }
tbody th { font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.nowrap { white-space: nowrap; }
.ns { color: var(--muted); }
tr.failed { background: var(--red-bg) !important; } tr.failed th { box-shadow: inset 4px 0 0 var(--red); }
tr.skipped th { box-shadow: inset 4px 0 0 var(--amber); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  background: var(--grey-bg); color: var(--fg); white-space: nowrap; margin: 1px 2px 1px 0; }
.badge.tone-red, .badge.tone-overutilized, .badge.tone-failed { background: var(--red-bg); color: var(--red); }
.badge.tone-amber, .badge.tone-underutilized, .badge.tone-skipped-cycle { background: var(--amber-bg);
  color: var(--amber); }
.badge.tone-green, .badge.tone-appropriately-utilized, .badge.tone-appropriate, .badge.tone-ok {
  background: var(--green-bg); color: var(--green); }
.badge.tone-blue { background: var(--blue-bg); color: var(--blue); }
.legend { display: flex; flex-wrap: wrap; gap: 16px; font-size: 12px; color: var(--muted); margin: 6px 0 10px;
  align-items: center; }
.swatch { display: inline-block; width: 22px; height: 9px; border-radius: 2px; vertical-align: middle;
  margin-right: 5px; }
.swatch.low { border-top: 2px dashed var(--low); height: 0; border-radius: 0; }
.swatch.high { border-top: 2px dashed var(--high); height: 0; border-radius: 0; }
.chart { width: 100%; height: auto; display: block; }
.chart text { fill: var(--fg); font-size: 12px; font-family: inherit; }
.chart .node-name { font-weight: 650; font-size: 13px; }
.chart .axis, .chart .value { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.chart .grid { stroke: var(--border); stroke-width: 1; }
.chart .separator { stroke: var(--border); stroke-width: 1; }
.chart .track { fill: var(--track); }
.chart .r-cpu { fill: var(--cpu); } .chart .r-memory { fill: var(--memory); } .chart .r-pods { fill: var(--pods); }
.chart .r-other { fill: var(--other); }
.chart .threshold { stroke-width: 2; stroke-dasharray: 4 3; }
.chart .threshold-low { stroke: var(--low); } .chart .threshold-high { stroke: var(--high); }
.chart .badge-box { fill: var(--grey-bg); }
.chart .badge-text { font-size: 11px; font-weight: 600; }
.chart .tone-overutilized .badge-box { fill: var(--red-bg); }
.chart .tone-overutilized .badge-text { fill: var(--red); }
.chart .tone-underutilized .badge-box { fill: var(--amber-bg); }
.chart .tone-underutilized .badge-text { fill: var(--amber); }
.chart .tone-appropriately-utilized .badge-box, .chart .tone-appropriate .badge-box { fill: var(--green-bg); }
.chart .tone-appropriately-utilized .badge-text, .chart .tone-appropriate .badge-text { fill: var(--green); }
ul.plain { list-style: none; margin: 0; padding: 0; }
.wrap-anywhere { overflow-wrap: anywhere; }
.error { color: var(--red); }
td svg { vertical-align: middle; }
.plain li { margin: 0; }
.minibar { fill: var(--cpu); } .minibar-track { fill: var(--track); }
.scale.tone-amber { color: var(--amber); background: var(--amber-bg); padding: 6px 10px; border-radius: 6px; }
.pager-tools { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0; }
.pager-tools[hidden] { display: none; }
.pager-tools input, .pager-tools button { font: inherit; color: var(--fg); border: 1px solid var(--border);
  border-radius: 6px; padding: 3px 10px; background: var(--bg); }
.pager-tools input { flex: 0 1 340px; } .pager-tools button { background: var(--panel); }
details.pager-more > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
@media print { thead th { position: static; } }
"""


# --- the before/after bar chart ---------------------------------------------------------------------------------------

CHART_WIDTH = 960
NAME_WIDTH = 250
LABEL_END_X = 322
TRACK_X = 332
TRACK_WIDTH = 480  # the 0–100 % scale
VALUE_X = 824
ROW_HEIGHT = 24
BAR_HEIGHT = 8
GROUP_PADDING = 16
AXIS_HEIGHT = 24
BADGE_HEIGHT = 18
NAME_CHARS = 30


@dataclass
class ChartBadge:
    text: str
    tone: str
    title: Optional[str] = None


@dataclass
class ChartRow:
    """One resource of one group: before and after percentages and the threshold lines that apply."""

    label: str
    before: Optional[float]
    after: Optional[float]
    thresholds: list[tuple[float, str]] = field(default_factory=list)  # (percent, "low" | "high")


@dataclass
class ChartGroup:
    name: str
    rows: list[ChartRow]
    badges: list[ChartBadge] = field(default_factory=list)
    description: str = ""
    label: str = ""  # shown instead of the name (e.g. without the domain all nodes share)


def bar_width(pct: float) -> float:
    """Width of a bar on the 0–100 % track; values above 100 % are capped at the track's end."""
    return round(min(max(pct, 0.0), 100.0) * TRACK_WIDTH / 100, 2)


def before_after_chart(groups: Sequence[ChartGroup], *, label: str) -> Markup:
    """One <svg> with a group per item: a row per resource with a light 'before' and a dark 'after' bar."""
    parts: list[Markup] = [element("title", label)]
    heights = [_group_height(g) for g in groups]
    total_height = AXIS_HEIGHT + sum(heights) + 4
    parts.append(_axis(total_height))
    y = AXIS_HEIGHT
    for group, height in zip(groups, heights, strict=True):
        parts.append(_group(group, y, height))
        y += height
    return element("svg", parts, class_="chart", role="img", aria_label=label,
                   viewBox=f"0 0 {CHART_WIDTH} {total_height}", width=CHART_WIDTH, height=total_height)


def _group_height(group: ChartGroup) -> int:
    name_block = 22 + len(group.badges[:3]) * (BADGE_HEIGHT + 4)
    return max(len(group.rows) * ROW_HEIGHT, name_block) + GROUP_PADDING


def _axis(total_height: int) -> Markup:
    parts = []
    for tick in (0, 25, 50, 75, 100):
        x = TRACK_X + bar_width(tick)
        parts.append(empty("line", x1=x, x2=x, y1=AXIS_HEIGHT - 4, y2=total_height, class_="grid"))
        parts.append(element("text", f"{tick}%", x=x, y=AXIS_HEIGHT - 8, text_anchor="middle", class_="axis"))
    return element("g", parts, aria_hidden="true")


def _group(group: ChartGroup, y: int, height: int) -> Markup:
    parts: list[Markup] = [element("title", group.description or group.name)]
    parts.append(empty("line", x1=0, x2=CHART_WIDTH, y1=y + height - GROUP_PADDING / 2,
                       y2=y + height - GROUP_PADDING / 2, class_="separator"))
    parts.append(element("text", truncate(group.label or group.name, NAME_CHARS), x=0, y=y + 15, class_="node-name"))
    for index, item in enumerate(group.badges[:3]):
        parts.append(_chart_badge(item, 0, y + 22 + index * (BADGE_HEIGHT + 4)))
    for index, row in enumerate(group.rows):
        parts.append(_row(row, y + index * ROW_HEIGHT))
    return element("g", parts, class_="node", data_node=group.name)


def _chart_badge(item: ChartBadge, x: int, y: int) -> Markup:
    text = truncate(item.text, 36)
    width = round(len(text) * 6.8 + 16)
    box = empty("rect", x=x, y=y, width=width, height=BADGE_HEIGHT, rx=9, class_="badge-box")
    label = element("text", text, x=x + 7, y=y + 13, class_="badge-text")
    parts = ([element("title", item.title)] if item.title else []) + [box, label]
    return element("g", parts, class_=f"tone-{css_token(item.tone)}")


def _row(row: ChartRow, y: int) -> Markup:
    resource_class = f"r-{css_token(row.label)}" if row.label in ("cpu", "memory", "pods") else "r-other"
    parts = [
        element("text", row.label, x=LABEL_END_X, y=y + 15, text_anchor="end"),
        empty("rect", x=TRACK_X, y=y + 3, width=TRACK_WIDTH, height=BAR_HEIGHT * 2 + 1, class_="track"),
    ]
    for kind, value, offset in (("before", row.before, 3), ("after", row.after, 4 + BAR_HEIGHT)):
        if value is not None:
            parts.append(empty("rect", x=TRACK_X, y=y + offset, width=bar_width(value), height=BAR_HEIGHT,
                               class_=f"bar bar-{kind} {resource_class}", data_pct=number(value), data_kind=kind))
    for value, kind in row.thresholds:
        x = TRACK_X + bar_width(value)
        parts.append(empty("line", x1=x, x2=x, y1=y + 1, y2=y + ROW_HEIGHT - 2,
                           class_=f"threshold threshold-{css_token(kind)}", data_threshold=number(value)))
    parts.append(element("text", f"{percent(row.before)} → {percent(row.after)}", x=VALUE_X, y=y + 15,
                         class_="value"))
    return element("g", parts, data_resource=row.label)


def mini_bar(value: float, maximum: float, *, label: str, width: int = 120, height: int = 10) -> Markup:
    """A small inline bar (fleet table): value relative to the largest value shown."""
    filled = round(width * value / maximum, 2) if maximum > 0 else 0
    return element("svg", [element("title", label),
                           empty("rect", x=0, y=0, width=width, height=height, rx=2, class_="minibar-track"),
                           empty("rect", x=0, y=0, width=filled, height=height, rx=2, class_="minibar")],
                   role="img", aria_label=label, width=width, height=height,
                   viewBox=f"0 0 {width} {height}")
