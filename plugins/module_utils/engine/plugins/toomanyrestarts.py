"""RemovePodsHavingTooManyRestarts (Deschedule)."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    evict_per_node,
    optional_label_selector,
)

NAME = "RemovePodsHavingTooManyRestarts"
ARG_FIELDS = ("podRestartThreshold", "includingInitContainers", "states", "namespaces", "labelSelector")
ALLOWED_STATES = ("Running", "CrashLoopBackOff")


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    threshold = reader.integer("podRestartThreshold")
    if threshold is None or threshold < 1:
        raise PolicyError(f"{field}.podRestartThreshold", threshold, "must be set to an integer ≥ 1")
    reader.boolean("includingInitContainers")
    reader.string_list("states", ALLOWED_STATES)
    reader.namespaces()
    reader.label_selector()


def set_defaults(args: dict) -> dict:
    return args


def restarts(pod: Pod, including_init: bool) -> int:
    total = sum(c.restarts for c in pod.containers)
    if including_init:
        total += sum(c.restarts for c in pod.init_containers)
    return total


def _in_states(pod: Pod, states: set, including_init: bool) -> bool:
    if pod.phase in states:
        return True
    containers = [*pod.containers, *(pod.init_containers if including_init else ())]
    return any(c.waiting_reason in states for c in containers)


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    threshold = int(args["podRestartThreshold"])
    including_init = bool(args.get("includingInitContainers"))
    states = set(args.get("states") or [])
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)

    def condition(pod: Pod) -> bool:
        if restarts(pod, including_init) < threshold:
            return False
        return not states or _in_states(pod, states, including_init)

    def candidates():
        for node in handle.nodes:
            pods = [p for p in handle.pods_on_node(node.name, all_phases=True) if pod_filter.accepts(p, condition)]
            pods = handle.order.sort(pods, key=lambda p: -restarts(p, including_init))  # sort.Slice by restarts
            yield node.name, pods

    evict_per_node(handle, candidates(), lambda p: f"restarts {restarts(p, including_init)} ≥ threshold {threshold}")
