"""What a change may take back: whether an object is still as the change left it, and what else lives in a namespace.

A rollback removes or restores only what its change created or changed, as the change left it:

- ``modified_since``: an object whose marker (objects.py ``marker``: its generation, else its resourceVersion) is no
  longer the one the change's last write of it returned was modified by someone else since. Not namespaces:
  OLM and admins label them; what they hold decides.
- ``foreign_objects``: the objects of a namespace the change did not create, which keep the namespace. Not counted:
  objects with an owner (dependents, collected with what the change made), objects labelled with the change's id,
  what Kubernetes and OpenShift put in every namespace, and objects already being deleted.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref, marker

# The namespaced kinds a team puts in a namespace (events, leases and endpoints follow from these)
CONTENT_KINDS = (
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Service",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "Pod",
    "PersistentVolumeClaim",
    "Role",
    "RoleBinding",
)
# What the control plane makes in every namespace
AUTOMATIC = {
    ("ConfigMap", "kube-root-ca.crt"),
    ("ConfigMap", "openshift-service-ca.crt"),
    ("ServiceAccount", "default"),
    ("ServiceAccount", "builder"),
    ("ServiceAccount", "deployer"),
}
SERVICE_ACCOUNT_SECRET = "kubernetes.io/service-account.name"  # a token or pull secret made for a ServiceAccount


def modified_since(session: ClusterSession, ref: Ref, left: Mapping[str, Optional[str]]) -> Optional[str]:
    """Why ``ref`` is no longer as the change left it (``left``: the markers of what the change wrote, None for what
    it deleted), or None."""
    if ref.kind == "Namespace" or str(ref) not in left:
        return None  # a namespace is judged by what it holds (OLM and admins label namespaces)
    now, then = marker(session.read(ref)), left[str(ref)]
    if now == then or (now is None and then is not None):
        return None  # as the change left it, or already gone
    if then is None:
        return f"{ref} was created again by someone else after the change deleted it ({now})"
    return f"{ref} was modified by someone else since the change ({now}; the change left {then})"


def foreign_objects(session: ClusterSession, namespace: str, change_labels: Mapping[str, str]) -> list[str]:
    """The objects of ``namespace`` the change (labelled ``change_labels``) did not create, as ``Kind ns/name``."""
    found = []
    for kind in CONTENT_KINDS:
        for obj in session.list(kind, namespace):
            if not _made_by_the_change_or_cluster(kind, obj, change_labels):
                found.append(str(Ref(kind, obj["metadata"]["name"], namespace)))
    return found


def _made_by_the_change_or_cluster(kind: str, obj: Mapping[str, Any], change_labels: Mapping[str, str]) -> bool:
    metadata = obj.get("metadata") or {}
    labels = metadata.get("labels") or {}
    return bool(
        metadata.get("ownerReferences")
        or metadata.get("deletionTimestamp")
        or (change_labels and all(labels.get(key) == value for key, value in change_labels.items()))
        or (kind, metadata.get("name")) in AUTOMATIC
        or (kind == "Secret" and SERVICE_ACCOUNT_SECRET in (metadata.get("annotations") or {}))
    )
