"""The registry of resource types the emulator serves, and the built-in ones.

A `ResourceType` is one (group, version, plural); versions of a group/plural share one storage table, keyed by
`group_resource`. Extensions register more types (`emulator.registry.register(...)`) or create CRDs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import defaults

STANDARD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
GroupResource = tuple[str, str]  # (group, plural)


@dataclass(frozen=True)
class Subresource:
    """A subresource as discovery lists it; `group`/`version` are set when its kind lives elsewhere (Eviction)."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str | None = None
    version: str | None = None


STATUS = Subresource("status", "", STATUS_VERBS)  # kind "" means "the parent's kind"
SCALE = Subresource("scale", "Scale", STATUS_VERBS, group="autoscaling", version="v1")


@dataclass
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STANDARD_VERBS
    subresources: tuple[Subresource, ...] = ()
    # Field selectors this type supports besides metadata.name/metadata.namespace (as the conversion funcs do).
    field_labels: tuple[str, ...] = ()
    # Field paths kept in an equality index, so `fieldSelector=spec.nodeName=x` does not scan every pod.
    indexed_fields: tuple[str, ...] = ()
    tracks_generation: bool = False
    delete_returns_object: bool = False
    allow_create_on_update: bool = False
    name_rule: str = "subdomain"  # subdomain | label | path
    custom: bool = False  # served from a CRD: strategic merge unsupported, kind mismatch is 422
    defaulter: Callable[[dict[str, Any]], None] | None = None
    status_on_create: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. CRD scale paths

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> GroupResource:
        return (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def has_status(self) -> bool:
        return self.subresource("status") is not None

    def subresource(self, name: str) -> Subresource | None:
        return next((sub for sub in self.subresources if sub.name == name), None)

    def discovery_entries(self) -> list[dict[str, Any]]:
        """The APIResource entries kube-apiserver lists for this type and its subresources."""
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        entries = [entry]
        for sub in self.subresources:
            sub_entry: dict[str, Any] = {"name": f"{self.plural}/{sub.name}", "singularName": "",
                                         "namespaced": self.namespaced}
            if sub.group is not None:
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            sub_entry["kind"] = sub.kind or self.kind
            sub_entry["verbs"] = list(sub.verbs)
            entries.append(sub_entry)
        return entries


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for kube-aware version ordering: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > anything else."""
    match = _VERSION_RE.match(version)
    if not match:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    stage_rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (stage_rank, -int(major), -int(minor or 0), version)


class Registry:
    """Resource types by (group, version, plural), with lookups by kind, plural and short name."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        self._group_order: list[str] = []

    def register(self, resource_type: ResourceType) -> ResourceType:
        with self._lock:
            key = (resource_type.group, resource_type.version, resource_type.plural)
            self._types[key] = resource_type
            if resource_type.group not in self._group_order:
                self._group_order.append(resource_type.group)
            return resource_type

    def unregister(self, group: str, plural: str, version: str | None = None) -> None:
        with self._lock:
            for key in [k for k in self._types if k[0] == group and k[2] == plural and version in (None, k[1])]:
                del self._types[key]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types.values())

    def versions_of(self, group: str, plural: str) -> list[ResourceType]:
        """Every served version of one storage table, preferred first."""
        found = [rt for (g, _version, p), rt in list(self._types.items()) if g == group and p == plural]
        return sorted(found, key=lambda rt: version_priority(rt.version))

    def find(self, name: str, api_version: str | None = None) -> ResourceType:
        """Resolve a kind, plural, singular, short name or `plural.group` (preferred version unless pinned)."""
        candidates = [rt for rt in self.all() if api_version in (None, rt.api_version)]
        lowered = name.lower()
        for matches in (
            lambda rt: rt.kind == name,
            lambda rt: name in (rt.plural, rt.singular) or lowered in rt.short_names,
            lambda rt: f"{rt.plural}.{rt.group}" == name or f"{rt.kind}.{rt.group}" == name,
            lambda rt: rt.kind.lower() == lowered,
        ):
            found = [rt for rt in candidates if matches(rt)]
            if found:
                # Core and the oldest-registered groups first, so "events" means v1 Event, then the preferred version.
                return min(found, key=lambda rt: (self._group_rank(rt.group), version_priority(rt.version)))
        raise KeyError(f"unknown resource {name!r}" + (f" in {api_version}" if api_version else ""))

    def find_by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _slash, version = api_version.rpartition("/")
        return next((rt for rt in self.all() if rt.group == group and rt.version == version and rt.kind == kind), None)

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions preferred first) in registration order; the core group is ""."""
        with self._lock:
            versions: dict[str, set[str]] = {}
            for group, version, _plural in self._types:
                versions.setdefault(group, set()).add(version)
            return [(g, sorted(versions[g], key=version_priority)) for g in self._group_order if g in versions]

    def resources_in(self, group: str, version: str) -> list[ResourceType]:
        return [rt for (g, v, _plural), rt in list(self._types.items()) if g == group and v == version]

    def _group_rank(self, group: str) -> int:
        return self._group_order.index(group) if group in self._group_order else len(self._group_order)


def _core(kind: str, plural: str, namespaced: bool = True, **kwargs: Any) -> ResourceType:
    return ResourceType("", "v1", kind, plural, namespaced, **kwargs)


WORKLOAD = dict(subresources=(STATUS, SCALE), tracks_generation=True, categories=("all",))

POD_FIELDS = (
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
    "status.phase", "status.podIP", "status.nominatedNodeName",
)
EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
    "reportingComponent", "source", "type",
)


def builtin_types() -> list[ResourceType]:
    """Fresh copies of the built-in types (registries are per emulator, so extensions never leak across tests)."""
    return [
        _core("Namespace", "namespaces", False, short_names=("ns",),
              subresources=(STATUS, Subresource("finalize", "", ("update",))),
              verbs=tuple(v for v in STANDARD_VERBS if v != "deletecollection"), field_labels=("status.phase",),
              delete_returns_object=True, name_rule="label",
              defaulter=defaults.namespace),
        _core("Node", "nodes", False, short_names=("no",), subresources=(STATUS,), field_labels=("spec.unschedulable",),
              delete_returns_object=True),
        _core("Pod", "pods", short_names=("po",), categories=("all",), field_labels=POD_FIELDS,
              indexed_fields=("spec.nodeName",), delete_returns_object=True, defaulter=defaults.pod,
              status_on_create=defaults.pod_status_on_create,
              subresources=(Subresource("eviction", "Eviction", ("create",), group="policy", version="v1"),
                            Subresource("log", "Pod", ("get",)),
                            STATUS)),
        _core("PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",), subresources=(STATUS,),
              delete_returns_object=True),
        _core("ConfigMap", "configmaps", short_names=("cm",)),
        _core("Secret", "secrets", field_labels=("type",), defaulter=defaults.secret),
        _core("ServiceAccount", "serviceaccounts", short_names=("sa",)),
        _core("Service", "services", short_names=("svc",), categories=("all",), subresources=(STATUS,),
              field_labels=("spec.clusterIP", "spec.type"), delete_returns_object=True, name_rule="label",
              defaulter=defaults.service),
        _core("Event", "events", short_names=("ev",), field_labels=EVENT_FIELDS, allow_create_on_update=True),
        ResourceType("apps", "v1", "Deployment", "deployments", True, short_names=("deploy",),
                     defaulter=defaults.replicated, **WORKLOAD),
        ResourceType("apps", "v1", "ReplicaSet", "replicasets", True, short_names=("rs",),
                     field_labels=("status.replicas",), defaulter=defaults.replicated, **WORKLOAD),
        ResourceType("apps", "v1", "StatefulSet", "statefulsets", True, short_names=("sts",),
                     defaulter=defaults.replicated, **WORKLOAD),
        ResourceType("apps", "v1", "DaemonSet", "daemonsets", True, short_names=("ds",), subresources=(STATUS,),
                     tracks_generation=True, categories=("all",)),
        ResourceType("batch", "v1", "Job", "jobs", True, subresources=(STATUS,), field_labels=("status.successful",),
                     tracks_generation=True, categories=("all",)),
        ResourceType("batch", "v1", "CronJob", "cronjobs", True, short_names=("cj",), subresources=(STATUS,),
                     tracks_generation=True, categories=("all",)),
        ResourceType("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, short_names=("pdb",),
                     subresources=(STATUS,), tracks_generation=True),
        ResourceType("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)),
        ResourceType("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, short_names=("sc",)),
        ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, name_rule="path"),
        ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False,
                     name_rule="path"),
        ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", True, name_rule="path"),
        ResourceType("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, name_rule="path"),
        ResourceType("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
                     short_names=("crd", "crds"), subresources=(STATUS,), tracks_generation=True,
                     delete_returns_object=True),
        ResourceType("coordination.k8s.io", "v1", "Lease", "leases", True, allow_create_on_update=True),
    ]


def types_from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The resource types a CustomResourceDefinition serves (one per served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    types = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        declared = version.get("subresources") or {}
        subresources: list[Subresource] = []
        if "status" in declared:
            subresources.append(STATUS)
        if "scale" in declared:
            subresources.append(SCALE)
        selectable = tuple(f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or [] if "jsonPath" in f)
        types.append(ResourceType(
            group=spec.get("group", ""),
            version=version["name"],
            kind=names.get("kind", ""),
            plural=names.get("plural", ""),
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            singular=names.get("singular", "") or names.get("kind", "").lower(),
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            subresources=tuple(subresources),
            field_labels=selectable,
            tracks_generation=True,
            delete_returns_object=True,
            custom=True,
            extra={"scale": declared.get("scale") or {}},
        ))
    return types
