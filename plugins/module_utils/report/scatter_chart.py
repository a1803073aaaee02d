"""The geometry of the what-if reports' scatter of candidates: evictions (x) against the final spread (y).

Each candidate is a point; the threshold search's Pareto front (the points no other beats on both) is a line through
its points; the chosen candidate is ringed and named. whatif.html draws one chart per cluster, whatif-fleet.html one
small chart per compared cluster. Coordinates are computed here; the template (charts.html, ``scatter_chart``) only
draws them, so a user's template chooses how each piece looks. Pure: no Ansible, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import truncate

LABEL_CHARS = 28
MAX_LABELLED = 8  # with more points, only the chosen one and the front carry a name (every point has a tooltip)
TICK_COUNT = 5


@dataclass
class ScatterInput:
    """One candidate as the chart needs it."""

    name: str
    evictions: int
    spread: Optional[float]  # None: not drawn (no spread figure)
    kind: str = "candidate"  # candidate | threshold (a threshold-search point) | operator (a point's equivalent)
    excluded: bool = False  # its cycle is skipped or a plugin failed: no objective may choose it


@dataclass
class PlacedPoint:
    name: str
    x: float
    y: float
    kind: str
    best: bool
    on_front: bool
    excluded: bool
    label: str  # "" when not named on the chart
    label_x: float
    anchor: str  # text-anchor of the label
    title: str


@dataclass
class ScatterChart:
    label: str
    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    points: list[PlacedPoint]
    front: str  # the Pareto front as an SVG polyline "x,y x,y ..." ("" without one)
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    x_label: str
    y_label: str
    not_drawn: list[str] = field(default_factory=list)  # candidates without a spread


def nice_ticks(largest: float, count: int = TICK_COUNT) -> list[float]:
    """0 and round steps (1, 2 or 5 times a power of ten) up to the first at or past ``largest``."""
    if largest <= 0:
        return [0.0, 1.0]
    raw = largest / (count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(factor * power for factor in (1, 2, 5, 10) if factor * power >= raw)
    ticks = [0.0]
    while ticks[-1] < largest - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _tick_text(value: float) -> str:
    return f"{value:g}"


def scatter_chart(candidates: Sequence[ScatterInput], best: Optional[str], front: Iterable[str], *,
                  label: str, spread_name: str, width: int = 720, height: int = 340,
                  compact: bool = False) -> Optional[ScatterChart]:
    """The chart of ``candidates`` (None when none has a spread); ``best`` is ringed, ``front`` names the Pareto
    points in order of evictions. ``compact``: a small chart of a fleet page, only the chosen point named."""
    drawn = [c for c in candidates if c.spread is not None]
    if not drawn:
        return None
    left, right, top, bottom = (44, 12, 12, 34) if compact else (60, 24, 16, 44)
    x_ticks = nice_ticks(max(c.evictions for c in drawn))
    y_ticks = nice_ticks(max(c.spread for c in drawn))  # type: ignore[type-var]
    plot_width, plot_height = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return round(left + value / x_ticks[-1] * plot_width, 1)

    def y_of(value: float) -> float:
        return round(top + plot_height - value / y_ticks[-1] * plot_height, 1)

    on_front = list(front)
    named = {best} | ({c.name for c in drawn} if len(drawn) <= MAX_LABELLED and not compact else set(on_front))
    if compact:
        named = {best}
    points = [_place(c, x_of(c.evictions), y_of(c.spread), c.name == best, c.name in on_front,  # type: ignore[arg-type]
                     c.name in named, left + plot_width / 2, spread_name) for c in drawn]
    by_name = {point.name: point for point in points}
    line = " ".join(f"{by_name[name].x},{by_name[name].y}" for name in on_front if name in by_name)
    return ScatterChart(
        label=label, width=width, height=height, left=left, top=top, right=width - right, bottom=height - bottom,
        points=sorted(points, key=lambda p: (p.best, p.on_front)),  # the chosen point drawn last, on top
        front=line if len(on_front) > 1 else "",
        x_ticks=[(x_of(t), _tick_text(t)) for t in x_ticks], y_ticks=[(y_of(t), _tick_text(t)) for t in y_ticks],
        x_label="evictions", y_label=f"final {spread_name} spread",
        not_drawn=[c.name for c in candidates if c.spread is None])


def _place(candidate: ScatterInput, x: float, y: float, best: bool, on_front: bool, named: bool, middle: float,
           spread_name: str) -> PlacedPoint:
    left_of_middle = x <= middle
    marks = [word for word, flag in (("chosen", best), ("on the Pareto front", on_front),
                                     ("excluded", candidate.excluded)) if flag]
    title = (f"{candidate.name}: {candidate.evictions} evictions, final {spread_name} spread "
             f"{candidate.spread:.2f}" + (f" ({', '.join(marks)})" if marks else ""))
    return PlacedPoint(name=candidate.name, x=x, y=y, kind=candidate.kind, best=best, on_front=on_front,
                       excluded=candidate.excluded, label=truncate(candidate.name, LABEL_CHARS) if named else "",
                       label_x=x + 9 if left_of_middle else x - 9, anchor="start" if left_of_middle else "end",
                       title=title)


def inputs_from_figures(candidates: Iterable[Mapping[str, Any]], spread_of: Any,
                        excluded: Iterable[str] = ()) -> list[ScatterInput]:
    """ScatterInputs from the whatif module's candidate figures; ``spread_of(figures)`` reads the final spread."""
    left_out = set(excluded)
    return [ScatterInput(name=str(c.get("name")), evictions=int(c.get("evictions") or 0), spread=spread_of(c),
                         kind=_kind(c), excluded=c.get("name") in left_out or bool(c.get("cycle_skipped"))
                         or bool(c.get("plugin_errors")))
            for c in candidates]


def _kind(figures: Mapping[str, Any]) -> str:
    if figures.get("operator_equivalent_of"):
        return "operator"
    return "threshold" if figures.get("thresholds") else "candidate"
