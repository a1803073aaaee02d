"""The slim snapshot model: only the fields the engine reads, parsed once.

Pods are the bulk of a cluster (150,000 in the scalability envelope), so a Pod keeps derived values (requests, QoS,
protections) and a few raw sub-structures the plugins need, never the whole object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import compile_node_selector_term
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import parse_quantity

# A pod without creationTimestamp is treated as created at Go's zero time (upstream: ~2000 years old).
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC).timestamp()

SUPPORTED_POD_LEVEL = ("cpu", "memory")

# The only pod annotations the engine reads (the evictor, KubeVirt's pods); a Pod keeps no other
POD_ANNOTATIONS_READ = (
    "descheduler.alpha.kubernetes.io/evict", "descheduler.alpha.kubernetes.io/prefer-no-eviction",
    "descheduler.alpha.kubernetes.io/request-evict-only", "kubernetes.io/config.mirror",
    "kubernetes.io/config.source", "kubevirt.io/domain",
)

# What a Pod keeps of each status.conditions entry, in this order (a tuple each: 150,000 pods have 4 or 5)
POD_CONDITION_FIELDS = ("type", "status", "reason", "lastTransitionTime")

_EMPTY: Mapping[str, Any] = {}  # read-only stand-in for an absent or null sub-object (never mutated)


def parse_time(text: Any) -> Optional[float]:
    if not text:
        return None
    if isinstance(text, str) and text[-1:] == "Z":  # what the API writes; fromisoformat reads "Z" since Python 3.11
        try:
            return datetime.fromisoformat(text).timestamp()
        except ValueError:
            pass  # the general path below names the value
    if isinstance(text, datetime):
        moment = text
    else:
        raw = str(text).strip()
        if raw.endswith("Z"):
            raw = raw[:-1] + "+00:00"
        moment = datetime.fromisoformat(raw)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _text_map(mapping: Optional[Mapping[Any, Any]]) -> dict[str, str]:
    """Labels or a node selector as strings (YAML may give numbers and booleans)."""
    if not mapping:
        return {}
    return {str(key): str(value) for key, value in mapping.items()}


def _container_request_keys(spec: Mapping[str, Any], pod_keys: frozenset[str]) -> frozenset[str]:
    """The resource names any container or init container requests (pod-level and overhead excluded);
    ``pod_keys`` (the pod's request keys) itself when they are the same, as for most pods."""
    keys: set[str] = set()
    for group in ("containers", "initContainers"):
        for container in spec.get(group) or ():
            requests = (container.get("resources") or _EMPTY).get("requests")
            if requests:
                keys.update(map(str, requests))
    return pod_keys if keys == pod_keys else frozenset(keys)


def _container_states(statuses: Optional[list]) -> Sequence[ContainerState]:
    return [ContainerState(status) for status in statuses] if statuses else ()


def _quantities(resources: Optional[Mapping[str, Any]]) -> dict[str, int]:
    return {str(k): parse_quantity(v) for k, v in resources.items()} if resources else {}


def _add(total: dict[str, int], extra: Mapping[str, int]) -> None:
    for key, amount in extra.items():
        total[key] = total.get(key, 0) + amount


def _maximum(total: dict[str, int], other: Mapping[str, int]) -> None:
    for key, amount in other.items():
        if key not in total or amount > total[key]:
            total[key] = amount


def pod_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    """component-helpers PodRequests: containers + sidecars, max with init containers, pod-level, overhead."""
    containers = spec.get("containers") or ()
    if isinstance(containers, list) and len(containers) == 1:  # most pods: the one container's requests are the sum
        requests = _quantities((containers[0].get("resources") or _EMPTY).get("requests"))
    else:
        requests = {}
        for container in containers:
            _add(requests, _quantities((container.get("resources") or _EMPTY).get("requests")))
    init_containers = spec.get("initContainers")
    if init_containers:
        _add_init_containers(requests, init_containers)
    pod_level = (spec.get("resources") or _EMPTY).get("requests") or _EMPTY
    for key, amount in pod_level.items():
        if key in SUPPORTED_POD_LEVEL or str(key).startswith("hugepages-"):
            requests[str(key)] = parse_quantity(amount)
    overhead = spec.get("overhead")
    if overhead:
        _add(requests, _quantities(overhead))
    return requests


def _add_init_containers(requests: dict[str, int], init_containers: list) -> None:
    """Sidecars (restartPolicy Always) add to the pod's requests; each init container needs its own requests plus
    the sidecars started before it, and the pod needs the largest of those."""
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for container in init_containers:
        own = _quantities((container.get("resources") or {}).get("requests"))
        if container.get("restartPolicy") == "Always":
            _add(requests, own)
            _add(sidecars, own)
            effective = dict(sidecars)
        else:
            effective = dict(own)
            _add(effective, sidecars)
        _maximum(init_max, effective)
    _maximum(requests, init_max)


def compute_qos(pod: Mapping[str, Any]) -> str:
    declared = (pod.get("status") or {}).get("qosClass")
    if declared:
        return str(declared)
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for key, amount in _quantities(resources.get("requests")).items():
            if key in ("cpu", "memory") and amount > 0:
                requests[key] = requests.get(key, 0) + amount
        container_limits = {k: v for k, v in _quantities(resources.get("limits")).items() if k in ("cpu", "memory")}
        for key, amount in container_limits.items():
            if amount > 0:
                limits[key] = limits.get(key, 0) + amount
        if not all(container_limits.get(k, 0) > 0 for k in ("cpu", "memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


class Node:
    __slots__ = (
        "name", "labels", "taints", "unschedulable", "ready", "allocatable",
        "annotations", "status_allocatable", "capacity",
    )

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        self.name: str = meta.get("name", "")
        self.labels: dict[str, str] = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        self.annotations: dict[str, str] = dict(meta.get("annotations") or {})
        self.taints: list[dict] = [dict(t) for t in spec.get("taints") or []]
        self.unschedulable: bool = bool(spec.get("unschedulable"))
        self.ready: bool = _node_is_ready(status)
        # upstream uses allocatable when non-empty, else capacity
        capacity = status.get("allocatable") or status.get("capacity") or {}
        self.allocatable: dict[str, int] = _quantities(capacity)
        # NodeFit (pkg/descheduler/node) reads status.allocatable alone: a node without it offers nothing
        self.status_allocatable: dict[str, int] = _quantities(status.get("allocatable"))
        # status.capacity alone: Volcano's LoadAware turns a measured fraction into usage against it
        self.capacity: dict[str, int] = _quantities(status.get("capacity"))


class PersistentVolume:
    """What the scheduler's volume filters read of a PersistentVolume: its labels (zone, region) and its required
    node affinity (None: any node)."""

    __slots__ = ("name", "labels", "node_terms")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        self.name = str(meta["name"])
        self.labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        required = (((obj.get("spec") or {}).get("nodeAffinity") or {}).get("required"))
        self.node_terms: Optional[list] = (
            [compile_node_selector_term(t) for t in (required.get("nodeSelectorTerms") or [])]
            if required is not None else None
        )


class PersistentVolumeClaim:
    """A claim as placement reads it: the volume it is bound to ("" while unbound) and whether it is being
    deleted (then a new pod using it cannot be scheduled)."""

    __slots__ = ("namespace", "name", "volume_name", "deleting", "storage_class")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        self.namespace = str(meta.get("namespace") or "default")
        self.name = str(meta["name"])
        self.volume_name = str(spec.get("volumeName") or "")
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.storage_class = str(spec.get("storageClassName") or "")


def _node_is_ready(status: Mapping[str, Any]) -> bool:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") != "True":
            return False
    return True


class ContainerState:
    __slots__ = ("restarts", "waiting_reason", "terminated_reason", "exit_code")

    def __init__(self, status: Mapping[str, Any]) -> None:
        state = status.get("state") or {}
        self.restarts: int = int(status.get("restartCount") or 0)
        self.waiting_reason: str = str((state.get("waiting") or {}).get("reason") or "")
        terminated = state.get("terminated")
        self.terminated_reason: str = str((terminated or {}).get("reason") or "")
        self.exit_code: Optional[int] = int(terminated.get("exitCode", 0)) if terminated is not None else None


class OwnerRef:
    __slots__ = ("kind", "name", "uid", "controller", "api_version")

    def __init__(self, ref: Mapping[str, Any]) -> None:
        self.kind: str = str(ref.get("kind", ""))
        self.name: str = str(ref.get("name", ""))
        self.uid: str = str(ref.get("uid", ""))
        self.controller: bool = bool(ref.get("controller"))
        self.api_version: str = str(ref.get("apiVersion", ""))


class Pod:
    __slots__ = (
        "namespace", "name", "uid", "node_name", "labels", "annotations", "owners", "phase", "terminal", "reason",
        "priority", "priority_class", "qos", "requests", "request_keys", "container_request_keys",
        "has_local_storage", "pvc_claims", "has_resource_claims", "terminating", "created", "started",
        "tolerations", "node_selector", "required_node_terms", "has_required_affinity", "preferred_node_terms",
        "anti_affinity_terms", "spread_constraints", "containers", "init_containers", "ephemeral_containers",
        "conditions", "images", "key", "index", "selector_or_affinity",
    )

    def __init__(self, obj: Mapping[str, Any]) -> None:
        # runs once per pod of the cluster (150,000 at the scalability envelope): plain lookups, no throw-away
        # containers, and the sub-objects the plugins read kept by reference (the rest of the object is freed)
        meta = obj.get("metadata") or _EMPTY
        spec = obj.get("spec") or _EMPTY
        status = obj.get("status") or _EMPTY
        self.namespace: str = str(meta.get("namespace") or "default")
        self.name: str = str(meta.get("name", ""))
        self.key = f"{self.namespace}/{self.name}"
        self.index = 0
        self.uid: str = str(meta.get("uid") or "")
        self.node_name: str = str(spec.get("nodeName") or "")
        self.labels: dict[str, str] = _text_map(meta.get("labels"))
        annotations = meta.get("annotations") or _EMPTY
        self.annotations: dict[str, str] = {
            key: str(annotations[key]) for key in POD_ANNOTATIONS_READ if key in annotations} if annotations else {}
        owners = meta.get("ownerReferences")
        self.owners: Sequence[OwnerRef] = [OwnerRef(r) for r in owners] if owners else ()
        self.phase: str = str(status.get("phase") or "")
        self.terminal: bool = self.phase in ("Succeeded", "Failed")  # the pod no longer runs (read on every listing)
        self.reason: str = str(status.get("reason") or "")
        priority = spec.get("priority")
        self.priority: Optional[int] = int(priority) if priority is not None else None
        self.priority_class: str = str(spec.get("priorityClassName") or "")
        self.qos: str = compute_qos(obj)
        self.requests: dict[str, int] = pod_requests(spec)
        self.request_keys = frozenset(self.requests)
        self.container_request_keys = _container_request_keys(spec, self.request_keys)
        volumes = spec.get("volumes")
        if volumes:
            # a source set to null is a nil pointer upstream, i.e. absent
            self.has_local_storage: bool = any(
                v.get("hostPath") is not None or v.get("emptyDir") is not None for v in volumes)
            self.pvc_claims: list[str] = [
                str(v["persistentVolumeClaim"].get("claimName", "")) for v in volumes
                if v.get("persistentVolumeClaim") is not None
            ]
        else:
            self.has_local_storage, self.pvc_claims = False, ()
        self.has_resource_claims: bool = bool(spec.get("resourceClaims"))
        self.terminating: bool = bool(meta.get("deletionTimestamp"))
        created = parse_time(meta.get("creationTimestamp"))
        self.created: float = created if created is not None else ZERO_TIME
        self.started: Optional[float] = parse_time(status.get("startTime"))
        self.tolerations: Sequence[dict] = spec.get("tolerations") or ()
        node_selector = spec.get("nodeSelector")
        self.node_selector: dict[str, str] = _text_map(node_selector)
        affinity = spec.get("affinity") or _EMPTY
        node_affinity = affinity.get("nodeAffinity")
        # Go: NodeSelector != nil || Affinity.NodeAffinity != nil (an empty map still counts)
        self.selector_or_affinity: bool = node_selector is not None or node_affinity is not None
        self._set_node_affinity(node_affinity or _EMPTY)
        anti = (affinity.get("podAntiAffinity") or _EMPTY).get("requiredDuringSchedulingIgnoredDuringExecution")
        self.anti_affinity_terms: Sequence[dict] = anti or ()
        self.spread_constraints: Sequence[dict] = spec.get("topologySpreadConstraints") or ()
        self.containers = _container_states(status.get("containerStatuses"))
        self.init_containers = _container_states(status.get("initContainerStatuses"))
        self.ephemeral_containers = _container_states(status.get("ephemeralContainerStatuses"))
        conditions = status.get("conditions")
        self.conditions: Sequence[tuple] = [
            (c.get("type"), c.get("status"), c.get("reason"), c.get("lastTransitionTime")) for c in conditions
        ] if conditions else ()
        self.images: list[str] = [str(c.get("image", "")) for c in spec.get("containers") or ()]

    def _set_node_affinity(self, node_affinity: Mapping[str, Any]) -> None:
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.has_required_affinity: bool = required is not None
        self.required_node_terms: Optional[list] = (
            [compile_node_selector_term(t) for t in (required.get("nodeSelectorTerms") or [])]
            if required is not None else None
        )
        preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
        self.preferred_node_terms: Sequence[tuple[int, Any]] = [
            (int(p.get("weight") or 0), compile_node_selector_term(p.get("preference") or {}))
            for p in preferred
        ] if preferred else ()

    @property
    def owner(self) -> Optional[OwnerRef]:
        for ref in self.owners:
            if ref.controller:
                return ref
        return self.owners[0] if self.owners else None
