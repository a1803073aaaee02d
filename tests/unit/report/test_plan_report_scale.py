"""What a reader of plan.md and plan.html learns about a plan's size: the eviction limits reached and the pods they
spared, the share of the cluster evicted, what the balance plugin saw when it classed the nodes, and an evictions
table that stays usable with thousands of rows. Plans come from the real engine (compute_plan) on small clusters."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.report import evictions_table
from ansible_collections.descheduler.fleet.plugins.module_utils.report.node_classes import CLASSES_NOTE
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    render_html,
    render_markdown,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))
from builders import build_node, build_pod, policy, set_creation, set_rs_owner  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
OLD = "2026-11-20T12:00:00Z"  # older than a day: PodLifeTime evicts it
YOUNG = "2026-11-22T11:00:00Z"
LIFETIME = ("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400})
BALANCE = ("LowNodeUtilization", "balance", {"thresholds": {"cpu": 20, "pods": 20},
                                             "targetThresholds": {"cpu": 50, "pods": 50}})
PAGE = evictions_table.PAGE_SIZE
VOID_ELEMENTS = {"input", "meta", "br", "hr", "img", "link"}


def pod(name: str, cpu: int, node: str, created: str, owner: str) -> dict:
    made = build_pod(name, cpu, 0, node, lambda p: set_rs_owner(p, owner, f"{owner}-uid"))
    set_creation(made, created)
    return made


def hot_node_cluster(extra_pods: int = 0) -> list[dict]:
    """"hot" is full (100% cpu) of old pods; "mid" and "cool" hold young pods or none. ``extra_pods`` young pods on
    "mid" make the cluster bigger without adding evictions."""
    objects = [build_node("hot", 1000, 10**10, 10), build_node("cool", 1000, 10**10, 10),
               build_node("mid", 1000, 10**10, 10 + extra_pods)]
    objects += [pod(f"old-{i}", 180, "hot", OLD, "old") for i in range(5)]
    objects.append(pod("young", 100, "hot", YOUNG, "young"))
    objects += [pod(f"mid-{i}", 1, "mid", YOUNG, "mid") for i in range(1 + extra_pods)]
    return objects


def plan_of(objects: list[dict], *plugins: tuple, samples: int = 1, **limits: int) -> dict:
    return compute_plan(objects, policy(*plugins, **limits), NOW, samples=samples)


def summary_fact(markdown: str, name: str) -> str:
    return re.search(rf"^- {name}: (.*)$", markdown, re.MULTILINE).group(1)


def row_of(markdown: str, node: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| {node} |"))


class Elements(HTMLParser):
    """Every element with its attributes, the text inside it and whether it sits inside a <details>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, dict]] = []
        self.found: list[tuple[str, dict, bool]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        in_details = any(t == "details" for t, _a in self.open)
        self.found.append((tag, dict(attrs), in_details))
        if tag not in VOID_ELEMENTS:
            self.open.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.found.append((tag, dict(attrs), any(t == "details" for t, _a in self.open)))

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1][0] == tag, f"</{tag}> while open: {[t for t, _a in self.open[-3:]]}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(document: str) -> Elements:
    parser = Elements()
    parser.feed(document)
    parser.close()
    assert parser.open == []
    return parser


def evictions_section(document: str) -> str:
    start = document.index('<h2 id="evictions">')
    return document[start:document.index("</section>", start)]


# --- eviction limits --------------------------------------------------------------------------------------------------


def test_limits_line_names_the_limit_reached_and_the_pods_it_spared() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME, maxNoOfPodsToEvictPerNode=3)
    assert len(plan["evictions"]) == 3  # 5 old pods on "hot", 3 allowed
    expected = "maxNoOfPodsToEvictPerNode 3 reached on 1 node (hot): 2 pods spared"
    assert summary_fact(render_markdown(plan), "Limits") == expected
    text = " ".join(parse(render_html(plan)).text)
    assert expected in text
    assert re.search(r"\byes\s+Limits reached", text)


def test_limits_line_says_no_limit_reached_when_no_limit_spared_a_pod() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME, maxNoOfPodsToEvictPerNode=10, maxNoOfPodsToEvictTotal=50)
    assert len(plan["evictions"]) == 5
    fact = summary_fact(render_markdown(plan), "Limits")
    assert fact == "maxNoOfPodsToEvictTotal 50, maxNoOfPodsToEvictPerNode 10; no limit reached"
    assert re.search(r"\bno\s+Limits reached", " ".join(parse(render_html(plan)).text))


def test_a_limit_that_spared_pods_is_reported_even_when_the_hit_flags_say_none() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME, maxNoOfPodsToEvictPerNode=3, maxNoOfPodsToEvictTotal=50)
    plan["summary"]["limits"]["hit"] = {"total": False, "node": [], "namespace": []}  # e.g. a hand-edited plan
    fact = summary_fact(render_markdown(plan), "Limits")
    assert fact == "maxNoOfPodsToEvictPerNode 3 reached: 2 pods spared; maxNoOfPodsToEvictTotal 50 not reached"
    assert "no limit reached" not in render_markdown(plan)


def test_the_total_limit_names_itself_and_its_spared_pods() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME, maxNoOfPodsToEvictTotal=1)
    # the total limit ends the plugin at the first pod it refuses, as upstream: one pod spared
    assert summary_fact(render_markdown(plan), "Limits") == "maxNoOfPodsToEvictTotal 1 reached: 1 pod spared"


# --- scale ------------------------------------------------------------------------------------------------------------


def test_scale_line_gives_the_share_of_pods_and_of_nodes() -> None:
    plan = plan_of(hot_node_cluster(extra_pods=20), LIFETIME)  # 5 of 27 pods, all on "hot"
    markdown = render_markdown(plan)
    assert summary_fact(markdown, "Scale") == "5 evictions = 18.5% of 27 pods, on 1 of 3 nodes"
    assert "**Warning:**" not in markdown
    document = render_html(plan)
    assert "Scale: <strong>5 evictions = 18.5% of 27 pods, on 1 of 3 nodes</strong>" in document
    assert "Large plan" not in document and "tone-amber" not in evictions_section(document)


def test_a_quarter_of_the_pods_or_more_is_flagged_in_markdown_and_html() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME)  # 5 of 7 pods
    markdown = render_markdown(plan)
    assert summary_fact(markdown, "Scale") == "5 evictions = 71.4% of 7 pods, on 1 of 3 nodes"
    assert "> **Warning:** this plan evicts 71.4% of the cluster's pods (5 of 7), a quarter or more" in markdown
    assert markdown.index("**Warning:**") < markdown.index("## Summary")  # before the reader scrolls
    parsed = parse(render_html(plan))
    notices = [attrs for tag, attrs, _d in parsed.found if tag == "div" and "notice" in attrs.get("class", "")]
    assert notices and "Large plan: this plan evicts 71.4%" in "".join(parsed.text)
    assert any(attrs.get("class") == "scale tone-amber" for tag, attrs, _d in parsed.found if tag == "p")


# --- node classes -----------------------------------------------------------------------------------------------------


def test_node_classes_say_they_are_what_the_balance_plugin_saw() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME, BALANCE, maxNoOfPodsToEvictPerNode=3)
    hot = next(n for n in plan["utilization"]["nodes"] if n["name"] == "hot")
    assert hot["before"]["cpu"] == 100.0 and hot["classes"] == {"test/LowNodeUtilization": "appropriate"}
    markdown = render_markdown(plan)
    assert CLASSES_NOTE in markdown
    # the row shows the usage before the cycle and, in the class, the usage the plugin classed "hot" on
    assert row_of(markdown, "hot") == ("| hot | 100% → 46% | 0% → 0% | 60% → 30% | 3 | appropriate "
                                       "(test/LowNodeUtilization; saw cpu 46%, memory 0%, pods 30%) |")
    assert row_of(markdown, "mid").endswith("| underutilized (test/LowNodeUtilization) |")  # nothing evicted there
    text = " ".join(parse(render_html(plan)).text)
    assert CLASSES_NOTE in text
    assert "test/LowNodeUtilization: saw cpu 46%, memory 0%, pods 30%" in text


def test_node_class_usage_is_a_range_when_the_balance_plugin_also_evicted_there() -> None:
    objects = [build_node("hot", 1000, 10**10, 10), build_node("cool", 1000, 10**10, 10),
               build_node("mid", 1000, 10**10, 10), pod("old", 300, "hot", OLD, "old"),
               *(pod(f"web-{i}", 150, "hot", YOUNG, "web") for i in range(4)), pod("m", 400, "mid", YOUNG, "m")]
    plan = plan_of(objects, LIFETIME, BALANCE)
    assert [(e["name"], e["plugin"]) for e in plan["evictions"]] == [("old", "PodLifeTime"),
                                                                     ("web-0", "LowNodeUtilization")]
    markdown = render_markdown(plan)
    # cpu: somewhere between after (45%) and before (90%); pods: exactly 4 of 10 once "old" was gone
    assert "overutilized (test/LowNodeUtilization; saw cpu 45–90%, memory 0%, pods 40%)" in row_of(markdown, "hot")
    assert "A range means later plugins evicted from the node too" in markdown


def test_no_classes_no_note() -> None:
    markdown = render_markdown(plan_of(hot_node_cluster(), LIFETIME))
    assert CLASSES_NOTE not in markdown and "saw" not in markdown


# --- the evictions table ----------------------------------------------------------------------------------------------


def old_pods_cluster(count: int, nodes: int = 10) -> list[dict]:
    objects = [build_node(f"node-{n:02}", 100_000, 10**12, 500) for n in range(nodes)]
    return objects + [pod(f"old-{i:04}", 10, f"node-{i % nodes:02}", OLD, f"old-{i % 7}") for i in range(count)]


@pytest.fixture(scope="module")
def large_plan() -> dict:
    return plan_of(old_pods_cluster(PAGE + 250), LIFETIME, samples=2)


def test_html_shows_200_rows_and_keeps_the_rest_in_the_document(large_plan: dict) -> None:
    assert len(large_plan["evictions"]) == PAGE + 250
    document = render_html(large_plan)
    section = evictions_section(document)
    parsed = parse(f"<div>{section}</div>")
    rows = [in_details for tag, _attrs, in_details in parsed.found if tag == "tr"]
    assert rows.count(False) == 1 + PAGE  # a header row and the first page, shown without JavaScript
    assert rows.count(True) == 1 + 250  # the others, readable by opening the <details>
    names = [text for text in parsed.text if text.startswith("old-")]
    assert sorted(names) == sorted(e["name"] for e in large_plan["evictions"])  # every eviction, once
    assert "The first 200 of 450 evictions; the other 250 are under the table." in parsed.text
    assert any(text.startswith("Evictions 201–450") for text in parsed.text)


def test_html_rows_under_the_table_are_laid_out_as_the_first_page(large_plan: dict) -> None:
    """The rows past the first page are written without the template engine (speed): same cells, classes, escaping."""
    first, _pager, rest = evictions_section(render_html(large_plan)).partition('<details class="pager-more">')

    def shapes(part: str) -> set[str]:  # each row's markup with its texts taken out
        return {re.sub(r">[^<]*<", "><", row) for row in re.findall(r'<tr><th scope="row".*?</tr>', part)}

    assert shapes(first) and shapes(rest) == shapes(first)
    assert '<td><span class="ns">default/</span>old-' in rest
    assert re.findall(r"<tr>", rest) and all(row.endswith("</tr>") for row in re.findall(r"<tr>.*?</tr>", rest))


def test_html_big_table_needs_no_script_and_nothing_external(large_plan: dict) -> None:
    document = render_html(large_plan)
    parsed = parse(f"<div>{evictions_section(document)}</div>")
    assert [tag for tag, _attrs, _d in parsed.found if tag in ("script", "input", "button")] == []
    details = [attrs for tag, attrs, _d in parsed.found if tag == "details"]
    assert details == [{"class": "pager-more"}]  # the rows past the first page: one click away, no script
    for external in ("<script", "http://", "https://", "<link", "@import", "url(", "src="):
        assert external not in document.lower()


def test_html_table_has_a_frequency_column_when_sampled(large_plan: dict) -> None:
    headers = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', evictions_section(render_html(large_plan)))
    assert headers[:8] == ["#", "Pod", "Node", "Owner", "Plugin", "Profile", "Frequency", "Reason"]


def test_frequency_column_shows_each_pod_share_of_the_sampled_cycles() -> None:
    """4 equal replicas on n1, 2 of them go (which ones depends on the order), and one 2-day-old pod always goes."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    objects += [pod(f"web-{i}", 100, "n1", YOUNG, "web") for i in range(4)] + [pod("old", 100, "n2", OLD, "batch")]
    plan = plan_of(objects, LIFETIME, ("RemoveDuplicates", "balance", {}), samples=30)
    markdown = render_markdown(plan)
    assert "| # | Pod | Node | Owner | Plugin | Profile | Frequency | Reason |" in markdown
    assert "| default/old | n2 | ReplicaSet/batch | PodLifeTime | test | 100% |" in markdown
    web = [e for e in plan["evictions"] if e["name"].startswith("web-")]
    assert web and all(f"| {e['frequency'] * 100:.0f}% |" in row_of_pod(markdown, e["name"]) for e in web)
    assert any(e["frequency"] < 1 for e in web)
    assert re.search(r'<th scope="col"[^>]*>Frequency</th>', render_html(plan))


def row_of_pod(markdown: str, name: str) -> str:
    return next(line for line in markdown.splitlines() if f"| default/{name} |" in line)


def test_one_cycle_has_no_frequency_column_and_a_small_table_no_script() -> None:
    plan = plan_of(hot_node_cluster(), LIFETIME)
    assert "Frequency" not in render_markdown(plan)
    document = render_html(plan)
    assert "Frequency" not in document
    assert "<script" not in document and "<details" not in document  # everything fits on the first page


def test_markdown_stops_at_200_rows_and_says_how_many_more(large_plan: dict) -> None:
    markdown = render_markdown(large_plan)
    section = markdown.split("## Evictions\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert len(rows) == 2 + PAGE  # header, separator, the first page
    assert rows[2].startswith("| 1 |") and rows[-1].startswith(f"| {PAGE} |")
    assert "_The first 200 of 450 evictions are listed; 250 more are in plan.json._" in section
    assert "| Frequency |" in rows[0]


def test_big_table_rows_are_escaped(large_plan: dict) -> None:
    large_plan = {**large_plan, "evictions": [dict(e) for e in large_plan["evictions"]]}
    large_plan["evictions"][-1]["name"] = "<script>alert(1)</script>"
    large_plan["evictions"][-2]["reason"] = '"><img src=x onerror=alert(1)>'
    section = evictions_section(render_html(large_plan))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<img" not in section
    assert "<script" not in section
