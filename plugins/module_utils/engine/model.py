"""The slim snapshot model: only the fields the engine reads, parsed once.

Pods are the bulk of a cluster (150,000 in the scalability envelope), so a Pod keeps derived values (requests, QoS,
protections) and a few raw sub-structures the plugins need, never the whole object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import compile_node_selector_term
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import parse_quantity

# A pod without creationTimestamp is treated as created at Go's zero time (upstream: ~2000 years old).
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC).timestamp()

SUPPORTED_POD_LEVEL = ("cpu", "memory")


def parse_time(text: Any) -> Optional[float]:
    if not text:
        return None
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


def _quantities(resources: Optional[Mapping[str, Any]]) -> dict[str, int]:
    return {str(k): parse_quantity(v) for k, v in (resources or {}).items()}


def _add(total: dict[str, int], extra: Mapping[str, int]) -> None:
    for key, amount in extra.items():
        total[key] = total.get(key, 0) + amount


def _maximum(total: dict[str, int], other: Mapping[str, int]) -> None:
    for key, amount in other.items():
        if key not in total or amount > total[key]:
            total[key] = amount


def pod_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    """component-helpers PodRequests: containers + sidecars, max with init containers, pod-level, overhead."""
    requests: dict[str, int] = {}
    for container in spec.get("containers") or []:
        _add(requests, _quantities((container.get("resources") or {}).get("requests")))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for container in spec.get("initContainers") or []:
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
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    for key, amount in pod_level.items():
        if key in SUPPORTED_POD_LEVEL or str(key).startswith("hugepages-"):
            requests[str(key)] = parse_quantity(amount)
    _add(requests, _quantities(spec.get("overhead")))
    return requests


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
        "namespace", "name", "uid", "node_name", "labels", "annotations", "owners", "phase", "reason",
        "priority", "priority_class", "qos", "requests", "request_keys", "container_request_keys",
        "has_local_storage", "pvc_claims", "has_resource_claims", "terminating", "created", "started",
        "tolerations", "node_selector", "required_node_terms", "has_required_affinity", "preferred_node_terms",
        "anti_affinity_terms", "spread_constraints", "containers", "init_containers", "ephemeral_containers",
        "conditions", "images", "key", "index", "selector_or_affinity",
    )

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        self.namespace: str = str(meta.get("namespace") or "default")
        self.name: str = str(meta.get("name", ""))
        self.key = f"{self.namespace}/{self.name}"
        self.index = 0
        self.uid: str = str(meta.get("uid") or "")
        self.node_name: str = str(spec.get("nodeName") or "")
        self.labels: dict[str, str] = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        self.annotations: dict[str, str] = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        self.owners: list[OwnerRef] = [OwnerRef(r) for r in meta.get("ownerReferences") or []]
        self.phase: str = str(status.get("phase") or "")
        self.reason: str = str(status.get("reason") or "")
        priority = spec.get("priority")
        self.priority: Optional[int] = int(priority) if priority is not None else None
        self.priority_class: str = str(spec.get("priorityClassName") or "")
        self.qos: str = compute_qos(obj)
        self.requests: dict[str, int] = pod_requests(spec)
        self.request_keys = frozenset(self.requests)
        self.container_request_keys = frozenset(
            str(k)
            for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
            for k in ((c.get("resources") or {}).get("requests") or {})
        )
        volumes = spec.get("volumes") or []
        # a source set to null is a nil pointer upstream, i.e. absent
        self.has_local_storage: bool = any(
            v.get("hostPath") is not None or v.get("emptyDir") is not None for v in volumes)
        self.pvc_claims: list[str] = [
            str(v["persistentVolumeClaim"].get("claimName", "")) for v in volumes
            if v.get("persistentVolumeClaim") is not None
        ]
        self.has_resource_claims: bool = bool(spec.get("resourceClaims"))
        self.terminating: bool = bool(meta.get("deletionTimestamp"))
        created = parse_time(meta.get("creationTimestamp"))
        self.created: float = created if created is not None else ZERO_TIME
        self.started: Optional[float] = parse_time(status.get("startTime"))
        # sub-objects are kept by reference (not copied): the rest of the pod object is still freed
        self.tolerations: list[dict] = list(spec.get("tolerations") or ())
        self.node_selector: dict[str, str] = {str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()}
        affinity = spec.get("affinity") or {}
        # Go: NodeSelector != nil || Affinity.NodeAffinity != nil (an empty map still counts)
        self.selector_or_affinity: bool = (
            spec.get("nodeSelector") is not None or affinity.get("nodeAffinity") is not None
        )
        node_affinity = affinity.get("nodeAffinity") or {}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.has_required_affinity: bool = required is not None
        self.required_node_terms: Optional[list] = (
            [compile_node_selector_term(t) for t in (required.get("nodeSelectorTerms") or [])]
            if required is not None else None
        )
        self.preferred_node_terms: list[tuple[int, Any]] = [
            (int(p.get("weight") or 0), compile_node_selector_term(p.get("preference") or {}))
            for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        anti = (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        self.anti_affinity_terms: list[dict] = list(anti)
        self.spread_constraints: list[dict] = list(spec.get("topologySpreadConstraints") or ())
        self.containers = [ContainerState(s) for s in status.get("containerStatuses") or []]
        self.init_containers = [ContainerState(s) for s in status.get("initContainerStatuses") or []]
        self.ephemeral_containers = [ContainerState(s) for s in status.get("ephemeralContainerStatuses") or []]
        self.conditions: list[dict] = [
            {k: c.get(k) for k in ("type", "status", "reason", "lastTransitionTime")}
            for c in status.get("conditions") or []
        ]
        self.images: list[str] = [str(c.get("image", "")) for c in spec.get("containers") or []]

    @property
    def owner(self) -> Optional[OwnerRef]:
        for ref in self.owners:
            if ref.controller:
                return ref
        return self.owners[0] if self.owners else None

    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")
