"""Render the reports (plan, fleet summary, what-if, evict result) from the same inputs with two versions of the
collection and compare them: Markdown and JSON byte for byte, HTML by what Chromium shows (a screenshot per page,
counted in differing pixels) and by the DOM Chromium builds (its text and its elements with their attributes).

    python tools/compare_report_screenshots.py inputs DIR   # write the sample inputs (plans from the engine) as JSON
    python tools/compare_report_screenshots.py compare DIR [--before REF] [--after PATH] [--out OUT]

``--before`` is a git revision (default HEAD) whose plugins/ tree is exported with ``git archive`` into a temporary
collection; ``--after`` is a collection root (default: this working tree). Chromium is Debian's ``chromium``; no
network is used. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--force-color-profile=srgb", "--font-render-hinting=none"]
WINDOW = (1280, 16000)


# --- inputs -----------------------------------------------------------------------------------------------------------


def _engine_plans() -> Iterator[tuple[str, dict, Any]]:
    """Plans computed by the engine on the unit tests' small clusters: every section of the plan report appears."""
    sys.path[:0] = [str(ROOT / "build" / "collections"), str(ROOT / "tests" / "unit" / "engine"),
                    str(ROOT / "tests" / "unit" / "engine" / "scheduler"), str(ROOT / "tests" / "unit" / "report")]
    import test_kubevirt_profile as kubevirt  # noqa: PLC0415 - test helpers, only for building inputs
    import test_placement_report as placement  # noqa: PLC0415
    import test_plan_report_scale as scale  # noqa: PLC0415

    yield "kubevirt", kubevirt.plan_of(kubevirt.cluster({"w1": 3, "w2": 1, "w3": 1, "w4": 1}),
                                       {"w1": 0.9, "w2": 0.5, "w3": 0.3, "w4": 0.2}), None
    yield "placement", placement._plan(True), "placed"
    yield "limits", scale.plan_of(scale.hot_node_cluster(), scale.LIFETIME, scale.BALANCE,
                                  maxNoOfPodsToEvictPerNode=3), "hot"
    yield "sampled", scale.plan_of(scale.hot_node_cluster(extra_pods=20), scale.LIFETIME, scale.BALANCE,
                                   samples=12), "sampled"
    yield "large", scale.plan_of(scale.old_pods_cluster(scale.PAGE + 250), scale.LIFETIME, samples=2), "large"


def write_inputs(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    sample = json.loads((ROOT / "tests" / "unit" / "fixtures" / "sample_plan.json").read_text(encoding="utf-8"))
    plans: list[tuple[str, dict, Any]] = [("sample", sample, "prod-eu-1")]
    hostile = copy.deepcopy(sample)
    hostile["evictions"][0]["name"] = "<script>alert(1)</script>"
    hostile["evictions"][1]["reason"] = 'quote " and <b>bold</b> & more | pipe'
    hostile["utilization"]["nodes"][0]["name"] = '<img src=x onerror="alert(1)">'
    plans.append(("hostile", hostile, "<i>c</i>"))
    plans.append(("skipped", {"now": "2026-11-22T10:00:00Z", "evictions": [],
                              "cycle": {"skipped": True, "skip_reason": "requires >=2 nodes, found 1", "nodes": ["a"]},
                              "summary": {"total": 0, "by_plugin": {}, "by_profile": {}}}, "edge"))
    plans.append(("odd", {"evictions": [None, 3, {"order": "x", "owner": "not a dict"}],
                          "utilization": {"nodes": [None, {"name": 5}, {"name": "n", "before": {"cpu": "12.5"}}]},
                          "errors": [{"x": 1}, "plain", None], "warnings": "one warning"}, None))
    plans += list(_engine_plans())
    for whatif in sorted((ROOT / "examples" / "out" / "whatif").glob("*/plan.json")) + \
            sorted((ROOT / "examples" / "out" / "whatif").glob("*/*/plan.json")):
        plans.append((f"example-{whatif.parent.parent.name}-{whatif.parent.name}",
                      json.loads(whatif.read_text(encoding="utf-8")), None))
    for name, plan, cluster in plans:
        _dump(directory / f"plan-{name}.json", {"kind": "plan", "cluster": cluster, "data": plan})
    fleet = [{"cluster": "prod", "ok": True, "error": None, "plan": sample, "report_dir": "/reports/prod"},
             {"cluster": "staging", "ok": False, "error": "Unauthorized | token <expired>", "plan": None},
             {"cluster": "dev", "ok": True, "plan": sample["summary"], "report_dir": "/reports/dev"},
             {"cluster": "edge", "ok": True, "plan": dict(plans[2][1], since_previous={
                 "previous_now": "2026-11-21T10:00:00Z", "new": ["a/b"], "gone": [], "moved": [],
                 "utilization_drift": {"cpu": {"mean": -1.5}}})},
             {"cluster": "virt", "ok": True, "plan": next(p for n, p, c in plans if n == "kubevirt")}]
    _dump(directory / "fleet-mixed.json", {"kind": "fleet", "data": fleet, "out_dir": "/reports"})
    _dump(directory / "fleet-empty.json", {"kind": "fleet", "data": [], "out_dir": "/reports"})
    for path in sorted((ROOT / "examples" / "out" / "whatif").glob("*/whatif.json")):
        _dump(directory / f"whatif-{path.parent.name}.json",
              {"kind": "whatif", "data": json.loads(path.read_text(encoding="utf-8"))})
    searched = json.loads((ROOT / "examples" / "out" / "whatif" / "plain-k8s" / "whatif.json").read_text())
    searched["candidates"][0]["warnings"] = ["field <x> ignored", "a | b"]
    searched["pareto"] = [
        {"name": "low-20", "thresholds": {"resources": ["cpu", "memory"], "low": 20, "high": 50}, "evictions": 4,
         "final_spread": 3.2, "kubedescheduler": {"profiles": ["LifecycleAndUtilization"],
                                                  "profileCustomizations": {"devLowNodeUtilizationThresholds": "Low"}}},
        {"name": "low-30", "thresholds": {"resources": ["cpu"], "low": 30, "high": None}, "evictions": 9,
         "final_spread": 1.1, "kubedescheduler": None}]
    _dump(directory / "whatif-searched.json", {"kind": "whatif", "data": searched})
    _dump(directory / "evict-run.json", {"kind": "evict", "cluster": "prod", "data": _evict_result(True)})
    _dump(directory / "evict-check.json", {"kind": "evict", "cluster": None, "data": _evict_result(False)})


def _evict_result(full: bool) -> dict:
    pods = [{"order": 1, "namespace": "shop", "name": "web-1", "node": "n1", "status": "evicted"},
            {"order": 2, "namespace": "shop", "name": "web-2", "node": None, "status": "failed",
             "error": "boom | with a pipe\nand a newline <b>"},
            {"order": 3, "namespace": "vms", "name": "virt-launcher-a", "node": "n2", "status": "skipped",
             "reason": "pod_gone"}]
    result: dict[str, Any] = {"counts": {"evicted": 1, "failed": 1, "skipped": 1, "total": 3}, "pods": pods}
    if full:
        result.update(stopped=True, stop_reason="max_failures", stop_message="2 failures",
                      skipped_by_reason={"pod_gone": 1}, journal={"path": "/tmp/j.jsonl", "run_id": "r1"},
                      placements={"moved": 1, "same_node": 0, "items": [
                          {"namespace": "shop", "evicted": "web-1", "from_node": "n1", "to_node": "n3",
                           "same_node": False}]})
    else:
        result["check_mode"] = True
    return result


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- rendering (in a child Python whose path holds the collection to render with) -------------------------------------

RENDER = r"""
import json, sys
from pathlib import Path
from ansible_collections.descheduler.fleet.plugins.module_utils.report import plan_report, fleet_report
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif import report as whatif_report
from ansible_collections.descheduler.fleet.plugins.module_utils.executor import report as evict_report

source, target = Path(sys.argv[1]), Path(sys.argv[2])
target.mkdir(parents=True, exist_ok=True)
for path in sorted(source.glob("*.json")):
    entry = json.loads(path.read_text(encoding="utf-8"))
    kind, data, stem = entry["kind"], entry["data"], path.stem
    outputs = {}
    if kind == "plan":
        outputs = {"json": plan_report.to_json(data),
                   "md": plan_report.render_markdown(data, cluster=entry["cluster"]),
                   "html": plan_report.render_html(data, cluster=entry["cluster"])}
    elif kind == "fleet":
        fleet = fleet_report.summarize_fleet(data, out_dir=entry["out_dir"])
        outputs = {"json": plan_report.to_json(fleet), "md": fleet_report.render_fleet_markdown(fleet),
                   "html": fleet_report.render_fleet_html(fleet)}
    elif kind == "whatif":
        outputs = {"json": plan_report.to_json(data), "md": whatif_report.render_markdown(data),
                   "html": whatif_report.render_html(data)}
    elif kind == "evict":
        outputs = {"md": evict_report.render_markdown(data, entry["cluster"])}
    for suffix, text in outputs.items():
        (target / f"{stem}.{suffix}").write_text(text, encoding="utf-8", newline="\n")
"""


def collection_from_git(revision: str, workdir: Path) -> Path:
    """plugins/ of ``revision`` as ansible_collections/descheduler/fleet under workdir (git archive: no git state)."""
    target = workdir / "ansible_collections" / "descheduler" / "fleet"
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "plugins"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return workdir


def render(collections: Path, inputs: Path, out: Path) -> None:
    environment = dict(os.environ, PYTHONPATH=str(collections))
    subprocess.run([sys.executable, "-c", RENDER, str(inputs), str(out)], check=True, env=environment,
                   cwd=tempfile.gettempdir())


# --- Chromium ---------------------------------------------------------------------------------------------------------


def chromium(*arguments: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *arguments],
                              capture_output=True, timeout=180, check=False)


def screenshot(page: Path, png: Path) -> None:
    chromium(f"--screenshot={png}", f"--window-size={WINDOW[0]},{WINDOW[1]}", page.as_uri())
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot of {page}")


def dump_dom(page: Path) -> str:
    return chromium("--dump-dom", page.as_uri()).stdout.decode("utf-8")


class DomReader(HTMLParser):
    """The text a reader sees (whitespace collapsed) and every element with its attributes, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.elements: list[tuple[str, tuple]] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, tuple(sorted((name, value or "") for name, value in attrs))))
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if not self._style:
            self.text.append(data)

    def visible_text(self) -> str:
        """The words of every text node: whitespace between elements (a template's new lines) does not count,
        whitespace inside an inline run does show in the screenshots."""
        return " ".join(word for text in self.text for word in text.split())


def read_dom(document: str) -> DomReader:
    reader = DomReader()
    reader.feed(document)
    reader.close()
    return reader


# --- PNG --------------------------------------------------------------------------------------------------------------


def png_pixels(path: Path) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, unfiltered rows) of an 8-bit, non-interlaced RGB(A) PNG (what Chromium
    writes). Small and slow: only used when two screenshots' bytes differ."""
    data = path.read_bytes()
    position, idat = 8, []
    width = height = channels = 0
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        chunk = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _compression, _filter, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or interlace or colour not in (2, 6):
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour {colour}, interlace {interlace})")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(chunk)
        position += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows = bytearray()
    previous = bytearray(stride)
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        _unfilter(kind, line, previous, channels)
        rows += line
        previous = line
    return width, height, channels, bytes(rows)


def _unfilter(kind: int, line: bytearray, previous: bytearray, step: int) -> None:
    if kind == 1:
        for i in range(step, len(line)):
            line[i] = (line[i] + line[i - step]) & 0xFF
    elif kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + previous[i]) & 0xFF
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - step] if i >= step else 0
            line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - step] if i >= step else 0
            b = previous[i]
            c = previous[i - step] if i >= step else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF


def differing_pixels(first: Path, second: Path) -> int:
    if first.read_bytes() == second.read_bytes():
        return 0
    width, height, channels, one = png_pixels(first)
    other_width, other_height, other_channels, two = png_pixels(second)
    if (width, height, channels) != (other_width, other_height, other_channels):
        return max(width * height, other_width * other_height)
    return sum(1 for i in range(0, len(one), channels) if one[i:i + channels] != two[i:i + channels])


# --- comparison -------------------------------------------------------------------------------------------------------


def compare(inputs: Path, before: Path, after: Path, out: Path) -> int:
    """Render with both collections, then compare every output; prints one line per file."""
    render(before, inputs, out / "before")
    render(after, inputs, out / "after")
    problems = 0
    for old in sorted((out / "before").iterdir()):
        new = out / "after" / old.name
        if old.suffix != ".html":
            same = new.exists() and old.read_bytes() == new.read_bytes()
            print(f"{old.name:60} {'identical' if same else 'DIFFERS'}")
            problems += not same
            continue
        problems += compare_page(old, new, out / "screenshots")
    return 1 if problems else 0


def compare_page(old: Path, new: Path, shots: Path) -> int:
    shots.mkdir(parents=True, exist_ok=True)
    pictures = []
    for label, page in (("before", old), ("after", new)):
        png = shots / f"{page.stem}.{label}.png"
        screenshot(page, png)
        pictures.append(png)
    pixels = differing_pixels(*pictures)
    dom_old, dom_new = read_dom(dump_dom(old)), read_dom(dump_dom(new))
    text_same = dom_old.visible_text() == dom_new.visible_text()
    elements_same = dom_old.elements == dom_new.elements
    bytes_same = old.read_bytes() == new.read_bytes()
    print(f"{old.name:60} pixels differing: {pixels:>8}  DOM text: {'same' if text_same else 'DIFFERS'}  "
          f"DOM elements: {'same' if elements_same else 'DIFFER'}  bytes: {'same' if bytes_same else 'differ'}")
    if not text_same:
        _first_difference(dom_old.visible_text(), dom_new.visible_text())
    if not elements_same:
        _first_difference("\n".join(map(str, dom_old.elements)), "\n".join(map(str, dom_new.elements)))
    return int(bool(pixels) or not text_same or not elements_same)


def _first_difference(one: str, two: str) -> None:
    index = next((i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b), min(len(one), len(two)))
    start = max(index - 80, 0)
    print(f"    before: ...{one[start:index + 80]!r}\n    after:  ...{two[start:index + 80]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("inputs").add_argument("directory", type=Path)
    comparing = commands.add_parser("compare")
    comparing.add_argument("directory", type=Path, help="the inputs written by the inputs command")
    comparing.add_argument("--before", default="HEAD", help="git revision to compare with (default HEAD)")
    comparing.add_argument("--after", type=Path, default=ROOT / "build" / "collections",
                           help="collections root holding ansible_collections/descheduler/fleet (default: this tree)")
    comparing.add_argument("--out", type=Path, help="where renderings and screenshots go (default: a temporary dir)")
    arguments = parser.parse_args()
    if arguments.command == "inputs":
        write_inputs(arguments.directory)
        return 0
    if shutil.which("chromium") is None:
        parser.error("chromium is not installed (Debian: apt-get install chromium)")
    out = arguments.out or Path(tempfile.mkdtemp(prefix="report-compare-"))
    with tempfile.TemporaryDirectory() as workdir:
        before = collection_from_git(arguments.before, Path(workdir))
        status = compare(arguments.directory, before, arguments.after, out)
    print(f"renderings and screenshots: {out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
