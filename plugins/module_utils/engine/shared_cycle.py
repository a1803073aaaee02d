"""What the plans of several policies on one snapshot at one time share (the whatif module's candidates).

A cycle's state depends on the snapshot, the time, the nodes it runs on, its eviction limits and, step by step, on
the plugins it has run (each with its args and its profile's evictor). Two policies that agree on all of that up to
some plugin therefore leave the cycle in the same state after it: the second policy's cycle starts from a copy of
the first one's state there (a checkpoint) instead of re-running those plugins. Which checkpoints are worth keeping
is known before the first plan (``expect``): those where a later policy stops agreeing with an earlier one.

Also shared, as each is the same for every policy: the requests per node before the cycle, the profiles' evictors
(their caches hold only what the snapshot and the time decide) and the state a cycle starts from.

Only the deterministic cycle (sample 0) is shared: sampled cycles draw from their own generators. A plugin that
reads the snapshot's actual usage (metrics differ between candidates) or keeps state for the rest of the cycle
(``plugin_state``) ends the sharing for the steps after it. Every copy is a fresh one: plans annotate their
evictions afterwards (placement, frequencies), so nothing a plan holds is shared with another.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import EvictionLimits
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import CycleState, ProfileEvictor
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.node_requests import (
    Totals,
    requested,
    totals_before,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import Policy, Profile
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import NodeUsage
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.sampling import DETERMINISTIC
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

# (Profile attribute, the extension point as the plan names it) in run order: upstream runs every profile's
# deschedule plugins, then every profile's balance plugins
EXTENSION_POINTS = (("deschedule", "Deschedule"), ("balance", "Balance"))

# The attributes this module copies. When framework.py, evictor.py or predicates.py give their objects another one,
# sharing turns itself off (a plan is then computed in full) rather than share state it does not know how to copy.
STATE_FIELDS = frozenset([
    "snapshot", "order", "now", "nodes", "limits", "usage", "evicted", "evictions", "spared", "errors", "warnings",
    "owner_counts", "unseen_evictions", "unseen_by_owner", "ready_nodes", "plugin_notes", "plugin_state", "flavor",
])
LIMITS_FIELDS = frozenset(["max_total", "max_node", "max_namespace", "total", "by_node", "by_namespace", "hit_total",
                           "hit_nodes", "hit_namespaces"])
USAGE_FIELDS = frozenset(["used", "count", "live"])
# an eviction entry as framework.PluginHandle.evict writes it; its one nested value, the owner, is copied with it
ENTRY_FIELDS = frozenset(["order", "namespace", "name", "uid", "node", "owner", "plugin", "profile", "extension_point",
                          "reason"])

Step = tuple[Profile, str, str]  # (profile, plugin name, Profile attribute: "deschedule" or "balance")


def cycle_steps(policy: Policy) -> list[Step]:
    """The strategy plugins one cycle runs, in run order."""
    return [(profile, name, attribute) for attribute, _point in EXTENSION_POINTS for profile in policy.profiles
            for name in getattr(profile, attribute)]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def evictor_key(profile: Profile) -> tuple:
    """What a profile's evictor is built from: its name, priority threshold, Filter and PreEvictionFilter plugins
    and their args (framework.BuildContext gives the plugins nothing else of the policy)."""
    names = list(profile.filters) + list(profile.pre_eviction_filters)
    return (profile.name, profile.priority_threshold, tuple(profile.filters), tuple(profile.pre_eviction_filters),
            _canonical({name: profile.args.get(name) for name in names}))


def step_keys(policy: Policy) -> list[tuple]:
    """One key per step; equal keys up to step k (and an equal head) mean an equal state after step k."""
    head = (policy.node_selector, policy.max_total, policy.max_per_node, policy.max_per_namespace, policy.flavor)
    return [(head,)] + [(profile.name, name, attribute, evictor_key(profile), _canonical(profile.args.get(name)))
                        for profile, name, attribute in cycle_steps(policy)]


class _Watched:
    """Stands for the snapshot's ActualUsage during a shared cycle and notes whether a plugin read it."""

    __slots__ = ("_target", "touched")

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "touched", False)

    def __getattr__(self, name: str) -> Any:
        object.__setattr__(self, "touched", True)
        return getattr(self._target, name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, "touched", True)
        setattr(self._target, name, value)


class _Checkpoint:
    """A cycle's state after some steps, in a form no plan holds (copied in, copied out)."""

    def __init__(self, state: CycleState, initial_warnings: int) -> None:
        self.evicted = list(state.evicted)
        self.evictions = [_copy_entry(entry) for entry in state.evictions]
        self.usage = _copy_usage(state.usage)
        self.limits = _copy_limits(state.limits)
        self.spared = {reason: dict(indices) for reason, indices in state.spared.by_reason.items()}
        self.errors = copy.deepcopy(state.errors)
        self.warnings = list(state.warnings[initial_warnings:])
        self.owner_counts = dict(state.owner_counts)
        self.plugin_notes = copy.deepcopy(state.plugin_notes)

    def restore(self, state: CycleState) -> None:
        state.evictions = [_copy_entry(entry) for entry in self.evictions]
        state.evicted = dict(zip(self.evicted, state.evictions, strict=True))
        state.usage = _copy_usage(self.usage)
        state.limits = _copy_limits(self.limits)
        state.spared.by_reason = {reason: dict(indices) for reason, indices in self.spared.items()}
        state.errors = copy.deepcopy(self.errors)
        state.warnings.extend(self.warnings)
        state.owner_counts = dict(self.owner_counts)
        state.plugin_notes = copy.deepcopy(self.plugin_notes)


def _copy_entry(entry: dict) -> dict:
    copied = dict(entry)
    if copied["owner"] is not None:
        copied["owner"] = dict(copied["owner"])
    return copied


def _copy_usage(usage: NodeUsage) -> NodeUsage:
    clone = copy.copy(usage)
    clone.used = {name: dict(totals) for name, totals in usage.used.items()}
    clone.count = dict(usage.count)
    clone.live = {name: list(pods) for name, pods in usage.live.items()}
    return clone


def _copy_limits(limits: EvictionLimits) -> EvictionLimits:
    clone = copy.copy(limits)
    clone.by_node = dict(limits.by_node)
    clone.by_namespace = dict(limits.by_namespace)
    clone.hit_nodes = set(limits.hit_nodes)
    clone.hit_namespaces = set(limits.hit_namespaces)
    return clone


class SharedCycles:
    """Shared work of the plans of several policies on ``snapshot`` at ``now`` (epoch seconds)."""

    def __init__(self, snapshot: Snapshot, now: float) -> None:
        self.snapshot = snapshot
        self.now = now
        self._evictors: dict[tuple, ProfileEvictor] = {}
        self._wanted: set[tuple] = set()  # step-key prefixes a later policy resumes from
        self._checkpoints: dict[tuple, _Checkpoint] = {}
        self._template: Optional[CycleState] = None
        self._totals_before: Optional[dict[str, Totals]] = None
        self.enabled = self._copyable()
        self.skipped_steps = 0  # steps the cycles did not run, resuming from another policy's checkpoint

    def _copyable(self) -> bool:
        template = CycleState(self.snapshot, self.now, [], EvictionLimits(None, None, None), DETERMINISTIC)
        known = (set(vars(template)) == STATE_FIELDS and set(vars(template.limits)) == LIMITS_FIELDS
                 and set(vars(template.usage)) == USAGE_FIELDS)
        self._template = template if known else None
        return known

    # --- what every policy's plan needs the same ------------------------------------------------------------------

    def matches(self, snapshot: Snapshot, now: float) -> bool:
        return snapshot is self.snapshot and now == self.now

    def requested_before(self) -> dict[str, dict[str, int]]:
        """Requests per node before the cycle, counted once for every plan (a fresh copy per plan)."""
        if self._totals_before is None:
            self._totals_before = totals_before(self.snapshot)
        return requested(self._totals_before)

    def evictor(self, profile: Profile, build: Callable[[], ProfileEvictor]) -> ProfileEvictor:
        """The profile's evictor, built once for every policy whose profile has the same evictor."""
        key = evictor_key(profile)
        if key not in self._evictors:
            self._evictors[key] = build()
        return self._evictors[key]

    def new_state(self, nodes: list[Node], limits: EvictionLimits) -> CycleState:
        """A fresh deterministic cycle state (as CycleState builds it), without recounting the usage per node."""
        template = self._template
        if template is None:
            return CycleState(self.snapshot, self.now, nodes, limits, DETERMINISTIC)
        state = copy.copy(template)
        state.nodes = nodes
        state.limits = limits
        state.ready_nodes = list(template.ready_nodes)
        state.usage = _copy_usage(template.usage)
        state.evicted = {}
        state.evictions = []
        state.spared = type(template.spared)()
        state.errors = []
        state.warnings = []
        state.owner_counts = dict(self.snapshot.owner_uid_counts)
        state.unseen_evictions = type(template.unseen_evictions)()
        state.unseen_by_owner = {}
        state.plugin_notes = {}
        state.plugin_state = {}
        return state

    # --- the cycles' common beginnings ----------------------------------------------------------------------------

    def expect(self, policies: Iterable[Policy]) -> None:
        """The policies that will be planned, in that order: keep a checkpoint where a later one departs from an
        earlier one."""
        seen: list[list[tuple]] = []
        for policy in policies:
            keys = step_keys(policy)
            common = max((_common_length(keys, earlier) for earlier in seen), default=0)
            if common > 1:  # more than the head: at least one step to skip
                self._wanted.add(tuple(keys[:common]))
            seen.append(keys)

    def resume(self, keys: list[tuple], state: CycleState) -> int:
        """Load the longest checkpoint ``keys`` start with into ``state``; how many keys it covers (0: none)."""
        if not self.enabled:
            return 0
        for length in range(len(keys), 1, -1):
            found = self._checkpoints.get(tuple(keys[:length]))
            if found is not None:
                found.restore(state)
                self.skipped_steps += length - 1
                return length
        return 0

    def reached(self, keys: list[tuple], done: int, state: CycleState, initial_warnings: int) -> None:
        """After the first ``done`` keys: keep a checkpoint when a later policy resumes from here."""
        prefix = tuple(keys[:done])
        if not self.enabled or prefix not in self._wanted or prefix in self._checkpoints:
            return
        if state.evictions and set(state.evictions[0]) != ENTRY_FIELDS:  # entries this module cannot copy
            self.enabled = False
            return
        self._checkpoints[prefix] = _Checkpoint(state, initial_warnings)

    def watch(self) -> Optional[_Watched]:
        """Put a watch on the snapshot's actual usage for the next step (None: there is none to watch)."""
        actual = self.snapshot.actual
        if actual is None or isinstance(actual, _Watched):
            return None
        watched = _Watched(actual)
        self.snapshot.actual = watched
        return watched

    def unwatch(self, watched: Optional[_Watched]) -> bool:
        """Take the watch off; True when the step read (or replaced) the actual usage."""
        if watched is None:
            return self.snapshot.actual is not None  # a plugin built one
        if self.snapshot.actual is watched:
            self.snapshot.actual = object.__getattribute__(watched, "_target")
            return bool(watched.touched)
        return True


def _common_length(keys: list[tuple], other: list[tuple]) -> int:
    length = 0
    for mine, theirs in zip(keys, other, strict=False):
        if mine != theirs:
            break
        length += 1
    return length
