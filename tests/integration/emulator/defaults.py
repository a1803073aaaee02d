"""Defaulting the API server applies on write (a small subset: the fields clients commonly read back).

Defaulters only fill what is missing, so objects seeded with `Emulator.load` keep what the test wrote.
"""

from __future__ import annotations

from typing import Any


def namespace(obj: dict[str, Any]) -> None:
    name = obj["metadata"].get("name", "")
    obj["metadata"].setdefault("labels", {}).setdefault("kubernetes.io/metadata.name", name)
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def pod(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("priority", 0)
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", qos_class(spec))


def pod_status_on_create(obj: dict[str, Any]) -> dict[str, Any]:
    """kube-apiserver drops the status a client sends when creating a pod."""
    return {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}


def qos_class(spec: dict[str, Any]) -> str:
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    for res in resources:
        limits = res.get("limits") or {}
        requests = {**limits, **(res.get("requests") or {})}  # requests default to limits
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name) != limits[name]:
                return "Burstable"
    return "Guaranteed"


def secret(obj: dict[str, Any]) -> None:
    obj.setdefault("type", "Opaque")


def service(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")


def replicated(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
