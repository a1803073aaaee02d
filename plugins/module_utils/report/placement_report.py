"""The "where the evicted pods land" section of a plan report (plan option ``placement``): the verdict, each
replacement's node, and per node the three utilization states - before, after the evictions, after placement.

Reads the plan's ``placement`` block, each eviction's ``placement`` and the utilization nodes'
``after_placement`` (docs/plan-format.md); a plan without them renders nothing. Tolerates missing keys.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import (
    Markup,
    badge,
    element,
    empty,
    key_figure,
    number,
    percent,
    table,
    truncate,
)

INTRO = ("Each evicted pod's replacement is scheduled in eviction order with the kube-scheduler's filters and scores "
         "(the profile its schedulerName names); a node with the best score wins, and when several tie the scheduler "
         "picks one of them at random.")
STATES = (("before", "before"), ("after", "after evictions"), ("after_placement", "after placement"))
CHART_LIMIT = 40
BAR_HEIGHT = 7
ROW_HEIGHT = 3 * BAR_HEIGHT + 8
TRACK_X = 210
TRACK_WIDTH = 420
OPACITY = {"before": ".3", "after": ".6", "after_placement": "1"}


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _rows(plan: dict) -> list[tuple]:
    rows = []
    for eviction in _list(plan.get("evictions")):
        placed = _dict(eviction.get("placement"))
        if not placed:
            continue
        namespace = eviction.get("namespace") or ""
        pod = f"{namespace}/{eviction.get('name', '')}" if namespace else str(eviction.get("name", ""))
        tied = [str(n) for n in placed.get("tied_nodes") or []]
        rows.append((pod, str(eviction.get("node") or ""), str(placed.get("node") or "—"),
                     "yes" if placed.get("same_node") else "no", ", ".join(tied[:5]) + (" …" if len(tied) > 5 else ""),
                     str(placed.get("outcome") or ""), str(placed.get("reason") or "")))
    return rows


HEADERS = ("Pod", "Evicted from", "Lands on", "Same node", "Tied best nodes", "Outcome", "Why")


def _spread_rows(verdict: dict) -> list[tuple]:
    spread = _dict(verdict.get("spread"))
    rows = []
    for resource in ("cpu", "memory", "pods"):
        cells = []
        for state in ("before", "after_evictions", "after_placement"):
            values = _dict(_dict(spread.get(state)).get(resource))
            stddev, width = values.get("stddev"), values.get("range")
            cells.append("—" if stddev is None else f"σ {number(stddev)} · range {number(width)}")
        rows.append((resource, *cells))
    return rows


SPREAD_HEADERS = ("Resource", "Before", "After evictions", "After placement")


def _facts(verdict: dict) -> list[str]:
    improved = _dict(_dict(verdict.get("spread")).get("improved"))
    better = [r for r, yes in improved.items() if yes]
    return [f"{verdict.get('placed', 0)} of {verdict.get('evictions', 0)} replacements placed",
            f"{verdict.get('same_node', 0)} come back to the node they were evicted from",
            f"{verdict.get('unplaced', 0)} cannot be placed, {verdict.get('not_replaced', 0)} are not recreated",
            f"{verdict.get('ties', 0)} land on one of several equally good nodes",
            "utilization spread improves for " + (", ".join(better) if better else "no resource")]


def _changed_nodes(plan: dict) -> list[dict]:
    nodes = _list(_dict(plan.get("utilization")).get("nodes"))
    return [n for n in nodes if any(_dict(n.get("before")).get(r) != _dict(n.get("after_placement")).get(r)
                                    for r in ("cpu", "memory"))]


def markdown_section(plan: Any) -> str:
    from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
        markdown_table,
        markdown_text,
    )

    verdict = _dict(plan.get("placement")) if isinstance(plan, dict) else {}
    if not verdict:
        return ""
    nodes = [(n.get("name", ""), *(" → ".join(percent(_dict(n.get(k)).get(r)) for k, _unused in STATES)
                                   for r in ("cpu", "memory")))
             for n in _changed_nodes(plan)]
    return "\n\n".join([
        "## Where the evicted pods land", markdown_text(INTRO), "\n".join(f"- {f}" for f in _facts(verdict)),
        markdown_table(SPREAD_HEADERS, _spread_rows(verdict)),
        markdown_table(HEADERS, _rows(plan), "No evictions."),
        "### Nodes that change (before → after evictions → after placement)",
        markdown_table(("Node", "cpu", "memory"), nodes, "No node changes."),
    ])


def html_section(plan: Any) -> Markup:
    verdict = _dict(plan.get("placement")) if isinstance(plan, dict) else {}
    if not verdict:
        return Markup("")
    figures = element("div", [
        key_figure("placed", verdict.get("placed", 0), "green"),
        key_figure("back to the same node", verdict.get("same_node", 0), "amber"),
        key_figure("cannot be placed", verdict.get("unplaced", 0), "red" if verdict.get("unplaced") else "neutral"),
        key_figure("ties", verdict.get("ties", 0))], class_="figures")
    rows = [(*row[:3], badge(row[3], "amber") if row[3] == "yes" else row[3], *row[4:]) for row in _rows(plan)]
    changed = _changed_nodes(plan)
    return element("section", [
        element("h2", "Where the evicted pods land", id="placement"), element("p", INTRO, class_="muted"), figures,
        element("ul", [element("li", f) for f in _facts(verdict)]),
        table(SPREAD_HEADERS, _spread_rows(verdict), caption="Utilization spread across schedulable nodes"),
        _chart(changed[:CHART_LIMIT]),
        element("p", f"{len(changed) - CHART_LIMIT} more nodes change; see the nodes table.", class_="muted")
        if len(changed) > CHART_LIMIT else Markup(""),
        table(HEADERS, rows, empty_text="No evictions."),
    ])


def _chart(nodes: list[dict]) -> Markup:
    """Per changed node and resource, three bars: before, after the evictions, after placement."""
    if not nodes:
        return element("p", "No node's requests change.", class_="muted")
    label = "Requests as a percentage of allocatable: before, after the evictions and after placement"
    parts: list[Markup] = [element("title", label)]
    y = 4
    for node in nodes:
        parts.append(element("text", truncate(str(node.get("name", "")), 28), x=0, y=y + 14, class_="node-name"))
        for resource in ("cpu", "memory"):
            parts.append(_resource_rows(node, resource, y))
            y += ROW_HEIGHT
        y += 6
    legend = element("p", "Bars per resource, top to bottom: before (light), after the evictions (medium), after "
                          "placement (solid).", class_="muted")
    svg = element("svg", parts, class_="chart", role="img", aria_label=label, viewBox=f"0 0 720 {y}", width=720,
                  height=y)
    return element("figure", [svg, element("figcaption", legend)])


def _resource_rows(node: dict, resource: str, y: int) -> Markup:
    parts = [element("text", resource, x=TRACK_X - 8, y=y + 14, text_anchor="end")]
    values: list[Optional[float]] = []
    for index, (key, _unused) in enumerate(STATES):
        value = _dict(node.get(key)).get(resource)
        values.append(value)
        if isinstance(value, (int, float)):
            width = round(min(max(value, 0.0), 100.0) * TRACK_WIDTH / 100, 2)
            parts.append(empty("rect", x=TRACK_X, y=y + 2 + index * BAR_HEIGHT, width=width, height=BAR_HEIGHT - 1,
                               class_=f"bar r-{resource}", fill_opacity=OPACITY[key], data_kind=key,
                               data_pct=number(value)))
    parts.append(element("text", " → ".join(percent(v) for v in values), x=TRACK_X + TRACK_WIDTH + 8, y=y + 14,
                         class_="value"))
    return element("g", parts, data_resource=resource)
