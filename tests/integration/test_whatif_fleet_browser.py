"""The what-if fleet summary as a user sees it: the whatif role run through ansible-playbook on a small fleet of
snapshot clusters (one of them broken), then whatif-fleet.html opened in headless Chromium: its screenshot is a
real picture of the page, and the DOM the browser built names every cluster, every candidate and each cluster's best
candidate, with the totals over the fleet and the broken cluster's reason.

Chromium is Debian's ``chromium``. tests/run_all.sh installs it in the background when it is missing (as root, with
apt-get; output in build/chromium-install.log, outcome in build/chromium-install.status); this test waits for that
step's outcome and is skipped, saying why, when Chromium is still not there.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

import pytest
import yaml
from playbook import REPO, run_playbook, run_tasks

sys.path.insert(0, str(REPO / "examples"))
sys.path.insert(0, str(REPO / "tools"))
from compare_report_screenshots import chromium, png_pixels, read_dom  # noqa: E402
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
WINDOW = (1280, 2000)
LNU_POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "balance", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50}}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}
CANDIDATES = [
    {"name": "lifecycle", "kubedescheduler": {"deschedulingIntervalSeconds": 3600,
                                              "profiles": ["LifecycleAndUtilization"]}},
    {"name": "duplicates", "kubedescheduler": {"deschedulingIntervalSeconds": 3600,
                                               "profiles": ["TopologyAndDuplicates"]}},
    {"name": "affinity-and-lifecycle", "kubedescheduler": {"deschedulingIntervalSeconds": 3600,
                                                           "profiles": ["AffinityAndTaints",
                                                                        "LifecycleAndUtilization"]}},
]
INSTALL_STATUS = REPO / "build" / "chromium-install.status"
INSTALL_PID = REPO / "build" / "chromium-install.pid"
INSTALL_LOG = REPO / "build" / "chromium-install.log"
INSTALL_DEADLINE_SECONDS = 30 * 60  # a cold apt-get install on a loaded machine: minutes, never half an hour


# --- Chromium: installed by tests/run_all.sh, or skipped with the reason ---------------------------------------------


def _install_running() -> bool:
    """Whether run_all.sh's background install is still at work (its process alive and not a zombie)."""
    try:
        pid = int(INSTALL_PID.read_text().strip())
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return False
    return state != "Z" and not INSTALL_STATUS.exists()


def _install_outcome() -> str:
    if INSTALL_STATUS.exists():
        return f"the install step says: {INSTALL_STATUS.read_text().strip()} (log: {INSTALL_LOG})"
    return "no install step ran (tests/run_all.sh installs it as root with apt-get: apt-get install chromium)"


@pytest.fixture(scope="module")
def browser() -> str:
    """The chromium executable, once run_all.sh's install step (when one runs) has finished."""
    deadline = time.monotonic() + INSTALL_DEADLINE_SECONDS
    while _install_running():
        if time.monotonic() > deadline:
            pytest.skip(f"Chromium is still being installed after {INSTALL_DEADLINE_SECONDS // 60} minutes "
                        f"(see {INSTALL_LOG}); the browser check of whatif-fleet.html did not run")
        time.sleep(2)
    path = shutil.which("chromium")
    if path is None:
        pytest.skip(f"Chromium is not installed and could not be installed: {_install_outcome()}; the browser check "
                    "of whatif-fleet.html did not run")
    return path


# --- what the browser built ------------------------------------------------------------------------------------------


class Tables(HTMLParser):
    """Every table of a document as rows of cell texts (whitespace collapsed), in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._cell: Optional[list[str]] = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(" ".join(" ".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables_of(document: str) -> list[list[list[str]]]:
    parser = Tables()
    parser.feed(document)
    parser.close()
    return parser.tables


def table_by_first_header(tables: list[list[list[str]]], header: str, second: str) -> list[list[str]]:
    """The body rows of the table whose header row starts with ``header`` and ``second``."""
    for table in tables:
        if table and table[0][:2] == [header, second]:
            return table[1:]
    raise AssertionError(f"no table headed {header!r}, {second!r} in the page Chromium built")


# --- the fleet ------------------------------------------------------------------------------------------------------


def snapshot(tmp_path: Path, name: str, seed: int) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": build_cluster(8, 8, seed=seed, now=NOW)}))
    return str(path)


def run_whatif_role(tmp_path: Path, templates: Path) -> Path:
    hosts = {"east": {"whatif_snapshot": snapshot(tmp_path, "east", 5)},
             "west": {"whatif_snapshot": snapshot(tmp_path, "west", 9)},
             "north": {"whatif_snapshot": snapshot(tmp_path, "north", 13)},
             "broken": {"whatif_snapshot": str(tmp_path / "missing.json")}}
    out = tmp_path / "out"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "whatif_report_dir": str(out), "whatif_now": NOW,
        "whatif_candidates": CANDIDATES, "whatif_objective": {"type": "lowest_spread"},
        "whatif_report_template_dir": str(templates), "whatif_fail_on_cluster_error": False}}}))
    process = run_playbook(REPO / "playbooks/whatif.yml", "-i", str(inventory))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-2000:]
    assert f"What-if fleet summary: {out / 'whatif-fleet.html'}" in process.stdout
    return out


def expected_best(result: dict) -> str:
    """lowest_spread: the fewest replacements with nowhere to go, then the lowest final CPU spread (after placement:
    the role leaves placement to the objective, which compares spreads), then the fewest evictions, then the first
    listed; never a candidate whose cycle is skipped or whose plugins fail."""
    assert result["placement"] is True
    ranked = [(c["unplaced"], c["spread"]["after_placement"]["cpu"], c["evictions"], index, c["name"])
              for index, c in enumerate(result["candidates"]) if not c["cycle_skipped"] and not c["plugin_errors"]]
    return min(ranked)[4]


@pytest.mark.usefixtures("browser")
def test_the_fleet_summary_in_a_browser_names_each_cluster_s_candidates_and_best(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "whatif_fleet.md").write_text("# {{ fleet.clusters_total }} clusters, {{ failed|length }} failed\n")
    (templates / "whatif.md").write_text("# {{ result.cluster }}: best {{ result.best }}\n")
    out = run_whatif_role(tmp_path, templates)
    results = {name: json.loads((out / name / "whatif.json").read_text()) for name in ("east", "west", "north")}
    page = out / "whatif-fleet.html"

    # the role's template directory reaches the fleet summary and each cluster's report; the HTML stays shipped
    assert (out / "whatif-fleet.md").read_text() == "# 4 clusters, 1 failed\n"
    assert (out / "east" / "whatif.md").read_text() == f"# east: best {results['east']['best']}\n"

    png = tmp_path / "whatif-fleet.png"
    shot = chromium(f"--screenshot={png}", f"--window-size={WINDOW[0]},{WINDOW[1]}", page.as_uri())
    assert png.exists(), f"Chromium wrote no screenshot: {shot.stderr.decode(errors='replace')[-2000:]}"
    width, height, channels, pixels = png_pixels(png)
    assert (width, height) == WINDOW
    colours = {pixels[i:i + 3] for i in range(0, len(pixels), channels)}
    inked = sum(1 for i in range(0, len(pixels), channels) if pixels[i:i + 3] != b"\xff\xff\xff")
    assert len(colours) > 16, f"a blank or flat screenshot: {len(colours)} colours"
    assert inked > width * height // 50, f"a nearly empty page: {inked} non-white pixels of {width * height}"

    dump = chromium("--dump-dom", page.as_uri())
    document = dump.stdout.decode("utf-8")
    assert document, f"Chromium dumped no DOM: {dump.stderr.decode(errors='replace')[-2000:]}"
    text = read_dom(document).visible_text()
    assert "What-if across the fleet" in text
    tables = tables_of(document)

    best_rows = {row[0]: row for row in table_by_first_header(tables, "Cluster", "Best candidate")}
    assert sorted(best_rows) == ["broken", "east", "north", "west"]
    assert best_rows["broken"][1] == "FAILED" and "missing.json" in best_rows["broken"][2]
    for name, result in results.items():
        assert result["best"] == expected_best(result)
        assert best_rows[name][1] == result["best"], f"{name}: the page names {best_rows[name][1]}"
        assert best_rows[name][2] == result["best_reason"]

    totals = {row[0]: row for row in table_by_first_header(tables, "Candidate", "Best on")}
    assert list(totals) == [candidate["name"] for candidate in CANDIDATES]
    for candidate in CANDIDATES:
        figures = [c for result in results.values() for c in result["candidates"] if c["name"] == candidate["name"]]
        best_on = [name for name, result in results.items() if result["best"] == candidate["name"]]
        row = totals[candidate["name"]]
        count, names = (row[1].split(" ", 1) + [""])[:2]
        assert int(count) == len(best_on) and sorted(names.strip("()").split(", ") if names else []) == sorted(best_on)
        assert row[2:6] == [str(len(figures)), str(sum(c["evictions"] for c in figures)),
                            str(sum(c["vms_to_migrate"] for c in figures)),
                            str(sum(c["spared_by_pdb"] for c in figures))]

    side_by_side = table_by_first_header(tables, "Cluster", CANDIDATES[0]["name"])
    for row in side_by_side:
        result = results[row[0]]
        for cell, candidate in zip(row[1:], result["candidates"], strict=True):
            assert cell.startswith(f"{candidate['evictions']} eviction")
            assert cell.endswith("best") == (candidate["name"] == result["best"])

    for name in results:  # each cluster's own section, and its link to its whatif.html reachable from the page
        assert (page.parent / name / "whatif.html").exists()
        assert f'href="{name}/whatif.html"' in document
    assert "Failed clusters" in text and "broken" in text

    # the candidates per cluster as pictures: one scatter per compared cluster, each candidate a point placed by its
    # evictions and final CPU spread, the cluster's best ringed
    charts = {chart["caption"].split(":")[0]: chart for chart in scatter_charts(document)}
    assert sorted(charts) == sorted(results)
    for name, result in results.items():
        assert_points_follow_the_figures(charts[name], result)

    # the wide tables fit a 1280-pixel window: neither the page nor a table scrolls sideways
    assert overflowing(page, tmp_path) == [], "wider than the window"


@pytest.mark.usefixtures("browser")
def test_a_cluster_s_whatif_page_draws_the_threshold_search_in_a_browser(tmp_path: Path) -> None:
    """whatif.html of a threshold search: the candidates and the search's points as a scatter, the Pareto front a
    line through exactly the front's points in order of evictions, the chosen point ringed; the wide tables fit."""
    out = tmp_path / "report"
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                   "items": build_cluster(12, 10, seed=7, now=NOW)}))
    search = {"policy": LNU_POLICY, "low": [10, 20, 30, 40], "high": [30, 50, 70, 90]}
    process, registered = run_tasks(tmp_path, [{"name": "What-if", "register": "whatif", "descheduler.fleet.whatif": {
        "snapshot": str(cluster), "now": NOW, "candidates": CANDIDATES[:1], "threshold_search": search,
        "objective": {"type": "lowest_spread"}, "report_dir": str(out), "cluster_name": "east"}}])
    assert not registered["whatif"].get("failed"), registered["whatif"].get("msg") or process.stdout[-4000:]
    result = json.loads((out / "whatif.json").read_text())
    assert len(result["pareto"]) >= 2, "a front of one point draws no line: pick another snapshot"
    document = chromium("--dump-dom", (out / "whatif.html").as_uri()).stdout.decode("utf-8")
    (chart,) = scatter_charts(document)
    assert_points_follow_the_figures(chart, result)
    points = chart["points"]
    assert chart["front"] == [(points[p["name"]]["x"], points[p["name"]]["y"]) for p in result["pareto"]]
    assert {name for name, point in points.items() if point["front"] == "true"} == {p["name"] for p in result["pareto"]}
    assert overflowing(out / "whatif.html", tmp_path) == [], "wider than the window"


# --- the pictures and the layout, as the browser has them -------------------------------------------------------------


class ScatterCharts(HTMLParser):
    """Per <figure class="scatter">: its caption and, per point (data-candidate), its dot's centre, its rings and
    data-best / data-front; the Pareto polyline's vertices."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.charts: list[dict] = []
        self._point: Optional[dict] = None
        self._caption = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "figure" and "scatter" in attributes.get("class", "").split():
            self.charts.append({"caption": "", "points": {}, "front": None})
        elif not self.charts:
            return
        elif tag == "g" and "data-candidate" in attributes:
            self._point = {"best": attributes["data-best"], "front": attributes["data-front"], "rings": 0}
            self.charts[-1]["points"][attributes["data-candidate"]] = self._point
        elif tag == "circle" and self._point is not None:
            if "dot" in attributes.get("class", "").split():
                self._point["x"], self._point["y"] = float(attributes["cx"]), float(attributes["cy"])
            else:
                self._point["rings"] += 1
        elif tag == "polyline":
            self.charts[-1]["front"] = [tuple(float(v) for v in pair.split(","))
                                        for pair in attributes["points"].split()]
        elif tag == "figcaption":
            self._caption = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "g":
            self._point = None
        elif tag == "figcaption":
            self._caption = False

    def handle_data(self, data: str) -> None:
        if self._caption:
            self.charts[-1]["caption"] += data


def scatter_charts(document: str) -> list[dict]:
    parser = ScatterCharts()
    parser.feed(document)
    parser.close()
    return parser.charts


def assert_points_follow_the_figures(chart: dict, result: dict) -> None:
    """Every candidate with a final CPU spread is a point; more evictions lie further right and a larger spread
    higher up (SVG y grows downwards); only the best is ringed."""
    figures = {c["name"]: (c["evictions"], (c["spread"]["after_placement"] or c["spread"]["after_evictions"])["cpu"])
               for c in result["candidates"]}
    points = chart["points"]
    assert set(points) == set(figures)
    for one, other in ((a, b) for a in figures for b in figures if a != b):
        if figures[one][0] < figures[other][0]:
            assert points[one]["x"] < points[other]["x"], (one, other, figures)
        if figures[one][1] < figures[other][1]:
            assert points[one]["y"] > points[other]["y"], (one, other, figures)
    ringed = sorted(name for name, point in points.items() if point["rings"])
    assert ringed == ([result["best"]] if result["best"] else [])
    assert ringed == sorted(name for name, point in points.items() if point["best"] == "true")


MEASURE = """<script>
  const wide = [document.documentElement, ...document.querySelectorAll(".table-wrap")]
    .filter(box => box.scrollWidth > box.clientWidth + 1)
    .map(box => `${box.className || box.tagName}: ${box.scrollWidth} > ${box.clientWidth}`);
  document.body.setAttribute("data-overflowing", JSON.stringify(wide));
</script>"""


def overflowing(page: Path, tmp_path: Path) -> list[str]:
    """The page's root and table boxes wider than a 1280-pixel window, measured by Chromium's layout: a copy of the
    page (its links and styles unchanged) with a script appended that lists them in the DOM it dumps."""
    measured = page.with_name(f"measured-{page.name}")
    measured.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dump = chromium(f"--window-size={WINDOW[0]},{WINDOW[1]}", "--dump-dom", measured.as_uri())
    found = re.search(r'data-overflowing="([^"]*)"', dump.stdout.decode("utf-8"))
    assert found, f"the measuring script did not run: {dump.stderr.decode(errors='replace')[-2000:]}"
    return json.loads(html.unescape(found.group(1)))
