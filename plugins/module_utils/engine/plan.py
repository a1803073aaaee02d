"""compute_plan: objects + policy + now → the plan (docs/plan-format.md). Pure: no Ansible, no network."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, Iterable, Mapping, Optional, Union

from ansible_collections.descheduler.fleet.plugins.module_utils.engine import kubevirt, sampling
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.cycle import run_cycle, sample_cycles
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import CycleState
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    actual_for,
    actual_warnings,
    describe_actual,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.node_requests import (
    requested,
    requested_after,
    totals_before,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.order_free import order_free
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import Policy, load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.shared_cycle import SharedCycles
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

FORMAT_VERSION = 1
UTILIZATION_RESOURCES = ("cpu", "memory", "pods")
MAX_EXAMPLES = 5


def prepare_snapshot(objects: Union[Iterable[Mapping[str, Any]], Snapshot], placement: Any = None) -> Snapshot:
    """The snapshot to plan on; placement also records the objects, as it reads fields the slim model drops
    (scheduler/placement.py)."""
    if isinstance(objects, Snapshot):
        return objects
    with gc_paused():
        if placement is not None:
            objects = list(objects)
            placement.record_objects(objects)
        return Snapshot(objects)


def compute_plan(objects: Union[Iterable[Mapping[str, Any]], Snapshot], policy: Mapping[str, Any],
                 now: Union[datetime, str, None] = None, samples: int = 1, seed: Optional[int] = None,
                 placement: Any = None, policy_source: str = "DeschedulerPolicy",
                 operator_mode: Optional[str] = None, shared: Optional[SharedCycles] = None) -> dict:
    """Simulate one --dry-run descheduling cycle of the DeschedulerPolicy ``policy`` and describe it.

    ``policy_source`` names where the policy came from (a KubeDescheduler is rendered into a policy first:
    kubedescheduler/planning.py) and ``operator_mode`` is that KubeDescheduler's mode (it decides the soft tainter's
    taints). With ``samples`` > 1 the cycle is also run in samples-1 orders upstream could use (engine/sampling.py):
    the plan stays the deterministic one, each eviction gains its ``frequency`` and the plan a ``sampling`` block.
    ``shared`` (engine/shared_cycle.py) holds what plans of other policies on the same snapshot and time computed
    that this one needs too (the whatif module's candidates); the plan is the same with it or without.
    """
    moment = moment_of(now)
    samples, seed = sampling.check_sampling(samples, seed)
    snapshot = prepare_snapshot(objects, placement)
    with gc_paused():
        loaded = load_policy(policy, snapshot.priority_classes)
        actual_for(snapshot, moment).use_policy(loaded.document)  # which metrics clients upstream builds
        if shared is not None and not shared.matches(snapshot, moment):
            shared = None
        before = requested(totals_before(snapshot)) if shared is None else shared.requested_before()
        evictors: dict = {}
        state, skipped = run_cycle(snapshot, loaded, moment, evictors=evictors, shared=shared)
        after = requested_after(snapshot, state)
        plan = _describe(snapshot, loaded, policy_source, moment, state, skipped, before, after)
        kubevirt.annotate(plan, snapshot, state.evicted, operator_mode)  # VMs that will live-migrate, soft taints
        if samples > 1:
            tally = sample_cycles(snapshot, loaded, moment, samples, seed, state, evictors)
            exact = order_free(loaded, state)
            sampling.annotate(plan["evictions"], tally, exact)
            plan["sampling"] = sampling.describe(plan["evictions"], tally, seed, exact)
        if placement is not None:  # where the replacements land (engine/scheduler/placement.py)
            placement.annotate(plan, snapshot, state)
        return plan


def moment_of(now: Union[datetime, str, None]) -> float:
    """``now`` (an RFC3339 time, a datetime, or None for the current time) in epoch seconds."""
    if now is None:
        return datetime.now(UTC).timestamp()
    try:
        moment = parse_time(now)
    except ValueError as exc:
        raise PolicyError("now", now, "an RFC3339 time such as 2026-11-22T12:00:00Z") from exc
    if moment is None:
        raise PolicyError("now", now, "an RFC3339 time such as 2026-11-22T12:00:00Z")
    return moment


def _percent(used: Mapping[str, int], allocatable: Mapping[str, int]) -> dict[str, Optional[float]]:
    result: dict[str, Optional[float]] = {}
    for resource in UTILIZATION_RESOURCES:
        cap = allocatable.get(resource, 0)
        result[resource] = round(used.get(resource, 0) / cap * 100, 2) if cap else None
    return result


def _describe(snapshot: Snapshot, policy: Policy, policy_source: str, now: float, state: CycleState,
              skipped: Optional[str], before: dict, after: dict) -> dict:
    return {
        "format_version": FORMAT_VERSION,
        "now": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "policy_source": policy_source,
        "policy": policy.document,
        "cycle": {"skipped": skipped is not None, "skip_reason": skipped, "nodes": [n.name for n in state.nodes]},
        "evictions": state.evictions,
        "summary": _summary(state, policy),
        "spared": _spared(snapshot, state),
        "utilization": _utilization(snapshot, state, before, after),
        "errors": state.errors,
        "warnings": list(policy.warnings) + state.warnings + actual_warnings(snapshot),
        "actual_utilization": describe_actual(snapshot, state.evictions),
        "snapshot": {"nodes": len(snapshot.nodes), "pods": len(snapshot.pods),
                     "namespaces": len(snapshot.namespaces)},
    }


def _count(entries: Iterable[dict], key: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entries:
        label = key(entry)
        if label is not None:
            counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _count_values(entries: list[dict], key: str) -> dict[str, int]:
    """_count by one field of the entries (the summary's hot path: a plan may hold 100,000 evictions)."""
    counts = Counter(map(itemgetter(key), entries))
    counts.pop(None, None)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _owner_label(entry: dict) -> Optional[str]:
    owner = entry.get("owner")
    return f"{entry['namespace']}/{owner['kind']}/{owner['name']}" if owner else None


def _summary(state: CycleState, policy: Policy) -> dict:
    evictions = state.evictions
    limits = state.limits
    return {
        "total": len(evictions),
        "by_plugin": _count_values(evictions, "plugin"),
        "by_profile": _count_values(evictions, "profile"),
        "by_namespace": _count_values(evictions, "namespace"),
        "by_node": _count_values(evictions, "node"),
        "by_owner": _count(evictions, _owner_label),
        "limits": {
            "maxNoOfPodsToEvictTotal": policy.max_total,
            "maxNoOfPodsToEvictPerNode": policy.max_per_node,
            "maxNoOfPodsToEvictPerNamespace": policy.max_per_namespace,
            "hit": {"total": limits.hit_total, "node": sorted(limits.hit_nodes),
                    "namespace": sorted(limits.hit_namespaces)},
        },
    }


def _spared(snapshot: Snapshot, state: CycleState) -> dict:
    by_reason = {}
    distinct: set[int] = set()
    for reason, indices in state.spared.by_reason.items():
        kept = [i for i in indices if i not in state.evicted]
        if not kept:
            continue
        distinct.update(kept)
        by_reason[reason] = {"count": len(kept), "examples": [snapshot.pods[i].key for i in kept[:MAX_EXAMPLES]]}
    ordered = dict(sorted(by_reason.items(), key=lambda item: (-item[1]["count"], item[0])))
    return {"total": len(distinct), "by_reason": ordered}


def _utilization(snapshot: Snapshot, state: CycleState, before: dict, after: dict) -> dict:
    classes: dict[str, dict[str, str]] = {}
    for plugin_key, notes in state.plugin_notes.items():
        for node_name, node_class in notes.items():
            classes.setdefault(node_name, {})[plugin_key] = node_class
    nodes = []
    in_cycle = {n.name for n in state.nodes}
    for node in snapshot.sorted_nodes():
        allocatable = {r: scaled(r, node.allocatable.get(r, 0)) for r in UTILIZATION_RESOURCES}
        nodes.append({
            "name": node.name,
            "unschedulable": node.unschedulable,
            "ready": node.ready,
            "in_cycle": node.name in in_cycle,
            "allocatable": allocatable,
            "requested_before": before[node.name],
            "requested_after": after[node.name],
            "before": _percent(before[node.name], allocatable),
            "after": _percent(after[node.name], allocatable),
            "classes": classes.get(node.name, {}),
        })
    return {"resources": list(UTILIZATION_RESOURCES), "nodes": nodes}
