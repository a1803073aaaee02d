"""Reading a cluster snapshot from the API: one paged LIST per kind, then the engine indexes locally.

Listing once per kind (never per node or per namespace) is what keeps a 5,000-node cluster at a handful of
requests (descheduler #671 made 30k+ selector LISTs per cycle before it switched to one informer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    DEFAULT_PAGE_SIZE,
    Slim,
    list_raw,
    resource_path,
)

# kind -> (apiVersion, resource plural); every one is listed across all namespaces
KIND_RESOURCES: dict[str, tuple[str, str]] = {
    "Node": ("v1", "nodes"),
    "Pod": ("v1", "pods"),
    "Namespace": ("v1", "namespaces"),
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses"),
    "PodDisruptionBudget": ("policy/v1", "poddisruptionbudgets"),
    "PersistentVolumeClaim": ("v1", "persistentvolumeclaims"),
    "PersistentVolume": ("v1", "persistentvolumes"),
    "ReplicaSet": ("apps/v1", "replicasets"),
    "Deployment": ("apps/v1", "deployments"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "DaemonSet": ("apps/v1", "daemonsets"),
    "Job": ("batch/v1", "jobs"),
}
# What the planning engine reads (engine.snapshot.KINDS_READ)
DEFAULT_KINDS: tuple[str, ...] = ("Node", "Pod", "Namespace", "PriorityClass", "PodDisruptionBudget",
                                  "PersistentVolumeClaim")
# The placement preview also reads PersistentVolumes (their node affinity and zone labels pin a replacement)
PLACEMENT_KINDS: tuple[str, ...] = (*DEFAULT_KINDS, "PersistentVolume")
# Owners, for reports and for callers that resolve a pod's controller
WORKLOAD_KINDS: tuple[str, ...] = ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job")


@dataclass
class ClusterSnapshot:
    """The listed objects (plain dicts with apiVersion/kind, or what ``slim`` made of each), notes for the user,
    each kind's list resourceVersion (kinds that were skipped have none) and how each was read (``stream`` or
    ``pages``)."""

    objects: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resource_versions: dict[str, str] = field(default_factory=dict)
    read_as: dict[str, str] = field(default_factory=dict)


def list_cluster_objects(
    api_client: Any,
    kinds: Iterable[str] = DEFAULT_KINDS,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    slim: Optional[Slim] = None,
    max_restarts: int = 3,
    on_restart: Optional[Callable[[int, ClusterApiError], None]] = None,
    watch_list: bool = False,
) -> ClusterSnapshot:
    """List each kind once (streamed first with ``watch_list``, see listing.list_raw). A kind the cluster does not
    serve (404) is skipped with a warning; any other API error (403, 401, unreachable) is raised: a partial snapshot
    would make the plan wrong without saying so."""
    snapshot = ClusterSnapshot()
    for kind in _checked_kinds(kinds):
        api_version, plural = KIND_RESOURCES[kind]
        snapshot.read_as[kind] = "stream" if watch_list else "pages"
        try:
            items, resource_version = list_raw(
                api_client, resource_path(api_version, plural), page_size=page_size, max_restarts=max_restarts,
                slim=slim, kind=kind, on_restart=on_restart, watch_list=watch_list,
                on_pages=lambda kind=kind: snapshot.read_as.update({kind: "pages"}),
            )
        except ClusterApiError as error:
            if not error.is_not_found:
                raise
            snapshot.warnings.append(f"{kind} skipped: {error.describe()}")
            del snapshot.read_as[kind]
            continue
        snapshot.objects.extend(items)
        snapshot.resource_versions[kind] = resource_version
    return snapshot


def _checked_kinds(kinds: Iterable[str]) -> list[str]:
    """The requested kinds, each once, in order; an unknown kind is a caller error."""
    unique = list(dict.fromkeys(kinds))
    unknown = [kind for kind in unique if kind not in KIND_RESOURCES]
    if unknown:
        raise ValueError(f"cannot list kind(s) {', '.join(unknown)}: supported kinds are {', '.join(KIND_RESOURCES)}")
    return unique
