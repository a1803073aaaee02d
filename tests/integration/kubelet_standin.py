"""What kubelets (and, by default, kube-scheduler) would do for pods on the test control plane, in one thread.

The control plane in tests/controlplane runs no kubelet and, unless asked, no scheduler. This stand-in watches
every pod through the real API server with the `kubernetes` client and:

- binds a pending pod that names no node and asks for `default-scheduler` to the ready, schedulable node with
  the fewest pods that matches its nodeSelector and whose NoSchedule/NoExecute taints it tolerates (the tie goes
  to the first name): a simple first fit, not the scheduler's scoring - tests that care about placement run
  kube-scheduler. Pods naming another scheduler stay Pending, as on a cluster where nobody serves that name,
  until the test (or its own kube-scheduler) binds them;
- marks a bound pod Running and Ready, with a running status for each container, as a kubelet would once its
  containers started; a pod annotated `NEVER_READY` (`kubelet-standin.descheduler.fleet/never-ready: "true"`, e.g.
  on a ReplicaSet's template) is marked Running but never Ready, as with a readiness probe that keeps failing;
- finishes graceful deletes: once a bound pod has a deletionTimestamp it deletes it with gracePeriodSeconds=0,
  as a kubelet does when the containers stopped (finalizers still hold the pod, as on a real cluster);
- serves container logs to the API server (`kubectl logs`) over HTTPS, and points a node at that server once a pod
  on it has a log (kubelet_logs.py: a log is written as a pod annotation with `write_pod_log`).

Pods whose status a test writes itself (`hands_off`) are never bound or marked, only their deletes finished:
a test that loads a Pending or Failed pod keeps it that way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kubelet_logs import ContainerLogServer, has_pod_log, register_node
from standins.rest import Rest, path

LOG = logging.getLogger(__name__)
DEFAULT_SCHEDULER = "default-scheduler"
NEVER_READY = "kubelet-standin.descheduler.fleet/never-ready"  # annotation: Running, never Ready
WATCH_SECONDS = 5  # how long a pod that fitted no node waits at most before it is tried again


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def tolerates(tolerations: Iterable[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists":
            if not toleration.get("key") or toleration["key"] == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def fits(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """The checks a newcomer would expect: node Ready and schedulable, nodeSelector, taints."""
    spec, node_spec = pod.get("spec") or {}, node.get("spec") or {}
    conditions = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    if conditions.get("Ready") != "True" or node_spec.get("unschedulable"):
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(key) != value for key, value in (spec.get("nodeSelector") or {}).items()):
        return False
    tolerations = spec.get("tolerations") or []
    return all(tolerates(tolerations, taint) for taint in node_spec.get("taints") or []
               if taint.get("effect") in ("NoSchedule", "NoExecute"))


def running_status(pod: dict[str, Any]) -> dict[str, Any]:
    now = _now()
    containers = (pod.get("spec") or {}).get("containers") or []
    ready = ((pod.get("metadata") or {}).get("annotations") or {}).get(NEVER_READY) != "true"
    conditions = [{"type": kind, "status": "True", "lastTransitionTime": now}
                  for kind in ("PodScheduled", "Initialized")]
    conditions += [{"type": kind, "status": str(ready), "lastTransitionTime": now,
                    **({} if ready else {"reason": "ContainersNotReady"})} for kind in ("ContainersReady", "Ready")]
    return {
        "phase": "Running",
        "startTime": now,
        "hostIP": "127.0.0.1",
        "podIP": "127.0.0.1",
        "conditions": conditions,
        "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": ready,
                               "started": True, "restartCount": 0, "state": {"running": {"startedAt": now}}}
                              for c in containers],
    }


class KubeletStandIn:
    """Start with `.start()`, stop with `.stop()`; `.hands_off(namespace, name)` before creating a pod the test
    owns the status of."""

    def __init__(self, api_client: Any, schedulers_running: Iterable[str] = ()) -> None:
        from kubernetes import client

        self._core = client.CoreV1Api(api_client)
        self._rest = Rest(api_client)
        self._node_of: dict[str, str] = {}  # uid -> node of each pod bound and not finished (the watch thread's)
        self._schedulers_running = set(schedulers_running)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._hands_off_names: set[tuple[str, str]] = set()
        self._hands_off_uids: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="kubelet-standin", daemon=True)
        self.errors: list[str] = []
        self.logs = ContainerLogServer(api_client)

    # ---- public ------------------------------------------------------------------------------------------------

    def start(self) -> KubeletStandIn:
        self.logs.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.logs.stop()

    def hands_off(self, namespace: str, name: str) -> None:
        with self._lock:
            self._hands_off_names.add((namespace, name))

    def owned_by_test(self, namespace: str, name: str, uid: str) -> None:
        """After the create: the uid now marks the pod (a later pod of the same name is the stand-in's again)."""
        with self._lock:
            self._hands_off_names.discard((namespace, name))
            self._hands_off_uids.add(uid)

    # ---- the loop ----------------------------------------------------------------------------------------------

    def _run(self) -> None:
        """List every pod once, then follow the watch from the last version seen. Each watch ends after
        WATCH_SECONDS: then only the pods still unassigned are listed again (one that fitted no node may fit a
        node added since). A failed or expired watch (410) lists everything again."""
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    version = self._resync()
                else:
                    self._bind_waiting()
                for event in self._rest.watch(path("v1", "pods"), version, WATCH_SECONDS):
                    if self._stop.is_set():
                        return
                    if event["type"] == "ERROR":
                        version = None
                        break
                    version = event["object"]["metadata"]["resourceVersion"]
                    self._on_event(event["type"], event["object"])
            except Exception as error:  # noqa: BLE001 - the stand-in must outlive a restart of the server
                version = None
                if not self._stop.is_set():
                    self.errors.append(repr(error))
                    LOG.warning("kubelet stand-in: %r", error)
                    time.sleep(0.5)

    def _resync(self) -> str:
        listed = self._rest.request("GET", path("v1", "pods"))
        self._node_of.clear()
        for pod in listed["items"]:
            self._on_event("ADDED", pod)
        return listed["metadata"]["resourceVersion"]

    def _bind_waiting(self) -> None:
        unassigned = self._rest.request("GET", path("v1", "pods"), query=[("fieldSelector", "spec.nodeName=")])
        for pod in unassigned["items"]:
            self._handle(pod)

    def _on_event(self, kind: str, pod: dict[str, Any]) -> None:
        """Keep the node of every pod that holds one (the load `_bind` spreads), then act on the pod."""
        uid = pod["metadata"]["uid"]
        node_name = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if kind == "DELETED" or not node_name or phase in ("Succeeded", "Failed"):
            self._node_of.pop(uid, None)
        else:
            self._node_of[uid] = node_name
        if kind != "DELETED":
            self._handle(pod)

    def _handle(self, pod: dict[str, Any]) -> None:
        from kubernetes.client.exceptions import ApiException

        metadata, spec = pod["metadata"], pod.get("spec") or {}
        try:
            if metadata.get("deletionTimestamp"):
                # A grace period already at 0 only waits for finalizers, which are not the kubelet's to remove.
                if spec.get("nodeName") and metadata.get("deletionGracePeriodSeconds") != 0:
                    self._finish_delete(pod)
                return
            if spec.get("nodeName") and has_pod_log(metadata):
                # A pod with a log: its node's kubelet must be reachable, as a real one registers itself.
                register_node(self._core.api_client, spec["nodeName"], self.logs.port)
            if self._is_hands_off(metadata):
                return
            if not spec.get("nodeName"):
                scheduler = spec.get("schedulerName", DEFAULT_SCHEDULER)
                with self._lock:
                    ours = scheduler == DEFAULT_SCHEDULER and scheduler not in self._schedulers_running
                if ours:
                    self._bind(pod)
                return
            status = pod.get("status") or {}
            if status.get("phase") == "Pending" and not status.get("startTime"):
                self._mark_running(pod)
        except ApiException as error:
            if error.status not in (404, 409):  # gone or changed meanwhile: the next event brings the new state
                raise

    def _is_hands_off(self, metadata: dict[str, Any]) -> bool:
        with self._lock:
            return (metadata.get("uid") in self._hands_off_uids
                    or (metadata.get("namespace"), metadata.get("name")) in self._hands_off_names)

    def _bind(self, pod: dict[str, Any]) -> None:
        nodes = self._rest.list(path("v1", "nodes"))
        candidates = [n for n in nodes if fits(pod, n)]
        if not candidates:
            return  # stays Pending, as with a scheduler that finds no node
        load = Counter(self._node_of.values())
        target = min(candidates, key=lambda n: (load[n["metadata"]["name"]], n["metadata"]["name"]))
        metadata = pod["metadata"]
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": metadata["name"], "namespace": metadata["namespace"], "uid": metadata["uid"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": target["metadata"]["name"]}}
        self._core.create_namespaced_binding(metadata["namespace"], body, _preload_content=False)
        self._node_of[metadata["uid"]] = target["metadata"]["name"]  # before its event: the next bind counts it

    def _mark_running(self, pod: dict[str, Any]) -> None:
        metadata = pod["metadata"]
        body = {"metadata": {"resourceVersion": metadata["resourceVersion"]}, "status": running_status(pod)}
        # resourceVersion in the patch: a status a test wrote meanwhile wins (409), the stand-in does not clobber it.
        self._core.patch_namespaced_pod_status(metadata["name"], metadata["namespace"], body,
                                               _preload_content=False)

    def _finish_delete(self, pod: dict[str, Any]) -> None:
        from kubernetes import client

        metadata = pod["metadata"]
        options = client.V1DeleteOptions(grace_period_seconds=0,
                                         preconditions=client.V1Preconditions(uid=metadata["uid"]))
        self._core.delete_namespaced_pod(metadata["name"], metadata["namespace"], body=options,
                                         _preload_content=False)
