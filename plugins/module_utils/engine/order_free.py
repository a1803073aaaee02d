"""Whether a plan is deterministic: no order, tie or lag upstream leaves open changes which pods a cycle evicts.

Then one cycle tells what every cycle does, and a sampled plan's frequencies are exact (engine/certainty.py).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import NAME as DEFAULT_EVICTOR
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import CycleState
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import REGISTRY
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import Policy


def order_free(policy: Policy, state: CycleState) -> bool:
    """Whether every cycle upstream can run evicts what the deterministic cycle ``state`` evicted.

    True when each strategy plugin decides per pod from the snapshot alone (``Registration.order_free``: PodLifeTime,
    RemovePodsHavingTooManyRestarts, RemovePodsViolatingNodeTaints, RemoveFailedPods), each profile filters with
    DefaultEvictor alone and without the checks that read what the cycle already evicted (``nodeFit`` reads node
    usage, ``minReplicas`` the owner's pods, both behind the informers' lag), and in ``state`` no eviction limit
    refused a pod and no plugin failed: then the order decides only when a pod goes, never whether.
    """
    if state.errors or _limit_refused(state):
        return False
    for profile in policy.profiles:
        if not all(_plugin_order_free(name) for name in (*profile.deschedule, *profile.balance)):
            return False
        if set(profile.filters) | set(profile.pre_eviction_filters) != {DEFAULT_EVICTOR}:
            return False
        args = profile.args.get(DEFAULT_EVICTOR) or {}
        if args.get("nodeFit") or _min_replicas(args) > 1:
            return False
    return True


def _plugin_order_free(name: str) -> bool:
    registration = REGISTRY.get(name)
    return registration is not None and registration.order_free


def _limit_refused(state: CycleState) -> bool:
    limits = state.limits
    return bool(limits.hit_total or limits.hit_nodes or limits.hit_namespaces)


def _min_replicas(args: dict) -> int:
    value: Any = args.get("minReplicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
