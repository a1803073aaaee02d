"""DefaultEvictor (plugins/defaultevictor; a Filter and PreEvictionFilter plugin, registered in
engine/plugins/__init__.py) and the per-cycle eviction limits (pkg/descheduler/evictions)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import parse_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    Selector,
    compile_label_selector,
    matches,
    parse_selector_string,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
    PREFER_NO_EVICTION,
    fits_any_other_node,
)

NAME = "DefaultEvictor"
EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
DEFAULT_PROTECTIONS = ("PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods")
EXTRA_PROTECTIONS = ("PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims")
LEGACY_BOOLS = (
    "evictLocalStoragePods", "evictDaemonSetPods", "evictSystemCriticalPods", "ignorePvcPods",
    "ignorePodsWithoutPDB", "evictFailedBarePods",
)
ARG_FIELDS = (
    "nodeSelector", "labelSelector", "namespaceLabelSelector", "priorityThreshold", "nodeFit", "minReplicas",
    "minPodAge", "noEvictionPolicy", "podProtections", *LEGACY_BOOLS,
)

# Spared reasons (stable strings, reports group by them).
R_PREFER_NO_EVICTION = "prefer-no-eviction annotation (noEvictionPolicy Mandatory)"
R_MIRROR = "mirror pod"
R_STATIC = "static pod"
R_TERMINATING = "terminating"
R_CRITICAL = "system-critical priority"
R_PRIORITY = "priority ≥ threshold"
R_BARE = "bare pod (no owner)"
R_LOCAL_STORAGE = "has local storage (emptyDir/hostPath)"
R_DAEMONSET = "DaemonSet pod"
R_PVC = "has a PersistentVolumeClaim"
R_NO_PDB = "no PodDisruptionBudget"
R_RESOURCE_CLAIMS = "has resource claims"
R_LABELS = "evictor labelSelector does not match"
R_MIN_REPLICAS = "fewer replicas than minReplicas"
R_MIN_AGE = "younger than minPodAge"
R_NODE_FIT = "does not fit any other node (nodeFit)"
R_NAMESPACE_LABELS = "namespace labels do not match namespaceLabelSelector"


def validate_args(args: Mapping[str, Any], field: str) -> None:
    reader = ArgsReader(args, field, ARG_FIELDS)
    threshold = reader.mapping("priorityThreshold")
    if threshold is not None:
        ArgsReader(threshold, f"{field}.priorityThreshold", ("name", "value"))
        if threshold.get("name") and threshold.get("value") is not None:
            raise PolicyError(f"{field}.priorityThreshold", threshold,
                              "only one of priorityThreshold.name and priorityThreshold.value can be set")
    for key in ("nodeFit", *LEGACY_BOOLS):
        reader.boolean(key)
    reader.uint("minReplicas")
    reader.string("nodeSelector")  # parsed only when nodeFit runs, as upstream (see node_selector_error)
    if args.get("minPodAge") not in (None, ""):
        try:
            parse_go_duration(str(args["minPodAge"]))
        except ValueError as exc:
            raise PolicyError(f"{field}.minPodAge", args["minPodAge"], str(exc)) from exc
    policy = args.get("noEvictionPolicy") or ""
    if policy not in ("", "Preferred", "Mandatory"):
        raise PolicyError(f"{field}.noEvictionPolicy", policy, "must be one of Preferred, Mandatory (or unset)")
    for key in ("labelSelector", "namespaceLabelSelector"):
        try:
            compile_label_selector(reader.mapping(key), f"{field}.{key}")
        except ValueError as exc:
            raise PolicyError(f"{field}.{key}", args.get(key), str(exc)) from exc
    _validate_protections(args, field)


def config_warnings(args: Mapping[str, Any], where: str) -> list[str]:
    error = node_selector_error(args)
    if error is None:
        return []
    effect = "every pod fails nodeFit, as upstream" if args.get("nodeFit") else "unused without nodeFit"
    return [f"{where}.nodeSelector: {error} ({effect})"]


def node_selector_error(args: Mapping[str, Any]) -> Optional[str]:
    """Why the evictor nodeSelector does not parse, if it does not.

    Upstream parses it on every PreEvictionFilter call with nodeFit and, when that fails, logs the error and
    rejects the pod; without nodeFit it is never read. So it is a warning here, not a policy error.
    """
    try:
        parse_selector_string(str(args.get("nodeSelector") or ""), "nodeSelector")
    except ValueError as exc:
        return str(exc)
    return None


def _validate_protections(args: Mapping[str, Any], field: str) -> None:
    where = f"{field}.podProtections"
    protections = args.get("podProtections") or {}
    ArgsReader(protections, where, ("defaultDisabled", "extraEnabled", "config"))
    disabled = list(protections.get("defaultDisabled") or [])
    extra = list(protections.get("extraEnabled") or [])
    used = [k for k in LEGACY_BOOLS if args.get(k)]
    if used and (disabled or extra):
        raise PolicyError(field, used, "the deprecated fields " + ", ".join(used) +
                          " cannot be combined with podProtections.extraEnabled/defaultDisabled; use podProtections")
    for key, values, allowed in (("extraEnabled", extra, EXTRA_PROTECTIONS),
                                 ("defaultDisabled", disabled, DEFAULT_PROTECTIONS)):
        for value in values:
            if value not in allowed:
                raise PolicyError(f"{where}.{key}", value, f"must be one of {', '.join(allowed)}")
    for key, values in (("defaultDisabled", disabled), ("extraEnabled", extra)):
        if len(set(values)) != len(values):
            raise PolicyError(f"{where}.{key}", values, "duplicate entries are not allowed")
    _validate_protection_config(protections.get("config"), f"{where}.config", "PodsWithPVC" in extra)


def _validate_protection_config(config: Any, where: str, check_names: bool) -> None:
    """Strictly decoded like all plugin args; empty class names are an error only with PodsWithPVC enabled."""
    pvc = ArgsReader(config, where, ("PodsWithPVC",)).mapping("PodsWithPVC")
    classes = ArgsReader(pvc, f"{where}.PodsWithPVC", ("protectedStorageClasses",)).args.get(
        "protectedStorageClasses") or []
    if not isinstance(classes, list):
        raise PolicyError(f"{where}.PodsWithPVC.protectedStorageClasses", classes, "expected a list of {name}")
    for index, entry in enumerate(classes):
        item = f"{where}.PodsWithPVC.protectedStorageClasses[{index}]"
        name = ArgsReader(entry, item, ("name",)).string("name")
        if check_names and not name:
            raise PolicyError(f"{item}.name", name, "a protected storage class needs a name")


def new(args: Mapping[str, Any], context: Any) -> DefaultEvictor:
    """The profile's DefaultEvictor (context: framework.BuildContext); priorityThreshold is resolved by the policy."""
    return DefaultEvictor(args, context.profile.priority_threshold, context.snapshot, context.now)


class DefaultEvictor:
    """Filter and PreEvictionFilter of one profile: each returns why a pod may not be evicted, or None.

    Built once per profile and snapshot (sampled cycles share it): it caches only what never changes within them.
    """

    def __init__(self, args: Mapping[str, Any], threshold: int, snapshot: Any, now: float) -> None:
        self.args = args
        self.snapshot = snapshot
        self.now = now
        self.protections = effective_protections(args)
        self.priority_threshold = threshold
        self.label_selector = compile_label_selector(args.get("labelSelector")) if args.get("labelSelector") else None
        ns_selector = args.get("namespaceLabelSelector") or {}
        # only a selector with matchLabels or matchExpressions is applied: {} and {matchLabels: {}} do nothing
        active = ns_selector.get("matchLabels") or ns_selector.get("matchExpressions")
        self.namespace_selector = compile_label_selector(ns_selector) if active else None
        self.node_fit = bool(args.get("nodeFit"))
        # an unparsable nodeSelector leaves no nodeFit candidate, so every pod fails PreEvictionFilter
        self.node_selector: Selector = None if node_selector_error(args) else parse_selector_string(
            str(args.get("nodeSelector") or ""), "nodeSelector")
        self.min_replicas = int(args.get("minReplicas") or 0)
        age = args.get("minPodAge")
        self.min_pod_age: Optional[float] = parse_go_duration(str(age)) if age not in (None, "") else None
        self.mandatory = args.get("noEvictionPolicy") == "Mandatory"
        storage = ((args.get("podProtections") or {}).get("config") or {}).get("PodsWithPVC") or {}
        self.protected_classes = {c.get("name") for c in storage.get("protectedStorageClasses") or []}
        self._static_cache: dict[int, Optional[str]] = {}
        self._pdb_selectors: Optional[dict[str, list[Selector]]] = None
        self._fit_candidates: Optional[Sequence[Node]] = None
        self.warnings: Sequence[str] = ()  # its args' warnings are the policy's (config_warnings)

    def pre_eviction_filter(self, handle: Any, pod: Pod) -> Optional[str]:
        """PreEvictionFilter: nodeFit over the whole cluster, then namespaceLabelSelector."""
        if self.node_fit:
            if self._fit_candidates is None:  # the snapshot's ready nodes and the selector are fixed
                self._fit_candidates = [n for n in handle.state.ready_nodes if matches(self.node_selector, n.labels)]
            if not fits_any_other_node(pod, self._fit_candidates, handle.state.usage):
                return R_NODE_FIT
        return self.namespace_reason(pod)

    def filter(self, handle: Any, pod: Pod) -> Optional[str]:
        """Filter (handle: framework.PluginHandle), on every candidate pod. minReplicas reads the handle's owner
        counts: in a lagging cycle they still hold the latest evictions."""
        if EVICT_ANNOTATION in pod.annotations:
            return None
        if self.mandatory and PREFER_NO_EVICTION in pod.annotations:
            return R_PREFER_NO_EVICTION
        cached = self._static_cache.get(pod.index, 0)
        if cached == 0:
            cached = self._static_reason(pod)
            self._static_cache[pod.index] = cached
        if cached is not None:
            return cached
        if self.min_replicas > 1 and len(pod.owners) == 1:
            if handle.owner_counts_for(pod).get(pod.owners[0].uid, 0) < self.min_replicas:
                return R_MIN_REPLICAS
        return self._age_reason(pod)

    def _static_reason(self, pod: Pod) -> Optional[str]:
        if "kubernetes.io/config.mirror" in pod.annotations:
            return R_MIRROR
        source = pod.annotations.get("kubernetes.io/config.source")
        if source is not None and source != "api":
            return R_STATIC
        if pod.terminating:
            return R_TERMINATING
        return self._constraint_reason(pod)

    def _constraint_reason(self, pod: Pod) -> Optional[str]:
        protections = self.protections
        if "SystemCriticalPods" in protections and pod.priority is not None:
            if pod.priority >= SYSTEM_CRITICAL_PRIORITY:
                return R_CRITICAL
            if pod.priority >= self.priority_threshold:
                return R_PRIORITY
        if not pod.owners and ("FailedBarePods" in protections or pod.phase != "Failed"):
            return R_BARE
        if "PodsWithLocalStorage" in protections and pod.has_local_storage:
            return R_LOCAL_STORAGE
        if "DaemonSetPods" in protections and any(o.kind == "DaemonSet" for o in pod.owners):
            return R_DAEMONSET
        if "PodsWithPVC" in protections and pod.pvc_claims and self._pvc_protected(pod):
            return R_PVC
        if "PodsWithoutPDB" in protections and not self._has_pdb(pod):
            return R_NO_PDB
        if "PodsWithResourceClaims" in protections and pod.has_resource_claims:
            return R_RESOURCE_CLAIMS
        if self.label_selector is not None and not matches(self.label_selector, pod.labels):
            return R_LABELS
        return None

    def _pvc_protected(self, pod: Pod) -> bool:
        if not self.protected_classes:
            return True
        for claim in pod.pvc_claims:
            found = self.snapshot.claims.get((pod.namespace, claim))
            storage_class = found.storage_class if found else ""
            if not storage_class or storage_class in self.protected_classes:
                return True
        return False

    def _has_pdb(self, pod: Pod) -> bool:
        """IsPodCoveredByPDB: some PDB of the pod's namespace selects it (nil selects nothing, {} everything)."""
        if self._pdb_selectors is None:
            self._pdb_selectors = {}
            for pdb in self.snapshot.pdbs:
                try:
                    selector = compile_label_selector(pdb["selector"])
                except ValueError:
                    continue  # upstream skips a PDB whose selector does not convert
                self._pdb_selectors.setdefault(pdb["namespace"], []).append(selector)
        return any(matches(selector, pod.labels) for selector in self._pdb_selectors.get(pod.namespace, ()))

    def _age_reason(self, pod: Pod) -> Optional[str]:
        if self.min_pod_age is None:
            return None
        if pod.started is None or self.now - pod.started < self.min_pod_age:
            return R_MIN_AGE
        return None

    def namespace_reason(self, pod: Pod) -> Optional[str]:
        if self.namespace_selector is None:
            return None
        labels = self.snapshot.namespace_labels(pod.namespace)
        if labels is None or not matches(self.namespace_selector, labels):
            return R_NAMESPACE_LABELS
        return None


def effective_protections(args: Mapping[str, Any]) -> frozenset:
    protections = args.get("podProtections") or {}
    disabled = protections.get("defaultDisabled") or []
    extra = protections.get("extraEnabled") or []
    if disabled or extra:
        return frozenset(set(DEFAULT_PROTECTIONS) - set(disabled) | set(extra))
    enabled = set()
    if not args.get("evictLocalStoragePods"):
        enabled.add("PodsWithLocalStorage")
    if not args.get("evictSystemCriticalPods"):
        enabled.add("SystemCriticalPods")
    if not args.get("evictFailedBarePods"):
        enabled.add("FailedBarePods")
    if not args.get("evictDaemonSetPods"):
        enabled.add("DaemonSetPods")
    if args.get("ignorePvcPods"):
        enabled.add("PodsWithPVC")
    if args.get("ignorePodsWithoutPDB"):
        enabled.add("PodsWithoutPDB")
    return frozenset(enabled)


class LimitError(Exception):
    def __init__(self, scope: str, limit: int) -> None:
        self.scope = scope
        self.limit = limit
        super().__init__(f"{scope} eviction limit {limit} reached")


class EvictionLimits:
    """Per-cycle counters shared by every profile and plugin; checked as ``count + 1 > max``: total, node, namespace."""

    def __init__(self, total: Optional[int], per_node: Optional[int], per_namespace: Optional[int]) -> None:
        self.max_total = total
        self.max_node = per_node
        self.max_namespace = per_namespace
        self.total = 0
        self.by_node: dict[str, int] = {}
        self.by_namespace: dict[str, int] = {}
        self.hit_total = False
        self.hit_nodes: set[str] = set()
        self.hit_namespaces: set[str] = set()

    def check(self, pod: Pod) -> None:
        if self.max_total is not None and self.total + 1 > self.max_total:
            self.hit_total = True
            raise LimitError("total", self.max_total)
        if self.max_node is not None and pod.node_name and self.by_node.get(pod.node_name, 0) + 1 > self.max_node:
            self.hit_nodes.add(pod.node_name)
            raise LimitError("node", self.max_node)
        if self.max_namespace is not None and self.by_namespace.get(pod.namespace, 0) + 1 > self.max_namespace:
            self.hit_namespaces.add(pod.namespace)
            raise LimitError("namespace", self.max_namespace)

    def record(self, pod: Pod) -> None:
        self.total += 1
        if pod.node_name:
            self.by_node[pod.node_name] = self.by_node.get(pod.node_name, 0) + 1
        self.by_namespace[pod.namespace] = self.by_namespace.get(pod.namespace, 0) + 1
