"""The geometry of the HTML reports' inline SVG charts; the templates (chart.html) draw them.

The plan report's before/after chart has a group per node and a row per resource, with a light "before" and a dark
"after" bar on a 0-100 % track and the utilization thresholds as dashed lines; the placement section has three bars
per resource. Coordinates are computed here, once, so a user's template only chooses how each piece looks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import (
    css_token,
    number,
    percent,
    truncate,
)

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
TICKS = (0, 25, 50, 75, 100)


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


# --- placed pieces: what the template draws, with coordinates ---------------------------------------------------------


@dataclass
class PlacedBadge:
    text: str
    tone: str  # a class-name token
    title: Optional[str]
    x: int
    y: int
    width: int


@dataclass
class PlacedBar:
    kind: str  # before | after
    y: int
    width: float
    pct: str


@dataclass
class PlacedRow:
    label: str
    resource_class: str  # r-cpu, r-memory, r-pods or r-other
    y: int
    bars: list[PlacedBar]
    thresholds: list[tuple[float, str, str]]  # (x, kind token, percent)
    value: str  # "before → after"


@dataclass
class PlacedGroup:
    name: str
    label: str
    description: str
    y: int
    separator_y: float
    badges: list[PlacedBadge]
    rows: list[PlacedRow]


@dataclass
class BeforeAfterChart:
    label: str
    width: int
    height: int
    ticks: list[tuple[float, str]]  # (x, "50%")
    groups: list[PlacedGroup]


def bar_width(pct: float) -> float:
    """Width of a bar on the 0–100 % track; values above 100 % are capped at the track's end."""
    return round(min(max(pct, 0.0), 100.0) * TRACK_WIDTH / 100, 2)


def before_after_chart(groups: Sequence[ChartGroup], *, label: str) -> BeforeAfterChart:
    """One chart with a group per item: a row per resource with a light 'before' and a dark 'after' bar."""
    heights = [_group_height(g) for g in groups]
    placed = []
    y = AXIS_HEIGHT
    for group, height in zip(groups, heights, strict=True):
        placed.append(_place_group(group, y, height))
        y += height
    return BeforeAfterChart(label, CHART_WIDTH, AXIS_HEIGHT + sum(heights) + 4,
                            [(TRACK_X + bar_width(tick), f"{tick}%") for tick in TICKS], placed)


def _group_height(group: ChartGroup) -> int:
    name_block = 22 + len(group.badges[:3]) * (BADGE_HEIGHT + 4)
    return max(len(group.rows) * ROW_HEIGHT, name_block) + GROUP_PADDING


def _place_group(group: ChartGroup, y: int, height: int) -> PlacedGroup:
    badges = [_place_badge(item, 0, y + 22 + index * (BADGE_HEIGHT + 4)) for index, item in enumerate(group.badges[:3])]
    rows = [_place_row(row, y + index * ROW_HEIGHT) for index, row in enumerate(group.rows)]
    return PlacedGroup(group.name, truncate(group.label or group.name, NAME_CHARS), group.description or group.name,
                       y, y + height - GROUP_PADDING / 2, badges, rows)


def _place_badge(item: ChartBadge, x: int, y: int) -> PlacedBadge:
    text = truncate(item.text, 36)
    return PlacedBadge(text, css_token(item.tone), item.title, x, y, round(len(text) * 6.8 + 16))


def _place_row(row: ChartRow, y: int) -> PlacedRow:
    resource_class = f"r-{css_token(row.label)}" if row.label in ("cpu", "memory", "pods") else "r-other"
    bars = [PlacedBar(kind, y + offset, bar_width(value), number(value))
            for kind, value, offset in (("before", row.before, 3), ("after", row.after, 4 + BAR_HEIGHT))
            if value is not None]
    thresholds = [(TRACK_X + bar_width(value), css_token(kind), number(value)) for value, kind in row.thresholds]
    return PlacedRow(row.label, resource_class, y, bars, thresholds, f"{percent(row.before)} → {percent(row.after)}")


# --- the placement section's chart: three bars per resource of each changed node --------------------------------------

PLACEMENT_STATES = ("before", "after", "after_placement")
PLACEMENT_BAR_HEIGHT = 7
PLACEMENT_ROW_HEIGHT = 3 * PLACEMENT_BAR_HEIGHT + 8
PLACEMENT_TRACK_X = 210
PLACEMENT_TRACK_WIDTH = 420
PLACEMENT_OPACITY = {"before": ".3", "after": ".6", "after_placement": "1"}


@dataclass
class StateBar:
    kind: str  # before | after | after_placement
    y: int
    width: float
    pct: str
    opacity: str


@dataclass
class StateRow:
    resource: str
    y: int
    bars: list[StateBar]
    value: str  # "a → b → c"


@dataclass
class StateNode:
    label: str
    y: int
    rows: list[StateRow]


@dataclass
class PlacementChart:
    label: str
    height: int
    nodes: list[StateNode]


def placement_chart(nodes: list[dict], resources: Sequence[str], label: str) -> PlacementChart:
    """Per node and resource, three bars: before, after the evictions, after placement (``nodes`` are the plan's
    utilization nodes, read tolerantly)."""
    placed = []
    y = 4
    for node in nodes:
        rows = []
        start = y
        for resource in resources:
            rows.append(_state_row(node, resource, y))
            y += PLACEMENT_ROW_HEIGHT
        placed.append(StateNode(truncate(str(node.get("name", "")), 28), start, rows))
        y += 6
    return PlacementChart(label, y, placed)


def _state_row(node: dict, resource: str, y: int) -> StateRow:
    values: list[Optional[float]] = []
    bars = []
    for index, key in enumerate(PLACEMENT_STATES):
        state = node.get(key)
        value = state.get(resource) if isinstance(state, dict) else None
        values.append(value)
        if isinstance(value, (int, float)):
            width = round(min(max(value, 0.0), 100.0) * PLACEMENT_TRACK_WIDTH / 100, 2)
            bars.append(StateBar(key, y + 2 + index * PLACEMENT_BAR_HEIGHT, width, number(value),
                                 PLACEMENT_OPACITY[key]))
    return StateRow(resource, y, bars, " → ".join(percent(v) for v in values))


def mini_bar_fill(value: float, maximum: float, width: int) -> float:
    """The filled width of a small inline bar (fleet table, actual utilization): value relative to the largest."""
    return round(width * value / maximum, 2) if maximum > 0 else 0
