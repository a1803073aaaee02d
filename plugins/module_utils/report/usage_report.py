"""The "actual utilization" section of a plan report: per node the requested and the actual (metrics) utilization
side by side, the thresholds on the actual scale, the VMs that will live-migrate and the soft tainter's taints.

Reads the plan's ``actual_utilization``, ``utilization``, ``evictions`` (``vm``) and ``soft_taints``
(docs/plan-format.md); a plan without a metrics-mode plugin renders nothing. Tolerates missing keys and odd types.
The templates plan_actual.html and .md lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.html import mini_bar_fill
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_dict, as_number

REQUESTED = ("cpu", "memory", "pods")
INTRO = ("{plugin} classified the nodes by actual utilization ({source}), not by requests: the thresholds below are "
         "on that scale. Requests are shown next to it for comparison; with the metrics API, actual usage after the "
         "planned evictions follows the arrow.")


@dataclass
class NodeRow:
    name: str
    actual: dict[str, Optional[float]]
    actual_after: dict[str, Optional[float]]  # KubernetesMetrics only: once the evicted pods' usage is gone
    requested: dict[str, Optional[float]]
    node_class: str
    vms: int
    taints: list[str] = field(default_factory=list)


@dataclass
class Reading:
    plugin: str
    mode: str
    query: str
    resources: list[str]
    low: dict[str, Any]
    high: dict[str, Any]
    average: dict[str, Any]
    nodes: list[NodeRow]


@dataclass
class ActualView:
    readings: list[Reading]
    vms: list[tuple[str, str, str]]  # (vm, pod, node)
    taints_applied: Optional[bool]


def read_actual(plan: Any) -> Optional[ActualView]:
    plan = as_dict(plan)
    plugins = as_dict(as_dict(plan.get("actual_utilization")).get("plugins"))
    evictions = [e for e in plan.get("evictions") or [] if isinstance(e, dict)]
    vms = [(str(as_dict(e.get("vm")).get("name")), f"{e.get('namespace')}/{e.get('name')}", str(e.get("node") or ""))
           for e in evictions if isinstance(e.get("vm"), dict)]
    if not plugins and not vms:
        return None
    requested = {str(n.get("name")): as_dict(n.get("before"))
                 for n in as_dict(plan.get("utilization")).get("nodes") or [] if isinstance(n, dict)}
    classes = {str(n.get("name")): as_dict(n.get("classes"))
               for n in as_dict(plan.get("utilization")).get("nodes") or [] if isinstance(n, dict)}
    soft = as_dict(plan.get("soft_taints"))
    taints = {str(name): [str(as_dict(t).get("key", "")).rsplit("/", 1)[-1] for t in wanted or []]
              for name, wanted in as_dict(soft.get("nodes")).items()}
    vms_by_node: dict[str, int] = {}
    for _vm, _pod, node in vms:
        vms_by_node[node] = vms_by_node.get(node, 0) + 1
    readings = [_reading(key, as_dict(value), requested, classes, vms_by_node, taints)
                for key, value in plugins.items()]
    applied = soft.get("applied_by_operator") if soft else None
    return ActualView(readings, vms, applied if isinstance(applied, bool) else None)


def _reading(key: str, value: dict, requested: dict, classes: dict, vms: dict, taints: dict) -> Reading:
    thresholds = as_dict(value.get("thresholds"))
    after = as_dict(value.get("after"))
    rows = [NodeRow(str(name), {r: as_number(v) for r, v in as_dict(pct).items()},
                    {r: as_number(v) for r, v in as_dict(after.get(str(name))).items()},
                    {r: as_number(requested.get(str(name), {}).get(r)) for r in REQUESTED},
                    str(classes.get(str(name), {}).get(key, "—")), vms.get(str(name), 0), taints.get(str(name), []))
            for name, pct in as_dict(value.get("nodes")).items()]
    return Reading(key, str(value.get("mode") or ""), str(value.get("query") or ""),
                   [str(r) for r in value.get("resources") or []], as_dict(thresholds.get("low")),
                   as_dict(thresholds.get("high")), as_dict(thresholds.get("average")),
                   sorted(rows, key=lambda row: -max([v for v in row.actual.values() if v is not None] or [0])))


def _pct(value: Any) -> str:
    number = as_number(value)
    return "—" if number is None else f"{number:.1f}%"


def _source(reading: Reading) -> str:
    return f"Prometheus query `{reading.query}`" if reading.mode == "Prometheus" else "the metrics API"


def _threshold_text(reading: Reading, resource: str) -> str:
    text = f"under ≤ {_pct(reading.low.get(resource))}, over > {_pct(reading.high.get(resource))}"
    if resource in reading.average:
        text += f" (average {_pct(reading.average[resource])})"
    return text


def _headers(reading: Reading) -> tuple:
    return ("Node", *(f"Actual {r}" for r in reading.resources), *(f"Requested {r}" for r in REQUESTED),
            "Class", "VMs to migrate", "Soft taints")


def _actual_cell(row: NodeRow, resource: str) -> str:
    """"80.0%", or "80.0% → 60.0%" when the usage after the evictions is known (metrics API)."""
    before = _pct(row.actual.get(resource))
    return f"{before} → {_pct(row.actual_after[resource])}" if resource in row.actual_after else before


def _cells(reading: Reading, row: NodeRow) -> list:
    return [row.name, *(_actual_cell(row, r) for r in reading.resources),
            *(_pct(row.requested.get(r)) for r in REQUESTED), row.node_class, row.vms or "",
            ", ".join(row.taints) or "—"]


def _html_cells(reading: Reading, row: NodeRow) -> list:
    """The cells, with the first actual value as a bar (value, label and text for the template's mini_bar)."""
    cells: list[Any] = _cells(reading, row)
    first = reading.resources[0] if reading.resources else None
    value = row.actual.get(first) if first else None
    if value is not None:
        cells[1] = {"bar": mini_bar_fill(value, 100.0, 120), "label": f"{first} {value:.1f}%",
                    "text": _actual_cell(row, first)}
    return cells


def _reading_section(reading: Reading) -> dict[str, Any]:
    return {
        "plugin": reading.plugin, "intro": INTRO.format(plugin=reading.plugin, source=_source(reading)),
        "thresholds": [(r, _threshold_text(reading, r)) for r in reading.resources], "headers": _headers(reading),
        "rows": [_html_cells(reading, row) for row in reading.nodes],
        "markdown_rows": [_cells(reading, row) for row in reading.nodes],
        "numeric": tuple(range(1, 1 + len(reading.resources) + 3)),
        "class_column": 1 + len(reading.resources) + len(REQUESTED),
    }


def section(plan: Any) -> Optional[dict[str, Any]]:
    """What the actual utilization templates show, or None for a plan without a metrics-mode plugin."""
    view = read_actual(plan)
    if view is None:
        return None
    taints = ""
    if view.taints_applied is not None:
        state = "applies them (Automatic mode)" if view.taints_applied else "does not apply them (not Automatic)"
        taints = f"Soft taints: the operator's soft tainter {state}; this plan applies nothing."
    return {"readings": [_reading_section(reading) for reading in view.readings], "vms": view.vms,
            "taints_text": taints}
