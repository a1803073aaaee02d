"""Plan reports (Markdown, self-contained HTML, JSON) and the fleet summary."""

from __future__ import annotations

import copy
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.report import plan_report
from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import (
    summarize_fleet,
    write_fleet_summary,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import TRACK_WIDTH
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    render_html,
    render_markdown,
    write_plan_report,
)

FIXTURE = Path(__file__).parent / "fixtures" / "sample_plan.json"
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


@pytest.fixture
def plan() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


class TagBalance(HTMLParser):
    """Records start/end tags and every attribute set; fails on a closing tag that does not match."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID_ELEMENTS:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> while open: {self.stack[-3:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(document: str) -> TagBalance:
    parser = TagBalance()
    parser.feed(document)
    parser.close()
    assert parser.problems == []
    assert parser.stack == [], f"unclosed: {parser.stack}"
    return parser


def with_attribute(parsed: TagBalance, name: str) -> list[dict[str, str]]:
    return [attrs for tag, attrs in parsed.elements if name in attrs]


def markdown_section(markdown: str, heading: str) -> list[str]:
    section = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def node(name: str, before: dict, after: dict, classes: dict | None = None) -> dict:
    return {"name": name, "before": before, "after": after, "classes": classes or {}}


# --- Markdown ---------------------------------------------------------------------------------------------------------


def test_markdown_lists_every_eviction_in_order(plan: dict) -> None:
    rows = markdown_section(render_markdown(plan, cluster="prod"), "Evictions")[2:]
    expected = [(str(e["order"]), f"{e['namespace']}/{e['name']}", e["node"],
                 f"{e['owner']['kind']}/{e['owner']['name']}", e["plugin"], e["profile"], e["reason"])
                for e in plan["evictions"]]
    assert [tuple(cell.strip() for cell in row.strip("|").split("|")) for row in rows] == expected


def test_markdown_title_summary_and_tables(plan: dict) -> None:
    markdown = render_markdown(plan, cluster="prod-eu-1")
    assert markdown.startswith("# Descheduling plan — prod-eu-1 — 2026-11-22T10:00:00Z\n")
    summary = markdown_section(markdown, "Summary")
    assert "| **Total** |  | 10 |" in summary
    assert "| plugin | LowNodeUtilization | 4 |" in summary
    assert "| profile | SoftTopologyAndDuplicates | 3 |" in summary
    spared = markdown_section(markdown, "Spared pods")
    assert spared[2].startswith("| DaemonSet pod | 18 | kube-system/kube-proxy-8x7kq, ")
    nodes = markdown_section(markdown, "Node utilization")
    assert nodes[2].startswith("| worker-1 | 87.5% → 50% | 72% → 60.5% | 30% → 27.3% | 3 | overutilized")
    assert "- SoftTopologyAndDuplicates/RemovePodsViolatingTopologySpreadConstraint: pod shop/" in markdown
    assert "- policy.evictLocalStoragePods: unknown field ignored" in markdown
    assert "Cycle skipped" not in markdown


def test_markdown_escapes_pipes_and_keeps_columns(plan: dict) -> None:
    plan["evictions"][0]["reason"] = "a | b"
    plan["evictions"][1]["name"] = "pod|with|pipes"
    plan["evictions"][2]["owner"] = None
    rows = markdown_section(render_markdown(plan), "Evictions")
    assert all(len(UNESCAPED_PIPE.findall(row)) == 8 for row in rows)
    assert "| a \\| b |" in rows[2]
    assert "shop/pod\\|with\\|pipes" in rows[3]
    assert "| — |" in rows[4]  # a bare pod has no owner


def test_markdown_skipped_cycle() -> None:
    cycle = {"skipped": True, "skip_reason": "requires >=2 nodes, found 1", "nodes": ["solo"]}
    skipped = {"now": "2026-11-22T10:00:00Z", "cycle": cycle, "evictions": [],
               "summary": {"total": 0, "by_plugin": {}, "by_profile": {}}}
    markdown = render_markdown(skipped, cluster="edge")
    assert "> **Cycle skipped:** requires >=2 nodes, found 1." in markdown
    assert "_No pod would be evicted._" in markdown
    assert "_No utilization data._" in markdown


# --- HTML -------------------------------------------------------------------------------------------------------------


def test_html_is_well_formed_accessible_and_self_contained(plan: dict) -> None:
    document = render_html(plan, cluster="prod-eu-1")
    parsed = parse(document)
    lowered = document.lower()
    for forbidden in ("http://", "https://", "<script", "<link", "@import", "url("):
        assert forbidden not in lowered
    assert "<title>Descheduling plan — prod-eu-1 — 2026-11-22T10:00:00Z</title>" in document
    svgs = [attrs for tag, attrs in parsed.elements if tag == "svg"]
    assert svgs and all(a.get("role") == "img" and a.get("aria-label") for a in svgs)
    headers = [attrs for tag, attrs in parsed.elements if tag == "th"]
    assert headers and all(a.get("scope") in ("col", "row") for a in headers)
    assert "<style>" in document


def test_html_key_figures(plan: dict) -> None:
    text = " ".join(parse(render_html(plan)).text)
    assert re.search(r"\b10\s+Evictions", text)
    assert re.search(r"5 of 6\s+Nodes in cycle", text)
    assert re.search(r"47\s+Pods spared", text)


def test_html_has_one_chart_group_per_node_overutilized_first(plan: dict) -> None:
    parsed = parse(render_html(plan))
    order = [attrs["data-node"] for attrs in with_attribute(parsed, "data-node")]
    # overutilized first, then by cpu before, descending
    assert order == ["worker-1", "worker-2", "infra-1", "worker-3", "worker-5", "worker-4"]


def test_html_bar_widths_are_proportional_to_percentages(plan: dict) -> None:
    bars = with_attribute(parse(render_html(plan)), "data-pct")
    expected = sum(len(n[side]) for n in plan["utilization"]["nodes"] for side in ("before", "after"))
    assert len(bars) == expected == 36
    for rect in bars:
        assert float(rect["width"]) == pytest.approx(float(rect["data-pct"]) * TRACK_WIDTH / 100, abs=0.01)
    worker_1_cpu = [b for b in bars if b["data-pct"] == "87.5"]
    assert float(worker_1_cpu[0]["width"]) == pytest.approx(TRACK_WIDTH * 0.875)


def test_html_bars_above_100_percent_are_capped() -> None:
    plan = {"utilization": {"nodes": [node("hot", {"cpu": 130.0}, {"cpu": 90.0})], "resources": ["cpu"]}}
    bars = with_attribute(parse(render_html(plan)), "data-pct")
    assert [(b["data-pct"], float(b["width"])) for b in bars] == [("130", TRACK_WIDTH), ("90", TRACK_WIDTH * 0.9)]


def test_html_threshold_lines_from_the_policy(plan: dict) -> None:
    parsed = parse(render_html(plan))
    lines = with_attribute(parsed, "data-threshold")
    assert {line["data-threshold"] for line in lines} == {"20", "50"}
    assert all("threshold" in line["class"] for line in lines)
    in_cycle_nodes = 5  # infra-1 is not handed to the plugins: no lines
    assert len(lines) == in_cycle_nodes * 3 * 2


def test_html_escapes_text(plan: dict) -> None:
    plan["evictions"][0]["name"] = "<script>alert(1)</script>"
    plan["evictions"][1]["reason"] = 'quote " and <b>bold</b> & more'
    plan["utilization"]["nodes"][0]["name"] = '<img src=x onerror="alert(1)">'
    document = render_html(plan, cluster="<i>c</i>")
    parse(document)
    assert "<script" not in document and "<img" not in document and "<i>" not in document and "<b>" not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "quote &quot; and &lt;b&gt;bold&lt;/b&gt; &amp; more" in document


def test_html_chart_keeps_the_most_changed_and_loaded_nodes_and_table_lists_all() -> None:
    nodes = [node(f"n{i:03}", {"cpu": float(i % 90), "memory": 10.0, "pods": 5.0},
                  {"cpu": float(i % 90), "memory": 10.0, "pods": 5.0}) for i in range(120)]
    nodes[7]["after"]["cpu"] = 0.0  # the most changed: must be kept although lightly loaded
    plan = {"utilization": {"nodes": nodes}, "cycle": {"nodes": [n["name"] for n in nodes]}}
    document = render_html(plan)
    parsed = parse(document)
    charted = [attrs["data-node"] for attrs in with_attribute(parsed, "data-node")]
    assert len(charted) == plan_report.CHART_NODE_LIMIT
    assert "n007" in charted
    assert "70 more nodes" in document
    table_nodes = {cell for cell in parsed.text if re.fullmatch(r"n\d{3}", cell)}
    assert table_nodes == {n["name"] for n in nodes}


@pytest.mark.parametrize("odd", [
    {},
    {"evictions": "oops", "summary": [], "spared": {"by_reason": {"x": 3, "y": None}}, "cycle": "no"},
    {"evictions": [None, 3, {"order": "x", "owner": "not a dict"}], "utilization": {"nodes": [None, {"name": 5},
     {"name": "n", "before": {"cpu": "12.5"}, "after": "?", "classes": []}]}, "errors": [{"x": 1}, "plain", None],
     "warnings": "one warning", "policy": {"profiles": [{"pluginConfig": [{"name": "LowNodeUtilization",
                                                                          "args": {"thresholds": {"cpu": "x"}}}]}]}},
])
def test_odd_plans_still_render(odd: dict, tmp_path: Path) -> None:
    parse(render_html(odd))
    assert render_markdown(odd).startswith("# Descheduling plan")
    paths = write_plan_report(odd, str(tmp_path))
    assert json.loads(Path(paths["json"]).read_text(encoding="utf-8")) == odd


# --- files ------------------------------------------------------------------------------------------------------------


def test_write_plan_report_writes_atomically_and_json_round_trips(
        plan: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "reports" / "prod"
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str, target: str) -> None:
        replaced.append((source, target))
        real_replace(source, target)

    monkeypatch.setattr(plan_report.os, "replace", spy)
    paths = write_plan_report(plan, str(out_dir), cluster="prod")
    assert paths == {"json": str(out_dir / "plan.json"), "markdown": str(out_dir / "plan.md"),
                     "html": str(out_dir / "plan.html")}
    assert sorted(target for source, target in replaced) == sorted(paths.values())
    for source, target in replaced:
        assert os.path.dirname(source) == os.path.dirname(target) and source != target
    assert sorted(os.listdir(out_dir)) == ["plan.html", "plan.json", "plan.md"]
    assert json.loads((out_dir / "plan.json").read_text(encoding="utf-8")) == plan
    assert (out_dir / "plan.md").read_text(encoding="utf-8") == render_markdown(plan, cluster="prod")
    assert (out_dir / "plan.html").read_text(encoding="utf-8") == render_html(plan, cluster="prod")


def test_a_failed_write_leaves_the_previous_report_and_no_temporary_file(plan: dict, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write_plan_report(plan, str(tmp_path), cluster="old")
    previous = (tmp_path / "plan.html").read_text(encoding="utf-8")
    real_replace = os.replace

    def failing(source: str, target: str) -> None:
        if target.endswith("plan.html"):
            raise OSError("disk full")
        real_replace(source, target)

    monkeypatch.setattr(plan_report.os, "replace", failing)
    with pytest.raises(OSError, match="disk full"):
        write_plan_report(plan, str(tmp_path), cluster="new")
    assert (tmp_path / "plan.html").read_text(encoding="utf-8") == previous
    assert sorted(os.listdir(tmp_path)) == ["plan.html", "plan.json", "plan.md"]


# --- fleet ------------------------------------------------------------------------------------------------------------


def fleet_clusters(plan: dict, report_root: Path) -> list[dict]:
    summary_only = copy.deepcopy(plan["summary"])
    summary_only.update(total=2, by_plugin={"PodLifeTime": 2}, by_namespace={"ci": 2}, by_owner={})
    summary_only["limits"]["hit"] = {"total": True, "node": [], "namespace": []}
    return [
        {"cluster": "prod", "ok": True, "error": None, "plan": plan, "report_dir": str(report_root / "prod")},
        {"cluster": "staging", "ok": False, "error": "Unauthorized | token expired", "plan": None, "report_dir": None},
        {"cluster": "dev", "ok": True, "error": None, "plan": summary_only, "report_dir": str(report_root / "dev")},
        {"cluster": "edge", "ok": True, "error": None, "report_dir": None,
         "plan": {"cycle": {"skipped": True, "skip_reason": "requires >=2 nodes, found 1"}, "evictions": []}},
    ]


def test_summarize_fleet_marks_failed_clusters_and_totals(plan: dict, tmp_path: Path) -> None:
    fleet = summarize_fleet(fleet_clusters(plan, tmp_path), out_dir=str(tmp_path))
    rows = {row["cluster"]: row for row in fleet["clusters"]}
    assert [row["status"] for row in fleet["clusters"]] == ["ok", "failed", "ok", "skipped-cycle"]
    assert (fleet["clusters_total"], fleet["clusters_ok"], fleet["clusters_failed"], fleet["clusters_skipped"]) == \
        (4, 2, 1, 1)
    assert fleet["evictions_total"] == 12
    assert fleet["evictions_by_plugin"] == {"PodLifeTime": 5, "LowNodeUtilization": 4, "RemoveDuplicates": 3}
    assert rows["staging"]["error"] == "Unauthorized | token expired" and rows["staging"]["evictions"] is None
    prod = rows["prod"]
    assert prod["evictions"] == 10 and prod["errors"] == 1 and prod["warnings"] == 1
    assert prod["top_namespaces"] == [{"name": "shop", "evictions": 4}, {"name": "batch", "evictions": 2},
                                      {"name": "media", "evictions": 2}]
    assert prod["top_owners"][:2] == [{"name": "media/ReplicaSet/thumbnailer-66c7d", "evictions": 2},
                                      {"name": "shop/ReplicaSet/web-5d9c7", "evictions": 2}]
    assert len(prod["top_owners"]) == 3
    assert prod["limits_hit"] == {"total": False, "node": ["worker-1", "worker-2", "worker-3"], "namespace": []}
    # as the plan report says it: the limit, where it was reached and the pods it spared
    assert prod["limits_reached"] == ["maxNoOfPodsToEvictPerNode 3 reached on 3 nodes (worker-1, worker-2, "
                                      "worker-3): 4 pods spared"]
    assert rows["staging"]["limits_reached"] == []
    assert prod["report"] == "prod/plan.html" and rows["staging"]["report"] is None
    assert rows["dev"]["limits_hit"]["total"] is True


def test_write_fleet_summary(plan: dict, tmp_path: Path) -> None:
    clusters = fleet_clusters(plan, tmp_path)
    paths = write_fleet_summary(clusters, str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["fleet-summary.html", "fleet-summary.json", "fleet-summary.md"]
    data = json.loads(Path(paths["json"]).read_text(encoding="utf-8"))
    assert data == summarize_fleet(clusters, out_dir=str(tmp_path))

    markdown = Path(paths["markdown"]).read_text(encoding="utf-8")
    table = markdown_section(markdown, "Clusters")
    assert all(len(UNESCAPED_PIPE.findall(row)) == 9 for row in table)
    assert table[2].startswith("| [prod](prod/plan.html) | ok | 10 | LowNodeUtilization 4, PodLifeTime 3, ")
    assert table[3].startswith("| staging | **FAILED**: Unauthorized \\| token expired | — |")
    assert "- **staging**: Unauthorized \\| token expired" in markdown
    assert "| **Total** | 12 |" in markdown

    document = Path(paths["html"]).read_text(encoding="utf-8")
    parsed = parse(document)
    assert "http://" not in document and "https://" not in document and "<script" not in document
    failed_rows = [attrs for tag, attrs in parsed.elements if tag == "tr" and attrs.get("class") == "failed"]
    assert len(failed_rows) == 1
    assert "Unauthorized | token expired" in "".join(parsed.text)
    assert [a["href"] for t, a in parsed.elements if t == "a" and not a["href"].startswith("#")] == \
        ["prod/plan.html", "dev/plan.html"]


def test_fleet_tolerates_odd_entries() -> None:
    fleet = summarize_fleet([None, {"ok": "yes", "plan": "?"}, {"cluster": "x", "ok": "false"}])
    assert [row["status"] for row in fleet["clusters"]] == ["failed", "ok", "failed"]
    assert fleet["clusters"][2]["error"] == "unknown error"
