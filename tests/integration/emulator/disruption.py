"""PodDisruptionBudgets: the disruption controller's status arithmetic and the eviction subresource's checks
(pkg/controller/disruption and pkg/registry/core/pod/storage/eviction.go), simplified where noted."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from . import errors
from .api import DeleteOptions
from .controllers import PODS, Controller, is_pod_ready, is_terminating
from .resources import ResourceType
from .selectors import from_label_selector_object
from .store import GroupResource, clone, now_rfc3339

if TYPE_CHECKING:
    from .emulator import Emulator

PDBS: GroupResource = ("policy", "poddisruptionbudgets")
DELETION_TIMEOUT = timedelta(minutes=2)  # how long an eviction's entry in disruptedPods waits for the pod to go
MORE_THAN_ONE_PDB = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
WOULD_VIOLATE = "Cannot evict pod as it would violate the pod's disruption budget."
# Controllers whose spec.replicas gives the expected pod count (the real controller asks their scale subresource).
SCALED_KINDS = {"ReplicaSet": ("apps", "replicasets"), "StatefulSet": ("apps", "statefulsets"),
                "Deployment": ("apps", "deployments"), "ReplicationController": ("", "replicationcontrollers")}


def is_healthy(pod: dict[str, Any]) -> bool:
    """Counted in currentHealthy: Running, Ready and not terminating."""
    return (not is_terminating(pod) and (pod.get("status") or {}).get("phase") == "Running"
            and is_pod_ready(pod))


def pdb_selects(pdb: dict[str, Any], pod: dict[str, Any]) -> bool:
    """A nil selector matches nothing, `{}` matches every pod (policy/v1)."""
    try:
        selector = from_label_selector_object((pdb.get("spec") or {}).get("selector"))
    except ValueError:
        return False  # an invalid selector matches no pod
    return selector.matches(pod["metadata"].get("labels"))


def scaled_value(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with rounding up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def expected_scale(emulator: Emulator, pods: list[dict[str, Any]]) -> int:
    """Sum of the replicas of the pods' controllers (a Deployment's for its ReplicaSets); 1 per bare pod, and the
    pod count for controllers the emulator cannot find."""
    total, counted_pods, seen = 0, {}, set()
    for pod in pods:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        if ref is None:
            total += 1
            continue
        owner = _scaling_owner(emulator, pod["metadata"].get("namespace", ""), ref)
        if owner is None:
            counted_pods[ref.get("uid")] = counted_pods.get(ref.get("uid"), 0) + 1
            continue
        if owner["metadata"]["uid"] not in seen:
            seen.add(owner["metadata"]["uid"])
            total += int((owner.get("spec") or {}).get("replicas", 1))
    return total + sum(counted_pods.values())


def _scaling_owner(emulator: Emulator, namespace: str, ref: dict[str, Any]) -> dict[str, Any] | None:
    group_resource = SCALED_KINDS.get(ref.get("kind", ""))
    owner = emulator.store.get(group_resource, namespace, ref.get("name", "")) if group_resource else None
    if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
        return None
    if ref.get("kind") == "ReplicaSet":
        deployment_ref = next((r for r in owner["metadata"].get("ownerReferences") or ()
                               if r.get("controller") and r.get("kind") == "Deployment"), None)
        if deployment_ref is not None:
            return _scaling_owner(emulator, namespace, deployment_ref) or owner
    return owner


def desired_and_expected(emulator: Emulator, spec: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
    if spec.get("maxUnavailable") is not None:
        expected = expected_scale(emulator, pods)
        return max(expected - scaled_value(spec["maxUnavailable"], expected), 0), expected
    min_available = spec.get("minAvailable")
    if isinstance(min_available, str) and min_available.endswith("%"):
        expected = expected_scale(emulator, pods)
        return scaled_value(min_available, expected), expected
    if min_available is not None:
        return int(min_available), len(pods)
    return 0, len(pods)


def _live_disrupted_pods(status: dict[str, Any], pods: list[dict[str, Any]], now: datetime) -> dict[str, str]:
    """Entries of disruptedPods whose pod still exists, is not terminating and is within the deletion timeout."""
    recorded = status.get("disruptedPods") or {}
    live = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        if name in recorded and not is_terminating(pod):
            when = datetime.strptime(recorded[name], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            if when + DELETION_TIMEOUT >= now:
                live[name] = recorded[name]
    return live


def compute_status(emulator: Emulator, pdb: dict[str, Any], namespace_pods: list[dict[str, Any]]) -> dict[str, Any]:
    old = pdb.get("status") or {}
    pods = [p for p in namespace_pods if pdb_selects(pdb, p)]
    disrupted = _live_disrupted_pods(old, pods, datetime.now(UTC))
    healthy = sum(1 for p in pods if is_healthy(p) and p["metadata"]["name"] not in disrupted)
    desired, expected = desired_and_expected(emulator, pdb.get("spec") or {}, pods)
    allowed = max(healthy - desired, 0)
    status: dict[str, Any] = {
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    status["conditions"] = [_allowed_condition(old, allowed > 0, status["observedGeneration"])]
    return status


def _allowed_condition(old_status: dict[str, Any], allowed: bool, generation: int) -> dict[str, Any]:
    state = "True" if allowed else "False"
    previous = next((c for c in old_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), {})
    since = previous.get("lastTransitionTime") if previous.get("status") == state else None
    return {"type": "DisruptionAllowed", "status": state, "observedGeneration": generation,
            "lastTransitionTime": since or now_rfc3339(), "reason": "SufficientPods" if allowed else "InsufficientPods",
            "message": ""}


def namespace_pods(emulator: Emulator, namespace: str) -> list[dict[str, Any]]:
    table = emulator.store.table(PODS)
    return [table.objects[key] for key in table.keys(namespace)]


class DisruptionController(Controller):
    """Keeps every PDB's status current whenever its pods or the PDB change."""

    name = "disruption"
    watches = (PODS, PDBS)

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        self._changed(emulator, resource_type, None, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        self._changed(emulator, resource_type, old, new)

    def on_delete(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        if resource_type.group_resource == PODS:
            self._changed(emulator, resource_type, obj, None)

    def resync(self, emulator: Emulator, namespaces: set[str]) -> None:
        table = emulator.store.table(PDBS)
        for namespace in namespaces:
            for key in list(table.keys(namespace)):
                self.sync(emulator, table.objects[key])

    def _changed(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any] | None,
                 new: dict[str, Any] | None) -> None:
        if resource_type.group_resource == PDBS:
            if new is not None:
                self.sync(emulator, new)
            return
        pod = new if new is not None else old
        assert pod is not None
        table = emulator.store.table(PDBS)
        namespace = pod["metadata"].get("namespace", "")
        for key in list(table.keys(namespace)):
            pdb = table.objects.get(key)
            if pdb is not None and any(p is not None and pdb_selects(pdb, p) for p in (old, new)):
                self.sync(emulator, pdb)

    def sync(self, emulator: Emulator, pdb: dict[str, Any]) -> dict[str, Any]:
        status = compute_status(emulator, pdb, namespace_pods(emulator, pdb["metadata"].get("namespace", "")))
        if status == pdb.get("status"):
            return pdb
        pdb_type = emulator.storage_type(PDBS)
        assert pdb_type is not None
        updated = clone(pdb)
        updated["status"] = status
        return emulator.api.write(pdb_type, updated, pdb)


# --- eviction ------------------------------------------------------------------------------------------------------

def can_ignore_pdb(pod: dict[str, Any]) -> bool:
    """Pending, finished and terminating pods are deleted without consulting budgets."""
    return is_terminating(pod) or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending")


def matching_pdbs(emulator: Emulator, pod: dict[str, Any]) -> list[dict[str, Any]]:
    table = emulator.store.table(PDBS)
    pdbs = (table.objects[key] for key in table.keys(pod["metadata"].get("namespace", "")))
    return [pdb for pdb in pdbs if pdb_selects(pdb, pod)]


def evict_pod(emulator: Emulator, namespace: str, name: str, eviction: dict[str, Any], dry_run: bool,
              user: str) -> dict[str, Any]:
    """The default eviction handler: returns the Success Status (201) or raises the API's ApiError."""
    eviction_name = (eviction.get("metadata") or {}).get("name")
    if eviction_name and eviction_name != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    delete_options = eviction.get("deleteOptions") or {}
    dry_run = dry_run or "All" in (delete_options.get("dryRun") or [])
    options = DeleteOptions(grace_period_seconds=delete_options.get("gracePeriodSeconds"),
                            propagation_policy=delete_options.get("propagationPolicy"),
                            preconditions=delete_options.get("preconditions") or {}, dry_run=dry_run)
    pods_type = emulator.storage_type(PODS)
    assert pods_type is not None
    with emulator.store.lock:
        pod = emulator.store.get(PODS, namespace, name)
        if pod is None:
            raise errors.not_found("pods", "", name)
        if not can_ignore_pdb(pod):
            pdbs = matching_pdbs(emulator, pod)
            if len(pdbs) > 1:
                # kube-apiserver's eviction handler builds this Status itself: code 500, no reason, no prefix.
                raise errors.ApiError(500, "", MORE_THAN_ONE_PDB)
            if pdbs:
                _check_budget(emulator, pdbs[0], pod, dry_run)
        emulator.api.delete(pods_type, namespace, name, options, user=user)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _check_budget(emulator: Emulator, pdb: dict[str, Any], pod: dict[str, Any], dry_run: bool) -> None:
    """checkAndDecrement: refuse with 429 when no disruption is allowed, else record the disruption."""
    status = compute_status(emulator, pdb, namespace_pods(emulator, pod["metadata"].get("namespace", "")))
    if not is_pod_ready(pod):
        policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
        if policy == "AlwaysAllow" or (status["currentHealthy"] >= status["desiredHealthy"] > 0):
            return  # an unhealthy pod does not count towards the budget
    if status["disruptionsAllowed"] <= 0:
        pdb_name = pdb["metadata"]["name"]
        raise errors.too_many_requests(WOULD_VIOLATE, causes=[{
            "reason": "DisruptionBudget",
            "message": f"The disruption budget {pdb_name} needs {status['desiredHealthy']} healthy pods and has "
                       f"{status['currentHealthy']} currently",
        }])
    if dry_run:
        return
    status["disruptionsAllowed"] -= 1
    status["disruptedPods"] = {**status.get("disruptedPods", {}), pod["metadata"]["name"]: now_rfc3339()}
    status["conditions"] = [_allowed_condition(status, status["disruptionsAllowed"] > 0, status["observedGeneration"])]
    updated = clone(pdb)
    updated["status"] = status
    pdb_type = emulator.storage_type(PDBS)
    assert pdb_type is not None
    emulator.api.write(pdb_type, updated, pdb)
