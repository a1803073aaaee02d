"""The usage a utilization plugin saw when it classed the nodes, as far as the plan tells it.

Upstream classes nodes on the usage left after the evictions of the plugins that ran before in the same cycle
(every profile's deschedule plugins, then every profile's balance plugins, in policy order): a node at 93% cpu
before the cycle can be "underutilized". The plan records each node's requests before and after the whole cycle and
which plugin made each eviction, not each pod's requests. So what a plugin saw is exact when only earlier plugins
evicted from the node (it is the usage after the cycle); when later plugins also did, cpu and memory are known only
as a range (between after and before) while the pod count stays exact.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.cycle import EXTENSION_POINTS
from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import number, percent
from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_dict,
    as_list,
    as_number,
    as_text,
    as_text_list,
)

CLASSES_NOTE = ("Classes are what the balance plugin saw: the usage after the evictions of the plugins that ran before "
                "it in this cycle ('saw …' where that differs from the usage before the cycle).")
RANGE_NOTE = ("A range means later plugins evicted from the node too: the plan does not record pod requests, only the "
              "pod count is exact.")
REQUEST_CLASSED = ("LowNodeUtilization", "HighNodeUtilization")  # by requests, unless they read metrics

Range = tuple[Optional[float], Optional[float]]  # (lowest, highest) percent; equal when exact


def run_order(policy: Any) -> list[str]:
    """"profile/plugin" of every deschedule and balance plugin of the simulated policy, in the order they ran."""
    profiles = [as_dict(profile) for profile in as_list(as_dict(policy).get("profiles"))]
    return [f"{as_text(profile.get('name'))}/{name}" for point, _name in EXTENSION_POINTS for profile in profiles
            for name in as_text_list(as_dict(as_dict(profile.get("plugins")).get(point)).get("enabled"))]


def seen_usage(plan: Any) -> dict[str, dict[str, dict[str, Range]]]:
    """node → "profile/plugin" → resource → the percent the plugin saw; only where earlier plugins evicted from
    the node (elsewhere the plugin saw the usage before the cycle)."""
    plan = as_dict(plan)
    position = {key: index for index, key in enumerate(run_order(plan.get("policy")))}
    by_metrics = set(as_dict(as_dict(plan.get("actual_utilization")).get("plugins")))  # see usage_report
    plugins_by_node: dict[str, list[str]] = {}
    for entry in as_list(plan.get("evictions")):
        entry = as_dict(entry)
        key = f"{as_text(entry.get('profile'))}/{as_text(entry.get('plugin'))}"
        plugins_by_node.setdefault(as_text(entry.get("node")), []).append(key)
    seen: dict[str, dict[str, dict[str, Range]]] = {}
    for node in map(as_dict, as_list(as_dict(plan.get("utilization")).get("nodes"))):
        name = as_text(node.get("name"))
        for key in as_dict(node.get("classes")):
            if key not in position or key in by_metrics or key.rsplit("/", 1)[-1] not in REQUEST_CLASSED:
                continue
            evicted_by = plugins_by_node.get(name, [])
            # an eviction by a plugin missing from the policy counts as a later one: it only widens the range
            earlier = sum(1 for other in evicted_by if position.get(other, len(position)) < position[key])
            if earlier:
                seen.setdefault(name, {})[key] = _seen_on_node(node, earlier, len(evicted_by) - earlier)
    return seen


def _seen_on_node(node: dict, earlier: int, later: int) -> dict[str, Range]:
    before = {as_text(r): as_number(v) for r, v in as_dict(node.get("before")).items()}
    after = {as_text(r): as_number(v) for r, v in as_dict(node.get("after")).items()}
    if not later:
        return {resource: (value, value) for resource, value in after.items()}
    seen: dict[str, Range] = {resource: (after.get(resource), value) for resource, value in before.items()}
    pods = as_number(as_dict(node.get("requested_before")).get("pods"))
    capacity = as_number(as_dict(node.get("allocatable")).get("pods"))
    if pods is not None and capacity:
        exact = round((pods - earlier) / capacity * 100, 2)
        seen["pods"] = (exact, exact)
    return seen


def is_range(value: Range) -> bool:
    return None not in value and value[0] != value[1]


def range_text(value: Range) -> str:
    low, high = value
    if not is_range(value):
        return percent(high if low is None else low)
    return f"{number(low, 1)}–{percent(high)}"


def seen_text(seen: dict[str, Range], resources: list[str]) -> str:
    """E.g. "saw cpu 46%, memory 12–30%, pods 30%"."""
    return "saw " + ", ".join(f"{r} {range_text(seen[r])}" for r in resources if r in seen)
