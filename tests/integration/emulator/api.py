"""REST semantics of one resource type: create, get, list, update, patch, delete, as kube-apiserver does them.

The HTTP layer (router.py) parses requests into these calls; the in-process helpers on `Emulator` call them
directly (no auth, no faults). Every write holds the store lock for the write and the hooks it fires, runs the
admission hooks before persisting, and notifies controllers/watchers after.
"""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import ApiError
from .paging import INCONSISTENT, ContinueToken, decode
from .patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from .resources import ResourceType
from .selectors import object_predicate, parse_field_selector, parse_label_selector
from .store import ObjectKey, Table, clone, new_uid, now_rfc3339, object_key

if TYPE_CHECKING:
    from .emulator import Emulator

SYSTEM_USER = "system:emulator"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)
CUSTOM_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)

_GENERATED_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# Metadata the server owns: carried over from the stored object on update, whatever the client sends.
SERVER_OWNED_METADATA = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


@dataclass
class ListOptions:
    label_selector: str | None = None
    field_selector: str | None = None
    limit: int = 0
    continue_token: str | None = None
    resource_version: str | None = None


@dataclass
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None  # Background (default) | Foreground | Orphan
    preconditions: dict[str, Any] = field(default_factory=dict)
    dry_run: bool = False


@dataclass
class AdmissionRequest:
    """What admission hooks see; mutating hooks change `object` in place, validating ones raise ApiError."""

    operation: str  # CREATE | UPDATE | DELETE
    resource_type: ResourceType
    namespace: str
    name: str
    subresource: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    user: str
    dry_run: bool


def present(resource_type: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as served at this type's version (CRD versions share storage)."""
    if obj.get("apiVersion") == resource_type.api_version:
        return obj
    return {**obj, "apiVersion": resource_type.api_version}


def timestamp_in(seconds: int) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_name(prefix: str) -> str:
    return prefix[:58] + "".join(random.choice(_GENERATED_SUFFIX_ALPHABET) for _position in range(5))


def name_errors(resource_type: ResourceType, name: str) -> list[dict[str, str]]:
    if resource_type.name_rule == "path":
        bad = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
        bad += [f"may not be '{name}'"] if name in (".", "..") else []
    elif resource_type.name_rule == "label":
        bad = ["must be no more than 63 characters"] if len(name) > 63 else []
        bad += [] if _LABEL_RE.match(name) else [LABEL_MESSAGE]
    else:
        bad = ["must be no more than 253 characters"] if len(name) > 253 else []
        bad += [] if _SUBDOMAIN_RE.match(name) else [SUBDOMAIN_MESSAGE]
    return [errors.field_invalid("metadata.name", name, detail) for detail in bad]


def spec_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether anything but metadata and status changed: what bumps metadata.generation."""
    keys = (set(old) | set(new)) - {"metadata", "status"}
    return any(old.get(key) != new.get(key) for key in keys)


def should_delete_during_update(obj: dict[str, Any]) -> bool:
    """A terminating object whose last finalizer went away, with no grace period left, is removed."""
    metadata = obj["metadata"]
    return bool(metadata.get("deletionTimestamp")) and not metadata.get("finalizers") \
        and metadata.get("deletionGracePeriodSeconds") == 0


class ObjectApi:
    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.store = emulator.store

    # --- reads ----------------------------------------------------------------------------------------------

    def get(self, resource_type: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(resource_type.group_resource, namespace if resource_type.namespaced else "", name)
        if obj is None:
            raise errors.not_found(resource_type.plural, resource_type.group, name)
        return present(resource_type, obj)

    def list(self, resource_type: ResourceType, namespace: str | None, options: ListOptions) -> dict[str, Any]:
        labels = parse_label_selector(options.label_selector)
        fields = parse_field_selector(options.field_selector, resource_type.field_labels)
        predicate = object_predicate(labels, fields)
        token = decode(options.continue_token) if options.continue_token else None
        if token is not None:
            if options.resource_version not in (None, ""):
                raise errors.bad_request("specifying resource version is not allowed when using continue")
            if token.revision != INCONSISTENT and self.emulator.faults.continue_expired(
                token.page, token.issued_at, token.revision
            ):
                raise errors.expired_continue(token.inconsistent().encode())
        limit = max(int(options.limit or 0), 0)
        with self.store.lock:
            revision = self.store.resource_version
            table = self.store.table(resource_type.group_resource)
            keys = self._candidate_keys(resource_type, table, namespace, fields)
            start = bisect_right(keys, token.last_key) if token is not None else 0
            items, position = self._collect(table, keys, start, limit, predicate)
        list_revision = token.revision if token is not None and token.revision != INCONSISTENT else revision
        metadata: dict[str, Any] = {"resourceVersion": str(list_revision)}
        if limit and len(items) >= limit and position < len(keys):
            page = token.page + 1 if token is not None else 1
            metadata["continue"] = ContinueToken(list_revision, object_key(items[-1]), page).encode()
            if predicate is None:
                metadata["remainingItemCount"] = len(keys) - position
        return {
            "kind": resource_type.list_kind,
            "apiVersion": resource_type.api_version,
            "metadata": metadata,
            "items": [present(resource_type, obj) for obj in items],
        }

    @staticmethod
    def _collect(table: Table, keys: list[ObjectKey], start: int, limit: int,
                 predicate: Any) -> tuple[list[dict[str, Any]], int]:
        objects = table.objects
        if predicate is None:
            end = start + limit if limit else len(keys)
            return [objects[key] for key in keys[start:end]], min(end, len(keys))
        items, position = [], start
        while position < len(keys):
            obj = objects[keys[position]]
            position += 1
            if predicate(obj):
                items.append(obj)
                if limit and len(items) >= limit:
                    break
        return items, position

    @staticmethod
    def _candidate_keys(resource_type: ResourceType, table: Table, namespace: str | None,
                        fields: Any) -> list[ObjectKey]:
        """The sorted keys a list has to look at: a namespace's, or an indexed field value's, or all."""
        if not namespace and resource_type.namespaced:
            namespace = fields.equality_value("metadata.namespace") or None
        for field_path in resource_type.indexed_fields:
            value = fields.equality_value(field_path)
            if value is not None and table.is_indexed(field_path):
                matching = table.indexed(field_path, value)
                return sorted(k for k in matching if namespace is None or k[0] == namespace)
        return table.keys(namespace if resource_type.namespaced else None)

    # --- create ---------------------------------------------------------------------------------------------

    def create(self, resource_type: ResourceType, namespace: str, body: Any, *, dry_run: bool = False,
               user: str = SYSTEM_USER) -> dict[str, Any]:
        obj = self._decode(resource_type, body)
        metadata = obj["metadata"]
        self._check_namespace(resource_type, namespace, metadata)
        if not metadata.get("name"):
            if not metadata.get("generateName"):
                raise errors.invalid(resource_type.kind, resource_type.group, "", [
                    errors.field_required("metadata.name", "name or generateName is required")])
            metadata["name"] = generate_name(metadata["generateName"])
        name = metadata["name"]
        if bad := name_errors(resource_type, name):
            raise errors.invalid(resource_type.kind, resource_type.group, name, bad)
        with self.store.lock:
            if resource_type.namespaced:
                self._require_namespace(metadata["namespace"])
            if self.store.get(resource_type.group_resource, metadata.get("namespace", ""), name) is not None:
                raise errors.already_exists(resource_type.plural, resource_type.group, name)
            self._initialize(resource_type, obj, reset_status=True)
            self._admit("CREATE", resource_type, obj, None, user, dry_run)
            if dry_run:
                return obj
            metadata["resourceVersion"] = self.store.next_version()
            self.store.put(resource_type.group_resource, obj)
            self.emulator.notify("ADDED", resource_type, None, obj)
        return obj

    def _initialize(self, resource_type: ResourceType, obj: dict[str, Any], reset_status: bool) -> None:
        """Server-set metadata, status reset (for types with a status subresource) and defaults."""
        metadata = obj["metadata"]
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
            metadata.pop(key, None)
        metadata["uid"] = new_uid()
        metadata["creationTimestamp"] = now_rfc3339()
        if resource_type.tracks_generation:
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        if reset_status and resource_type.has_status:
            status = resource_type.status_on_create(obj) if resource_type.status_on_create else None
            if status is None:
                obj.pop("status", None)
            else:
                obj["status"] = status
        if resource_type.defaulter:
            resource_type.defaulter(obj)

    # --- update / patch ---------------------------------------------------------------------------------------

    def update(self, resource_type: ResourceType, namespace: str, name: str, body: Any, *, dry_run: bool = False,
               subresource: str = "", user: str = SYSTEM_USER) -> tuple[dict[str, Any], bool]:
        """PUT; returns (object, created)."""
        obj = self._decode(resource_type, body)
        self._check_namespace(resource_type, namespace, obj["metadata"])
        self._check_name(obj["metadata"], name)
        with self.store.lock:
            old = self.store.get(resource_type.group_resource, obj["metadata"].get("namespace", ""), name)
            if old is None:
                if resource_type.allow_create_on_update and not subresource:
                    return self.create(resource_type, namespace, obj, dry_run=dry_run, user=user), True
                raise errors.not_found(resource_type.plural, resource_type.group, name)
            self._check_preconditions(resource_type, old, obj["metadata"])
            new = self._apply_subresource_rules(resource_type, old, obj, subresource)
            return self._commit_update(resource_type, old, new, dry_run=dry_run, user=user,
                                       subresource=subresource), False

    def patch(self, resource_type: ResourceType, namespace: str, name: str, patch_type: str, patch_body: Any, *,
              dry_run: bool = False, subresource: str = "", user: str = SYSTEM_USER,
              field_manager: str | None = None) -> tuple[dict[str, Any], bool]:
        """PATCH; returns (object, created) – only server-side apply creates."""
        accepted = CUSTOM_PATCH_TYPES if resource_type.custom else PATCH_TYPES
        if patch_type not in accepted:
            raise errors.unsupported_media_type(list(accepted))
        if patch_type == APPLY_PATCH and not field_manager:
            raise errors.invalid("PatchOptions", "meta.k8s.io", "", [
                errors.field_required("fieldManager", "is required for apply patch")])
        if patch_type != JSON_PATCH and not isinstance(patch_body, dict):
            raise errors.bad_request("json: cannot unmarshal patch into Go value of type map[string]interface {}")
        storage_namespace = namespace if resource_type.namespaced else ""
        with self.store.lock:
            old = self.store.get(resource_type.group_resource, storage_namespace, name)
            if old is None:
                if patch_type == APPLY_PATCH and not subresource:
                    body = {"apiVersion": resource_type.api_version, "kind": resource_type.kind, **patch_body}
                    return self.create(resource_type, namespace, body, dry_run=dry_run, user=user), True
                raise errors.not_found(resource_type.plural, resource_type.group, name)
            patched = self.apply_patch(resource_type, clone(present(resource_type, old)), patch_type, patch_body)
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise errors.bad_request("the patched object is not a valid Kubernetes object")
            self._decode(resource_type, patched)  # a patch may not change kind or apiVersion
            self._check_name(patched["metadata"], name)
            if (patched["metadata"].get("namespace") or "") != storage_namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                         "the request")
            self._check_preconditions(resource_type, old, patched["metadata"])
            new = self._apply_subresource_rules(resource_type, old, patched, subresource)
            return self._commit_update(resource_type, old, new, dry_run=dry_run, user=user,
                                       subresource=subresource), False

    @staticmethod
    def apply_patch(resource_type: ResourceType, working: dict[str, Any], patch_type: str, body: Any) -> Any:
        try:
            if patch_type == JSON_PATCH:
                return json_patch(working, clone(body))
            if patch_type == STRATEGIC_PATCH:
                return strategic_merge_patch(working, clone(body))
            return merge_patch(working, body)  # merge patch, and server-side apply simplified to a merge
        except PatchError as exc:
            if patch_type == JSON_PATCH:
                raise ApiError(422, "Invalid", str(exc)) from None
            raise errors.bad_request(str(exc)) from None

    def _apply_subresource_rules(self, resource_type: ResourceType, old: dict[str, Any], new: dict[str, Any],
                                 subresource: str) -> dict[str, Any]:
        """A status write changes only status; a main-resource write leaves status alone (when it is separate)."""
        if subresource == "status":
            result = clone(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            return result
        if resource_type.has_status:
            if "status" in old:
                new["status"] = clone(old["status"])
            else:
                new.pop("status", None)
        return new

    def _commit_update(self, resource_type: ResourceType, old: dict[str, Any], new: dict[str, Any], *,
                       dry_run: bool, user: str, subresource: str = "") -> dict[str, Any]:
        old_metadata, metadata = old["metadata"], new["metadata"]
        for key in SERVER_OWNED_METADATA:
            if key in old_metadata:
                metadata[key] = old_metadata[key]
            else:
                metadata.pop(key, None)
        if resource_type.tracks_generation and spec_changed(old, new):
            metadata["generation"] = old_metadata.get("generation", 1) + 1
        if resource_type.defaulter:
            resource_type.defaulter(new)
        self._admit("UPDATE", resource_type, new, old, user, dry_run, subresource)
        metadata["resourceVersion"] = old_metadata.get("resourceVersion")
        if new == old:
            return present(resource_type, old)  # a no-op write keeps the resourceVersion, like etcd3 storage
        if dry_run:
            return new
        return self.write(resource_type, new, old)

    def write(self, resource_type: ResourceType, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """Persist a prepared object with a new resourceVersion and notify; completes a finalized deletion."""
        with self.store.lock:
            new["metadata"]["resourceVersion"] = self.store.next_version()
            if should_delete_during_update(new):
                self.store.put(resource_type.group_resource, new)
                self._remove(resource_type, new, "Background")
                return new
            self.store.put(resource_type.group_resource, new)
            self.emulator.notify("MODIFIED" if old is not None else "ADDED", resource_type, old, new)
            return new

    # --- delete ---------------------------------------------------------------------------------------------

    def delete(self, resource_type: ResourceType, namespace: str, name: str, options: DeleteOptions, *,
               user: str = SYSTEM_USER) -> dict[str, Any]:
        """DELETE; returns the response body (the object, or a Success Status for most built-in types)."""
        storage_namespace = namespace if resource_type.namespaced else ""
        with self.store.lock:
            obj = self.store.get(resource_type.group_resource, storage_namespace, name)
            if obj is None:
                raise errors.not_found(resource_type.plural, resource_type.group, name)
            self._check_delete_preconditions(resource_type, obj, options.preconditions)
            self._admit("DELETE", resource_type, None, obj, user, options.dry_run)
            final = obj if options.dry_run else self.delete_object(resource_type, obj, options)
        return self.delete_response(resource_type, final)

    def delete_collection(self, resource_type: ResourceType, namespace: str | None, list_options: ListOptions,
                          options: DeleteOptions, *, user: str = SYSTEM_USER) -> dict[str, Any]:
        with self.store.lock:
            listed = self.list(resource_type, namespace, ListOptions(list_options.label_selector,
                                                                     list_options.field_selector))
            deleted = []
            for obj in listed["items"]:
                metadata = obj["metadata"]
                if self.store.get(resource_type.group_resource, metadata.get("namespace", ""), metadata["name"]):
                    self._admit("DELETE", resource_type, None, obj, user, options.dry_run)
                    deleted.append(obj if options.dry_run else self.delete_object(resource_type, obj, options))
        listed["items"] = [present(resource_type, obj) for obj in deleted]
        return listed

    def delete_response(self, resource_type: ResourceType, final: dict[str, Any]) -> dict[str, Any]:
        if resource_type.delete_returns_object:
            return present(resource_type, final)
        details = errors.resource_details(resource_type.plural, resource_type.group, final["metadata"]["name"])
        details["uid"] = final["metadata"].get("uid", "")
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def delete_object(self, resource_type: ResourceType, obj: dict[str, Any], options: DeleteOptions,
                      force: bool = False) -> dict[str, Any]:
        """Delete a stored object (no admission, no preconditions); returns its final state.

        `force` removes at once, ignoring finalizers and grace periods (what the namespace controller amounts to).
        """
        with self.store.lock:
            if resource_type.group_resource == ("", "namespaces"):
                return self._delete_namespace(resource_type, obj)
            metadata = obj["metadata"]
            if not force:
                if metadata.get("deletionTimestamp"):
                    # Already terminating: only a pod deleted again with gracePeriodSeconds=0 goes away now.
                    immediate = resource_type.group_resource == ("", "pods") and options.grace_period_seconds == 0
                    if not immediate or metadata.get("finalizers"):
                        return obj
                elif metadata.get("finalizers"):
                    return self._mark_terminating(resource_type, obj, 0)
                elif grace := self._pod_grace_seconds(resource_type, obj, options):
                    return self._mark_terminating(resource_type, obj, grace)
            propagation = options.propagation_policy or "Background"
            if propagation == "Foreground":
                self._delete_dependents(metadata.get("uid", ""), "Foreground")
            return self._remove(resource_type, obj, propagation)

    def _pod_grace_seconds(self, resource_type: ResourceType, obj: dict[str, Any], options: DeleteOptions) -> int:
        """How long a deleted pod stays terminating: 0 unless the emulator runs with `graceful_pod_deletion`;
        never for unscheduled or finished pods (kube-apiserver deletes those at once too)."""
        if resource_type.group_resource != ("", "pods") or not self.emulator.graceful_pod_deletion:
            return 0
        spec, phase = obj.get("spec") or {}, (obj.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        requested = options.grace_period_seconds
        grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds", 30)
        return max(int(grace), 0)

    def _mark_terminating(self, resource_type: ResourceType, obj: dict[str, Any], grace: int) -> dict[str, Any]:
        if obj["metadata"].get("deletionTimestamp"):
            return obj
        new = clone(obj)
        new["metadata"]["deletionTimestamp"] = timestamp_in(grace)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        return self.write(resource_type, new, obj)

    def _remove(self, resource_type: ResourceType, obj: dict[str, Any], propagation: str) -> dict[str, Any]:
        metadata = obj["metadata"]
        removed = self.store.remove(resource_type.group_resource, metadata.get("namespace", ""), metadata["name"])
        if removed is None:
            return obj
        # A deletion is a revision of its own (as in etcd); watchers see it in the DELETED event's object.
        removed = {**removed, "metadata": {**removed["metadata"], "resourceVersion": self.store.next_version()}}
        self.emulator.notify("DELETED", resource_type, removed, None)
        if metadata.get("uid"):
            if propagation == "Orphan":
                self._orphan_dependents(metadata["uid"])
            else:
                self._delete_dependents(metadata["uid"], "Background")
        return removed

    def _delete_dependents(self, owner_uid: str, propagation: str) -> None:
        """The garbage collector: delete dependents that have no other live owner."""
        for group_resource, key in self.store.dependents(owner_uid):
            dependent = self.store.get(group_resource, *key)
            resource_type = self.emulator.storage_type(group_resource)
            if dependent is None or resource_type is None or self._has_other_live_owner(dependent, owner_uid):
                continue
            self.delete_object(resource_type, dependent, DeleteOptions(propagation_policy=propagation))

    def _has_other_live_owner(self, obj: dict[str, Any], gone_uid: str) -> bool:
        namespace = obj["metadata"].get("namespace", "")
        for ref in obj["metadata"].get("ownerReferences") or ():
            if ref.get("uid") == gone_uid:
                continue
            owner_type = self.emulator.registry.find_by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
            if owner_type is None:
                continue
            owner = self.store.get(owner_type.group_resource, namespace if owner_type.namespaced else "",
                                   ref.get("name", ""))
            if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                return True
        return False

    def _orphan_dependents(self, owner_uid: str) -> None:
        for group_resource, key in self.store.dependents(owner_uid):
            dependent = self.store.get(group_resource, *key)
            resource_type = self.emulator.storage_type(group_resource)
            if dependent is None or resource_type is None:
                continue
            new = clone(dependent)
            refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != owner_uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self.write(resource_type, new, dependent)

    def _delete_namespace(self, resource_type: ResourceType, namespace_obj: dict[str, Any]) -> dict[str, Any]:
        """The namespace controller, done at once: content is removed, then the namespace."""
        terminating = clone(namespace_obj)
        terminating["metadata"].setdefault("deletionTimestamp", now_rfc3339())
        terminating.setdefault("status", {})["phase"] = "Terminating"
        terminating = self.write(resource_type, terminating, namespace_obj)
        name = namespace_obj["metadata"]["name"]
        for group_resource in self.store.group_resources():
            content_type = self.emulator.storage_type(group_resource)
            if content_type is None or not content_type.namespaced:
                continue
            table = self.store.table(group_resource)
            for key in list(table.keys(name)):
                obj = table.objects.get(key)
                if obj is not None:
                    self.delete_object(content_type, obj, DeleteOptions(), force=True)
        self._remove(resource_type, terminating, "Background")
        return terminating

    # --- checks ---------------------------------------------------------------------------------------------

    @staticmethod
    def _decode(resource_type: ResourceType, body: Any) -> dict[str, Any]:
        """Validate the envelope; a missing kind/apiVersion defaults to the URL's, like the apiserver decoder."""
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request was in an unknown format: expected a JSON object, "
                                     f"got {type(body).__name__}")
        obj = body
        api_version = obj.setdefault("apiVersion", resource_type.api_version)
        kind = obj.setdefault("kind", resource_type.kind)
        if api_version != resource_type.api_version:
            raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                     f"version ({resource_type.api_version})")
        if kind != resource_type.kind:
            if resource_type.custom:
                raise errors.invalid(kind, resource_type.group, (obj.get("metadata") or {}).get("name", ""), [
                    errors.field_invalid("kind", kind, f"must be {resource_type.kind}")])
            raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind "
                                     f"({resource_type.kind})")
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise errors.bad_request("metadata must be an object")
        return obj

    @staticmethod
    def _check_namespace(resource_type: ResourceType, namespace: str, metadata: dict[str, Any]) -> None:
        if not resource_type.namespaced:
            metadata.pop("namespace", None)
            return
        if metadata.get("namespace") and metadata["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                     "request")
        metadata["namespace"] = namespace

    @staticmethod
    def _check_name(metadata: dict[str, Any], name: str) -> None:
        if metadata.get("name") != name:
            raise errors.bad_request(f"the name of the object ({metadata.get('name', '')}) does not match the name on "
                                     f"the URL ({name})")

    def _require_namespace(self, namespace: str) -> None:
        if self.store.get(("", "namespaces"), "", namespace) is None:
            raise errors.not_found("namespaces", "", namespace)

    @staticmethod
    def _check_preconditions(resource_type: ResourceType, old: dict[str, Any], metadata: dict[str, Any]) -> None:
        name = old["metadata"]["name"]
        uid = metadata.get("uid")
        if uid and uid != old["metadata"].get("uid"):
            raise errors.conflict(resource_type.plural, resource_type.group, name,
                                  f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                                  f"{old['metadata'].get('uid')}")
        version = metadata.get("resourceVersion")
        if version and version != old["metadata"].get("resourceVersion"):
            raise errors.conflict(resource_type.plural, resource_type.group, name)

    @staticmethod
    def _check_delete_preconditions(resource_type: ResourceType, obj: dict[str, Any],
                                    preconditions: dict[str, Any]) -> None:
        for field_name, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted, actual = preconditions.get(field_name), obj["metadata"].get(field_name)
            if wanted and wanted != actual:
                raise errors.conflict(resource_type.plural, resource_type.group, obj["metadata"]["name"],
                                      f"Precondition failed: {label} in precondition: {wanted}, {label} in object "
                                      f"meta: {actual}")

    def _admit(self, operation: str, resource_type: ResourceType, obj: dict[str, Any] | None,
               old: dict[str, Any] | None, user: str, dry_run: bool, subresource: str = "") -> None:
        hooks = self.emulator.admission_hooks
        if not hooks:
            return
        subject = obj if obj is not None else old
        assert subject is not None
        request = AdmissionRequest(operation, resource_type, subject["metadata"].get("namespace", ""),
                                   subject["metadata"].get("name", ""), subresource, obj, old, user, dry_run)
        for hook in list(hooks):
            hook(request)
