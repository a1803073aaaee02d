"""PodLifeTime (Deschedule)."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import (
    POD_CONDITION_FIELDS,
    Pod,
    parse_time,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    TOTAL_LIMIT,
    PodFilter,
    evict_or_stop,
    format_age,
    optional_label_selector,
)

NAME = "PodLifeTime"
ARG_FIELDS = (
    "maxPodLifeTimeSeconds", "states", "conditions", "exitCodes", "ownerKinds", "includingInitContainers",
    "includingEphemeralContainers", "namespaces", "labelSelector",
)
CONDITION_FIELDS = ("type", "status", "reason", "minTimeSinceLastTransitionSeconds")
# Go's time.Sub saturates at the largest Duration (~292 years): a pod without creationTimestamp is that old
MAX_AGE_SECONDS = (2**63 - 1) / 1e9
ALLOWED_STATES = (
    "Running", "Pending", "Succeeded", "Failed", "Unknown",
    "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError",
    "PodInitializing", "ContainerCreating", "ImagePullBackOff", "CrashLoopBackOff", "CreateContainerConfigError",
    "ErrImagePull", "CreateContainerError", "InvalidImageName",
    "OOMKilled", "Error", "Completed", "DeadlineExceeded", "Evicted", "ContainerCannotRun", "StartError",
)


def validate(args: dict, field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    reader.uint("maxPodLifeTimeSeconds")
    reader.string_list("states", ALLOWED_STATES)
    reader.int_list("exitCodes")
    reader.boolean("includingInitContainers")
    reader.boolean("includingEphemeralContainers")
    conditions = args.get("conditions")
    if conditions is not None:
        if not isinstance(conditions, list):
            raise PolicyError(f"{field}.conditions", conditions, "expected a list of {type, status, reason, "
                              "minTimeSinceLastTransitionSeconds}")
        for index, condition in enumerate(conditions):
            where = f"{field}.conditions[{index}]"
            sub = ArgsReader(condition, where, CONDITION_FIELDS)
            for key in ("type", "status", "reason"):
                sub.string(key)
            if sub.uint("minTimeSinceLastTransitionSeconds") is None and not any(
                    sub.args.get(k) for k in ("type", "status", "reason")):
                raise PolicyError(where, condition, "at least one of type, status, reason or "
                                                    "minTimeSinceLastTransitionSeconds must be set")
    owner_kinds = reader.mapping("ownerKinds")
    if owner_kinds is not None:
        sub = ArgsReader(owner_kinds, f"{field}.ownerKinds", ("include", "exclude"))
        if sub.string_list("include") and sub.string_list("exclude"):
            raise PolicyError(f"{field}.ownerKinds", owner_kinds, "only one of include and exclude can be set")
    reader.namespaces()
    reader.label_selector()
    if args.get("maxPodLifeTimeSeconds") is None and not (args.get("states") or args.get("conditions")
                                                          or args.get("exitCodes")):
        raise PolicyError(field, dict(args), "at least one of maxPodLifeTimeSeconds, states, conditions or "
                                             "exitCodes must be set")


def set_defaults(args: dict) -> dict:
    return args


def _containers(pod: Pod, args: dict, ephemeral: bool = True) -> list:
    containers = list(pod.containers)
    if args.get("includingInitContainers"):
        containers += pod.init_containers
    if ephemeral and args.get("includingEphemeralContainers"):
        containers += pod.ephemeral_containers
    return containers


def _state_match(pod: Pod, states: set, args: dict) -> bool:
    if pod.phase in states or (pod.reason and pod.reason in states):
        return True
    return any(c.waiting_reason in states or c.terminated_reason in states for c in _containers(pod, args))


def _condition_match(pod: Pod, filters: list, now: float) -> bool:
    for condition in pod.conditions:
        for wanted in filters:
            if _one_condition(condition, wanted, now):
                return True
    return False


def _one_condition(condition: tuple, wanted: dict, now: float) -> bool:
    """``condition`` is a Pod's (type, status, reason, lastTransitionTime), see POD_CONDITION_FIELDS."""
    fields = dict(zip(POD_CONDITION_FIELDS, condition, strict=True))
    for key in ("type", "status", "reason"):
        if wanted.get(key) and fields[key] != wanted[key]:
            return False
    min_seconds = wanted.get("minTimeSinceLastTransitionSeconds")
    if min_seconds is not None:  # an explicit 0 still needs a past, non-zero lastTransitionTime
        moment = parse_time(fields["lastTransitionTime"])
        if moment is None or now - moment < min_seconds:
            return False
    return True


def _owner_kinds_ok(pod: Pod, owner_kinds: dict) -> bool:
    kinds = {o.kind for o in pod.owners}
    if owner_kinds.get("include"):
        return bool(kinds & set(owner_kinds["include"]))
    if owner_kinds.get("exclude"):
        return not (kinds & set(owner_kinds["exclude"]))
    return True


def deschedule(handle: PluginHandle, args: dict[str, Any]) -> None:
    reader = ArgsReader(args, NAME, ARG_FIELDS)
    now = handle.now
    max_age = args.get("maxPodLifeTimeSeconds")
    states = set(args.get("states") or [])
    conditions = list(args.get("conditions") or [])
    exit_codes = set(args.get("exitCodes") or [])
    owner_kinds = dict(args.get("ownerKinds") or {})
    include, exclude = reader.namespaces()
    selector, use_selector = optional_label_selector(reader)
    pod_filter = PodFilter(handle, include, exclude, selector, use_selector)

    def condition(pod: Pod) -> bool:
        age = min(now - pod.created, MAX_AGE_SECONDS)
        if max_age is not None and not (age >= 0 and int(age) > max_age):
            return False
        if states and not _state_match(pod, states, args):
            return False
        if owner_kinds and not _owner_kinds_ok(pod, owner_kinds):
            return False
        if conditions and not _condition_match(pod, conditions, now):
            return False
        # exit codes look at init containers when included, never at ephemeral ones (matchesAnyExitCode)
        if exit_codes and not any(c.exit_code in exit_codes for c in _containers(pod, args, ephemeral=False)):
            return False
        return True

    candidates: list[Pod] = []
    for node in handle.nodes:
        pods = handle.pods_on_node(node.name, all_phases=True)
        candidates.extend(p for p in pods if pod_filter.accepts(p, condition))
    candidates = handle.order.sort(candidates, key=lambda p: p.created)  # SortPodsBasedOnAge: sort.Slice

    def reason(pod: Pod) -> str:
        parts = []
        if max_age is not None:
            parts.append(f"age {format_age(now - pod.created)} > maxPodLifeTimeSeconds {max_age}")
        if states:
            parts.append("state in " + ",".join(sorted(states)))
        if conditions:
            parts.append("matches a condition filter")
        if exit_codes:
            parts.append("exit code in " + ",".join(str(c) for c in sorted(exit_codes)))
        return "; ".join(parts)

    for pod in candidates:
        # a node limit skips only this pod: the list spans all nodes
        if evict_or_stop(handle, pod, reason(pod)) == TOTAL_LIMIT:
            return
