"""The scheduler's view of the cluster (its NodeInfo cache): per node the allocatable, the requested and non-zero
requested resources, pods, host ports; kept up to date as evicted pods leave and replacements are placed."""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import milli_value, value
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
    BASIC_RESOURCES,
    AffinityTerm,
    SchedPod,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.storage import Storage

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


class TermIndex:
    """Affinity terms of bound pods, each distinct term once, with how many pods carry it per topology value.

    Entries are grouped by the namespace a term selects (None: a namespaceSelector, any namespace), so a pod is only
    checked against the terms that can select it."""

    def __init__(self) -> None:
        self.by_namespace: dict[Optional[str], dict[tuple, tuple[AffinityTerm, dict[str, int]]]] = {}

    def update(self, terms: tuple[AffinityTerm, ...], node: NodeInfo, sign: int) -> None:
        for term in terms:
            value = node.labels.get(term.topology_key)
            if value is None:
                continue  # a term whose key the node lacks matches no domain
            # a term with a namespaceSelector may select any namespace: it goes to the group every pod reads
            for namespace in (term.namespaces if term.namespace_selector is None else (None,)):
                self._count(self.by_namespace.setdefault(namespace, {}), term, value, sign)

    @staticmethod
    def _count(entries: dict, term: AffinityTerm, value: str, sign: int) -> None:
        entry = entries.get(term.identity)
        if entry is None:
            entry = entries[term.identity] = (term, {})
        counts = entry[1]
        counts[value] = counts.get(value, 0) + sign
        if counts[value] == 0:
            del counts[value]
            if not counts:
                del entries[term.identity]

    def candidates(self, namespace: str) -> list[tuple[AffinityTerm, dict[str, int]]]:
        """The entries whose term may select a pod of ``namespace`` (each once)."""
        found = dict(self.by_namespace.get(namespace) or {})
        found.update(self.by_namespace.get(None) or {})
        return list(found.values())

    def __bool__(self) -> bool:
        return any(self.by_namespace.values())


# per-selector counts kept by Cluster.matching; the least recently used go first past this many
MAX_MATCHING_ENTRIES = 2000
# Cluster.matching rescans a selector's pods rather than replay more than this many moves per pod
REPLAY_PER_RESCAN = 8


class MatchingPods:
    """For one pod selector: how many bound pods it selects on each node (node index → count, no zeros), brought up
    to date from the cluster's log of binds and unbinds instead of rescanning the namespace's pods."""

    __slots__ = ("counts", "seen", "namespaces", "predicate", "narrowing")

    def __init__(self, namespaces: Optional[Collection[str]], predicate: Callable[[SchedPod], bool],
                 narrowing: Optional[tuple[str, frozenset]]) -> None:
        self.counts: dict[int, int] = {}
        self.seen = -1  # how much of Cluster.moves is counted (-1: nothing yet)
        self.namespaces = namespaces
        self.predicate = predicate
        self.narrowing = narrowing

    def rebuild(self, cluster: Cluster) -> None:
        counts: dict[int, int] = {}
        location, predicate = cluster.location, self.predicate
        for pods in cluster.namespace_pods(self.namespaces, self.narrowing):
            for pod in pods:
                if predicate(pod):
                    index = location[pod.key].index
                    counts[index] = counts.get(index, 0) + 1
        self.counts = counts
        self.seen = len(cluster.moves)

    def replay(self, moves: list[tuple[SchedPod, int, int]]) -> None:
        counts, namespaces, predicate = self.counts, self.namespaces, self.predicate
        for pod, index, sign in moves[self.seen:]:
            if (namespaces is None or pod.namespace in namespaces) and predicate(pod):
                count = counts.get(index, 0) + sign
                if count:
                    counts[index] = count
                else:
                    del counts[index]
        self.seen = len(moves)


class NodeInfo:
    __slots__ = (
        "index", "name", "labels", "taints", "unschedulable", "alloc_cpu", "alloc_memory", "alloc_ephemeral",
        "alloc_pods", "alloc_scalar", "req_cpu", "req_memory", "req_ephemeral", "req_scalar", "nonzero_cpu",
        "nonzero_memory", "pod_count", "ports", "affinity_pods",
    )

    def __init__(self, node: Node, index: int) -> None:
        self.index = index
        self.name = node.name
        self.labels = node.labels
        self.taints = node.taints
        self.unschedulable = node.unschedulable
        allocatable = node.status_allocatable  # the scheduler reads status.allocatable
        self.alloc_cpu = milli_value(allocatable.get("cpu", 0))
        self.alloc_memory = value(allocatable.get("memory", 0))
        self.alloc_ephemeral = value(allocatable.get("ephemeral-storage", 0))
        self.alloc_pods = value(allocatable.get("pods", 0))
        self.alloc_scalar = {k: value(v) for k, v in allocatable.items() if k not in BASIC_RESOURCES}
        self.req_cpu = self.req_memory = self.req_ephemeral = 0
        self.req_scalar: dict[str, int] = {}
        self.nonzero_cpu = self.nonzero_memory = 0
        self.pod_count = 0  # the scheduler reads only how many pods a node has
        self.ports: list[tuple[str, str, int]] = []
        self.affinity_pods: list[SchedPod] = []  # pods with any inter-pod (anti-)affinity term

    def add(self, pod: SchedPod) -> None:
        # runs for every pod of the cluster as the view is built: no multiplications, no empty loops
        self.req_cpu += pod.cpu
        self.req_memory += pod.memory
        self.req_ephemeral += pod.ephemeral
        if pod.scalar:
            for name, amount in pod.scalar.items():
                self.req_scalar[name] = self.req_scalar.get(name, 0) + amount
        self.nonzero_cpu += pod.nonzero_cpu
        self.nonzero_memory += pod.nonzero_memory
        self.pod_count += 1
        if pod.host_ports:
            self.ports.extend(pod.host_ports)
        if pod.has_affinity:
            self.affinity_pods.append(pod)

    def remove(self, pod: SchedPod) -> None:
        self.req_cpu -= pod.cpu
        self.req_memory -= pod.memory
        self.req_ephemeral -= pod.ephemeral
        for name, amount in pod.scalar.items():
            self.req_scalar[name] = self.req_scalar.get(name, 0) - amount
        self.nonzero_cpu -= pod.nonzero_cpu
        self.nonzero_memory -= pod.nonzero_memory
        self.pod_count -= 1
        for port in pod.host_ports:
            self.ports.remove(port)
        if pod.has_affinity:
            self.affinity_pods.remove(pod)


def _index_labels(by_label: dict[tuple[str, str], dict[str, SchedPod]], pod: SchedPod) -> None:
    for label in pod.labels.items():
        by_label.setdefault(label, {})[pod.key] = pod


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone joined; empty when the node has neither."""
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def scheduler_order(nodes: Iterable[Node]) -> list[Node]:
    """The order the scheduler's node tree lists nodes: one node per zone in turn (zones and nodes by name here;
    upstream uses the order nodes were added, which a snapshot does not record)."""
    zones: dict[str, list[Node]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        zones.setdefault(zone_key(node.labels), []).append(node)
    ordered: list[Node] = []
    queues = [zones[z] for z in sorted(zones)]
    position = 0
    while len(ordered) < sum(len(q) for q in queues):
        for queue in queues:
            if position < len(queue):
                ordered.append(queue[position])
        position += 1
    return ordered


class Cluster:
    """All nodes in scheduler order and the pods bound to them."""

    def __init__(self, nodes: Iterable[Node], namespace_labels: Mapping[str, Mapping[str, str]]) -> None:
        self.nodes: list[NodeInfo] = [NodeInfo(n, i) for i, n in enumerate(scheduler_order(nodes))]
        self.by_name: dict[str, NodeInfo] = {n.name: n for n in self.nodes}
        self.allocatable_shapes = sorted({(n.alloc_cpu, n.alloc_memory) for n in self.nodes})
        # the nodes whose TaintToleration score can differ from the rest (taints do not change during the preview)
        self.prefer_no_schedule = [n.index for n in self.nodes
                                   if any(t.get("effect") == "PreferNoSchedule" for t in n.taints)]
        self.namespace_labels = namespace_labels
        self.storage: Optional[Storage] = None  # claims and volumes (VolumeBinding, VolumeZone); None: not known
        self.images: Any = None  # imagelocality.ImageStates: the nodes' images; None: no node reports any
        self.location: dict[str, NodeInfo] = {}  # pod key → node
        self.pods_by_namespace: dict[str, dict[str, SchedPod]] = {}
        self.owner_counts: dict[str, dict[int, int]] = {}  # controller uid → node index → live pods
        self.affinity_pod_count = 0
        # bound pods' terms that act on other pods: required anti-affinity (filter), required affinity
        # (hardPodAffinityWeight) and preferred terms (score)
        self.required_anti = TermIndex()
        self.required_affinity = TermIndex()
        self.preferred = TermIndex()  # anti-affinity terms carry a negative weight
        self.next_start = 0  # upstream nextStartNodeIndex
        self.changes: list[int] = []  # index of the node each bind/unbind changed, in order (for the caches)
        self.moves: list[tuple[SchedPod, int, int]] = []  # (pod, node index, +1 bind / -1 unbind), in order
        self._matching: dict[Any, MatchingPods] = {}
        # namespace → (label key, value) → pod key → bound pod, for the namespaces a selector was narrowed in
        self._by_label: dict[str, dict[tuple[str, str], dict[str, SchedPod]]] = {}

    def bind(self, pod: SchedPod, node_name: str) -> Optional[NodeInfo]:
        node = self.by_name.get(node_name)
        if node is None:
            return None
        self._attach(pod, node)
        self.changes.append(node.index)
        self.moves.append((pod, node.index, 1))
        return node

    def load(self, bound: Iterable[tuple[SchedPod, str]]) -> None:
        """Bind the pods already running (on nodes of the view): the starting point, so they are not logged as
        changes (whatever reads the logs is made after the load)."""
        attach, by_name = self._attach, self.by_name
        for pod, node_name in bound:
            attach(pod, by_name[node_name])

    def _attach(self, pod: SchedPod, node: NodeInfo) -> None:
        # runs for every pod of the cluster as the view is built: no dict made only to be thrown away by setdefault
        node.add(pod)
        key, namespace = pod.key, pod.namespace
        self.location[key] = node
        pods = self.pods_by_namespace.get(namespace)
        if pods is None:
            pods = self.pods_by_namespace[namespace] = {}
        pods[key] = pod
        if self._by_label:
            by_label = self._by_label.get(namespace)
            if by_label is not None:
                _index_labels(by_label, pod)
        owner = pod.owner_uid
        if owner and not pod.terminating:  # spreading ignores terminating pods
            counts = self.owner_counts.get(owner)
            if counts is None:
                counts = self.owner_counts[owner] = {}
            index = node.index
            counts[index] = counts.get(index, 0) + 1
        if pod.has_affinity:
            self.affinity_pod_count += 1
            self._index_terms(pod, node, 1)

    def unbind(self, pod: SchedPod) -> Optional[NodeInfo]:
        node = self.location.pop(pod.key, None)
        if node is None:
            return None
        node.remove(pod)
        self.changes.append(node.index)
        self.moves.append((pod, node.index, -1))
        self.pods_by_namespace.get(pod.namespace, {}).pop(pod.key, None)
        by_label = self._by_label.get(pod.namespace)
        if by_label is not None:
            for label in pod.labels.items():
                by_label.get(label, {}).pop(pod.key, None)
        if pod.owner_uid and not pod.terminating:
            counts = self.owner_counts[pod.owner_uid]
            counts[node.index] -= 1
        if pod.has_affinity:
            self.affinity_pod_count -= 1
            self._index_terms(pod, node, -1)
        return node

    def _index_terms(self, pod: SchedPod, node: NodeInfo, sign: int) -> None:
        self.required_anti.update(pod.anti_affinity, node, sign)
        self.required_affinity.update(pod.affinity, node, sign)
        self.preferred.update(pod.preferred_affinity, node, sign)
        self.preferred.update(pod.preferred_anti_affinity, node, sign)

    def namespace_pods(self, namespaces: Optional[Collection[str]],
                       narrowing: Optional[tuple[str, frozenset]] = None) -> list[Collection[SchedPod]]:
        """The bound pods of ``namespaces`` (None: every namespace), one collection per namespace and label value;
        with ``narrowing`` = (key, values) only those whose label ``key`` has one of ``values``."""
        names = self.pods_by_namespace if namespaces is None else namespaces
        if narrowing is None:
            return [self.pods_by_namespace[ns].values() for ns in names if ns in self.pods_by_namespace]
        key, values = narrowing
        result: list[Collection[SchedPod]] = []
        for ns in names:
            by_label = self._label_index(ns)
            result += [by_label[(key, value)].values() for value in values if (key, value) in by_label]
        return result

    def _label_index(self, namespace: str) -> dict[tuple[str, str], dict[str, SchedPod]]:
        """The namespace's bound pods per label, made at first use and kept up by bind and unbind."""
        by_label = self._by_label.get(namespace)
        if by_label is None:
            by_label = self._by_label[namespace] = {}
            for pod in self.pods_by_namespace.get(namespace, {}).values():
                _index_labels(by_label, pod)
        return by_label

    def matching(self, key: Any, namespaces: Optional[Collection[str]], predicate: Callable[[SchedPod], bool],
                 narrowing: Optional[tuple[str, frozenset]] = None) -> dict[int, int]:
        """Per node index, how many bound pods of ``namespaces`` (None: all) ``predicate`` selects (nodes without
        any left out). ``narrowing`` = (label key, values), when given, must hold for every pod the predicate
        selects: only the pods with those labels are then read. ``key`` must name the predicate, the namespaces
        and the narrowing exactly: the counts are kept under it and only the binds and unbinds since the last call
        are replayed, unless rescanning is cheaper. The caller must not change the dict."""
        entry = self._matching.pop(key, None)  # re-inserted last: the dict's order is the LRU order
        if entry is None:
            entry = MatchingPods(namespaces, predicate, narrowing)
            if len(self._matching) >= MAX_MATCHING_ENTRIES:
                del self._matching[next(iter(self._matching))]
        self._matching[key] = entry
        pending = len(self.moves) - entry.seen
        # a replayed move mostly costs a namespace check; a rescanned pod the predicate
        if entry.seen < 0 or pending > REPLAY_PER_RESCAN * sum(map(len, self.namespace_pods(namespaces, narrowing))):
            entry.rebuild(self)
        elif pending:
            entry.replay(self.moves)
        return entry.counts

    def node_of(self, pod: SchedPod) -> Optional[NodeInfo]:
        return self.location.get(pod.key)
