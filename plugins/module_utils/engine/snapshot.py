"""Cluster snapshots: reading them from files and indexing the objects the engine needs."""

from __future__ import annotations

import gzip
import json
from typing import Any, Iterable, Iterator, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import SnapshotError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import (
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
)

try:  # PyYAML is an ansible-core dependency; the C loader is much faster when present
    import yaml

    _YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]

KINDS_READ = frozenset(
    ["Node", "Pod", "Namespace", "PriorityClass", "PodDisruptionBudget", "PersistentVolumeClaim", "PersistentVolume"]
)


def load_snapshot_file(path: str) -> list[dict]:
    """Read a JSON or YAML snapshot: a list, a ``kind: List`` document, or multi-document YAML (optionally .gz)."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
            text = handle.read()
    except OSError as exc:
        raise SnapshotError(f"snapshot {path!r} cannot be read: {exc.strerror or exc}") from exc
    with gc_paused():  # parsing allocates millions of objects at once and none is garbage yet
        return parse_snapshot_text(text, source=path)


def parse_snapshot_text(text: str, source: str = "snapshot") -> list[dict]:
    stripped = text.lstrip()
    documents: list[Any]
    if stripped.startswith(("{", "[")):
        try:
            documents = [json.loads(text)]
        except ValueError as exc:
            raise SnapshotError(f"{source}: invalid JSON: {exc}") from exc
    else:
        if yaml is None:
            raise SnapshotError(f"{source}: YAML snapshots need PyYAML")
        try:
            documents = [d for d in yaml.load_all(text, Loader=_YamlLoader) if d is not None]
        except yaml.YAMLError as exc:
            raise SnapshotError(f"{source}: invalid YAML: {exc}") from exc
    objects: list[dict] = []
    for number, document in enumerate(documents):
        objects.extend(_flatten(document, f"{source} document {number + 1}"))
    return objects


def _flatten(document: Any, where: str) -> Iterator[dict]:
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield from _flatten(item, f"{where} item {index}")
    elif isinstance(document, dict):
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
            item_kind = kind[: -len("List")] or None
            for index, item in enumerate(document["items"]):
                if isinstance(item, dict) and item_kind and "kind" not in item:
                    item = dict(item, kind=item_kind)
                yield from _flatten(item, f"{where} items[{index}]")
        elif not isinstance(kind, str) or not kind:
            raise SnapshotError(f"{where}: an object without 'kind' (expected Kubernetes objects, a List or a list)")
        else:
            yield document
    else:
        raise SnapshotError(f"{where}: expected a Kubernetes object (mapping), got {type(document).__name__}")


class Snapshot:
    """The indexed objects of one cluster: nodes by name, pods by node, and lookups plugins and the evictor need."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.nodes: dict[str, Node] = {}
        self.pods: list[Pod] = []
        self.namespaces: dict[str, dict[str, str]] = {}
        self.priority_classes: dict[str, int] = {}
        self.pdbs: list[dict] = []
        self.claims: dict[tuple[str, str], PersistentVolumeClaim] = {}  # by (namespace, name)
        self.persistent_volumes: dict[str, PersistentVolume] = {}
        # whether PersistentVolumes were read (listed, or present in the file): placement's volume filters need them
        self.volumes_listed = False
        self.metrics_objects: list[Mapping[str, Any]] = []  # NodeMetrics/PodMetrics, read by engine.metrics
        self.actual: Any = None  # engine.metrics.ActualUsage for this plan, set by compute_plan
        self.kubevirt_objects: list[Mapping[str, Any]] = []  # VMIs and VMIMs, read by engine.kubevirt_migration
        for number, obj in enumerate(objects):
            self._add(obj, number)
        self.pods.sort(key=lambda p: (p.namespace, p.name))
        for index, pod in enumerate(self.pods):
            pod.index = index
        self.pods_by_node: dict[str, list[Pod]] = {}
        for pod in self.pods:
            if pod.node_name:
                self.pods_by_node.setdefault(pod.node_name, []).append(pod)
        self.owner_uid_counts: dict[str, int] = {}
        for pod in self.pods:
            for uid in {ref.uid for ref in pod.owners}:  # an indexer lists a pod once per distinct owner UID
                self.owner_uid_counts[uid] = self.owner_uid_counts.get(uid, 0) + 1

    def _add(self, obj: Mapping[str, Any], number: int) -> None:
        if not isinstance(obj, Mapping):
            raise SnapshotError(f"object {number}: expected a mapping, got {type(obj).__name__}")
        kind = obj.get("kind")
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not meta.get("name"):
            raise SnapshotError(f"object {number} (kind {kind!r}): metadata.name is missing")
        try:
            self._add_kind(kind, obj, meta)
        except (TypeError, ValueError, AttributeError) as exc:
            where = f"{kind} {meta.get('namespace', '') + '/' if meta.get('namespace') else ''}{meta.get('name')}"
            raise SnapshotError(f"{where}: {exc}") from exc

    def _add_kind(self, kind: Any, obj: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        if kind == "Pod":
            self.pods.append(Pod(obj))
        elif kind == "Node":
            node = Node(obj)
            self.nodes[node.name] = node
        elif kind == "Namespace":
            self.namespaces[meta["name"]] = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        elif kind == "PriorityClass":
            self.priority_classes[meta["name"]] = int(obj.get("value") or 0)
        elif kind == "PodDisruptionBudget":
            self.pdbs.append({
                "namespace": meta.get("namespace") or "default",
                "name": meta["name"],
                "selector": (obj.get("spec") or {}).get("selector"),
            })
        elif kind == "PersistentVolumeClaim":
            claim = PersistentVolumeClaim(obj)
            self.claims[(claim.namespace, claim.name)] = claim
        elif kind == "PersistentVolume":
            volume = PersistentVolume(obj)
            self.persistent_volumes[volume.name] = volume
            self.volumes_listed = True
        elif kind in ("NodeMetrics", "PodMetrics"):
            self.metrics_objects.append(obj)
        elif kind in ("VirtualMachineInstance", "VirtualMachineInstanceMigration"):
            self.kubevirt_objects.append(obj)
        # other kinds (owners, ConfigMaps...) are not read by the engine

    def sorted_nodes(self) -> list[Node]:
        return [self.nodes[name] for name in sorted(self.nodes)]

    def namespace_labels(self, namespace: str) -> Optional[dict[str, str]]:
        return self.namespaces.get(namespace)


# What the engine reads of each object; everything else is dropped as objects are listed (150k pods fit in memory).
_META_KEYS = ("name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp", "deletionTimestamp")
_ANNOTATIONS_READ = frozenset([
    "descheduler.alpha.kubernetes.io/evict", "descheduler.alpha.kubernetes.io/prefer-no-eviction",
    "descheduler.alpha.kubernetes.io/request-evict-only", "kubernetes.io/config.mirror",
    "kubernetes.io/config.source", "kubevirt.io/domain",
])
_POD_SPEC_KEYS = (
    "nodeName", "containers", "initContainers", "overhead", "resources", "priority", "priorityClassName", "volumes",
    "resourceClaims", "tolerations", "nodeSelector", "affinity", "topologySpreadConstraints",
)
_POD_STATUS_KEYS = (
    "phase", "reason", "qosClass", "startTime", "containerStatuses", "initContainerStatuses",
    "ephemeralContainerStatuses", "conditions",
)
_CONTAINER_KEYS = ("name", "image", "resources", "restartPolicy")


def slim_object(obj: dict) -> dict:
    """Keep only the fields the engine reads (a listing hook; the result is still a valid object for Snapshot)."""
    kind = obj.get("kind")
    meta = obj.get("metadata") or {}
    slim_meta = {k: meta[k] for k in _META_KEYS if k in meta}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k in _ANNOTATIONS_READ}
    if annotations:
        slim_meta["annotations"] = annotations
    slim = {"apiVersion": obj.get("apiVersion"), "kind": kind, "metadata": slim_meta}
    if kind == "Pod":
        spec = obj.get("spec") or {}
        slim_spec = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
        for key in ("containers", "initContainers"):
            if key in slim_spec:
                slim_spec[key] = [{k: c[k] for k in _CONTAINER_KEYS if k in c} for c in slim_spec[key] or []]
        status = obj.get("status") or {}
        slim["spec"] = slim_spec
        slim["status"] = {k: status[k] for k in _POD_STATUS_KEYS if k in status}
    elif kind == "Node":
        status = obj.get("status") or {}
        slim["spec"] = obj.get("spec") or {}
        slim["status"] = {k: status[k] for k in ("allocatable", "capacity", "conditions") if k in status}
    else:
        for key in ("spec", "value"):
            if key in obj:
                slim[key] = obj[key]
    return slim
