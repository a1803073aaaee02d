"""Controllers: hooks that react to writes, synchronously, inside the write's store lock.

A controller names the storage tables it watches (`watches`, empty for all) and overrides `on_create`,
`on_update`, `on_delete`; `resync` runs after `Emulator.load` (which fires no events). Controllers write through
`emulator.api` so admission hooks, other controllers and watchers see their writes.

Built in and always on: the CRD controller (registers served versions, sets Established) and the disruption
controller (disruption.py). Opt-in: `Emulator(controllers=["replicaset"])`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from . import errors
from .api import AdmissionRequest, DeleteOptions
from .resources import ResourceType, types_from_crd
from .selectors import from_label_selector_object
from .store import GroupResource, clone, new_uid, now_rfc3339

if TYPE_CHECKING:
    from .emulator import Emulator

PODS: GroupResource = ("", "pods")
NODES: GroupResource = ("", "nodes")
REPLICASETS: GroupResource = ("apps", "replicasets")
CRDS: GroupResource = ("apiextensions.k8s.io", "customresourcedefinitions")


class Controller:
    name = ""
    watches: tuple[GroupResource, ...] = ()

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        """Called after an object was created."""

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        """Called after an object was changed (including being marked for deletion)."""

    def on_delete(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        """Called after an object was removed from the store."""

    def resync(self, emulator: Emulator, namespaces: set[str]) -> None:
        """Called after `Emulator.load` seeded objects (in `namespaces`; "" for cluster-scoped ones)."""


def is_terminating(obj: dict[str, Any]) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def controller_uid(obj: dict[str, Any]) -> str | None:
    return next((ref.get("uid") for ref in obj["metadata"].get("ownerReferences") or () if ref.get("controller")),
                None)


# --- custom resource definitions -------------------------------------------------------------------------------

def validate_crd(request: AdmissionRequest) -> None:
    """Admission for CRDs: the name must be <plural>.<group>, as apiextensions validation requires."""
    if request.resource_type.group_resource != CRDS or request.object is None:
        return
    spec = request.object.get("spec") or {}
    expected = f"{(spec.get('names') or {}).get('plural', '')}.{spec.get('group', '')}"
    name = request.object["metadata"].get("name", "")
    causes = []
    if name != expected:
        causes.append(errors.field_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not [v for v in spec.get("versions") or [] if v.get("storage")]:
        causes.append(errors.field_invalid("spec.versions", spec.get("versions") or [],
                                           "must have exactly one version marked as storage version"))
    if causes:
        raise errors.invalid("CustomResourceDefinition", "apiextensions.k8s.io", name, causes)


def crd_status(crd: dict[str, Any]) -> dict[str, Any]:
    spec, old = crd.get("spec") or {}, crd.get("status") or {}
    names = dict(spec.get("names") or {})
    names.setdefault("singular", names.get("kind", "").lower())
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    previous = {c.get("type"): c for c in old.get("conditions") or []}

    def condition(kind: str, reason: str, message: str) -> dict[str, str]:
        since = previous.get(kind, {}).get("lastTransitionTime") or now_rfc3339()
        return {"type": kind, "status": "True", "lastTransitionTime": since, "reason": reason, "message": message}

    storage = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    stored = list(old.get("storedVersions") or [])
    return {
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "acceptedNames": names,
        "storedVersions": stored + [v for v in storage if v not in stored],
    }


class CustomResourceDefinitionController(Controller):
    """Serves a CRD's versions as soon as it is created, and sets its NamesAccepted/Established conditions."""

    name = "customresourcedefinition"
    watches = (CRDS,)

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        self.sync(emulator, resource_type, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        self.sync(emulator, resource_type, new)

    def on_delete(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        spec = obj.get("spec") or {}
        group_resource = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        custom_types = emulator.registry.versions_of(*group_resource)
        if custom_types:
            table = emulator.store.table(group_resource)
            for stored in list(table.objects.values()):
                emulator.api.delete_object(custom_types[0], stored, DeleteOptions(), force=True)
        emulator.registry.unregister(*group_resource)
        emulator.store.drop_table(group_resource)

    def resync(self, emulator: Emulator, namespaces: set[str]) -> None:
        crd_type = emulator.storage_type(CRDS)
        assert crd_type is not None
        for crd in list(emulator.store.table(CRDS).objects.values()):
            self.sync(emulator, crd_type, crd)

    def sync(self, emulator: Emulator, resource_type: ResourceType, crd: dict[str, Any]) -> None:
        if is_terminating(crd):
            return
        served = types_from_crd(crd)
        if not served:
            return
        group_resource = served[0].group_resource
        served_versions = {t.version for t in served}
        for stale in emulator.registry.versions_of(*group_resource):
            if stale.version not in served_versions:
                emulator.registry.unregister(stale.group, stale.plural, stale.version)
        for custom_type in served:
            emulator.register_type(custom_type)
        status = crd_status(crd)
        if status != crd.get("status"):
            updated = clone(crd)
            updated["status"] = status
            emulator.api.write(resource_type, updated, crd)


# --- scheduling --------------------------------------------------------------------------------------------------

class Scheduler(Protocol):
    def pick_node(self, emulator: Emulator, pod: dict[str, Any]) -> str | None:
        """The node to bind `pod` to, or None to leave it Pending."""


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists":
            if not toleration.get("key") or toleration["key"] == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_fits(node: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Schedulable, Ready (when conditions are reported), taints tolerated and nodeSelector matched."""
    spec = pod.get("spec") or {}
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    if conditions and conditions.get("Ready") != "True":
        return False
    tolerations = spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return False
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in (spec.get("nodeSelector") or {}).items())


class FewestPodsScheduler:
    """Binds to the fitting node running the fewest pods (ties: by name)."""

    def pick_node(self, emulator: Emulator, pod: dict[str, Any]) -> str | None:
        pods = emulator.store.table(PODS)
        fitting = [n for n in emulator.store.table(NODES).objects.values() if node_fits(n, pod)]
        if not fitting:
            return None
        chosen = min(fitting, key=lambda n: (len(pods.indexed("spec.nodeName", n["metadata"]["name"])),
                                             n["metadata"]["name"]))
        return chosen["metadata"]["name"]


# --- replica sets ------------------------------------------------------------------------------------------------

def running_ready_status(pod: dict[str, Any]) -> dict[str, Any]:
    """What a kubelet would report once the pod's containers started."""
    now = now_rfc3339()
    status = dict(pod.get("status") or {})
    status.update({
        "phase": "Running",
        "startTime": now,
        "conditions": [{"type": kind, "status": "True", "lastTransitionTime": now}
                       for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
        "containerStatuses": [
            {"name": c.get("name", ""), "image": c.get("image", ""), "imageID": c.get("image", ""),
             "containerID": f"containerd://{new_uid().replace('-', '')}", "ready": True, "started": True,
             "restartCount": 0, "state": {"running": {"startedAt": now}}}
            for c in (pod.get("spec") or {}).get("containers") or []
        ],
    })
    return status


class ReplicaSetController(Controller):
    """Keeps `spec.replicas` active pods per ReplicaSet: a deleted (or terminating) pod is replaced at once by a
    pod from the template, bound by `emulator.scheduler` and, with `start_ready`, reported Running and Ready.

    Reacts to API writes only: objects seeded with `Emulator.load` are left as they are.
    """

    name = "replicaset"
    watches = (PODS, REPLICASETS)
    user = "system:serviceaccount:kube-system:replicaset-controller"

    def __init__(self, start_ready: bool = True) -> None:
        self.start_ready = start_ready

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        if resource_type.group_resource == REPLICASETS:
            self.reconcile(emulator, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        if resource_type.group_resource == REPLICASETS:
            if old["metadata"].get("generation") != new["metadata"].get("generation"):
                self.reconcile(emulator, new)
        elif is_terminating(new) and not is_terminating(old):
            self._reconcile_owner(emulator, new)

    def on_delete(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        if resource_type.group_resource == PODS:
            self._reconcile_owner(emulator, obj)  # idempotent: a pod already replaced when it began terminating

    def _reconcile_owner(self, emulator: Emulator, pod: dict[str, Any]) -> None:
        for ref in pod["metadata"].get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") == "ReplicaSet":
                owner = emulator.store.get(REPLICASETS, pod["metadata"].get("namespace", ""), ref.get("name", ""))
                if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                    self.reconcile(emulator, owner)

    def active_pods(self, emulator: Emulator, replica_set: dict[str, Any]) -> list[dict[str, Any]]:
        uid = replica_set["metadata"].get("uid")
        pods = [emulator.store.get(gr, *key) for gr, key in emulator.store.dependents(uid) if gr == PODS]
        return [p for p in pods if p is not None and controller_uid(p) == uid and not is_terminating(p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]

    def reconcile(self, emulator: Emulator, replica_set: dict[str, Any]) -> None:
        if is_terminating(replica_set):
            return
        active = self.active_pods(emulator, replica_set)
        wanted = int((replica_set.get("spec") or {}).get("replicas", 1))
        for _missing in range(wanted - len(active)):
            active.append(self.create_pod(emulator, replica_set))
        pods_type = emulator.storage_type(PODS)
        assert pods_type is not None
        surplus = sorted(active, key=lambda p: p["metadata"].get("creationTimestamp", ""), reverse=True)
        for pod in surplus[:max(len(active) - wanted, 0)]:
            emulator.api.delete_object(pods_type, pod, DeleteOptions())
        self._update_status(emulator, replica_set)

    def create_pod(self, emulator: Emulator, replica_set: dict[str, Any]) -> dict[str, Any]:
        pods_type = emulator.storage_type(PODS)
        assert pods_type is not None
        template = clone((replica_set.get("spec") or {}).get("template") or {})
        metadata = template.get("metadata") or {}
        rs_meta = replica_set["metadata"]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                **metadata,
                "generateName": f"{rs_meta['name']}-",
                "namespace": rs_meta.get("namespace", ""),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_meta["name"],
                                     "uid": rs_meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": template.get("spec") or {},
        }
        if not pod["spec"].get("nodeName"):
            node = emulator.scheduler.pick_node(emulator, pod)
            if node:
                pod["spec"]["nodeName"] = node
        created = emulator.api.create(pods_type, rs_meta.get("namespace", ""), pod, user=self.user)
        if self.start_ready and created["spec"].get("nodeName"):
            started = clone(created)
            started["status"] = running_ready_status(created)
            created, _was_created = emulator.api.update(pods_type, created["metadata"]["namespace"],
                                                        created["metadata"]["name"], started, subresource="status",
                                                        user="system:node:" + created["spec"]["nodeName"])
        return created

    def _update_status(self, emulator: Emulator, replica_set: dict[str, Any]) -> None:
        current = emulator.store.get(REPLICASETS, replica_set["metadata"].get("namespace", ""),
                                     replica_set["metadata"]["name"])
        rs_type = emulator.storage_type(REPLICASETS)
        if current is None or rs_type is None:
            return
        active = self.active_pods(emulator, current)
        selector = from_label_selector_object((current.get("spec") or {}).get("selector"))
        ready = sum(1 for p in active if is_pod_ready(p))
        status = {
            **(current.get("status") or {}),
            "replicas": len(active),
            "fullyLabeledReplicas": sum(1 for p in active if selector.matches(p["metadata"].get("labels"))),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": current["metadata"].get("generation", 1),
        }
        if status != current.get("status"):
            updated = clone(current)
            updated["status"] = status
            emulator.api.write(rs_type, updated, current)


def is_pod_ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


OPTIONAL_CONTROLLERS = {"replicaset": ReplicaSetController}
