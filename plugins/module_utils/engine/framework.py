"""The per-cycle state and the handle plugins work through (upstream's framework handle and pod evictor).

Dry-run semantics: an evicted pod disappears from every later view in the same cycle, and is never placed elsewhere;
in a sampled cycle whose order lags (sampling.Order.lag_window) the latest evictions before a plugin starts are
still in its views, as when the descheduler's informers have not caught up with them. The DefaultEvictor's
minReplicas count reads the same informer through an index, at any time: in a lagging cycle it still counts the
latest evictions, the plugin's own included.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Collection, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import (
    R_NODE_FIT,
    DefaultEvictor,
    EvictionLimits,
    LimitError,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import matches
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import NodeUsage, fits_any_other_node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.sampling import DETERMINISTIC, Order
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

R_NO_UID = "no metadata.uid (the descheduler refuses to evict such a pod)"
EVICTED = "evicted"
NOT_EVICTED = "not-evicted"


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
                return (pod.index not in evicted or pod.index in still_listed) and (all_phases or not pod.is_terminal())
        elif all_phases:  # the usual cases, on the hot path of every plugin: as few tests per pod as possible
            def keep(pod: Pod) -> bool:
                return pod.index not in evicted
        else:
            def keep(pod: Pod) -> bool:
                return pod.index not in evicted and not pod.is_terminal()
        return self.order.pods(pods, keep, self.snapshot.pods)


class PluginHandle:
    """What one plugin of one profile sees: the node list, the evictor filters and the eviction call."""

    def __init__(self, state: CycleState, profile: str, plugin: str, extension_point: str,
                 evictor: DefaultEvictor,
                 extra_filters: Iterable[Callable[[PluginHandle, Pod], Optional[str]]] = ()) -> None:
        self.state = state
        self.profile = profile
        self.plugin = plugin
        self.extension_point = extension_point
        self.evictor = evictor
        self.extra_filters = list(extra_filters)
        self.evicted_count = 0
        # a lagging cycle: the latest pods evicted before this plugin started, still in its views
        window = state.order.lag_window
        self.still_listed: frozenset[int] = frozenset(list(state.evicted)[-window:]) if window else frozenset()
        self._fit_candidates: Optional[list[Node]] = None
        self._owner_counts_lag = bool(window) and evictor.min_replicas > 1  # filter() is hot: decide once
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
                if not pods[index].is_terminal():
                    by_node.setdefault(pods[index].node_name, []).append(pods[index])
            self._still_listed_by_node = by_node
        return self._still_listed_by_node.get(node_name, [])

    def spare(self, pod: Pod, reason: str) -> None:
        self.state.spared.add(pod, reason)

    def filter(self, pod: Pod, record: bool = True) -> bool:
        """The profile's Filter (DefaultEvictor.Filter), recording why a pod is protected."""
        counts = self.owner_counts_for(pod) if self._owner_counts_lag else self.state.owner_counts
        reason = self.evictor.filter_reason(pod, counts)
        if reason is not None:
            if record:
                self.spare(pod, reason)
            return False
        return True

    def owner_counts_for(self, pod: Pod) -> Mapping[str, int]:
        """The pods per owner UID the minReplicas check reads for ``pod``: in a lagging cycle the index still holds
        the latest evictions (seen on the real descheduler: LowNodeUtilization evicted a replica on one node and,
        on the next, still counted it and evicted a second one under minReplicas)."""
        state = self.state
        if not self._owner_counts_lag or len(pod.owners) != 1:
            return state.owner_counts
        uid = pod.owners[0].uid
        unseen = state.unseen_by_owner.get(uid, 0)
        return {uid: state.owner_counts.get(uid, 0) + unseen} if unseen else state.owner_counts

    def pre_evict(self, pod: Pod, record: bool = True) -> bool:
        """The profile's PreEvictionFilter: nodeFit over the whole cluster, then namespaceLabelSelector."""
        evictor = self.evictor
        if evictor.node_fit:
            if self._fit_candidates is None:  # ready nodes and the evictor's selector are fixed for the cycle
                self._fit_candidates = [n for n in self.state.ready_nodes if matches(evictor.node_selector, n.labels)]
            if not fits_any_other_node(pod, self._fit_candidates, self.state.usage):
                if record:
                    self.spare(pod, R_NODE_FIT)
                return False
        reason = evictor.namespace_reason(pod)
        for extra in self.extra_filters:  # the profile's other PreEvictionFilter plugins
            if reason is not None:
                break
            reason = extra(self, pod)
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
