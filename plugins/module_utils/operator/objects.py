"""Reading and changing the objects the lifecycle manages, with check mode, diff and a step-by-step action log.

Every write goes through ``ClusterSession``: it compares what is wanted with what exists, writes only when they
differ (so a second run changes nothing), never writes in check mode, and records one action per object (what it
did, or would do) plus a before/after diff of the object.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    delete_raw,
    get_raw,
    list_raw,
    patch_raw,
    post_raw,
    resource_path,
)

# kind -> (apiVersion, plural, namespaced)
KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("v1", "namespaces", False),
    "Node": ("v1", "nodes", False),
    "ConfigMap": ("v1", "configmaps", True),
    "Secret": ("v1", "secrets", True),
    "Service": ("v1", "services", True),
    "Pod": ("v1", "pods", True),
    "PersistentVolumeClaim": ("v1", "persistentvolumeclaims", True),
    "StatefulSet": ("apps/v1", "statefulsets", True),
    "DaemonSet": ("apps/v1", "daemonsets", True),
    "Job": ("batch/v1", "jobs", True),
    "ServiceAccount": ("v1", "serviceaccounts", True),
    "Deployment": ("apps/v1", "deployments", True),
    "CronJob": ("batch/v1", "cronjobs", True),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", "clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "Role": ("rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", "rolebindings", True),
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses", False),
    "ValidatingAdmissionPolicy": ("admissionregistration.k8s.io/v1", "validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("admissionregistration.k8s.io/v1", "validatingadmissionpolicybindings",
                                         False),
    "CustomResourceDefinition": ("apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    "KubeDescheduler": ("operator.openshift.io/v1", "kubedeschedulers", True),
    "SecondaryScheduler": ("operator.openshift.io/v1", "secondaryschedulers", True),
    "OperatorGroup": ("operators.coreos.com/v1", "operatorgroups", True),
    "Subscription": ("operators.coreos.com/v1alpha1", "subscriptions", True),
    "InstallPlan": ("operators.coreos.com/v1alpha1", "installplans", True),
    "ClusterServiceVersion": ("operators.coreos.com/v1alpha1", "clusterserviceversions", True),
    "CatalogSource": ("operators.coreos.com/v1alpha1", "catalogsources", True),
    "PackageManifest": ("packages.operators.coreos.com/v1", "packagemanifests", True),
}

# Server-set fields that say nothing about what was asked for: left out of diffs.
NOISY_METADATA = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink")


@dataclass(frozen=True)
class Ref:
    """One object: its kind, name and (for namespaced kinds) namespace."""

    kind: str
    name: str
    namespace: Optional[str] = None

    @property
    def api_version(self) -> str:
        return KINDS[self.kind][0]

    @property
    def path(self) -> str:
        api_version, plural, namespaced = KINDS[self.kind]
        return resource_path(api_version, plural, self.namespace if namespaced else None, self.name)

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def marker(obj: Optional[dict]) -> Optional[str]:
    """What changes when someone modifies the object: its ``metadata.generation`` where it has one (a Deployment, a
    CRD, a custom resource: only a spec change moves it, not the status its controller writes), else its
    ``resourceVersion`` (a ConfigMap, a ClusterRole and binding: nothing but a writer moves it). None: no object."""
    if obj is None:
        return None
    metadata = obj.get("metadata") or {}
    if metadata.get("generation") is not None:
        return f"generation {metadata['generation']}"
    return f"resourceVersion {metadata.get('resourceVersion')}"


def collection_path(kind: str, namespace: Optional[str] = None) -> str:
    api_version, plural, namespaced = KINDS[kind]
    return resource_path(api_version, plural, namespace if namespaced else None)


def is_subset(wanted: Any, actual: Any) -> bool:
    """Whether ``actual`` already holds everything in ``wanted``. A None in ``wanted`` means "absent"; lists must
    have the same length, each item a subset (the server adds defaults inside list items, e.g. containers)."""
    if isinstance(wanted, dict):
        if not isinstance(actual, dict):
            return False
        return all(actual.get(key) is None if value is None else key in actual and is_subset(value, actual[key])
                   for key, value in wanted.items())
    if isinstance(wanted, list):
        return isinstance(actual, list) and len(wanted) == len(actual) and all(
            is_subset(w, a) for w, a in zip(wanted, actual, strict=True))
    return wanted == actual


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: what the server makes of ``target`` after a merge patch (used to show the diff in check mode)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def for_diff(obj: Optional[dict]) -> dict:
    """The object as a user reads it: no status, no server bookkeeping."""
    if not obj:
        return {}
    shown = {key: copy.deepcopy(value) for key, value in obj.items() if key != "status"}
    metadata = shown.get("metadata") or {}
    for key in NOISY_METADATA:
        metadata.pop(key, None)
    annotations = metadata.get("annotations") or {}
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if "annotations" in metadata and not annotations:
        metadata.pop("annotations")
    return shown


class ClusterSession:
    """The API client plus the run's mode (check, diff) and what the run did, in order."""

    def __init__(self, api_client: Any, check_mode: bool = False, want_diff: bool = False,
                 created_labels: Optional[dict[str, str]] = None) -> None:
        self.api = api_client
        self.created_labels = dict(created_labels or {})  # on every object this session creates (a change's id)
        # what this session wrote: each object's marker as its last write returned it (None: deleted)
        self.left: dict[str, Optional[str]] = {}
        self.check_mode = check_mode
        self.want_diff = want_diff
        self.actions: list[dict] = []
        self.diffs: list[dict] = []
        self.warnings: list[str] = []

    @property
    def changed(self) -> bool:
        return any(action["changed"] for action in self.actions)

    # ---- reads ------------------------------------------------------------------------------------------------------

    def read(self, ref: Ref) -> Optional[dict]:
        """The object, or None when it (or its kind) does not exist."""
        return get_raw(self.api, ref.path, kind=ref.kind)

    def list(self, kind: str, namespace: Optional[str] = None, label_selector: Optional[str] = None) -> list[dict]:
        """The objects of a kind; empty when the kind is not served (its CRD or API is not installed)."""
        try:
            return list_raw(self.api, collection_path(kind, namespace), label_selector=label_selector, kind=kind)[0]
        except ClusterApiError as error:
            if error.is_not_found:
                return []
            raise

    # ---- the action log -----------------------------------------------------------------------------------------

    def record(self, step: str, target: str, action: str, changed: bool, message: str, **extra: Any) -> dict:
        entry = {"step": step, "object": target, "action": action, "changed": changed, "message": message, **extra}
        self.actions.append(entry)
        return entry

    def _verb(self, done: str, would: str) -> str:
        return f"would {would} (check mode)" if self.check_mode else done

    def _add_diff(self, ref: Ref, before: Optional[dict], after: Optional[dict]) -> None:
        if self.want_diff:
            self.diffs.append({"before_header": str(ref), "after_header": str(ref),
                               "before": for_diff(before), "after": for_diff(after)})

    # ---- writes -------------------------------------------------------------------------------------------------

    def ensure(self, step: str, ref: Ref, desired: dict) -> dict:
        """Create the object, or merge-patch it until it holds ``desired``; returns the object as it is (or, in
        check mode, as it would be)."""
        existing = self.read(ref)
        if existing is None:
            return self._create(step, ref, desired)
        wanted = {key: value for key, value in desired.items() if key not in ("apiVersion", "kind")}
        if is_subset(wanted, existing):
            self.record(step, str(ref), "none", False, "already as requested")
            return existing
        after = merge_patch(existing, wanted)
        if not self.check_mode:
            after = patch_raw(self.api, ref.path, wanted, patch_type="merge", kind=ref.kind)
        self.record(step, str(ref), "update", True, self._verb("updated", "update"))
        self._add_diff(ref, existing, after)
        return self._left_as(ref, after)

    def _left_as(self, ref: Ref, obj: dict) -> dict:
        if not self.check_mode:
            self.left[str(ref)] = marker(obj)
        return obj

    def _create(self, step: str, ref: Ref, desired: dict) -> dict:
        body = {"apiVersion": ref.api_version, "kind": ref.kind, **desired}
        body["metadata"] = {**(desired.get("metadata") or {}), "name": ref.name}
        if self.created_labels:
            body["metadata"]["labels"] = {**(body["metadata"].get("labels") or {}), **self.created_labels}
        if ref.namespace and KINDS[ref.kind][2]:
            body["metadata"]["namespace"] = ref.namespace
        created = body
        if not self.check_mode:
            created = post_raw(self.api, collection_path(ref.kind, ref.namespace), body, kind=ref.kind)
        self.record(step, str(ref), "create", True, self._verb("created", "create"))
        self._add_diff(ref, None, created)
        return self._left_as(ref, created)

    def patch(self, step: str, ref: Ref, existing: dict, patch: dict, action: str, message: str) -> dict:
        """A targeted merge patch of an object read just before (e.g. approving an InstallPlan)."""
        after = merge_patch(existing, patch)
        if not self.check_mode:
            after = patch_raw(self.api, ref.path, patch, patch_type="merge", kind=ref.kind)
        self.record(step, str(ref), action, True, self._verb(message, action))
        self._add_diff(ref, existing, after)
        return self._left_as(ref, after)

    def delete(self, step: str, ref: Ref, existing: Optional[dict] = None) -> bool:
        """Delete the object if it exists (background propagation: its dependents go too); whether it existed."""
        existing = existing if existing is not None else self.read(ref)
        if existing is None:
            self.record(step, str(ref), "none", False, "already absent")
            return False
        if not self.check_mode:
            try:
                delete_raw(self.api, ref.path, body={"propagationPolicy": "Background"}, kind=ref.kind)
            except ClusterApiError as error:
                if not error.is_not_found:  # gone in between: what we wanted
                    raise
        self.record(step, str(ref), "delete", True, self._verb("deleted", "delete"))
        self._add_diff(ref, existing, None)
        if not self.check_mode:
            self.left[str(ref)] = None
        return True
