"""A cluster's descheduling plan (docs/plan-format.md) as plan.json, plan.md and a self-contained plan.html.

The plan is read once into a ``PlanView`` that tolerates missing keys and unexpected types (a skipped cycle, a plan
trimmed to its summary, hand-edited JSON); the templates plan.md and plan.html (report/templates/) only read the view
and the pieces computed here. The evictions table, the optional sections, the limits and scale facts and the usage
the balance plugins classed nodes on come from modules that never import this one. No Ansible imports; Jinja2.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_atomically
from ansible_collections.descheduler.fleet.plugins.module_utils.report import (
    evictions_table,
    placement_report,
    sampling_report,
    usage_report,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.evictions_table import Eviction, read_eviction
from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import percent
from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import (
    BeforeAfterChart,
    ChartBadge,
    ChartGroup,
    ChartRow,
    before_after_chart,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.node_classes import (
    CLASSES_NOTE,
    RANGE_NOTE,
    Range,
    is_range,
    seen_text,
    seen_usage,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_scale import (
    LimitReached,
    Scale,
    limits_reached,
    limits_text,
    plan_scale,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_bool,
    as_count,
    as_dict,
    as_list,
    as_number,
    as_text,
    as_text_list,
    ranked,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import render

PLAN_FILES = {"json": "plan.json", "markdown": "plan.md", "html": "plan.html"}
RESOURCES = ("cpu", "memory", "pods")
CHART_NODE_LIMIT = 50
OVERUTILIZED = "overutilized"
# Plugins whose args carry absolute utilization thresholds: (args key, line kind) pairs.
THRESHOLD_ARGS = {
    "LowNodeUtilization": (("thresholds", "low"), ("targetThresholds", "high")),
    "HighNodeUtilization": (("thresholds", "low"),),
}


# --- the view ---------------------------------------------------------------------------------------------------------


@dataclass
class NodeUsage:
    name: str
    before: dict[str, Optional[float]]
    after: dict[str, Optional[float]]
    classes: dict[str, str]  # "profile/plugin" -> class
    unschedulable: bool = False
    ready: Optional[bool] = None
    in_cycle: Optional[bool] = None
    seen: dict[str, dict[str, Range]] = field(default_factory=dict)  # "profile/plugin" -> what it saw, if not before

    @property
    def class_values(self) -> list[str]:
        return sorted(set(self.classes.values()), key=lambda c: (c != OVERUTILIZED, c))

    @property
    def overutilized(self) -> bool:
        return OVERUTILIZED in self.classes.values()

    @property
    def change(self) -> float:
        deltas = [abs(b - a) for r, b in self.before.items() if b is not None and (a := self.after.get(r)) is not None]
        return max(deltas, default=0.0)

    @property
    def load(self) -> float:
        return max((v for v in self.before.values() if v is not None), default=0.0)


@dataclass
class Threshold:
    value: float
    kind: str  # low | high
    source: str  # profile/plugin


@dataclass
class LimitsHit:
    """summary.limits.hit as the plan gives it (the fleet summary reads it); the report itself says which limits
    were reached from ``limits_reached``, which also counts the pods each one spared."""

    total: bool = False
    nodes: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)


@dataclass
class SparedReason:
    reason: str
    count: int
    examples: list[str]


@dataclass
class PlanView:
    cluster: str
    now: str
    policy_source: str
    skipped: bool
    skip_reason: str
    cycle_nodes: list[str]
    evictions: list[Eviction]
    total: int
    by_plugin: list[tuple[str, int]]
    by_profile: list[tuple[str, int]]
    by_namespace: list[tuple[str, int]]
    by_node: dict[str, int]
    by_owner: list[tuple[str, int]]
    limits: dict[str, int]  # the configured ones only
    limits_hit: LimitsHit
    limits_reached: list[LimitReached]  # the limits that were hit or spared pods
    spared_total: int
    spared: list[SparedReason]
    resources: list[str]
    nodes: list[NodeUsage]  # in display order: overutilized first, then by cpu before, descending
    thresholds: dict[str, list[Threshold]]
    deviation_thresholds: list[str]  # plugins whose thresholds are relative to the mean: not drawn
    errors: list[str]
    warnings: list[str]
    snapshot: dict[str, int]
    scale: Scale


def read_plan(plan: Any, cluster: Optional[str] = None) -> PlanView:
    plan = as_dict(plan)
    summary = as_dict(plan.get("summary"))
    cycle = as_dict(plan.get("cycle"))
    evictions = [read_eviction(item, index) for index, item in enumerate(as_list(plan.get("evictions")), start=1)]
    evictions = [e for e in evictions if e is not None]
    cycle_nodes = as_text_list(cycle.get("nodes"))
    utilization = as_dict(plan.get("utilization"))
    count = as_number(summary.get("total"))
    total = int(count) if count is not None else len(evictions)
    thresholds, deviation_thresholds = read_thresholds(plan.get("policy"))
    by_node = dict(_counts(summary.get("by_node"), evictions, lambda e: e.node))
    nodes = sort_nodes(_node_usages(utilization.get("nodes"), cycle_nodes, seen_usage(plan)))
    snapshot = {k: as_count(v) for k, v in as_dict(plan.get("snapshot")).items()}
    spared = as_dict(plan.get("spared"))
    return PlanView(
        cluster=as_text(cluster or plan.get("cluster")),
        now=as_text(plan.get("now")),
        policy_source=as_text(plan.get("policy_source")),
        skipped=as_bool(cycle.get("skipped")),
        skip_reason=as_text(cycle.get("skip_reason")),
        cycle_nodes=cycle_nodes,
        evictions=evictions,
        total=total,
        by_plugin=_counts(summary.get("by_plugin"), evictions, lambda e: e.plugin),
        by_profile=_counts(summary.get("by_profile"), evictions, lambda e: e.profile),
        by_namespace=_counts(summary.get("by_namespace"), evictions, lambda e: e.namespace),
        by_node=by_node,
        by_owner=_counts(summary.get("by_owner"), evictions, lambda e: e.owner_key),
        limits=_configured_limits(as_dict(summary.get("limits"))),
        limits_hit=_limits_hit(as_dict(as_dict(summary.get("limits")).get("hit"))),
        limits_reached=limits_reached(summary.get("limits"), spared.get("by_reason")),
        spared_total=as_count(spared.get("total")),
        spared=_spared(as_dict(spared.get("by_reason"))),
        resources=as_text_list(utilization.get("resources")) or list(RESOURCES),
        nodes=nodes,
        thresholds=thresholds,
        deviation_thresholds=deviation_thresholds,
        errors=[_error_text(item) for item in as_list(plan.get("errors"))],
        warnings=as_text_list(plan.get("warnings")),
        snapshot=snapshot,
        scale=plan_scale(total, snapshot, by_node, len(nodes)),
    )


def _counts(given: Any, evictions: list[Eviction], key: Callable[[Eviction], Optional[str]]) -> list[tuple[str, int]]:
    """The plan's own counts when present, else counted from the evictions (a trimmed or hand-made plan)."""
    counts = as_dict(given)
    if not counts:
        counts = Counter(label for label in map(key, evictions) if label)
    return ranked((as_text(label), as_count(count)) for label, count in counts.items())


def _configured_limits(limits: dict) -> dict[str, int]:
    return {key: as_count(value) for key, value in limits.items() if key != "hit" and as_number(value) is not None}


def _limits_hit(hit: dict) -> LimitsHit:
    return LimitsHit(total=as_bool(hit.get("total")), nodes=as_text_list(hit.get("node")),
                     namespaces=as_text_list(hit.get("namespace")))


def _spared(by_reason: dict) -> list[SparedReason]:
    reasons = []
    for reason, detail in by_reason.items():
        if isinstance(detail, dict):
            reasons.append(SparedReason(as_text(reason), as_count(detail.get("count")),
                                        as_text_list(detail.get("examples"))))
        else:
            reasons.append(SparedReason(as_text(reason), as_count(detail), []))
    return sorted(reasons, key=lambda r: (-r.count, r.reason))


def _percentages(value: Any) -> dict[str, Optional[float]]:
    return {as_text(resource): as_number(pct) for resource, pct in as_dict(value).items()}


def _node_usages(nodes: Any, cycle_nodes: list[str], seen: dict[str, dict[str, dict[str, Range]]]) -> list[NodeUsage]:
    usages = []
    for node in as_list(nodes):
        if not isinstance(node, dict) or node.get("name") in (None, ""):
            continue
        name = as_text(node.get("name"))
        if "in_cycle" in node:
            in_cycle: Optional[bool] = as_bool(node.get("in_cycle"))
        else:
            in_cycle = (name in cycle_nodes) if cycle_nodes else None
        usages.append(NodeUsage(
            name=name, before=_percentages(node.get("before")), after=_percentages(node.get("after")),
            classes={as_text(k): as_text(v) for k, v in as_dict(node.get("classes")).items()},
            unschedulable=as_bool(node.get("unschedulable")),
            ready=as_bool(node["ready"]) if "ready" in node else None, in_cycle=in_cycle, seen=seen.get(name, {}),
        ))
    return usages


def _error_text(item: Any) -> str:
    if not isinstance(item, dict):
        return as_text(item)
    where = "/".join(as_text(item[k]) for k in ("profile", "plugin") if item.get(k))
    message = as_text(item.get("message")) or json.dumps(item, default=str, sort_keys=True)
    return f"{where}: {message}" if where else message


def read_thresholds(policy: Any) -> tuple[dict[str, list[Threshold]], list[str]]:
    """Threshold lines per resource from the utilization plugins of the simulated policy, and the plugins whose
    thresholds are deviations from the mean (no fixed line to draw)."""
    lines: dict[str, list[Threshold]] = {}
    deviation: list[str] = []
    for profile in as_list(as_dict(policy).get("profiles")):
        profile = as_dict(profile)
        enabled = _enabled_balance_plugins(profile)
        for config in as_list(profile.get("pluginConfig")):
            name = as_text(as_dict(config).get("name"))
            if name not in THRESHOLD_ARGS or (enabled is not None and name not in enabled):
                continue
            args = as_dict(as_dict(config).get("args"))
            source = f"{as_text(profile.get('name'))}/{name}"
            if as_bool(args.get("useDeviationThresholds")):
                deviation.append(source)
                continue
            for key, kind in THRESHOLD_ARGS[name]:
                for resource, value in as_dict(args.get(key)).items():
                    _add_threshold(lines, as_text(resource), as_number(value), kind, source)
    return lines, deviation


def _enabled_balance_plugins(profile: dict) -> Optional[set[str]]:
    plugins = profile.get("plugins")
    if not isinstance(plugins, dict):
        return None  # no plugin list to check against: trust pluginConfig
    return set(as_text_list(as_dict(plugins.get("balance")).get("enabled")))


def _add_threshold(lines: dict[str, list[Threshold]], resource: str, value: Optional[float], kind: str,
                   source: str) -> None:
    if value is None:
        return
    existing = lines.setdefault(resource, [])
    if not any(t.value == value and t.kind == kind for t in existing):
        existing.append(Threshold(value, kind, source))


# --- node order and chart selection -----------------------------------------------------------------------------------


def node_sort_key(node: NodeUsage) -> tuple:
    cpu = node.before.get("cpu")
    return (not node.overutilized, -(cpu if cpu is not None else -1.0), node.name)


def sort_nodes(nodes: list[NodeUsage]) -> list[NodeUsage]:
    return sorted(nodes, key=node_sort_key)


def select_chart_nodes(nodes: list[NodeUsage], limit: int = CHART_NODE_LIMIT) -> tuple[list[NodeUsage], int]:
    """At most ``limit`` nodes, the most changed then the most loaded, in display order; and how many were left out."""
    if len(nodes) <= limit:
        return sort_nodes(nodes), 0
    kept = sorted(nodes, key=lambda n: (-n.change, -n.load, n.name))[:limit]
    return sort_nodes(kept), len(nodes) - limit


# --- files ------------------------------------------------------------------------------------------------------------


# one encoder for every line of a report's JSON (json.dumps with options builds a new one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
_PLAIN_DEPTH = 64  # _plain writes anything deeper as text
_MAX_DEPTH = 2 * _PLAIN_DEPTH  # deeper than any plain data: a cycle
# a list holding mappings or lists and longer than this has one compact item per line (evictions, nodes); a shorter
# one has each item laid out like a mapping
_ONE_PER_LINE = 20


def to_json(data: Any) -> str:
    """A report's JSON, for people as well as programs: a mapping a key per line, indented by two spaces; a long list
    of mappings an item per line (an eviction per line, so grep shows it whole); a list of plain values on one line.
    The standard library's indenting encoder runs in Python (1 s for 82,000 evictions); each line here is encoded
    in C."""
    try:
        text = _laid_out(data, 0)
    except (TypeError, ValueError, RecursionError):  # keys JSON cannot hold, or a cycle: fall back to plain data
        text = _laid_out(_plain(data, 0), 0)
    return text + "\n"


def _laid_out(value: Any, depth: int) -> str:
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deep for a report (a cycle?)")
    inner, outer = "  " * (depth + 1), "  " * depth
    if isinstance(value, dict) and value:
        lines = [f"{inner}{_json_key(key)}: {_laid_out(item, depth + 1)}" for key, item in value.items()]
        return "{\n" + ",\n".join(lines) + f"\n{outer}}}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        if len(value) > _ONE_PER_LINE:
            lines = [inner + _ENCODER.encode(item) for item in value]
        else:
            lines = [inner + _laid_out(item, depth + 1) for item in value]
        return "[\n" + ",\n".join(lines) + f"\n{outer}]"
    return _ENCODER.encode(value)


def _json_key(key: Any) -> str:
    """A key as JSON writes it: a string, or a number, true, false or null as a string."""
    if isinstance(key, str):
        return _ENCODER.encode(key)
    if key is None or isinstance(key, (bool, int, float)):
        return _ENCODER.encode(_ENCODER.encode(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _plain(value: Any, depth: int) -> Any:
    if depth > _PLAIN_DEPTH:
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, depth + 1) for v in value]
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def write_report_files(out_dir: str, file_names: Mapping[str, str],
                       render_all: Callable[[], Mapping[str, str]]) -> dict[str, str]:
    """The one writer of a report's files: out_dir is created (if needed), then ``render_all`` renders every kind's
    text, and only then each text is written, atomically, to its name in ``file_names``: a rendering problem leaves
    the previous report untouched. Returns {kind: path} for every kind in ``file_names``."""
    os.makedirs(out_dir, exist_ok=True)
    contents = render_all()
    paths = {kind: os.path.join(out_dir, name) for kind, name in file_names.items()}
    for kind, text in contents.items():
        write_atomically(paths[kind], text)
    return paths


def write_plan_report(plan: dict, out_dir: str, *, cluster: Optional[str] = None,
                      template_dir: Optional[str] = None) -> dict[str, str]:
    """Write plan.json, plan.md, plan.html into out_dir (created if needed; written atomically: temp file +
    os.replace). ``template_dir`` holds templates that replace the shipped ones of the same name (templating.py).
    Returns {"json": path, "markdown": path, "html": path}."""
    def render_all() -> dict[str, str]:
        view = read_plan(plan, cluster)  # once for both formats (it reads every eviction)
        return {"json": to_json(plan), "markdown": _render_markdown(plan, view, template_dir),
                "html": _render_html(plan, view, template_dir)}

    return write_report_files(out_dir, PLAN_FILES, render_all)


# --- what both formats say ----------------------------------------------------------------------------------------


def plan_title(view: PlanView) -> str:
    parts = ["Descheduling plan"] + [p for p in (view.cluster, view.now) if p]
    return " — ".join(parts)


def before_after(node: NodeUsage, resource: str) -> str:
    return f"{percent(node.before.get(resource))} → {percent(node.after.get(resource))}"


def node_notes(node: NodeUsage) -> list[str]:
    notes = []
    if node.unschedulable:
        notes.append("unschedulable")
    if node.ready is False:
        notes.append("not ready")
    if node.in_cycle is False:
        notes.append("not in the cycle")
    return notes


def nodes_line(view: PlanView) -> str:
    known = len(view.nodes) or view.snapshot.get("nodes", 0)
    if view.cycle_nodes:
        return f"{len(view.cycle_nodes)} of {known}" if known else str(len(view.cycle_nodes))
    return str(known)


def limits_line(view: PlanView) -> str:
    return limits_text(view.limits, view.limits_reached)


def class_labels(node: NodeUsage, resources: list[str]) -> list[str]:
    """"class (profile/plugin)", with what that plugin saw where it differs from the usage before the cycle."""
    return [f"{value} ({key}; {seen_text(node.seen[key], resources)})" if key in node.seen else f"{value} ({key})"
            for key, value in sorted(node.classes.items())]


def classes_notes(view: PlanView) -> list[str]:
    """Why a class may not match the usage before the cycle: said wherever classes are shown."""
    if not any(node.classes for node in view.nodes):
        return []
    ranged = any(is_range(value) for node in view.nodes for seen in node.seen.values() for value in seen.values())
    return [CLASSES_NOTE, RANGE_NOTE] if ranged else [CLASSES_NOTE]


def render_markdown(plan: dict, *, cluster: Optional[str] = None, template_dir: Optional[str] = None) -> str:
    return _render_markdown(plan, read_plan(plan, cluster), template_dir)


def render_html(plan: dict, *, cluster: Optional[str] = None, template_dir: Optional[str] = None) -> str:
    return _render_html(plan, read_plan(plan, cluster), template_dir)


def _render_markdown(plan: dict, view: PlanView, template_dir: Optional[str]) -> str:
    return render("plan.md", template_dir, **_context(plan, view, for_html=False))


def _render_html(plan: dict, view: PlanView, template_dir: Optional[str]) -> str:
    return render("plan.html", template_dir, **_context(plan, view, for_html=True), **_html_context(view))


def _context(plan: dict, view: PlanView, for_html: bool) -> dict[str, Any]:
    """What both templates read: the view, the optional sections (None when the plan has no such part) and the
    rows of the tables."""
    resources = view.resources
    return {
        "plan": plan, "view": view, "title": plan_title(view), "nodes_line": nodes_line(view),
        "limits_line": limits_line(view), "classes_notes": classes_notes(view),
        "limits": [f"{name}: {value}" for name, value in view.limits.items()],
        "evictions": evictions_table.section(view.evictions, view.total, html_rows=for_html),
        "sampling": sampling_report.section(plan), "actual": usage_report.section(plan),
        "placement": placement_report.section(plan),
        "spared_rows": [(r.reason, r.count, ", ".join(r.examples)) for r in view.spared],
        "node_rows": [(node.name, *(before_after(node, r) for r in resources), view.by_node.get(node.name, 0),
                       _classes_cell(node, resources)) for node in view.nodes],
        "markdown_node_headers": ("Node", *(r.upper() if r == "cpu" else r.capitalize() for r in resources),
                                  "Evicted", "Classes"),
        "markdown_node_rows": [_markdown_node_row(view, node) for node in view.nodes],
    }


def _markdown_node_row(view: PlanView, node: NodeUsage) -> tuple:
    label = node.name + (f" ({', '.join(node_notes(node))})" if node_notes(node) else "")
    classes = ", ".join(class_labels(node, view.resources)) or "—"
    return (label, *(before_after(node, r) for r in view.resources), view.by_node.get(node.name, 0), classes)


def _classes_cell(node: NodeUsage, resources: list[str]) -> dict[str, list]:
    """The node table's classes cell: each class with the plugins that gave it, the node's notes and what each
    plugin saw where that differs from the usage before the cycle."""
    return {"classes": [(value, _class_title(node, value, resources)) for value in node.class_values],
            "notes": node_notes(node),
            "seen": [(key, seen_text(usage, resources)) for key, usage in sorted(node.seen.items())]}


# --- HTML -------------------------------------------------------------------------------------------------------------


def _html_context(view: PlanView) -> dict[str, Any]:
    """The header's facts, the chart and its legend (no chart without utilization data)."""
    facts = [f"as of {view.now}" if view.now else "", f"policy: {view.policy_source}" if view.policy_source else "",
             "dry run: no pod was evicted"]
    facts = [fact for fact in facts if fact]
    if not view.nodes:
        return {"facts": facts, "chart": None, "legend": {}}
    shown, omitted = select_chart_nodes(view.nodes)
    domain = shared_domain([node.name for node in shown])
    label = (f"Requests as a percentage of allocatable for {len(shown)} nodes, before and after the planned "
             "evictions")
    chart: BeforeAfterChart = before_after_chart([_chart_group(node, view, domain) for node in shown], label=label)
    kinds = {t.kind for lines in view.thresholds.values() for t in lines}
    legend = {"low": "low" in kinds, "high": "high" in kinds, "domain": domain, "omitted": omitted}
    return {"facts": facts, "chart": chart, "legend": legend}


def shared_domain(names: Sequence[str]) -> str:
    """The DNS suffix all names share (".eu-west-1.compute.internal"), dropped from chart labels to keep them short."""
    if len(names) < 2 or not all("." in name for name in names):
        return ""
    suffix = os.path.commonprefix([name[::-1] for name in names])[::-1]
    suffix = suffix[suffix.find("."):] if "." in suffix else ""
    return suffix if all(len(name) > len(suffix) for name in names) else ""


def _class_title(node: NodeUsage, value: str, resources: list[str]) -> str:
    """The plugins that gave ``value``, each with what it saw where that differs from the usage before the cycle."""
    keys = [k for k, v in sorted(node.classes.items()) if v == value]
    return ", ".join(f"{k} ({seen_text(node.seen[k], resources)})" if k in node.seen else k for k in keys)


def _chart_group(node: NodeUsage, view: PlanView, domain: str = "") -> ChartGroup:
    # thresholds only apply to the nodes handed to the plugins
    applies = node.in_cycle is not False
    rows = [ChartRow(resource, node.before.get(resource), node.after.get(resource),
                     [(t.value, t.kind) for t in view.thresholds.get(resource, [])] if applies else [])
            for resource in view.resources]
    badges = [ChartBadge(value, value, _class_title(node, value, view.resources)) for value in node.class_values]
    badges += [ChartBadge(note, "neutral") for note in node_notes(node)]
    usage = ", ".join(f"{r} {before_after(node, r)}" for r in view.resources)
    state = ", ".join(node.class_values + node_notes(node))
    seen = "".join(f"; {key} {seen_text(usage, view.resources)}" for key, usage in sorted(node.seen.items()))
    description = f"{node.name}{f' ({state})' if state else ''}: {usage}{seen}"
    label = node.name[: -len(domain)] if domain else node.name
    return ChartGroup(node.name, rows, badges, description, label)
