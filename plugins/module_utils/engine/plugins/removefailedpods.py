"""RemoveFailedPods (Deschedule)."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    PodFilter,
    evict_per_node,
    format_age,
    optional_label_selector,
)

NAME = "RemoveFailedPods"
ARG_FIELDS = (
    "minPodLifetimeSeconds", "excludeOwnerKinds", "reasons", "exitCodes", "includingInitContainers", "namespaces",
    "labelSelector",
)
DEFAULT_MIN_LIFETIME = 3600


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.uint("minPodLifetimeSeconds")
    reader.string_list("excludeOwnerKinds")
    reader.string_list("reasons")
    reader.int_list("exitCodes")
    reader.boolean("includingInitContainers")
    reader.namespaces()
    reader.label_selector()


def set_defaults(args: dict) -> dict:
    if args.get("minPodLifetimeSeconds") is None:
        args["minPodLifetimeSeconds"] = DEFAULT_MIN_LIFETIME
    return args


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    now = handle.now
    min_lifetime = int(args.get("minPodLifetimeSeconds") or 0)
    excluded_kinds = set(args.get("excludeOwnerKinds") or [])
    reasons = set(args.get("reasons") or [])
    exit_codes = set(args.get("exitCodes") or [])
    including_init = bool(args.get("includingInitContainers"))
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)

    def containers(pod: Pod) -> list:
        return [*pod.containers, *(pod.init_containers if including_init else ())]

    def condition(pod: Pod) -> bool:
        if pod.phase != "Failed":
            return False
        age = now - pod.created
        # upstream converts the age to uint: a pod created "in the future" wraps to a huge age on amd64
        if min_lifetime and 0 <= age < min_lifetime:
            return False
        if excluded_kinds and any(o.kind in excluded_kinds for o in pod.owners):
            return False
        if reasons:
            found = {c.waiting_reason for c in containers(pod)} | {c.terminated_reason for c in containers(pod)}
            found.add(pod.reason)
            found.discard("")  # only non-empty reasons are collected upstream, so "" never matches
            if not (found & reasons):
                return False
        if exit_codes and not any(c.exit_code in exit_codes for c in containers(pod)):
            return False
        return True

    def candidates():
        for node in handle.nodes:
            yield node.name, [p for p in handle.pods_on_node(node.name, all_phases=True)
                              if pod_filter.accepts(p, condition)]

    def reason(pod: Pod) -> str:
        why = pod.reason or next((c.terminated_reason for c in containers(pod) if c.terminated_reason), "") or "Failed"
        return f"failed pod ({why}), age {format_age(now - pod.created)}"

    evict_per_node(handle, candidates(), reason)
