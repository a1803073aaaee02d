"""Workloads around an eviction: how many replicas are unavailable, and where the replacement of an evicted pod went.

A replacement is a pod of the same controller (ownerReference UID) that did not exist before the eviction. When
several pods of one workload are evicted at once, each replacement is handed to one eviction only (``claim``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.eviction import (
    controller_ref,
    get_owner,
    list_owner_pods,
    replica_status,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import DONE, STOPPED, Waiter

# Controllers that recreate an evicted pod (and report ready replicas we can wait for)
REPLACING_KINDS = ("ReplicaSet", "StatefulSet", "ReplicationController", "DaemonSet")


@dataclass(frozen=True)
class OwnerRef:
    namespace: str
    kind: str
    name: str
    uid: Optional[str] = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"

    @property
    def replaces_pods(self) -> bool:
        return self.kind in REPLACING_KINDS


def owner_of(pod: Optional[Mapping[str, Any]], namespace: str,
             planned: Optional[Mapping[str, Any]] = None) -> Optional[OwnerRef]:
    """The pod's controller, from the live pod when we have it (the plan's owner otherwise)."""
    ref = controller_ref(pod) if pod else None
    if ref and ref.get("kind") and ref.get("name"):
        return OwnerRef(namespace, str(ref["kind"]), str(ref["name"]), ref.get("uid"))
    if pod is None and planned and planned.get("kind") and planned.get("name"):
        return OwnerRef(namespace, str(planned["kind"]), str(planned["name"]))
    return None


def is_ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_terminating(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def pod_uid(pod: Mapping[str, Any]) -> Optional[str]:
    return (pod.get("metadata") or {}).get("uid")


@dataclass(frozen=True)
class _Look:
    """One look at an evicted pod's workload: it (None when gone), its replica counts, its new pods."""

    owner: Optional[dict]
    counts: dict
    new_pods: list[dict]
    ready_new: list[dict]
    scaled_down: bool


def _recovered(look: _Look) -> bool:
    """Gone (nothing left to wait for), or every desired replica ready with a new pod among them (or scaled down)."""
    if look.owner is None:
        return True
    return look.counts["ready"] >= look.counts["desired"] and bool(look.ready_new or look.scaled_down)


class ReplacementTracker:
    """Reads workloads and finds replacements; shared by the workers of one run."""

    def __init__(self, api_client: Any, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        self._api_client = api_client
        self._clock = clock
        self._sleep = sleep
        self._cancelled = cancelled  # a cancelled run stops waiting (the eviction itself is done)
        self._lock = threading.Lock()
        self._claimed: set[str] = set()

    def read_owner(self, owner: OwnerRef) -> Optional[dict]:
        found = get_owner(self._api_client, owner.namespace, owner.kind, owner.name)
        if found is not None and owner.uid and (found.get("metadata") or {}).get("uid") != owner.uid:
            return None  # a new workload with the old name is not this pod's owner
        return found

    def availability(self, owner: OwnerRef) -> Optional[dict]:
        """{desired, ready, unavailable} of a workload with a replica count, else None."""
        found = self.read_owner(owner) if owner.replaces_pods else None
        counts = replica_status(found) if found else None
        if counts is None:
            return None
        return {**counts, "unavailable": max(counts["desired"] - counts["ready"], 0)}

    def pods_before(self, owner: OwnerRef) -> Optional[set[str]]:
        """UIDs of the workload's pods just before an eviction; None when the workload cannot be read."""
        found = self.read_owner(owner)
        if found is None:
            return None
        return {pod_uid(pod) or "" for pod in list_owner_pods(self._api_client, owner.namespace, found)}

    def wait(self, owner: OwnerRef, before: set[str], source_node: Optional[str], timeout: float,
             poll_interval: float) -> dict:
        """Wait until the workload is back to its desired ready replicas with a new ready pod; report the new pod,
        its node and whether that is the node the evicted pod left."""
        waiter = Waiter(timeout, poll_interval, clock=self._clock, sleep=self._sleep)
        polled = waiter.poll(lambda: self._look(owner, before), _recovered, stopped=self._cancelled)
        look = polled.value
        if look.owner is None:
            return {"status": "owner_gone", "seconds": polled.seconds}
        if polled.ended == DONE:
            return self._landed(self._claim(look.ready_new), source_node, polled.seconds, look.counts)
        result = self._landed(self._claim(look.new_pods, peek=True), source_node, polled.seconds, look.counts)
        result["status"] = "cancelled" if polled.ended == STOPPED else "timeout"
        return result

    def _look(self, owner: OwnerRef, before: set[str]) -> _Look:
        found = self.read_owner(owner)
        if found is None:
            return _Look(None, {}, [], [], scaled_down=False)
        counts = replica_status(found) or {"desired": 0, "ready": 0}
        new_pods = [pod for pod in list_owner_pods(self._api_client, owner.namespace, found)
                    if pod_uid(pod) not in before and not is_terminating(pod)]
        ready_new = sorted((pod for pod in new_pods if is_ready(pod)),
                           key=lambda pod: (pod.get("metadata") or {}).get("creationTimestamp") or "")
        return _Look(found, {"desired": counts["desired"], "ready": counts["ready"]}, new_pods, ready_new,
                     scaled_down=counts["desired"] < len(before))

    def _claim(self, candidates: list[dict], peek: bool = False) -> Optional[dict]:
        with self._lock:
            for pod in candidates:
                uid = pod_uid(pod) or ""
                if uid not in self._claimed:
                    if not peek:
                        self._claimed.add(uid)
                    return pod
        return None

    def _landed(self, pod: Optional[Mapping[str, Any]], source_node: Optional[str], seconds: float,
                counts: dict) -> dict:
        result: dict[str, Any] = {"status": "ready", "seconds": seconds, **counts,
                                  "pod": None, "node": None, "same_node": None}
        if pod is not None:
            node = (pod.get("spec") or {}).get("nodeName") or None
            result.update({"pod": (pod.get("metadata") or {}).get("name"), "uid": pod_uid(pod), "node": node,
                           "same_node": (node == source_node) if node and source_node else None})
        return result
