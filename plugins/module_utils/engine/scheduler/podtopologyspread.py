"""PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway (or the cluster defaults) score.

Default constraints (``defaultingType: System``): hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway, for pods a
Service/ReplicaSet/StatefulSet/ReplicationController selects. A snapshot has no such objects, so the default
selector is approximated by "pods of the same controller" — exact for ReplicaSet/StatefulSet-owned pods whose
workload has no Service selecting other pods too.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import repeat
from operator import and_, ge, is_not
from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    compile_label_selector,
    matches,
    required_values,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import matches_node_selector
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    SKIP,
    go_round,
    window_positions,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.tainttoleration import (
    untolerated_taint,
)

NAME = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REASON_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
REASON_LABEL = REASON_CONSTRAINTS + " (missing required label)"
SYSTEM_DEFAULTS = ((HOSTNAME, 3), (ZONE, 5))
# a constraint's predicate over pods, a key naming it, and (label key, values) every pod it selects has, or None
Matcher = tuple[Callable[[SchedPod], bool], Any, Optional[tuple[str, frozenset]]]


class Constraint:
    __slots__ = ("max_skew", "topology_key", "when", "matches", "selects", "narrowing", "min_domains",
                 "honor_affinity", "honor_taints", "owner_uid")

    def __init__(self, max_skew: int, topology_key: str, when: str, matcher: Matcher, min_domains: int = 1,
                 honor_affinity: bool = True, honor_taints: bool = False, owner_uid: str = "") -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.when = when
        # the pods it counts, a key naming exactly that predicate and a label they all have (Cluster.matching)
        self.matches, self.selects, self.narrowing = matcher
        self.min_domains = min_domains
        self.honor_affinity = honor_affinity
        self.honor_taints = honor_taints
        self.owner_uid = owner_uid  # set for the default constraints: their pods are counted per controller

    def counts(self, cluster: Cluster, namespace: str) -> dict[int, int]:
        """Per node index, the bound pods of ``namespace`` the constraint counts."""
        return cluster.matching(self.selects, (namespace,), self.matches, self.narrowing)

    def includes(self, pod: SchedPod, node: NodeInfo) -> bool:
        """matchNodeInclusionPolicies: nodeAffinityPolicy (Honor by default), nodeTaintsPolicy (Ignore)."""
        if self.honor_affinity and not matches_node_selector(pod.model, node):  # type: ignore[arg-type]
            return False
        return not (self.honor_taints and untolerated_taint(pod.model.tolerations, node.taints) is not None)


def _label_matcher(raw: Mapping[str, Any], pod: SchedPod) -> Matcher:
    selector = compile_label_selector(raw.get("labelSelector"))
    if selector is not None:
        extra = tuple((str(k), "In", frozenset([pod.labels[k]])) for k in raw.get("matchLabelKeys") or []
                      if k in pod.labels)
        selector = tuple(selector) + extra
    namespace = pod.namespace
    return ((lambda other: other.namespace == namespace and not other.terminating and matches(selector, other.labels)),
            (NAME, "labels", namespace, selector), required_values(selector))


def _owner_matcher(pod: SchedPod) -> Matcher:
    owner, namespace = pod.owner_uid, pod.namespace
    return ((lambda other: other.owner_uid == owner and other.namespace == namespace and not other.terminating),
            (NAME, "owner", namespace, owner), None)


def pod_constraints(pod: SchedPod, when: str) -> list[Constraint]:
    result = []
    for raw in pod.model.spread_constraints:
        if raw.get("whenUnsatisfiable", "DoNotSchedule") != when:
            continue
        result.append(Constraint(
            int(raw.get("maxSkew") or 1), str(raw.get("topologyKey") or ""), when, _label_matcher(raw, pod),
            int(raw.get("minDomains") or 1), raw.get("nodeAffinityPolicy", "Honor") != "Ignore",
            raw.get("nodeTaintsPolicy", "Ignore") == "Honor"))
    return result


class PodTopologySpread:
    name = NAME
    static = False

    def __init__(self, args: Optional[Mapping[str, Any]] = None, field: str = "pluginConfig.PodTopologySpread"
                 ) -> None:
        args = args or {}
        self._eligible_cache: dict[tuple, tuple] = {}
        self.defaulting = args.get("defaultingType") or "System"
        if self.defaulting not in ("System", "List"):
            raise PolicyError(f"{field}.args.defaultingType", self.defaulting, "System or List")
        listed = args.get("defaultConstraints") or []
        if self.defaulting == "System":
            self.defaults = [(key, skew, "ScheduleAnyway") for key, skew in SYSTEM_DEFAULTS]
        else:
            self.defaults = [(str(c.get("topologyKey")), int(c.get("maxSkew") or 1),
                              c.get("whenUnsatisfiable", "DoNotSchedule")) for c in listed]

    def _defaults(self, pod: SchedPod, when: str) -> list[Constraint]:
        if not pod.owner_uid or pod.owner_kind not in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            return []  # DefaultSelector finds no Service/ReplicaSet/StatefulSet selector: no default spreading
        return [Constraint(skew, key, w, _owner_matcher(pod), owner_uid=pod.owner_uid)
                for key, skew, w in self.defaults if w == when]

    def constraints(self, pod: SchedPod, when: str) -> list[Constraint]:
        if pod.model.spread_constraints:
            return pod_constraints(pod, when)
        return self._defaults(pod, when)

    # ---- filter ----
    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        constraints = self.constraints(pod, "DoNotSchedule")
        if not constraints:
            return SKIP
        counted, empty_domains = self._eligible_nodes(pod, cluster, constraints)
        domains = [dict(d) for d in empty_domains]  # per constraint: topology value → matching pods
        nodes = cluster.nodes
        for i, c in enumerate(constraints):
            counts, key = domains[i], c.topology_key
            for index, count in c.counts(cluster, pod.namespace).items():
                included = counted.get(index)
                if included is not None and included[i]:
                    counts[nodes[index].labels[key]] += count
        minimum = []
        for i, c in enumerate(constraints):
            counts = domains[i]
            lowest = min(counts.values()) if counts else 0
            minimum.append(0 if len(counts) < c.min_domains else lowest)
        return constraints, domains, minimum

    def _eligible_nodes(self, pod: SchedPod, cluster: Cluster, constraints: list[Constraint]) -> tuple:
        """Which nodes count for which constraint, and every domain at 0. Node labels and taints do not change
        during the preview, so this is kept per (constraints, the pod's node selection and tolerations)."""
        honor_taints = any(c.honor_taints for c in constraints)
        key = (tuple((c.topology_key, c.honor_affinity, c.honor_taints) for c in constraints),
               tuple(sorted(pod.model.node_selector.items())), repr(pod.model.required_node_terms),
               repr(pod.model.tolerations) if honor_taints else None)
        cached = self._eligible_cache.get(key)
        if cached is not None:
            return cached
        keys = [c.topology_key for c in constraints]
        domains: list[dict[str, int]] = [{} for _unused in constraints]
        counted: dict[int, list[bool]] = {}  # node index → which constraints count its pods
        for node in cluster.nodes:
            if not all(k in node.labels for k in keys):
                continue
            included = [c.includes(pod, node) for c in constraints]
            counted[node.index] = included
            for i, c in enumerate(constraints):
                if included[i]:
                    domains[i].setdefault(node.labels[c.topology_key], 0)
        self._eligible_cache[key] = (counted, domains)
        return counted, domains

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        constraints, domains, minimum = state
        for i, c in enumerate(constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return (REASON_LABEL,)
            self_match = 1 if c.matches(pod) else 0
            if domains[i].get(value, 0) + self_match - minimum[i] > c.max_skew:
                return (REASON_CONSTRAINTS,)
        return None

    def filter_window(self, pod: SchedPod, state: Any, indexes: list[int], columns: Any) -> list[bool]:
        """Batch: filter() for many nodes at once (True: passes), from columns of the nodes' topology values."""
        constraints, domains, minimum = state
        passing: Any = None
        for i, c in enumerate(constraints):
            key = c.topology_key
            values = columns.label_values(key, indexes)
            # filter(): fails without the label, or when count + self match - minimum > maxSkew
            threshold = c.max_skew + minimum[i] - (1 if c.matches(pod) else 0)
            fits = map(and_, map(is_not, values, repeat(None)),
                       map(ge, repeat(threshold), map(domains[i].get, values, repeat(0))))
            passing = fits if passing is None else map(and_, passing, fits)
        return list(passing) if passing is not None else [True] * len(indexes)

    # ---- score ----
    def _score_constraints(self, pod: SchedPod) -> tuple[list[Constraint], bool]:
        """The ScheduleAnyway constraints, and whether a node must have all their keys to count (otherwise a node
        without a key counts as value ""): nodes without a zone label still get hostname spreading under the system
        defaults."""
        if pod.model.spread_constraints:
            return pod_constraints(pod, "ScheduleAnyway"), True
        return self._defaults(pod, "ScheduleAnyway"), self.defaulting != "System"

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        constraints, require_all = self._score_constraints(pod)
        if not constraints or not nodes:
            return SKIP
        keys = [c.topology_key for c in constraints]
        ignored = set()
        # per constraint: topology value → matching pods; a node without the key counts as value "" (upstream)
        values: list[dict[str, int]] = [{} for _unused in constraints]
        for node in nodes:
            if require_all and not all(k in node.labels for k in keys):
                ignored.add(node.index)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key != HOSTNAME:
                    values[i].setdefault(node.labels.get(c.topology_key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == HOSTNAME else len(values[i])
            weights.append(math.log(size + 2))
        host_counts: dict[int, list[int]] = {}
        self._count(pod, cluster, constraints, require_all, values, host_counts)
        return constraints, ignored, values, host_counts, weights

    @staticmethod
    def _count(pod: SchedPod, cluster: Cluster, constraints: list[Constraint], require_all: bool,
               values: list[dict[str, int]], host_counts: dict) -> None:
        """Matching pods per topology value (nodes passing the inclusion policies) and per node (hostname)."""
        keys = [c.topology_key for c in constraints]
        if all(c.owner_uid for c in constraints) and pod.namespace:
            # the default constraints count the controller's pods: the cluster keeps them per node already
            owned = cluster.owner_counts.get(pod.owner_uid, {})
            per_node = [owned] * len(constraints)
        else:
            per_node = [c.counts(cluster, pod.namespace) for c in constraints]
        nodes, size = cluster.nodes, len(constraints)
        # a pod without node selector or required node affinity passes the inclusion policies on every node, unless
        # taints are honored: then the per-node check is skipped (this runs once per replacement)
        unrestricted = not pod.model.node_selector and pod.model.required_node_terms is None
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                for index, count in per_node[i].items():
                    if count > 0:  # a controller's count stays at 0 on a node its pods left
                        counts = host_counts.get(index)
                        if counts is None:
                            counts = host_counts[index] = [0] * size
                        counts[i] += count
                continue
            domains, key = values[i], c.topology_key
            every_node = not c.honor_taints and (unrestricted or not c.honor_affinity)
            for index, count in per_node[i].items():
                if count <= 0:
                    continue
                labels = nodes[index].labels
                if require_all and not all(k in labels for k in keys):
                    continue
                value = labels.get(key, "")
                if value in domains and (every_node or c.includes(pod, nodes[index])):
                    domains[value] += count

    def score_many(self, pod: SchedPod, state: Any, nodes: list[NodeInfo]) -> list[int]:
        """score() for every node, with the per-constraint lookups hoisted out of the node loop."""
        constraints, ignored, values, host_counts, weights = state
        plan = [(c.topology_key, c.topology_key == HOSTNAME, i, weights[i], c.max_skew - 1, values[i])
                for i, c in enumerate(constraints)]
        result = []
        for node in nodes:
            if node.index in ignored:
                result.append(0)
                continue
            labels = node.labels
            hosted = host_counts.get(node.index)
            total = 0.0
            for key, by_host, i, weight, base, counts in plan:
                value = labels.get(key)
                if value is None:
                    continue
                count = (hosted[i] if hosted else 0) if by_host else counts.get(value, 0)
                total += count * weight + base
            result.append(int(math.floor(total + 0.5)))  # go_round for the non-negative totals here
        return result

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: pre_score, score_many and normalize_nodes in one, the score computed once per distinct
        (topology values, pods of the controller on the node)."""
        if not pod.namespace:
            return None
        constraints, require_all = self._score_constraints(pod)
        if not constraints:
            return SKIP
        keys = tuple(c.topology_key for c in constraints)
        # per node the value of each key (None: no such label), as the id of that tuple in ``found``; a hostname only
        # counts as present, so that the nodes share few distinct tuples (the pods on a node come from host_counts)
        found = columns.memo((NAME, "tuple ids", keys))
        ids = columns.fixed((NAME, keys), window, lambda nodes: [
            found.setdefault(tuple((True if k in n.labels else None) if k == HOSTNAME else n.labels.get(k)
                                   for k in keys), len(found))
            for n in nodes])
        by_id = list(found)
        # as pre_score: with require_all a node lacking a key is ignored (scores 0, not normalized), without it a
        # node lacking the key counts as value ""
        in_window = set(ids)
        present = {i for i in in_window if not (require_all and None in by_id[i])}
        ignored = (len(ids) - sum(map(ids.count, present))) if require_all else 0
        values: list[dict[str, int]] = [{} for _unused in constraints]
        weights = []
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                weights.append(math.log(len(window) - ignored + 2))
                continue
            for tuple_id in present:
                value = by_id[tuple_id][i]
                values[i].setdefault("" if value is None else value, 0)
            weights.append(math.log(len(values[i]) + 2))
        host_counts: dict[int, list[int]] = {}
        self._count(pod, cluster, constraints, require_all, values, host_counts)
        plan = [(c.topology_key == HOSTNAME, i, weights[i], c.max_skew - 1, values[i])
                for i, c in enumerate(constraints)]

        def raw(tuple_id: int, hosted: Optional[list[int]]) -> Optional[int]:
            if tuple_id not in present:
                return None  # ignored
            node_values = by_id[tuple_id]
            total = 0.0  # the same float operations, in the same order, as score_many
            for by_host, i, weight, base, counts in plan:
                value = node_values[i]
                if value is None:
                    continue
                count = (hosted[i] if hosted else 0) if by_host else counts.get(value, 0)
                total += count * weight + base
            return int(math.floor(total + 0.5))

        # a raw score per tuple id, except on the nodes with pods to count (few): the window's scores are one
        # lookup per node, normalized per distinct raw score
        without_pods = [raw(tuple_id, None) for tuple_id in range(len(by_id))]
        with_pods = {j: raw(ids[j], host_counts[index]) for index, j in window_positions(window, host_counts)}
        overridden = Counter(ids[j] for j in with_pods)
        considered = [score for score in with_pods.values() if score is not None]
        considered += [without_pods[i] for i in in_window if without_pods[i] is not None
                       and (i not in overridden or overridden[i] < ids.count(i))]
        lowest, highest = min(considered, default=0), max(considered, default=0)
        if highest == 0 and not ignored:
            return MAX_NODE_SCORE

        def normalize(score: Optional[int]) -> int:  # normalize_nodes
            if score is None:
                return 0  # ignored
            return MAX_NODE_SCORE if highest == 0 else MAX_NODE_SCORE * (highest + lowest - score) // highest

        normalized = [normalize(score) for score in without_pods]
        scores = list(map(normalized.__getitem__, ids))
        for j, score in with_pods.items():
            scores[j] = normalize(score)
        return scores

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        constraints, ignored, values, host_counts, weights = state
        if node.index in ignored:
            return 0
        total = 0.0
        for i, c in enumerate(constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                count = (host_counts.get(node.index) or [0] * len(constraints))[i]
            else:
                count = values[i].get(value, 0)
            total += count * weights[i] + (c.max_skew - 1)
        return go_round(total)

    def normalize_nodes(self, state: Any, nodes: list[NodeInfo], scores: list[int]) -> None:
        ignored = state[1]
        considered = [s for n, s in zip(nodes, scores, strict=True) if n.index not in ignored]
        lowest = min(considered, default=0)
        highest = max(considered, default=0)
        for i, node in enumerate(nodes):
            if node.index in ignored:
                scores[i] = 0
            elif highest == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                scores[i] = MAX_NODE_SCORE * (highest + lowest - scores[i]) // highest
