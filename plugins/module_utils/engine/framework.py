"""The descheduler plugin contract (upstream pkg/framework/types), the registry of plugins, the per-cycle state and
the handle plugins work through (upstream's framework handle and pod evictor).

Extension points (docs/extending/add-a-descheduler-plugin.md):

- ``deschedule`` / ``balance``: ``DeschedulePlugin`` / ``BalancePlugin``, a plugin module whose function of that name
  runs once per cycle with the profile's (validated, defaulted) args and evicts through the handle;
- ``filter`` / ``preevictionfilter``: ``FilterPlugin`` / ``PreEvictionFilterPlugin``, an object built once per
  profile (``Registration.new``) whose method returns why a pod may not be evicted, or None. ``PluginHandle.filter``
  runs the profile's Filter plugins in order, ``PluginHandle.pre_evict`` its PreEvictionFilter plugins.

Every plugin is registered explicitly, one line each, in engine/plugins/__init__.py (upstream setupplugins.go).

Dry-run semantics: an evicted pod disappears from every later view in the same cycle, and is never placed elsewhere;
in a sampled cycle whose order lags (sampling.Order.lag_window) the latest evictions before a plugin starts are
still in its views, as when the descheduler's informers have not caught up with them. The DefaultEvictor's
minReplicas count reads the same informer through an index, at any time: in a lagging cycle it still counts the
latest evictions, the plugin's own included.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, Optional, Protocol, Sequence, runtime_checkable

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import EvictionLimits, LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import NodeUsage
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.registry import NamedRegistry
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.sampling import DETERMINISTIC, Order
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

DESCHEDULE, BALANCE, FILTER, PRE_EVICTION_FILTER = "deschedule", "balance", "filter", "preevictionfilter"
R_NO_UID = "no metadata.uid (the descheduler refuses to evict such a pod)"
EVICTED = "evicted"
NOT_EVICTED = "not-evicted"


# --- the contract ---------------------------------------------------------------------------------------------------

@runtime_checkable
class DeschedulePlugin(Protocol):
    """upstream DeschedulePlugin: evicts pods that break a rule, whatever the other nodes look like."""

    def deschedule(self, handle: PluginHandle, args: dict[str, Any]) -> None:
        ...


@runtime_checkable
class BalancePlugin(Protocol):
    """upstream BalancePlugin: evicts pods to even out the cluster."""

    def balance(self, handle: PluginHandle, args: dict[str, Any]) -> None:
        ...


@runtime_checkable
class EvictorPlugin(Protocol):
    """What every plugin built per profile (``Registration.new``, for filter / preevictionfilter) has: warnings the
    plan shows once per cycle (e.g. data it would need and the snapshot lacks)."""

    warnings: Sequence[str]


@runtime_checkable
class FilterPlugin(EvictorPlugin, Protocol):
    """upstream EvictorPlugin.Filter: why the pod may not be evicted at all (None: it may). Runs on every candidate:
    keep it cheap, cache per pod what never changes within the cycle."""

    def filter(self, handle: PluginHandle, pod: Pod) -> Optional[str]:
        ...


@runtime_checkable
class PreEvictionFilterPlugin(EvictorPlugin, Protocol):
    """upstream EvictorPlugin.PreEvictionFilter: the last check before an eviction (None: evict)."""

    def pre_eviction_filter(self, handle: PluginHandle, pod: Pod) -> Optional[str]:
        ...


# extension point → the protocol a plugin enabled there implements, and the method the cycle calls
PROTOCOLS: dict[str, tuple[type, str]] = {
    DESCHEDULE: (DeschedulePlugin, "deschedule"),
    BALANCE: (BalancePlugin, "balance"),
    FILTER: (FilterPlugin, "filter"),
    PRE_EVICTION_FILTER: (PreEvictionFilterPlugin, "pre_eviction_filter"),
}


class BuildContext:
    """What a filter plugin's factory may read: the snapshot, the cycle's time and the profile (name, args)."""

    def __init__(self, snapshot: Snapshot, now: float, profile: Any) -> None:
        self.snapshot = snapshot
        self.now = now
        self.profile = profile


def no_defaults(args: dict) -> dict:
    return args


@dataclass(frozen=True)
class Registration:
    """One plugin: upstream pluginregistry.Register(name, New, plugin, args, validator, defaulter).

    ``plugin`` is the module implementing deschedule/balance; ``new(args, context)`` builds the profile's object
    implementing filter/preevictionfilter. ``validate(args, field)`` raises PolicyError naming the field;
    ``set_defaults(args)`` returns the args the plugin runs with (and the plan shows).
    """

    name: str
    extension_points: tuple[str, ...]
    validate: Callable[[dict, str], None]
    set_defaults: Callable[[dict], dict] = no_defaults
    plugin: Any = None
    new: Optional[Callable[[Mapping[str, Any], BuildContext], Any]] = None
    # what the policy loader also calls: warnings about args that upstream accepts (args, field) → messages, and
    # the Volcano descheduler's (v0.27.1) stricter decoding of the args, for a policy Volcano runs
    config_warnings: Optional[Callable[[Mapping[str, Any], str], list[str]]] = None
    validate_volcano: Optional[Callable[[dict, str], None]] = None
    # Volcano enables the plugin's PreEvictionFilter in every profile that enables it for balance (LoadAware)
    pre_eviction_filter_with_balance: bool = False
    # the simulation runs this plugin's Filter with the PreEvictionFilters, at eviction time (KubevirtMigrationAware:
    # see engine/kubevirt_migration.py); the policy still enables it at the filter point
    filter_at_eviction: bool = False
    # where its checks run among the profile's Filter / PreEvictionFilter plugins (lower first, then profile order):
    # DefaultEvictor's always come first
    evictor_order: int = 0
    # a strategy plugin that evicts every pod its args match, deciding per pod from the snapshot alone: no order,
    # tie or lag changes which pods it evicts, only when (engine/order_free.py)
    order_free: bool = False

    def implements(self, point: str) -> bool:
        return point in self.extension_points


class Registry(NamedRegistry[Registration]):
    """Plugin name → Registration, in registration order."""

    def register(self, entry: Registration) -> None:
        for point in entry.extension_points:
            if point not in PROTOCOLS:
                raise ValueError(f"plugin {entry.name}: unknown extension point {point}")
        super().register(entry)

    def lookup(self, name: Any, field: str) -> Registration:
        """The registration, or the PolicyError naming the field, the value and the known plugins."""
        found = self.get(name) if isinstance(name, str) else None
        if found is None:
            raise PolicyError(field, name, f"unknown plugin; known plugins: {', '.join(sorted(self))}")
        return found


Check = Callable[["PluginHandle", Pod], Optional[str]]


class ProfileEvictor:
    """A profile's Filter and PreEvictionFilter checks, in the order the cycle runs them (upstream evictorImpl):
    bound methods of the plugins, looked up once (filter() runs for every candidate pod)."""

    def __init__(self, filters: Sequence[Check], pre_eviction_filters: Sequence[Check],
                 warnings: Sequence[str] = ()) -> None:
        self.filters = tuple(filters)
        self.pre_eviction_filters = tuple(pre_eviction_filters)
        self.warnings = list(warnings)  # added to each cycle's warnings


# --- the cycle ------------------------------------------------------------------------------------------------------

class SparedPods:
    """Why considered pods were not evicted: reason → pod indices, first-seen order."""

    def __init__(self) -> None:
        self.by_reason: dict[str, dict[int, None]] = {}

    def add(self, pod: Pod, reason: str) -> None:
        self.by_reason.setdefault(reason, {})[pod.index] = None


class CycleState:
    def __init__(self, snapshot: Snapshot, now: float, nodes: list[Node], limits: EvictionLimits,
                 order: Order = DETERMINISTIC) -> None:
        self.snapshot = snapshot
        self.order = order
        self.now = now
        self.nodes = nodes
        self.limits = limits
        self.usage = NodeUsage(snapshot.pods_by_node)
        self.evicted: dict[int, dict] = {}
        self.evictions: list[dict] = []
        self.spared = SparedPods()
        self.errors: list[dict] = []
        self.warnings: list[str] = []
        self.owner_counts = dict(snapshot.owner_uid_counts)
        # a lagging cycle: the latest evictions (newest last) its informer index has not caught up with, and how many
        # of them each owner UID has (what the minReplicas count still holds: O(1) per filtered pod)
        self.unseen_evictions: deque[int] = deque()
        self.unseen_by_owner: dict[str, int] = {}
        self.ready_nodes = [n for n in snapshot.sorted_nodes() if n.ready]
        self.plugin_notes: dict[str, dict] = {}
        # what a plugin keeps for the rest of the cycle (e.g. LoadAware's over-target nodes, read by its filter)
        self.plugin_state: dict[str, Any] = {}
        self.flavor = "upstream"  # "volcano": plugins behave as the Volcano descheduler's (Policy.flavor)

    def record_unseen(self, pod: Pod) -> None:
        """In a lagging cycle, ``pod`` (just evicted) joins the evictions the index has not seen; the oldest of
        them leaves once there are ``lag_window``."""
        window = self.order.lag_window
        if not window:
            return
        unseen, by_owner = self.unseen_evictions, self.unseen_by_owner
        if len(unseen) == window:
            for uid in {ref.uid for ref in self.snapshot.pods[unseen.popleft()].owners}:
                by_owner[uid] -= 1
        unseen.append(pod.index)
        for uid in {ref.uid for ref in pod.owners}:
            by_owner[uid] = by_owner.get(uid, 0) + 1

    def pods_on_node(self, node_name: str, all_phases: bool = False,
                     still_listed: Collection[int] = ()) -> list[Pod]:
        """ListPodsOnANode (non-terminal) or ListAllPodsOnANode, minus the pods evicted this cycle but those in
        ``still_listed``, in indexer order."""
        pods = self.snapshot.pods_by_node.get(node_name, ())
        evicted = self.evicted
        if still_listed:
            def keep(pod: Pod) -> bool:
                return (pod.index not in evicted or pod.index in still_listed) and (all_phases or not pod.terminal)
        elif all_phases:  # the usual cases, on the hot path of every plugin: as few tests per pod as possible
            def keep(pod: Pod) -> bool:
                return pod.index not in evicted
        else:
            def keep(pod: Pod) -> bool:
                return pod.index not in evicted and not pod.terminal
        return self.order.pods(pods, keep, self.snapshot.pods)


class PluginHandle:
    """What one plugin of one profile sees: the node list, the evictor filters and the eviction call."""

    def __init__(self, state: CycleState, profile: str, plugin: str, extension_point: str,
                 evictor: ProfileEvictor) -> None:
        self.state = state
        self.profile = profile
        self.plugin = plugin
        self.extension_point = extension_point
        self.evictor = evictor
        self.evicted_count = 0
        # a lagging cycle: the latest pods evicted before this plugin started, still in its views
        window = state.order.lag_window
        self.still_listed: frozenset[int] = frozenset(list(state.evicted)[-window:]) if window else frozenset()
        self._lagging = bool(window)
        self._still_listed_by_node: Optional[dict[str, list[Pod]]] = None

    @property
    def nodes(self) -> list[Node]:
        return self.state.nodes

    @property
    def now(self) -> float:
        return self.state.now

    @property
    def order(self) -> Order:
        """Where upstream's order is unspecified (Go maps, unstable sorts): see engine/sampling.py."""
        return self.state.order

    def pods_on_node(self, node_name: str, all_phases: bool = False) -> list[Pod]:
        return self.state.pods_on_node(node_name, all_phases, self.still_listed)

    def still_listed_on(self, node_name: str) -> list[Pod]:
        """In a lagging cycle, the live pods of the node that earlier plugins evicted and this plugin's views still
        hold (what a usage count taken from those views includes); none otherwise."""
        if self._still_listed_by_node is None:  # grouped once: a plugin asks for every node, the window may be all
            pods = self.state.snapshot.pods
            by_node: dict[str, list[Pod]] = {}
            for index in self.still_listed:
                if not pods[index].terminal:
                    by_node.setdefault(pods[index].node_name, []).append(pods[index])
            self._still_listed_by_node = by_node
        return self._still_listed_by_node.get(node_name, [])

    def spare(self, pod: Pod, reason: str) -> None:
        self.state.spared.add(pod, reason)

    def filter(self, pod: Pod, record: bool = True) -> bool:
        """The profile's Filter plugins (DefaultEvictor first), recording why a pod is protected."""
        return self._passes(self.evictor.filters, pod, record)

    def owner_counts_for(self, pod: Pod) -> Mapping[str, int]:
        """The pods per owner UID the minReplicas check reads for ``pod``: in a lagging cycle the index still holds
        the latest evictions (seen on the real descheduler: LowNodeUtilization evicted a replica on one node and,
        on the next, still counted it and evicted a second one under minReplicas)."""
        state = self.state
        if not self._lagging or len(pod.owners) != 1:
            return state.owner_counts
        uid = pod.owners[0].uid
        unseen = state.unseen_by_owner.get(uid, 0)
        return {uid: state.owner_counts.get(uid, 0) + unseen} if unseen else state.owner_counts

    def pre_evict(self, pod: Pod, record: bool = True) -> bool:
        """The profile's PreEvictionFilter plugins (DefaultEvictor first: nodeFit, then namespaceLabelSelector)."""
        return self._passes(self.evictor.pre_eviction_filters, pod, record)

    def _passes(self, checks: Sequence[Check], pod: Pod, record: bool) -> bool:
        """True when no check gives a reason to spare the pod; else the first reason is recorded (when asked)."""
        for check in checks:
            reason = check(self, pod)
            if reason is not None:
                if record:
                    self.spare(pod, reason)
                return False
        return True

    def evict(self, pod: Pod, reason: str) -> str:
        """EvictPod. Raises LimitError for the total and node limits; a namespace limit returns NOT_EVICTED."""
        state = self.state
        if pod.index in state.evicted:
            return NOT_EVICTED  # a second eviction of a pod evicted this cycle answers NotFound
        if not pod.uid:
            # upstream refuses to evict a pod without a UID (only hand-made snapshots lack one)
            self.spare(pod, R_NO_UID)
            return NOT_EVICTED
        try:
            state.limits.check(pod)
        except LimitError as exc:
            self.spare(pod, f"{exc.scope} eviction limit reached")
            if exc.scope == "namespace":
                return NOT_EVICTED
            raise
        state.limits.record(pod)
        self._remove(pod)
        owner = pod.owner
        entry = {
            "order": len(state.evictions) + 1,
            "namespace": pod.namespace,
            "name": pod.name,
            "uid": pod.uid,
            "node": pod.node_name,
            "owner": {"kind": owner.kind, "name": owner.name} if owner else None,
            "plugin": self.plugin,
            "profile": self.profile,
            "extension_point": self.extension_point,
            "reason": reason,
        }
        state.evictions.append(entry)
        state.evicted[pod.index] = entry
        state.record_unseen(pod)
        self.evicted_count += 1
        return EVICTED

    def _remove(self, pod: Pod) -> None:
        state = self.state
        state.usage.remove(pod)
        for uid in {ref.uid for ref in pod.owners}:
            state.owner_counts[uid] = state.owner_counts.get(uid, 0) - 1

    def error(self, message: str) -> None:
        self.state.errors.append({"profile": self.profile, "plugin": self.plugin, "message": message})

    def note(self, key: str, value: object) -> None:
        self.state.plugin_notes.setdefault(f"{self.profile}/{self.plugin}", {})[key] = value
