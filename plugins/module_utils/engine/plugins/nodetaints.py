"""RemovePodsViolatingNodeTaints (Deschedule)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    evict_per_node,
    optional_label_selector,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import tolerates_taint

NAME = "RemovePodsViolatingNodeTaints"
ARG_FIELDS = ("namespaces", "labelSelector", "includePreferNoSchedule", "excludedTaints", "includedTaints")


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.namespaces()
    reader.label_selector()
    reader.boolean("includePreferNoSchedule")
    excluded = reader.string_list("excludedTaints")
    included = reader.string_list("includedTaints")
    if excluded and included is not None and len(included) > 0:
        raise PolicyError(field, {"excludedTaints": excluded, "includedTaints": included},
                          "only one of excludedTaints and includedTaints can be set")


def set_defaults(args: dict) -> dict:
    return args


def _taint_in(taint: dict, entries: list[str]) -> bool:
    for entry in entries:
        if "=" in entry:
            key, value = entry.split("=", 1)
            # like upstream, "key=value" only matches a taint with a non-empty value
            if value != "" and taint.get("key") == key and taint.get("value") == value:
                return True
        elif taint.get("key") == entry:
            return True
    return False


def relevant_taints(taints: list[dict], args: dict) -> list[dict]:
    effects = {"NoSchedule"} | ({"PreferNoSchedule"} if args.get("includePreferNoSchedule") else set())
    excluded = args.get("excludedTaints") or []
    included: Optional[list] = args.get("includedTaints")
    result = []
    for taint in taints:
        if taint.get("effect") not in effects or _taint_in(taint, excluded):
            continue
        if included is not None and not _taint_in(taint, included):
            continue
        result.append(taint)
    return result


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)

    def candidates():
        for node in handle.nodes:
            taints = relevant_taints(node.taints, args)
            if not taints:
                yield node.name, []
                continue
            violates = _violation_check(taints)
            yield node.name, [p for p in handle.pods_on_node(node.name) if pod_filter.accepts(p, violates)]

    def reason(pod: Pod) -> str:
        node = next(n for n in handle.nodes if n.name == pod.node_name)
        taint = _untolerated(pod, relevant_taints(node.taints, args)) or {}
        value = f"={taint.get('value')}" if taint.get("value") else ""
        return f"does not tolerate taint {taint.get('key')}{value}:{taint.get('effect')} on node {pod.node_name}"

    evict_per_node(handle, candidates(), reason)


def _violation_check(taints: list[dict]) -> Callable[[Pod], bool]:
    """A condition for PodFilter.accepts: the pod does not tolerate one of these taints."""

    def violates(pod: Pod) -> bool:
        return _untolerated(pod, taints) is not None

    return violates


def _untolerated(pod: Pod, taints: list[dict]) -> Optional[dict]:
    for taint in taints:
        if not any(tolerates_taint(t, taint) for t in pod.tolerations):
            return taint
    return None
