"""What the kube-scheduler reads of a pod, beyond the descheduler's slim model.

The descheduler's ``Pod`` keeps only what eviction needs; placement also needs host ports, inter-pod (anti-)affinity,
the scheduler name and the "non-zero" requests the scoring plugins use. ``extract_extras`` reads those from a raw
pod object (while objects are listed or loaded); ``SchedPod`` joins them with the slim model.
"""

from __future__ import annotations

from itertools import chain
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import (
    Selector,
    compile_label_selector,
    matches,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod, pod_requests
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import (
    NANO,
    milli_value,
    parse_quantity,
    value,
)

DEFAULT_SCHEDULER = "default-scheduler"
# pkg/scheduler/util: what a container without a cpu/memory request counts as when nodes are scored
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
BASIC_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
_BASIC = frozenset(BASIC_RESOURCES)
_CPU_MEMORY = frozenset(("cpu", "memory"))
NO_SCALAR: Mapping[str, int] = MappingProxyType({})  # shared by the pods that ask no extended resource


def _with_default_requests(containers: Any) -> list[dict]:
    """Containers whose missing cpu/memory requests get the scheduler's defaults (NonMissingContainerRequests)."""
    result = []
    for container in containers or []:
        requests = dict((container.get("resources") or {}).get("requests") or {})
        requests.setdefault("cpu", f"{DEFAULT_MILLI_CPU_REQUEST}m")
        requests.setdefault("memory", str(DEFAULT_MEMORY_REQUEST))
        result.append({"resources": {"requests": requests}, "restartPolicy": container.get("restartPolicy")})
    return result


_NONZERO_CACHE: dict[str, tuple[int, int]] = {}  # the replicas of a workload ask alike: parse each shape once
_NONZERO_CACHE_LIMIT = 20_000


def nonzero_requests(spec: Mapping[str, Any]) -> tuple[int, int]:
    """(milli-CPU, memory bytes) the way NodeResourcesFit scoring counts a pod (defaults for missing requests)."""
    # everything the result depends on: the containers' requests, the init containers' restartPolicy too
    shape = repr(([(c.get("resources") or {}).get("requests") for c in spec.get("containers") or ()],
                  [((c.get("resources") or {}).get("requests"), c.get("restartPolicy"))
                   for c in spec.get("initContainers") or ()],
                  spec.get("overhead"), spec.get("resources")))
    cached = _NONZERO_CACHE.get(shape)
    if cached is None:
        cached = _nonzero_requests(spec)
        if len(_NONZERO_CACHE) < _NONZERO_CACHE_LIMIT:
            _NONZERO_CACHE[shape] = cached
    return cached


def _nonzero_requests(spec: Mapping[str, Any]) -> tuple[int, int]:
    patched = {
        "containers": _with_default_requests(spec.get("containers")),
        "initContainers": _with_default_requests(spec.get("initContainers")),
        "overhead": spec.get("overhead"),
        "resources": spec.get("resources"),
    }
    requests = pod_requests(patched)
    return milli_value(requests.get("cpu", 0)), value(requests.get("memory", 0))


def host_ports(spec: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """(hostIP, protocol, hostPort) of every container port that claims a host port."""
    return _read_containers(spec)[0]


def _read_containers(spec: Mapping[str, Any]) -> tuple[tuple[tuple[str, str, int], ...], bool]:
    """The host ports, and whether a container lacks a cpu or memory request (then the non-zero requests differ
    from the requests), in one pass over the containers: this runs for every pod of the cluster."""
    ports = []
    needs_defaults = False
    containers = spec.get("containers") or ()
    init_containers = spec.get("initContainers")
    for container in chain(containers, init_containers) if init_containers else containers:
        declared = container.get("ports")
        if declared:  # most declare container ports only: hostPort absent
            for port in declared:
                host_port = port.get("hostPort")
                if host_port and int(host_port) > 0:
                    ports.append((str(port.get("hostIP") or "0.0.0.0"), str(port.get("protocol") or "TCP"),
                                  int(host_port)))
        if not needs_defaults:
            resources = container.get("resources")
            requests = resources.get("requests") if resources else None
            needs_defaults = not requests or "cpu" not in requests or "memory" not in requests
    return (tuple(ports) if ports else ()), needs_defaults


def extract_extras(obj: Mapping[str, Any], container_cpus: bool = True, images: bool = True) -> Optional[dict]:
    """The scheduling fields of a raw pod the slim model drops; None when the model alone describes the pod.
    ``images``: also the init containers' and image volumes' images (ImageLocality; moot when no node lists
    images)."""
    spec = obj.get("spec") or {}
    extras: dict[str, Any] = {}
    name = spec.get("schedulerName")
    if name and name != DEFAULT_SCHEDULER:
        extras["schedulerName"] = str(name)
    ports, needs_defaults = _read_containers(spec)
    if ports:
        extras["hostPorts"] = ports
    affinity = spec.get("affinity")
    if affinity:
        for key in ("podAffinity", "podAntiAffinity"):
            if affinity.get(key):
                extras[key] = affinity[key]
    if needs_defaults:  # otherwise the non-zero requests are the requests
        extras["nonzero"] = nonzero_requests(spec)
    if images:
        _record_images(spec, extras)
    if container_cpus:
        cpu = container_cpu(spec)
        if any(limit is not None or request is None for request, limit in cpu[0]) or cpu[1]:
            extras["containerCpu"] = cpu  # otherwise Trimaran's prediction follows from the requests
    return extras or None


def _record_images(spec: Mapping[str, Any], extras: dict[str, Any]) -> None:
    """The images ImageLocality reads besides the containers' (the model keeps those)."""
    init_containers = spec.get("initContainers")
    if init_containers:
        extras["initImages"] = tuple(str(c.get("image") or "") for c in init_containers)
    volumes = spec.get("volumes")
    if volumes:
        references = tuple(str(v["image"].get("reference") or "") for v in volumes
                           if isinstance(v, dict) and isinstance(v.get("image"), dict))
        if references:
            extras["imageVolumes"] = references


def container_cpu(spec: Mapping[str, Any]) -> tuple:
    """(request millis or None, limit millis or None) per container, and the cpu overhead: Trimaran predicts a
    pod's CPU from them."""
    result = []
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        request = (resources.get("requests") or {}).get("cpu")
        limit = (resources.get("limits") or {}).get("cpu")
        result.append((milli_value(parse_quantity(request)) if request is not None else None,
                       milli_value(parse_quantity(limit)) if limit is not None else None))
    overhead = (spec.get("overhead") or {}).get("cpu")
    return tuple(result), milli_value(parse_quantity(overhead)) if overhead is not None else 0


class ExtrasIndex:
    """Scheduling extras per pod key (namespace/name), and the images each node holds (ImageLocality), collected
    from raw objects. With ``nodes_first`` (a listing reads Nodes first, snapshot_source.DEFAULT_KINDS, and
    from_objects records them first) a pod's init container and image volume images are kept only once a node
    listing images has been recorded: without node images ImageLocality scores nothing. Objects in any order (a
    snapshot file read as it is parsed) keep every pod's."""

    def __init__(self, container_cpus: bool = True, nodes_first: bool = True) -> None:
        self.by_key: dict[str, dict] = {}
        self.node_images: dict[str, list[tuple[tuple[str, ...], int]]] = {}  # node name → [(names, size)]
        self.container_cpus = container_cpus  # only Trimaran reads them
        self.nodes_first = nodes_first

    def record(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("kind")
        if kind == "Pod":
            self._record_pod(obj, bool(self.node_images) or not self.nodes_first)
        elif kind == "Node":
            self._record_node(obj)

    def _record_node(self, obj: Mapping[str, Any]) -> None:
        images = node_images(obj)
        if images:
            self.node_images[str((obj.get("metadata") or {}).get("name", ""))] = images

    def _record_pod(self, obj: Mapping[str, Any], images: bool) -> None:
        extras = extract_extras(obj, self.container_cpus, images)
        if extras:
            meta = obj.get("metadata") or {}
            self.by_key[f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"] = extras

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]], container_cpus: bool = True) -> ExtrasIndex:
        index = cls(container_cpus)
        pods = []
        for obj in objects:  # Nodes first: whether they list images decides what the pods keep
            if isinstance(obj, dict):  # not typing.Mapping: its isinstance check is slow at 150,000 objects
                kind = obj.get("kind")
                if kind == "Pod":
                    pods.append(obj)
                elif kind == "Node":
                    index._record_node(obj)
        images = bool(index.node_images)
        for obj in pods:
            index._record_pod(obj, images)
        return index


def node_images(obj: Mapping[str, Any]) -> list[tuple[tuple[str, ...], int]]:
    """(names, size in bytes) of each image a raw Node's ``status.images`` lists."""
    result = []
    for image in (obj.get("status") or {}).get("images") or ():
        if not isinstance(image, dict) or not isinstance(image.get("sizeBytes") or 0, int):
            continue  # not what a kubelet writes (a hand-made snapshot file): no image to count
        names = tuple(str(n) for n in image.get("names") or ())
        if names:
            result.append((names, image.get("sizeBytes") or 0))
    return result


class AffinityTerm:
    """A PodAffinityTerm compiled for the pod that declares it (upstream framework.AffinityTerm)."""

    __slots__ = ("selector", "namespaces", "namespace_selector", "topology_key", "weight", "identity")

    def __init__(self, raw: Mapping[str, Any], owner_namespace: str, owner_labels: Mapping[str, str],
                 weight: int = 0) -> None:
        selector = compile_label_selector(raw.get("labelSelector"), "labelSelector")
        if selector is not None:
            extra = []
            for key in raw.get("matchLabelKeys") or []:
                if key in owner_labels:
                    extra.append((str(key), "In", frozenset([owner_labels[key]])))
            for key in raw.get("mismatchLabelKeys") or []:
                if key in owner_labels:
                    extra.append((str(key), "NotIn", frozenset([owner_labels[key]])))
            selector = tuple(selector) + tuple(extra)
        self.selector: Selector = selector
        names = [str(n) for n in raw.get("namespaces") or []]
        ns_selector = raw.get("namespaceSelector")
        # no namespaces and no namespaceSelector: the term's own namespace (upstream GetNamespacesFromPodAffinityTerm)
        self.namespaces = frozenset(names) if names or ns_selector is not None else frozenset([owner_namespace])
        self.namespace_selector: Selector = compile_label_selector(ns_selector, "namespaceSelector")
        self.topology_key: str = str(raw.get("topologyKey") or "")
        self.weight = weight
        # equal terms (the replicas of one workload) are indexed once
        self.identity = (self.topology_key, self.selector, self.namespaces, self.namespace_selector, weight)

    def matches(self, pod: SchedPod, namespace_labels: Mapping[str, Mapping[str, str]]) -> bool:
        if pod.namespace not in self.namespaces:
            if self.namespace_selector is None:
                return False
            if not matches(self.namespace_selector, namespace_labels.get(pod.namespace) or {}):
                return False
        return matches(self.selector, pod.labels)


NO_TERMS: tuple = ()
_TERM_CACHE: dict[tuple, tuple] = {}  # the replicas of a workload carry equal terms: compile them once
_TERM_CACHE_LIMIT = 50_000


def _compiled(kind: str, block: Any, namespace: str, labels: Mapping[str, str]) -> tuple:
    if not block:
        return NO_TERMS
    text = repr(block)
    # matchLabelKeys/mismatchLabelKeys read the pod's own labels
    key = (kind, text, namespace, tuple(sorted(labels.items())) if "LabelKeys" in text else None)
    cached = _TERM_CACHE.get(key)
    if cached is None:
        if kind == "required":
            cached = tuple(AffinityTerm(t, namespace, labels) for t in block)
        else:
            sign = -1 if kind == "preferred-anti" else 1  # anti-affinity weights subtract from a node's score
            cached = tuple(AffinityTerm(w.get("podAffinityTerm") or {}, namespace, labels,
                                        sign * int(w.get("weight") or 0)) for w in block)
        if len(_TERM_CACHE) < _TERM_CACHE_LIMIT:
            _TERM_CACHE[key] = cached
    return cached


class SchedPod:
    """One pod as the scheduler sees it: the slim model plus the extras, with compiled affinity terms."""

    __slots__ = (
        "model", "key", "namespace", "name", "labels", "owner_uid", "owner_kind", "scheduler_name", "requests",
        "nonzero_cpu", "nonzero_memory", "host_ports", "affinity", "anti_affinity", "preferred_affinity",
        "preferred_anti_affinity", "terminating", "container_cpu", "has_affinity", "cpu", "memory", "ephemeral",
        "scalar", "init_images", "volume_images",
    )

    def __init__(self, model: Pod, extras: Optional[Mapping[str, Any]]) -> None:
        # runs for every bound pod of the cluster: most have no extras and ask only cpu and memory
        self.model = model
        self.key = model.key
        self.namespace = model.namespace
        self.name = model.name
        self.labels = model.labels
        owner = model.owner
        if owner:
            self.owner_uid = owner.uid if owner.controller else ""
            self.owner_kind = owner.kind
        else:
            self.owner_uid = self.owner_kind = ""
        requests = self.requests = model.requests
        # requests as the scheduler counts them (cpu in millis, the rest in units: quantity.milli_value and value,
        # inlined), computed once
        cpu = self.cpu = -((-requests["cpu"]) // 10**6) if "cpu" in requests else 0
        memory = self.memory = -((-requests["memory"]) // NANO) if "memory" in requests else 0
        if len(requests) <= 2 and requests.keys() <= _CPU_MEMORY:
            self.ephemeral = 0
            self.scalar = NO_SCALAR
        else:
            self.ephemeral = value(requests["ephemeral-storage"]) if "ephemeral-storage" in requests else 0
            self.scalar = {k: value(v) for k, v in requests.items() if k not in _BASIC and v > 0} or NO_SCALAR
        self.terminating = model.terminating
        if not extras:
            self.scheduler_name = DEFAULT_SCHEDULER
            self.nonzero_cpu = cpu  # every container asks both cpu and memory: no defaults apply
            self.nonzero_memory = memory
            self.host_ports = ()
            self.container_cpu = None
            self.init_images = self.volume_images = ()
            if model.anti_affinity_terms:
                self._compile_terms(model, {})
            else:
                self.affinity = self.anti_affinity = self.preferred_affinity = self.preferred_anti_affinity = NO_TERMS
                self.has_affinity = False
            return
        self.scheduler_name = extras.get("schedulerName") or DEFAULT_SCHEDULER
        self.nonzero_cpu, self.nonzero_memory = extras.get("nonzero") or (cpu, memory)
        self.host_ports = tuple(extras.get("hostPorts") or ())
        self.container_cpu = extras.get("containerCpu")
        self.init_images = extras.get("initImages") or ()
        self.volume_images = extras.get("imageVolumes") or ()
        self._compile_terms(model, extras)

    def _compile_terms(self, model: Pod, extras: Mapping[str, Any]) -> None:
        affinity = extras.get("podAffinity") or {}
        anti = extras.get("podAntiAffinity") or {}
        required_anti = anti.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required_anti is None and model.anti_affinity_terms:
            required_anti = model.anti_affinity_terms
        namespace, labels = self.namespace, self.labels
        self.affinity = _compiled("required", affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
                                  namespace, labels)
        self.anti_affinity = _compiled("required", required_anti, namespace, labels)
        self.preferred_affinity = _compiled(
            "preferred", affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), namespace, labels)
        self.preferred_anti_affinity = _compiled(
            "preferred-anti", anti.get("preferredDuringSchedulingIgnoredDuringExecution"), namespace, labels)
        self.has_affinity = bool(self.affinity or self.anti_affinity or self.preferred_affinity
                                 or self.preferred_anti_affinity)

    def replacement(self) -> SchedPod:
        """The pod its controller creates in its place: the same pod, not terminating (slot by slot: copy.copy
        goes through __reduce_ex__, several times slower, once per replacement)."""
        clone = SchedPod.__new__(SchedPod)
        for slot in self.__slots__:
            setattr(clone, slot, getattr(self, slot))
        clone.terminating = False
        return clone

    def request_milli_cpu(self) -> int:
        return self.cpu

    def request_value(self, resource: str) -> int:
        if resource == "memory":
            return self.memory
        if resource == "ephemeral-storage":
            return self.ephemeral
        return self.scalar.get(resource, 0)

    def scalar_requests(self) -> dict[str, int]:
        return self.scalar
