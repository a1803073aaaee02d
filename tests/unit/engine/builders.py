"""Object builders for engine tests, shaped like upstream's test/test_utils.go (BuildTestNode, BuildTestPod...).

Pods built here have no creationTimestamp and an empty phase, exactly as upstream's builders make them.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Optional

_uids = itertools.count(1)
Apply = Optional[Callable[[dict], Any]]


def build_node(name: str, millicpu: int, memory: int, pods: int, apply: Apply = None) -> dict:
    resources = {"cpu": f"{millicpu}m", "memory": str(memory), "pods": str(pods)}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {}},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    if apply:
        apply(node)
    return node


def build_pod(name: str, cpu: int, memory: int, node_name: str, apply: Apply = None,
              namespace: str = "default") -> dict:
    requests: dict[str, str] = {}
    if cpu >= 0:
        requests["cpu"] = f"{cpu}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "uid": f"uid-{next(_uids):06d}"},
        "spec": {"containers": [{"name": "c", "image": "", "resources": {"requests": requests, "limits": {}}}],
                 "nodeName": node_name},
        "status": {},
    }
    if apply:
        apply(pod)
    return pod


def owner_ref(kind: str, name: str = "", uid: str = "", controller: bool = True) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "name": name or f"{kind.lower()}-owner",
            "uid": uid or f"{kind.lower()}-uid", "controller": controller}


def set_rs_owner(pod: dict, name: str = "rs", uid: str = "rs-uid") -> None:
    pod["metadata"]["ownerReferences"] = [owner_ref("ReplicaSet", name, uid)]


def set_ds_owner(pod: dict) -> None:
    pod["metadata"]["ownerReferences"] = [owner_ref("DaemonSet", "ds", "ds-uid")]


def set_priority(pod: dict, priority: int) -> None:
    pod["spec"]["priority"] = priority


def set_labels(obj: dict, **labels: str) -> None:
    obj["metadata"].setdefault("labels", {}).update(labels)


def set_annotation(obj: dict, key: str, value: str = "") -> None:
    obj["metadata"].setdefault("annotations", {})[key] = value


def make_best_effort(pod: dict) -> None:
    for container in pod["spec"]["containers"]:
        container["resources"] = {}


def make_guaranteed(pod: dict) -> None:
    for container in pod["spec"]["containers"]:
        container["resources"] = {"requests": {"cpu": "100m", "memory": "100Mi"},
                                  "limits": {"cpu": "100m", "memory": "100Mi"}}


def set_unschedulable(node: dict) -> None:
    node["spec"]["unschedulable"] = True


def add_taint(node: dict, key: str, value: str = "", effect: str = "NoSchedule") -> None:
    node["spec"].setdefault("taints", []).append({"key": key, "value": value, "effect": effect})


def add_toleration(pod: dict, key: str, value: str = "", effect: str = "NoSchedule",
                   operator: str = "Equal") -> None:
    pod["spec"].setdefault("tolerations", []).append(
        {"key": key, "value": value, "effect": effect, "operator": operator})


def add_empty_dir(pod: dict) -> None:
    pod["spec"].setdefault("volumes", []).append({"name": "scratch", "emptyDir": {}})


def policy(*plugins: tuple[str, str, dict], evictor_args: Optional[dict] = None, profile: str = "test",
           **top_level: Any) -> dict:
    """A DeschedulerPolicy with one profile; each plugin given as (name, extension point, args)."""
    points: dict[str, dict] = {}
    config = []
    if evictor_args is not None:
        config.append({"name": "DefaultEvictor", "args": evictor_args})
    for name, point, args in plugins:
        config.append({"name": name, "args": args})
        points.setdefault(point, {"enabled": []})["enabled"].append(name)
    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                "profiles": [{"name": profile, "pluginConfig": config, "plugins": points}]}
    document.update(top_level)
    return document


def evicted_names(plan: dict) -> list[str]:
    return [e["name"] for e in plan["evictions"]]
