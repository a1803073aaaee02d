"""One descheduling cycle (upstream descheduler.go runDeschedulerLoop + runProfiles), simulated in dry-run mode.

Every plugin is found in the registry (engine/plugins/__init__.py) and run through its extension point's method
(engine/framework.py): the Filter and PreEvictionFilter plugins of each profile are built once into its evictor,
then each profile's deschedule plugins run, then each profile's balance plugins.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import EvictionLimits, LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import (
    BALANCE,
    DESCHEDULE,
    BuildContext,
    Check,
    CycleState,
    EvictorPlugin,
    PluginHandle,
    ProfileEvictor,
)
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
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.shared_cycle import (
    EXTENSION_POINTS,
    SharedCycles,
    cycle_steps,
    step_keys,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

_POINTS = {"deschedule": DESCHEDULE, "balance": BALANCE}


def cycle_nodes(snapshot: Snapshot, policy: Policy, order: Order = DETERMINISTIC) -> list[Node]:
    """Nodes matching the policy nodeSelector that are ready (a node without a Ready condition counts as ready)."""
    selector = parse_selector_string(policy.node_selector, "policy.nodeSelector")
    return order.nodes(snapshot.sorted_nodes(), lambda n: matches(selector, n.labels), lambda n: n.ready)


def run_cycle(snapshot: Snapshot, policy: Policy, now: float, order: Order = DETERMINISTIC,
              evictors: Optional[dict[int, ProfileEvictor]] = None,
              shared: Optional[SharedCycles] = None) -> tuple[CycleState, Optional[str]]:
    """All deschedule plugins of all profiles, then all balance plugins. Returns the state and a skip reason.

    ``evictors`` (id of a profile → ProfileEvictor: two profiles may share a name, as upstream runs them by index) may
    be kept between cycles on the same snapshot, policy and time:
    a filter plugin only caches what never changes within them. ``shared`` (the deterministic cycle only): what
    the cycles of other policies on the same snapshot and time share with this one (engine/shared_cycle.py).
    """
    if shared is not None and (order is not DETERMINISTIC or not shared.matches(snapshot, now)):
        shared = None
    nodes = cycle_nodes(snapshot, policy, order)
    limits = EvictionLimits(policy.max_total, policy.max_per_node, policy.max_per_namespace)
    state = shared.new_state(nodes, limits) if shared is not None else CycleState(snapshot, now, nodes, limits, order)
    state.flavor = policy.flavor
    if len(nodes) <= 1:
        return state, f"requires >=2 nodes, found {len(nodes)}"
    if evictors is None:
        evictors = {}
    for profile in policy.profiles:
        if id(profile) not in evictors:
            if shared is None:
                evictors[id(profile)] = profile_evictor(profile, snapshot, now)
            else:
                evictors[id(profile)] = shared.evictor(profile, partial(profile_evictor, profile, snapshot, now))
    for profile in policy.profiles:
        state.warnings.extend(evictors[id(profile)].warnings)
    steps = cycle_steps(policy)
    if shared is None:
        for step in steps:
            _run_step(state, step, evictors)
    else:
        _run_shared_steps(state, policy, steps, evictors, shared)
    return state, None


def _run_step(state: CycleState, step: tuple[Profile, str, str], evictors: dict[int, ProfileEvictor]) -> None:
    profile, name, attribute = step
    handle = PluginHandle(state, profile.name, name, dict(EXTENSION_POINTS)[attribute], evictors[id(profile)])
    _run_plugin(handle, _POINTS[attribute], profile.args[name])


def _run_shared_steps(state: CycleState, policy: Policy, steps: list[tuple[Profile, str, str]],
                      evictors: dict[int, ProfileEvictor], shared: SharedCycles) -> None:
    """The steps, starting after those another policy's cycle already ran the same way (keys[0] is the head)."""
    keys = step_keys(policy)
    initial_warnings = len(state.warnings)
    done = shared.resume(keys, state)
    shareable = True
    for position in range(max(done - 1, 0), len(steps)):
        if not shareable:
            _run_step(state, steps[position], evictors)
            continue
        watched = shared.watch()
        try:
            _run_step(state, steps[position], evictors)
        finally:
            read_metrics = shared.unwatch(watched)
        # what depends on the candidate's metrics, or stays with a plugin for later steps, is not shared
        shareable = not read_metrics and not state.plugin_state
        if shareable:
            shared.reached(keys, position + 2, state, initial_warnings)


def profile_evictor(profile: Profile, snapshot: Snapshot, now: float) -> ProfileEvictor:
    """The profile's Filter and PreEvictionFilter plugins, each built once from its args, in the order they run:
    by ``evictor_order`` (DefaultEvictor first), then the profile's order; a plugin whose Filter runs at eviction
    time (``filter_at_eviction``) has it checked just before its PreEvictionFilter."""
    context = BuildContext(snapshot, now, profile)
    built: dict[str, EvictorPlugin] = {}

    def instance(name: str) -> Any:
        if name not in built:
            built[name] = REGISTRY[name].new(profile.args[name], context)
        return built[name]

    filters: list[tuple[int, Check]] = []
    at_eviction: list[tuple[int, Check]] = []
    for name in profile.filters:
        registration = REGISTRY[name]
        entry = (registration.evictor_order, instance(name).filter)
        (at_eviction if registration.filter_at_eviction else filters).append(entry)
    at_eviction += [(REGISTRY[name].evictor_order, instance(name).pre_eviction_filter)
                    for name in profile.pre_eviction_filters]
    warnings = [text for plugin in built.values() for text in plugin.warnings]
    return ProfileEvictor(_ordered(filters), _ordered(at_eviction), warnings)


def _ordered(entries: list[tuple[int, Check]]) -> list[Check]:
    return [check for _order, check in sorted(entries, key=lambda entry: entry[0])]  # stable: profile order kept


def _run_plugin(handle: PluginHandle, point: str, args: dict) -> None:
    plugin = REGISTRY[handle.plugin].plugin
    try:
        if point == DESCHEDULE:
            plugin.deschedule(handle, args)
        else:
            plugin.balance(handle, args)
    except LimitError:
        pass  # a limit ends the plugin, as upstream
    except (EngineError, ValueError, KeyError, TypeError) as exc:
        # upstream logs a plugin error and runs the remaining plugins
        handle.error(f"{type(exc).__name__}: {exc}")


def plugin_keys(policy: Policy) -> list[str]:
    """"profile/plugin" of every strategy plugin the cycle runs, in run order."""
    return [f"{profile.name}/{name}" for profile, name, _attribute in cycle_steps(policy)]


def sample_cycles(snapshot: Snapshot, policy: Policy, now: float, samples: int, seed: int,
                  first: CycleState, evictors: dict[int, ProfileEvictor]) -> Tally:
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
