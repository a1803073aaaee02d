"""The indexed object store.

Objects are plain dicts, one table per (group, plural), keyed by (namespace, name) ("" namespace for cluster-scoped).
Stored dicts are never mutated: every write stores a new dict, so readers may serialize a reference outside the
lock and lists never copy. Tables keep their keys sorted (for paging in namespace/name order) globally and per
namespace, plus optional equality indexes on fields (pods by `spec.nodeName`) and a dependents index by owner uid.
"""

from __future__ import annotations

import json
import threading
import uuid
from bisect import bisect_left, insort
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from .selectors import field_value

ObjectKey = tuple[str, str]  # (namespace, name)
GroupResource = tuple[str, str]  # (group, plural)


def clone(value: Any) -> Any:
    """A deep copy of JSON data; the C json codec beats copy.deepcopy several times over."""
    return json.loads(json.dumps(value))


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def object_key(obj: dict[str, Any]) -> ObjectKey:
    metadata = obj["metadata"]
    return (metadata.get("namespace") or "", metadata["name"])


class SortedKeys:
    """Keys kept in sorted order; bulk appends are sorted once, on the next read."""

    __slots__ = ("_keys", "_sorted")

    def __init__(self) -> None:
        self._keys: list[ObjectKey] = []
        self._sorted = True

    def add(self, key: ObjectKey, bulk: bool = False) -> None:
        if bulk or not self._sorted:
            self._keys.append(key)
            self._sorted = False
        else:
            insort(self._keys, key)

    def discard(self, key: ObjectKey) -> None:
        keys = self.sorted()
        index = bisect_left(keys, key)
        if index < len(keys) and keys[index] == key:
            del keys[index]

    def sorted(self) -> list[ObjectKey]:
        if not self._sorted:
            self._keys.sort()
            self._sorted = True
        return self._keys

    def __len__(self) -> int:
        return len(self._keys)


class Table:
    """The objects of one group/resource with their sorted-key and field indexes."""

    def __init__(self, indexed_fields: Iterable[str] = ()) -> None:
        self.objects: dict[ObjectKey, dict[str, Any]] = {}
        self._order = SortedKeys()
        self._by_namespace: dict[str, SortedKeys] = {}
        self._indexes: dict[str, dict[str, set[ObjectKey]]] = {f: {} for f in indexed_fields}

    def put(self, key: ObjectKey, obj: dict[str, Any], bulk: bool = False) -> dict[str, Any] | None:
        old = self.objects.get(key)
        self.objects[key] = obj
        if old is None:
            self._order.add(key, bulk)
            self._by_namespace.setdefault(key[0], SortedKeys()).add(key, bulk)
        self._reindex(key, old, obj)
        return old

    def remove(self, key: ObjectKey) -> dict[str, Any] | None:
        old = self.objects.pop(key, None)
        if old is not None:
            self._order.discard(key)
            namespace_keys = self._by_namespace.get(key[0])
            if namespace_keys is not None:
                namespace_keys.discard(key)
                if not len(namespace_keys):
                    del self._by_namespace[key[0]]
            self._reindex(key, old, None)
        return old

    def keys(self, namespace: str | None = None) -> list[ObjectKey]:
        """Sorted keys of the whole table or of one namespace. Callers hold the store lock while using them."""
        if namespace is None:
            return self._order.sorted()
        namespace_keys = self._by_namespace.get(namespace)
        return namespace_keys.sorted() if namespace_keys is not None else []

    def count(self, namespace: str | None = None) -> int:
        if namespace is None:
            return len(self.objects)
        namespace_keys = self._by_namespace.get(namespace)
        return len(namespace_keys) if namespace_keys is not None else 0

    def namespaces(self) -> list[str]:
        return list(self._by_namespace)

    def is_indexed(self, field_path: str) -> bool:
        return field_path in self._indexes

    def indexed(self, field_path: str, value: str) -> set[ObjectKey]:
        return self._indexes[field_path].get(value, set())

    def _reindex(self, key: ObjectKey, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for field_path, index in self._indexes.items():
            old_value = field_value(old, field_path) if old is not None else None
            new_value = field_value(new, field_path) if new is not None else None
            if old_value == new_value:
                continue
            if old_value is not None:
                bucket = index.get(old_value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del index[old_value]
            if new_value is not None:
                index.setdefault(new_value, set()).add(key)


def _owner_uids(obj: dict[str, Any] | None) -> set[str]:
    if obj is None:
        return set()
    return {ref["uid"] for ref in obj["metadata"].get("ownerReferences") or () if ref.get("uid")}


class Store:
    """All tables, the cluster-wide resourceVersion counter and the owner-uid → dependents index.

    `lock` is re-entrant and guards every structure here; the API layer holds it for a whole write (including the
    hooks it fires) so a write and its controllers' reactions are atomic for readers.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.resource_version = 1
        self._tables: dict[GroupResource, Table] = {}
        self._dependents: dict[str, set[tuple[GroupResource, ObjectKey]]] = {}

    def ensure_table(self, group_resource: GroupResource, indexed_fields: Iterable[str] = ()) -> Table:
        with self.lock:
            table = self._tables.get(group_resource)
            if table is None:
                table = self._tables[group_resource] = Table(indexed_fields)
            return table

    def table(self, group_resource: GroupResource) -> Table:
        return self._tables.get(group_resource) or self.ensure_table(group_resource)

    def group_resources(self) -> list[GroupResource]:
        return list(self._tables)

    def drop_table(self, group_resource: GroupResource) -> None:
        with self.lock:
            table = self._tables.pop(group_resource, None)
            for obj in table.objects.values() if table else ():
                self._unlink_owners(group_resource, object_key(obj), _owner_uids(obj))

    def next_version(self) -> str:
        with self.lock:
            self.resource_version += 1
            return str(self.resource_version)

    def get(self, group_resource: GroupResource, namespace: str, name: str) -> dict[str, Any] | None:
        table = self._tables.get(group_resource)
        return table.objects.get((namespace or "", name)) if table else None

    def put(self, group_resource: GroupResource, obj: dict[str, Any], bulk: bool = False) -> dict[str, Any] | None:
        """Insert or replace; the caller has set metadata (resourceVersion included) and gives up `obj`."""
        with self.lock:
            key = object_key(obj)
            old = self.table(group_resource).put(key, obj, bulk)
            old_owners, new_owners = _owner_uids(old), _owner_uids(obj)
            if old_owners != new_owners:
                self._unlink_owners(group_resource, key, old_owners - new_owners)
                for uid in new_owners - old_owners:
                    self._dependents.setdefault(uid, set()).add((group_resource, key))
            return old

    def remove(self, group_resource: GroupResource, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            table = self._tables.get(group_resource)
            old = table.remove((namespace or "", name)) if table else None
            if old is not None:
                self._unlink_owners(group_resource, (namespace or "", name), _owner_uids(old))
            return old

    def dependents(self, owner_uid: str) -> list[tuple[GroupResource, ObjectKey]]:
        with self.lock:
            return sorted(self._dependents.get(owner_uid, ()))

    def _unlink_owners(self, group_resource: GroupResource, key: ObjectKey, uids: Iterable[str]) -> None:
        for uid in uids:
            bucket = self._dependents.get(uid)
            if bucket is not None:
                bucket.discard((group_resource, key))
                if not bucket:
                    del self._dependents[uid]
