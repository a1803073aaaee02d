"""One descheduling cycle (upstream descheduler.go runDeschedulerLoop + runProfiles), simulated in dry-run mode."""

from __future__ import annotations

import functools
from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine import kubevirt_migration
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import (
    NAME as DEFAULT_EVICTOR,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import (
    DefaultEvictor,
    EvictionLimits,
    LimitError,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import CycleState, PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import matches, parse_selector_string
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import REGISTRY
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import (
    Policy,
    Profile,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.sampling import (
    DETERMINISTIC,
    Order,
    Tally,
    order_for_sample,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

EXTENSION_POINTS = (("deschedule", "Deschedule"), ("balance", "Balance"))


def cycle_nodes(snapshot: Snapshot, policy: Policy, order: Order = DETERMINISTIC) -> list[Node]:
    """Nodes matching the policy nodeSelector that are ready (a node without a Ready condition counts as ready)."""
    selector = parse_selector_string(policy.node_selector, "policy.nodeSelector")
    return order.nodes(snapshot.sorted_nodes(), lambda n: matches(selector, n.labels) and n.ready)


def run_cycle(snapshot: Snapshot, policy: Policy, now: float, order: Order = DETERMINISTIC,
              evictors: Optional[dict[str, DefaultEvictor]] = None) -> tuple[CycleState, Optional[str]]:
    """All deschedule plugins of all profiles, then all balance plugins. Returns the state and a skip reason.

    ``evictors`` (profile → DefaultEvictor) may be kept between cycles on the same snapshot, policy and time:
    an evictor only caches what never changes within them.
    """
    nodes = cycle_nodes(snapshot, policy, order)
    limits = EvictionLimits(policy.max_total, policy.max_per_node, policy.max_per_namespace)
    state = CycleState(snapshot, now, nodes, limits, order)
    state.flavor = policy.flavor
    if len(nodes) <= 1:
        return state, f"requires >=2 nodes, found {len(nodes)}"
    if evictors is None:
        evictors = {}
    for p in policy.profiles:
        if p.name not in evictors:
            evictors[p.name] = DefaultEvictor(p.args[DEFAULT_EVICTOR], p.priority_threshold, snapshot, now)
    for profile in policy.profiles:
        warning = kubevirt_migration.warning_for(profile, snapshot)  # the fork's only filter plugin
        if warning is not None:
            state.warnings.append(warning)
    for attribute, point in EXTENSION_POINTS:
        for profile in policy.profiles:
            extra_filters = _pre_eviction_filters(profile) + kubevirt_migration.checks_for(profile, snapshot)
            for name in getattr(profile, attribute):
                handle = PluginHandle(state, profile.name, name, point, evictors[profile.name], extra_filters)
                _run_plugin(handle, profile.args[name])
    return state, None


def _pre_eviction_filters(profile: Profile) -> list:
    """The profile's PreEvictionFilter plugins besides DefaultEvictor, each bound to its args."""
    filters = []
    for name in profile.pre_eviction_filters:
        check = getattr(REGISTRY.get(name), "pre_eviction_filter", None)
        if check is not None:
            filters.append(functools.partial(check, args=profile.args[name]))
    return filters


def _run_plugin(handle: PluginHandle, args: dict) -> None:
    try:
        REGISTRY[handle.plugin].run(handle, args)
    except LimitError:
        pass  # a limit ends the plugin, as upstream
    except (EngineError, ValueError, KeyError, TypeError) as exc:
        # upstream logs a plugin error and runs the remaining plugins
        handle.error(f"{type(exc).__name__}: {exc}")


def plugin_keys(policy: Policy) -> list[str]:
    """"profile/plugin" of every strategy plugin the cycle runs, in run order."""
    return [f"{profile.name}/{name}" for attribute, _point in EXTENSION_POINTS for profile in policy.profiles
            for name in getattr(profile, attribute)]


def sample_cycles(snapshot: Snapshot, policy: Policy, now: float, samples: int, seed: int,
                  first: CycleState, evictors: dict[str, DefaultEvictor]) -> Tally:
    """Tally ``first`` (sample 0, the deterministic cycle) and samples-1 more cycles in orders upstream could use.

    Only the cycle is re-run: the snapshot, its indexes, the loaded policy and the evictors' caches are shared.
    """
    keys = plugin_keys(policy)
    tally = Tally()
    tally.add(first.evictions, keys)
    for sample in range(1, samples):
        state, _skipped = run_cycle(snapshot, policy, now, order_for_sample(sample, seed), evictors)
        tally.add(state.evictions, keys)
    return tally
