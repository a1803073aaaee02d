"""The API calls of eviction: the policy/v1 Eviction subresource, and the reads an executor needs around it.

Every answer of the Eviction subresource is classified once here (``EvictionAnswer``) so callers branch on an outcome,
never on HTTP codes: 2xx accepted, 429 refused by a PodDisruptionBudget (or API rate limiting), 429 with KubeVirt's
"Eviction triggered evacuation" text (a live migration started: a success in disguise), 500 several PDBs match the
pod (a misconfiguration, never retried), 404 the pod is gone, 409 the pod was replaced (UID precondition).

Objects stay raw JSON dicts (see listing.py). Nothing here sleeps or retries: pacing belongs to the executor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, MutableMapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    get_raw,
    list_raw,
    post_raw,
    resource_path,
)

# Outcomes of one eviction request
ACCEPTED = "accepted"
BLOCKED = "blocked"  # 429: a PDB forbids it right now (or the API server rate-limits us); retry later
EVACUATION = "evacuation"  # 429 from KubeVirt: the VMI is being live-migrated instead
REFUSED = "refused"  # 429 from KubeVirt that will not change by retrying (VMI not live-migratable)
MULTIPLE_PDBS = "multiple_pdbs"  # 500: more than one PDB selects the pod
GONE = "gone"  # 404
REPLACED = "replaced"  # 409: the UID precondition failed, a new pod has the name
ERROR = "error"  # anything else

EVACUATION_TEXT = "eviction triggered evacuation"  # KubeVirt's wording, also inside "Evacuation in progress: ..."
NOT_MIGRATABLE_TEXT = "is not live-migratable"
# KubeVirt marks evictions carrying this annotation as descheduler-initiated and gives the migration the lower
# "system-maintenance" priority, so node drains go first.
REQUESTED_BY_ANNOTATION = "requested-by"
REQUESTED_BY_DESCHEDULER = "sigs.k8s.io/descheduler"
REASON_ANNOTATION = "reason"

KUBEVIRT_API = "kubevirt.io/v1"
OWNER_RESOURCES: dict[str, tuple[str, str]] = {
    "ReplicaSet": ("apps/v1", "replicasets"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "Deployment": ("apps/v1", "deployments"),
    "DaemonSet": ("apps/v1", "daemonsets"),
    "ReplicationController": ("v1", "replicationcontrollers"),
}


@dataclass(frozen=True)
class EvictionAnswer:
    outcome: str
    status: int
    message: str

    @property
    def allowed(self) -> bool:
        """Whether the eviction went through, or started a live migration (which is how KubeVirt evicts)."""
        return self.outcome in (ACCEPTED, EVACUATION)

    def as_dict(self) -> dict:
        return {"allowed": self.allowed, "status": self.status, "message": self.message, "outcome": self.outcome}


def eviction_body(namespace: str, name: str, *, uid: Optional[str] = None, grace_period: Optional[int] = None,
                  dry_run: bool = False, reason: Optional[str] = None) -> dict:
    """A policy/v1 Eviction. The UID precondition makes the API refuse (409) rather than evict a newer pod that
    took the name (a StatefulSet replacement), so a stale plan can never hit the wrong pod."""
    delete_options: dict[str, Any] = {}
    if uid:
        delete_options["preconditions"] = {"uid": uid}
    if grace_period is not None:
        delete_options["gracePeriodSeconds"] = grace_period
    if dry_run:
        delete_options["dryRun"] = ["All"]
    annotations = {REQUESTED_BY_ANNOTATION: REQUESTED_BY_DESCHEDULER}
    if reason:
        annotations[REASON_ANNOTATION] = reason[:1000]
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                            "metadata": {"name": name, "namespace": namespace, "annotations": annotations}}
    if delete_options:
        body["deleteOptions"] = delete_options
    return body


def request_eviction(api_client: Any, namespace: str, name: str, *, uid: Optional[str] = None,
                     grace_period: Optional[int] = None, dry_run: bool = False,
                     reason: Optional[str] = None) -> EvictionAnswer:
    """POST one Eviction and classify the answer (never raises for an API answer; a transport failure is ERROR)."""
    path = resource_path("v1", "pods", namespace, name, "eviction")
    body = eviction_body(namespace, name, uid=uid, grace_period=grace_period, dry_run=dry_run, reason=reason)
    query = [("dryRun", "All")] if dry_run else []
    try:
        post_raw(api_client, path, body, query=query, kind="Pod")
    except ClusterApiError as error:
        return classify_eviction_error(error)
    return EvictionAnswer(ACCEPTED, 201, "dry run: the eviction would be accepted" if dry_run else "evicted")


def classify_eviction_error(error: ClusterApiError) -> EvictionAnswer:
    message = error.message or error.describe()
    lowered = message.lower()
    if error.status == 429:
        if EVACUATION_TEXT in lowered:
            return EvictionAnswer(EVACUATION, 429, message)
        if NOT_MIGRATABLE_TEXT in lowered:
            return EvictionAnswer(REFUSED, 429, message)
        return EvictionAnswer(BLOCKED, 429, message)
    outcome = {500: MULTIPLE_PDBS, 404: GONE, 409: REPLACED}.get(error.status, ERROR)
    if outcome == MULTIPLE_PDBS and "disruptionbudget" not in lowered.replace(" ", ""):
        outcome = ERROR  # a 500 for another reason (etcd, webhook crash) is an ordinary error
    return EvictionAnswer(outcome, error.status, message if outcome != ERROR else error.describe())


# ---- reads ----------------------------------------------------------------------------------------------------------


def get_optional(api_client: Any, path: str, kind: str) -> Optional[dict]:
    """GET an object; None when it (or its kind) does not exist."""
    try:
        return get_raw(api_client, path, kind=kind)
    except ClusterApiError as error:
        if error.is_not_found:
            return None
        raise


def get_pod(api_client: Any, namespace: str, name: str) -> Optional[dict]:
    return get_optional(api_client, resource_path("v1", "pods", namespace, name), "Pod")


def controller_ref(obj: Mapping[str, Any]) -> Optional[dict]:
    """The ownerReference with controller=true, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return dict(ref)
    return None


def get_owner(api_client: Any, namespace: str, kind: str, name: str) -> Optional[dict]:
    """A pod's controller (ReplicaSet, StatefulSet, ...); None when gone or of a kind we do not read."""
    if kind not in OWNER_RESOURCES:
        return None
    api_version, plural = OWNER_RESOURCES[kind]
    return get_optional(api_client, resource_path(api_version, plural, namespace, name), kind)


def replica_status(owner: Mapping[str, Any]) -> Optional[dict]:
    """desired and ready replicas of a workload object, or None for kinds without a replica count."""
    kind = owner.get("kind")
    spec, status = owner.get("spec") or {}, owner.get("status") or {}
    if kind == "DaemonSet":
        return {"desired": int(status.get("desiredNumberScheduled") or 0), "ready": int(status.get("numberReady") or 0)}
    if kind in ("ReplicaSet", "StatefulSet", "Deployment", "ReplicationController"):
        desired = spec.get("replicas")
        return {"desired": 1 if desired is None else int(desired), "ready": int(status.get("readyReplicas") or 0)}
    return None


def list_owner_pods(api_client: Any, namespace: str, owner: Mapping[str, Any]) -> list[dict]:
    """The pods whose controller is ``owner`` (selected by its label selector, then by ownerReference UID)."""
    selector = _selector_string((owner.get("spec") or {}).get("selector"))
    owner_uid = (owner.get("metadata") or {}).get("uid")
    items, _unused = list_raw(api_client, resource_path("v1", "pods", namespace), label_selector=selector or None,
                              kind="Pod")
    return [pod for pod in items if (controller_ref(pod) or {}).get("uid") == owner_uid]


def _selector_string(selector: Any) -> str:
    """matchLabels only (matchExpressions are re-checked through the ownerReference filter anyway)."""
    if not isinstance(selector, Mapping):
        return ""
    labels = selector.get("matchLabels") or {}
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        labels = selector  # ReplicationController: a plain map
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()) if isinstance(value, str))


def get_vmi(api_client: Any, namespace: str, name: str) -> Optional[dict]:
    return get_optional(api_client, resource_path(KUBEVIRT_API, "virtualmachineinstances", namespace, name),
                        "VirtualMachineInstance")


def get_kubevirt_config(api_client: Any) -> Optional[dict]:
    """The first KubeVirt CR of the cluster (there is one, in ``kubevirt`` or ``openshift-cnv``); None when KubeVirt
    is not installed."""
    try:
        items, _unused = list_raw(api_client, resource_path(KUBEVIRT_API, "kubevirts"), kind="KubeVirt")
    except ClusterApiError as error:
        if error.is_not_found:
            return None
        raise
    return items[0] if items else None


def list_vmi_migrations(api_client: Any, namespace: str, vmi_name: str) -> list[dict]:
    """The VirtualMachineInstanceMigrations of one VMI (KubeVirt labels them ``kubevirt.io/vmi-name``)."""
    try:
        items, _unused = list_raw(api_client, resource_path(KUBEVIRT_API, "virtualmachineinstancemigrations",
                                                            namespace),
                                  label_selector=f"kubevirt.io/vmi-name={vmi_name}",
                                  kind="VirtualMachineInstanceMigration")
    except ClusterApiError as error:
        if error.is_not_found:
            return []
        raise
    return [item for item in items if (item.get("spec") or {}).get("vmiName", vmi_name) == vmi_name]


# ---- server-side verification of a plan ------------------------------------------------------------------------------


def verify_evictions(api_client: Any, evictions: Iterable[MutableMapping[str, Any]]) -> dict:
    """Ask the API server, per planned eviction, whether it would be allowed now (``dryRun=All``: PDBs are checked
    and nothing changes). Adds ``verification: {allowed, status, message}`` to each entry; returns counts."""
    counts = {"allowed": 0, "blocked": 0}
    for eviction in evictions:
        answer = request_eviction(api_client, eviction.get("namespace") or "", eviction.get("name") or "",
                                  uid=eviction.get("uid") or None, dry_run=True)
        eviction["verification"] = {"allowed": answer.allowed, "status": answer.status,
                                    "message": verification_message(answer)}
        counts["allowed" if answer.allowed else "blocked"] += 1
    return counts


def verification_message(answer: EvictionAnswer) -> str:
    texts = {
        ACCEPTED: "the eviction would be accepted now",
        EVACUATION: "KubeVirt would live-migrate the VM",
        BLOCKED: f"the PodDisruptionBudget would block this now: {answer.message}",
        MULTIPLE_PDBS: f"more than one PodDisruptionBudget selects the pod (the eviction fails): {answer.message}",
        GONE: "the pod no longer exists",
        REPLACED: "the pod was replaced by a newer one with the same name (UID changed)",
    }
    return texts.get(answer.outcome, answer.message)
