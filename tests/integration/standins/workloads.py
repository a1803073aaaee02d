"""What kube-controller-manager's deployment controller and a kubelet do for Deployments, for API servers that have
neither (the emulator): each Deployment gets `spec.replicas` pods of its current template, bound to a node and
reported Running and Ready (or never Ready, to test an operand that does not start), and a rolled-out status.

On the real control plane (tests/controlplane) this is not started: its own controllers and node stand-in do it.
Pods are owned by the Deployment directly (no ReplicaSet); the roll-out is immediate.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from .loop import StandIn
from .rest import path


def template_hash(template: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


def pod_status(pod: dict[str, Any], ready: bool) -> dict[str, Any]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    state = {"running": {"startedAt": now}} if ready else {"waiting": {"reason": "CrashLoopBackOff"}}
    return {
        "phase": "Running", "startTime": now,
        "conditions": [{"type": kind, "status": "True" if ready or kind == "PodScheduled" else "False",
                        "lastTransitionTime": now}
                       for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
        "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": ready,
                               "started": ready, "restartCount": 0 if ready else 3, "state": state}
                              for c in pod["spec"].get("containers") or []],
    }


class Workloads(StandIn):
    """Rolls out the Deployments of `namespaces`; `not_ready` names Deployments whose pods never become Ready."""

    name = "workloads-stand-in"

    def __init__(self, api_client: Any, namespaces: list[str]) -> None:
        super().__init__(api_client)
        self.namespaces = namespaces
        self.not_ready: set[str] = set()

    def reconcile(self) -> None:
        for namespace in self.namespaces:
            pods = self.rest.list(path("v1", "pods", namespace))
            for deployment in self.rest.list(path("apps/v1", "deployments", namespace)):
                if not deployment["metadata"].get("deletionTimestamp"):
                    self._roll_out(deployment, [p for p in pods if self._owned(p, deployment)])

    @staticmethod
    def _owned(pod: dict[str, Any], deployment: dict[str, Any]) -> bool:
        return any(ref.get("uid") == deployment["metadata"]["uid"] for ref in pod["metadata"].get("ownerReferences")
                   or ())

    def _roll_out(self, deployment: dict[str, Any], pods: list[dict[str, Any]]) -> None:
        metadata, spec = deployment["metadata"], deployment["spec"]
        wanted = int(spec.get("replicas", 1))
        current_hash = template_hash(spec.get("template") or {})
        ready = metadata["name"] not in self.not_ready
        current = []
        for pod in pods:
            if (pod["metadata"].get("labels") or {}).get("pod-template-hash") == current_hash and len(current) < wanted:
                current.append(pod)
            else:
                self.rest.delete(path("v1", "pods", metadata["namespace"], pod["metadata"]["name"]))
        while len(current) < wanted:
            current.append(self._create_pod(deployment, current_hash, ready))
        count = len(current)
        status = {"observedGeneration": metadata.get("generation", 1), "replicas": count, "updatedReplicas": count,
                  "readyReplicas": count if ready else 0, "availableReplicas": count if ready else 0}
        if any(deployment.get("status", {}).get(key) != value for key, value in status.items()):
            self.rest.change(path("apps/v1", "deployments", metadata["namespace"], metadata["name"], "status"),
                             lambda d: d.update(status={**(d.get("status") or {}), **status}))

    def _create_pod(self, deployment: dict[str, Any], current_hash: str, ready: bool) -> dict[str, Any]:
        metadata = deployment["metadata"]
        template = json.loads(json.dumps(deployment["spec"].get("template") or {}))
        labels = {**(template.get("metadata") or {}).get("labels", {}), "pod-template-hash": current_hash}
        nodes = sorted(n["metadata"]["name"] for n in self.rest.list(path("v1", "nodes")))
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**(template.get("metadata") or {}), "labels": labels,
                            "generateName": f"{metadata['name']}-{current_hash}-", "namespace": metadata["namespace"],
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                 "name": metadata["name"], "uid": metadata["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}]},
               "spec": {**template.get("spec", {}), **({"nodeName": nodes[0]} if nodes else {})}}
        created = self.rest.create(path("v1", "pods", metadata["namespace"]), pod)
        url = path("v1", "pods", metadata["namespace"], created["metadata"]["name"], "status")
        return self.rest.change(url, lambda p: p.update(status=pod_status(p, ready))) or created
