"""The what-if pictures: whatif.html's scatter of candidates (evictions against final spread, the Pareto front drawn,
the chosen point ringed) and whatif-fleet.html's one small scatter per compared cluster, read back from the SVG."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.scatter_chart import nice_ticks
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.fleet import write_whatif_fleet_summary
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.report import render_html


class Svg(HTMLParser):
    """The scatter charts of a page: per <figure class="scatter">, its points (data-candidate → attributes and dot
    position), its Pareto polyline and caption text."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, Any]] = []
        self._point: Optional[dict[str, Any]] = None
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "figure" and "scatter" in attributes.get("class", ""):
            self.figures.append({"points": {}, "front": None, "caption": "", "label": None})
        elif not self.figures:
            return
        figure = self.figures[-1]
        if tag == "svg":
            figure["label"] = attributes.get("aria-label")
        elif tag == "g" and "data-candidate" in attributes:
            self._point = {"class": attributes["class"].split(), "best": attributes["data-best"],
                           "front": attributes["data-front"], "rings": 0}
            figure["points"][attributes["data-candidate"]] = self._point
        elif tag == "circle" and self._point is not None:
            if "dot" in attributes.get("class", ""):
                self._point["x"], self._point["y"] = float(attributes["cx"]), float(attributes["cy"])
            else:
                self._point["rings"] += 1
        elif tag == "polyline":
            figure["front"] = [tuple(float(v) for v in pair.split(",")) for pair in attributes["points"].split()]
        elif tag == "figcaption":
            self._in_caption = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "g":
            self._point = None
        elif tag == "figcaption":
            self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._in_caption:
            self.figures[-1]["caption"] += data


def charts(html: str) -> list[dict[str, Any]]:
    parser = Svg()
    parser.feed(html)
    return parser.figures


def figures(name: str, evictions: int, cpu: Optional[float], **extra: Any) -> dict[str, Any]:
    spread = None if cpu is None else {"cpu": cpu, "memory": 10.0}
    return {"name": name, "evictions": evictions, "workloads_touched": 1, "most_pods_one_workload_loses": 1,
            "vms_to_migrate": 0, "spared_by_pdb": 0, "certain": None, "possible": None, "cycle_skipped": False,
            "plugin_errors": 0, "warnings": [], "unplaced": 0,
            "spread": {"before": {"cpu": 30.0, "memory": 12.0}, "after_evictions": spread, "after_placement": spread},
            **extra}


def search_result() -> dict[str, Any]:
    """Two candidates of the user's and three threshold points; two points make the front; t-30-60 is chosen."""
    point = {"resources": ["cpu"], "low": 20, "high": 50}
    candidates = [figures("today", 12, 18.0), figures("lifetime", 40, 25.0, cycle_skipped=True),
                  figures("t-20-50", 5, 20.0, thresholds=point), figures("t-30-60", 9, 11.0, thresholds=point),
                  figures("t-40-70", 14, 16.0, thresholds=point), figures("unmeasured", 3, None)]
    pareto = [{"name": name, "thresholds": point, "evictions": ev, "final_spread": spread, "kubedescheduler": None,
               "operator_equivalent": None} for name, ev, spread in (("t-20-50", 5, 20.0), ("t-30-60", 9, 11.0))]
    return {"cluster": "east", "now": "2026-11-22T12:00:00Z", "candidates": candidates, "best": "t-30-60",
            "best_reason": "lowest cpu spread", "excluded": [{"name": "lifetime", "reasons": ["its cycle is skipped"]}],
            "objective": {"type": "lowest_spread", "resource": "cpu"}, "pareto": pareto, "placement": True,
            "warnings": []}


def test_nice_ticks_reach_the_largest_value_in_round_steps() -> None:
    assert nice_ticks(40) == [0, 10, 20, 30, 40]
    assert nice_ticks(41) == [0, 20, 40, 60]
    assert nice_ticks(0.7) == [0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(0) == [0, 1]


def test_the_whatif_page_draws_each_candidate_where_its_figures_put_it() -> None:
    (chart,) = charts(render_html(search_result()))
    points = chart["points"]
    assert chart["label"] == "Candidates on east: evictions against final CPU spread"
    assert set(points) == {"today", "lifetime", "t-20-50", "t-30-60", "t-40-70"}
    assert "Not drawn (no spread): unmeasured" in chart["caption"]
    # x grows with the evictions, y (SVG: downwards) falls as the spread grows
    by_evictions = sorted(points, key=lambda name: points[name]["x"])
    assert by_evictions == ["t-20-50", "t-30-60", "today", "t-40-70", "lifetime"]
    by_height = sorted(points, key=lambda name: points[name]["y"])  # top of the chart first: largest spread
    assert by_height == ["lifetime", "t-20-50", "today", "t-40-70", "t-30-60"]
    # equal steps of evictions are equal steps of x (the scale is linear, from 0)
    step = (points["t-30-60"]["x"] - points["t-20-50"]["x"]) / 4
    assert abs((points["today"]["x"] - points["t-30-60"]["x"]) - 3 * step) < 0.2


def test_the_chosen_point_is_ringed_and_the_front_joins_its_points_in_order() -> None:
    (chart,) = charts(render_html(search_result()))
    points = chart["points"]
    chosen = [name for name, point in points.items() if point["best"] == "true"]
    assert chosen == ["t-30-60"] and points["t-30-60"]["rings"] == 1 and "chosen" in points["t-30-60"]["class"]
    assert all(point["rings"] == 0 for name, point in points.items() if name != "t-30-60")
    front = [(points[name]["x"], points[name]["y"]) for name in ("t-20-50", "t-30-60")]
    assert chart["front"] == front
    assert {name for name, point in points.items() if point["front"] == "true"} == {"t-20-50", "t-30-60"}
    assert "excluded" in points["lifetime"]["class"] and "point-threshold" in points["t-40-70"]["class"]


def test_without_a_threshold_search_there_is_no_front() -> None:
    result = search_result()
    del result["pareto"]
    (chart,) = charts(render_html(result))
    assert chart["front"] is None and "Pareto" not in chart["caption"]


def test_the_wide_tables_are_set_to_fit_the_page() -> None:
    html = render_html(search_result())
    assert html.count('<table class="wide">') == 2  # the candidates and the Pareto front


def test_the_fleet_page_draws_the_candidates_of_each_compared_cluster(tmp_path: Path) -> None:
    east = {**search_result(), "ok": True, "report_dir": str(tmp_path / "east")}
    west = {"cluster": "west", "ok": True, "best": None, "best_reason": "no candidate meets the objective",
            "candidates": [figures("today", 2, 9.0), figures("t-20-50", 0, 30.0)], "report_dir": str(tmp_path / "w")}
    broken = {"cluster": "broken", "ok": False, "error": "unreachable"}
    files = write_whatif_fleet_summary([east, west, broken], str(tmp_path))
    found = charts(Path(files["html"]).read_text())
    assert [chart["caption"] for chart in found] == ["east: best t-30-60", "west: no candidate meets the objective"]
    assert set(found[0]["points"]) == {"today", "lifetime", "t-20-50", "t-30-60", "t-40-70"}
    assert [name for name, p in found[0]["points"].items() if p["best"] == "true"] == ["t-30-60"]
    assert set(found[1]["points"]) == {"today", "t-20-50"}
    assert not any(p["best"] == "true" for p in found[1]["points"].values())
    assert found[1]["points"]["today"]["x"] > found[1]["points"]["t-20-50"]["x"]
