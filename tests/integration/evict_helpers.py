"""Builders and probes shared by the test_evict*.py tests.

- objects: nodes, ReplicaSets (their pods come from the cluster's ReplicaSet controller and the kubelet stand-in),
  PDBs, bare pods;
- `EvictionRecorder`: records at the fault proxy every eviction request the API server answers (with the pod's
  node, namespace and owner at that moment), the most requests handled at once, and which pods were actually
  evicted - what the limit tests assert on;
- `plan_of(...)`: a plan (docs/plan-format.md) for given pods, as the plan module would return it;
- `sealed(kube, plan)`: that plan with the cluster's identity and its seal, as the plan module writes it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from standins.rest import wait_until

PAUSE_IMAGE = "registry.k8s.io/pause:3.9"


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def namespace_object(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def replicaset(namespace: str, name: str, replicas: int, node_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": PAUSE_IMAGE}],
                            "terminationGracePeriodSeconds": 0}
    if node_name:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"namespace": namespace, "name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def pdb(namespace: str, name: str, app: str, *, min_available: int | None = None,
        max_unavailable: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"namespace": namespace, "name": name}, "spec": spec}


def bare_pod(namespace: str, name: str, node_name: str, *, labels: dict[str, str] | None = None,
             finalizers: list[str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"namespace": namespace, "name": name, "labels": dict(labels or {"app": name})}
    if finalizers:
        metadata["finalizers"] = finalizers
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "image": PAUSE_IMAGE}],
                     "terminationGracePeriodSeconds": 0},
            "status": {"phase": "Running", "startTime": now,
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}]}}


def pods_of(kube: Any, namespace: str, app: str | None = None) -> list[dict[str, Any]]:
    """Live pods (not terminating) of a namespace, optionally of one app, in name order."""
    from kubernetes import client

    with kube.api_client() as api_client:
        listed = client.CoreV1Api(api_client).list_namespaced_pod(
            namespace, label_selector=f"app={app}" if app else None, _preload_content=False)
    import json

    items = json.loads(listed.data)["items"]
    return sorted((p for p in items if not p["metadata"].get("deletionTimestamp")),
                  key=lambda p: p["metadata"]["name"])


def create(kube: Any, *objects: dict[str, Any]) -> None:
    """Create through the API, as a user would (no status written, unlike `kube.load`)."""
    from kubernetes.dynamic import DynamicClient

    with kube.api_client() as api_client:
        dynamic = DynamicClient(api_client)
        for obj in objects:
            resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            namespace = obj["metadata"].get("namespace") if resource.namespaced else None
            resource.create(body=obj, namespace=namespace)


def wait_until_pods_are_older_than(pods: list[dict[str, Any]], seconds: float) -> None:
    """Return once every pod is more than `seconds` old, for any reader of its creationTimestamp (which the API
    server truncates to the second, so a pod may read up to a second older than it is) and however whole seconds
    are counted (upstream's PodLifeTime evicts when int(age) > maxPodLifeTimeSeconds): waits until the newest
    timestamp is `seconds` + 1.5 s behind the wall clock, so both a plan and a later descheduler cycle see every
    pod past the threshold, whatever the speed of the machine."""
    stamps = [datetime.strptime(p["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
              for p in pods]
    if not stamps:
        return
    remaining = (max(stamps) - datetime.now(UTC)).total_seconds() + seconds + 1.5
    if remaining > 0:
        time.sleep(remaining)


def ready_replicas(kube: Any, namespace: str, app: str, replicas: int) -> list[dict[str, Any]]:
    """Wait until `replicas` pods of `app` run and are Ready; returns them."""
    def ready() -> list[dict[str, Any]] | None:
        pods = [p for p in pods_of(kube, namespace, app) if any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in (p.get("status") or {}).get(
                "conditions") or [])]
        return pods if len(pods) == replicas else None

    return wait_until(ready, what=f"{replicas} ready pods of {namespace}/{app}")


def plan_of(pods: list[dict[str, Any]], now: str | None = None, **overrides: Any) -> dict[str, Any]:
    """A plan (docs/plan-format.md) evicting `pods` in order, with their live UID, node and owner."""
    evictions = []
    for order, pod in enumerate(pods, start=1):
        owner = next(({"kind": r["kind"], "name": r["name"]} for r in pod["metadata"].get("ownerReferences") or []
                      if r.get("controller")), None)
        evictions.append({"order": order, "namespace": pod["metadata"]["namespace"], "name": pod["metadata"]["name"],
                          "uid": pod["metadata"]["uid"], "node": pod["spec"].get("nodeName"), "owner": owner,
                          "plugin": "PodLifeTime", "profile": "test", "extension_point": "Deschedule",
                          "reason": "test eviction", **overrides})
    return {"format_version": 1, "now": now or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "evictions": evictions}


def sealed(kube: Any, plan: dict[str, Any]) -> dict[str, Any]:
    """`plan` as the plan module writes it of `kube`'s cluster: with its cluster_identity (unless the plan has the
    key, even as None) and sealed by the collection's own seal_plan, as runner/plan.py seals every plan. A plan that
    has a seal (even None) is returned as it is."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan_seal import seal_plan

    if "seal" in plan:
        return plan
    if "cluster_identity" not in plan:
        uid = kube.get("Namespace", None, "kube-system")["metadata"]["uid"]
        plan = {**plan, "cluster_identity": {"uid": uid, "server": None}}
    return {**plan, "seal": seal_plan(plan)}


@dataclass
class EvictionRequest:
    started: float
    ended: float
    namespace: str
    name: str
    uid: str | None
    node: str | None
    owner: str | None
    dry_run: bool
    code: int


@dataclass
class EvictionRecorder:
    """Records every eviction request at the fault proxy in front of the control plane (tests marked `faults`): each
    one is seen before it is forwarded (the pod's node, namespace and owner read then) and after the server answered.
    `delay` holds each one at the proxy so that overlapping requests are observable."""

    kube: Any
    delay: float = 0.0
    requests: list[EvictionRequest] = field(default_factory=list)
    max_concurrent: int = 0
    _active: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.delay:
            self.kube.faults.delay(self.delay, verb="create", path=r"/eviction$")
        self.kube.faults.observe(self, verb="create", path=r"/eviction$")

    def started(self, method: str, path: str, body: bytes | None) -> tuple[float, str, str, dict[str, Any], bool]:
        arrived = time.monotonic()  # before the pod is read: that read's latency varies (pacing tests compare starts)
        parts = path.split("/")
        namespace, name = parts[parts.index("namespaces") + 1], parts[parts.index("pods") + 1]
        pod = self.kube.get("Pod", namespace, name) or {"metadata": {}, "spec": {}}
        eviction = json.loads(body or b"{}")
        dry_run = "All" in ((eviction.get("deleteOptions") or {}).get("dryRun") or [])
        with self._lock:
            self._active += 1
            self.max_concurrent = max(self.max_concurrent, self._active)
        return arrived, namespace, name, pod, dry_run

    def finished(self, token: tuple[float, str, str, dict[str, Any], bool], status: int) -> None:
        started, namespace, name, pod, dry_run = token
        owner = next((f"{namespace}/{r['kind']}/{r['name']}" for r in pod["metadata"].get("ownerReferences") or []
                      if r.get("controller")), None)
        with self._lock:
            self._active -= 1
            self.requests.append(EvictionRequest(started, time.monotonic(), namespace, name,
                                                 pod["metadata"].get("uid"), pod["spec"].get("nodeName"), owner,
                                                 dry_run, status))

    @property
    def evicted(self) -> list[EvictionRequest]:
        """Requests that evicted a pod (201, not a dry run)."""
        return [r for r in self.requests if r.code == 201 and not r.dry_run]

    def evicted_per(self, attribute: str) -> Counter:
        return Counter(getattr(r, attribute) for r in self.evicted)

    def evicted_uids(self) -> Counter:
        return Counter(r.uid for r in self.evicted)


def eviction_recorder(kube: Any, delay: float = 0.0) -> EvictionRecorder:
    return EvictionRecorder(kube, delay=delay)


def journal_entries(path: Path) -> list[dict[str, Any]]:
    """The evict journal's entries (JSON lines; a line cut short by a killed run is skipped)."""
    entries = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def evicted_uids(kube: Any, namespace: str, plan: dict[str, Any]) -> set[str]:
    """The plan's pods the API server no longer has (or has terminating)."""
    live = {pod["metadata"]["uid"] for pod in pods_of(kube, namespace)}
    return {entry["uid"] for entry in plan["evictions"]} - live
