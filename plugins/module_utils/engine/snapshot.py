"""Cluster snapshots: reading them from files and indexing the objects the engine needs."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any, Iterable, Iterator, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import SnapshotError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import (
    POD_ANNOTATIONS_READ,
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


READ_CHUNK = 1 << 20  # characters read at a time when a JSON snapshot is streamed


def load_snapshot_file(path: str) -> list[dict]:
    """Read a JSON or YAML snapshot: a list, a ``kind: List`` document, or multi-document YAML (optionally .gz)."""
    return list(iter_snapshot_file(path))


def iter_snapshot_file(path: str) -> Iterator[dict]:
    """The objects of a snapshot file, one at a time. A JSON snapshot (a list or a ``kind: List``, as ``kubectl get
    -o json`` writes) is streamed: only the object being handed out is held, so its caller can reduce each object
    (``model_listed_object``) before the next is parsed. YAML is parsed whole."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
            stream = _JsonStream(handle, path)
            if stream.peek() in ("{", "["):
                with gc_paused():  # parsing allocates millions of objects at once and none is garbage yet
                    yield from _stream_objects(stream)
                return
            text = stream.rest()
    except OSError as exc:
        raise SnapshotError(f"snapshot {path!r} cannot be read: {exc.strerror or exc}") from exc
    with gc_paused():
        yield from parse_snapshot_text(text, source=path)


_WHITESPACE = re.compile(r"[ \t\r\n]*")  # JSON's white space (the json module's own rule)


class _JsonStream:
    """One JSON text read from a file in chunks, a value at a time (the standard library's ``raw_decode``)."""

    def __init__(self, handle: Any, source: str) -> None:
        self.handle, self.source = handle, source
        self.buffer, self.position, self.at_end = "", 0, False
        self.decoder = json.JSONDecoder()

    def _read_more(self) -> bool:
        # read at least as much as is buffered: a value larger than a chunk costs a few retries, not one per chunk
        chunk = self.handle.read(max(READ_CHUNK, len(self.buffer) - self.position))
        if not chunk:
            self.at_end = True
            return False
        self.buffer = self.buffer[self.position:] + chunk
        self.position = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file), not consumed."""
        while True:
            self.position = _WHITESPACE.match(self.buffer, self.position).end()  # type: ignore[union-attr]
            if self.position < len(self.buffer):
                return self.buffer[self.position]
            if not self._read_more():
                return ""

    def take(self, expected: str) -> str:
        """Consume the next character, which must be one of ``expected``."""
        found = self.peek()
        if not found or found not in expected:
            raise SnapshotError(f"{self.source}: invalid JSON: expected {' or '.join(map(repr, expected))}, found "
                                f"{found or 'the end of the file'!r} near {self.buffer[self.position:][:40]!r}")
        self.position += 1
        return found

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.position)
            except ValueError as exc:
                if self._read_more():
                    continue
                raise SnapshotError(f"{self.source}: invalid JSON: {exc}") from exc
            if end < len(self.buffer) or self.at_end or not self._read_more():  # a number may go on in the next chunk
                self.position = end
                return value

    def rest(self) -> str:
        while self._read_more():
            pass
        return self.buffer[self.position:]


def _stream_objects(stream: _JsonStream) -> Iterator[dict]:
    """The objects of a JSON list or ``kind: List`` document, each as soon as it is parsed."""
    where = f"{stream.source} document 1"
    if stream.peek() == "[":
        for index, item in enumerate(_array_items(stream)):
            if _is_plain_object(item):
                yield item  # the usual item, an object with its own kind: no flattening to do
            else:
                yield from _flatten(item, f"{where} item {index}")
    else:
        yield from _stream_object_document(stream, where)
    if stream.peek():
        raise SnapshotError(f"{stream.source}: invalid JSON: extra data after the document, near "
                            f"{stream.buffer[stream.position:][:40]!r}")


def _array_items(stream: _JsonStream) -> Iterator[Any]:
    stream.take("[")
    if stream.peek() == "]":
        stream.take("]")
        return
    while True:
        yield stream.value()
        if stream.take(",]") == "]":
            return


def _stream_object_document(stream: _JsonStream, where: str) -> Iterator[dict]:
    """A top-level object: its ``items`` streamed when it is a List (``kubectl`` writes ``kind`` after ``items``:
    items without a ``kind`` of their own wait for it), else the object itself."""
    fields: dict[str, Any] = {}
    streamed, waiting, items_streamed = 0, [], False
    stream.take("{")
    while stream.peek() != "}":
        if fields or items_streamed:
            stream.take(",")
        key = stream.value()
        stream.take(":")
        if key == "items" and stream.peek() == "[" and _may_be_list(fields):
            items_streamed = True
            for item in _array_items(stream):
                if _is_plain_object(item):
                    yield item  # the usual item, an object with its own kind: no flattening to do
                elif isinstance(item, dict) and "kind" not in item and _item_kind(fields) is None:
                    waiting.append(item)
                    continue
                else:
                    yield from _flatten(_with_kind(item, _item_kind(fields)), f"{where} items[{streamed}]")
                streamed += 1
            continue
        fields[key] = stream.value()
    stream.take("}")
    if not items_streamed:
        yield from _flatten(fields, where)
        return
    if _item_kind(fields) is None and not str(fields.get("kind", "")).endswith("List"):
        raise SnapshotError(f"{where}: an object with 'items' but kind {fields.get('kind')!r}; a snapshot is a list "
                            "of objects or a List (kind List, PodList...)")
    for item in waiting:
        yield from _flatten(_with_kind(item, _item_kind(fields)), f"{where} items[{streamed}]")
        streamed += 1


def _is_plain_object(item: Any) -> bool:
    """An object with a kind of its own that is not a List: yielded as it is (anything else goes through _flatten,
    which nests a List's items and names what is wrong)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("kind")
    return isinstance(kind, str) and bool(kind) and not kind.endswith("List")


def _may_be_list(fields: Mapping[str, Any]) -> bool:
    kind = fields.get("kind")
    return kind is None or (isinstance(kind, str) and kind.endswith("List"))


def _item_kind(fields: Mapping[str, Any]) -> Optional[str]:
    kind = fields.get("kind")
    return (kind[: -len("List")] or None) if isinstance(kind, str) and kind.endswith("List") else None


def _with_kind(item: Any, kind: Optional[str]) -> Any:
    return dict(item, kind=kind) if isinstance(item, dict) and kind and "kind" not in item else item


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
        # by (namespace, name): NUL sorts before any character of a name, so the joined string orders as the pair
        # does, and string comparisons sort 150,000 pods in a third of the time tuples take
        self.pods.sort(key=lambda p: f"{p.namespace}\0{p.name}")
        self.pods_by_node: dict[str, list[Pod]] = {}
        self._pods_by_key: Optional[dict[tuple[str, str], Pod]] = None  # see find_pod
        self.owner_uid_counts: dict[str, int] = {}
        self._index_pods()

    def _index_pods(self) -> None:
        """Each pod's index, the pods by node and the pods per owner UID, in one pass (150,000 pods)."""
        by_node, counts = self.pods_by_node, self.owner_uid_counts
        for index, pod in enumerate(self.pods):
            pod.index = index
            if pod.node_name:
                by_node.setdefault(pod.node_name, []).append(pod)
            owners = pod.owners
            if len(owners) == 1:  # most pods
                uid = owners[0].uid
                counts[uid] = counts.get(uid, 0) + 1
                continue
            for uid in {ref.uid for ref in owners}:  # an indexer lists a pod once per distinct owner UID
                counts[uid] = counts.get(uid, 0) + 1

    def _add(self, obj: Any, number: int) -> None:
        if obj.__class__ is Pod:  # modelled as it was listed (model_listed_object)
            self.pods.append(obj)
            return
        if not isinstance(obj, dict) and not isinstance(obj, Mapping):  # typing's isinstance is slow: dicts first
            raise SnapshotError(f"object {number}: expected a mapping, got {type(obj).__name__}")
        kind = obj.get("kind")
        meta = obj.get("metadata")
        if not (isinstance(meta, dict) or isinstance(meta, Mapping)) or not meta.get("name"):  # dicts first, as above
            raise SnapshotError(f"object {number} (kind {kind!r}): metadata.name is missing")
        try:
            self._add_kind(kind, obj, meta)
        except (TypeError, ValueError, AttributeError) as exc:
            raise _object_error(kind, meta, exc) from exc

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

    def find_pod(self, namespace: str, name: str) -> Optional[Pod]:
        """The pod of that namespace and name (None: not in the snapshot), through an index built on first use and
        kept for every plan on this snapshot (the whatif module's candidates look up each of their evictions)."""
        if self._pods_by_key is None:
            # reversed: of two pods with one name (a hand-made snapshot), the first in sorted order is found
            self._pods_by_key = {(pod.namespace, pod.name): pod for pod in reversed(self.pods)}
        return self._pods_by_key.get((namespace, name))

    def namespace_labels(self, namespace: str) -> Optional[dict[str, str]]:
        return self.namespaces.get(namespace)


# What the engine reads of each object; everything else is dropped as objects are listed (150k pods fit in memory).
_META_KEYS = ("name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp", "deletionTimestamp")
_ANNOTATIONS_READ = frozenset(POD_ANNOTATIONS_READ)
_POD_SPEC_KEYS = (
    "nodeName", "containers", "initContainers", "overhead", "resources", "priority", "priorityClassName", "volumes",
    "resourceClaims", "tolerations", "nodeSelector", "affinity", "topologySpreadConstraints",
)
_POD_STATUS_KEYS = (
    "phase", "reason", "qosClass", "startTime", "containerStatuses", "initContainerStatuses",
    "ephemeralContainerStatuses", "conditions",
)
_CONTAINER_KEYS = ("name", "image", "resources", "restartPolicy")


def model_listed_object(obj: dict) -> Any:
    """What a plan keeps of each object as it is listed or read from a file, before the next one is parsed: a Pod
    becomes the engine's Pod at once (it keeps only what the plan reads, so neither the parsed dict nor a slimmed
    copy of it is held), a Node is slimmed, other kinds (few, or read whole: metrics, VMIs) are kept as they are.
    Snapshot takes all three."""
    kind = obj.get("kind")
    if kind == "Node":
        return slim_object(obj)
    meta = obj.get("metadata")
    if kind != "Pod" or not isinstance(meta, dict) or not meta.get("name"):
        return obj  # Snapshot reports a Pod without a name, with the other kinds' errors
    try:
        return Pod(obj)
    except (TypeError, ValueError, AttributeError) as exc:
        raise _object_error("Pod", meta, exc) from exc


def _object_error(kind: Any, meta: Mapping[str, Any], exc: Exception) -> SnapshotError:
    namespace = meta.get("namespace")
    return SnapshotError(f"{kind} {namespace + '/' if namespace else ''}{meta.get('name')}: {exc}")


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
