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


# --- more shapes from upstream's test/test_utils.go (added for the evictor and deschedule plugin ports) ---

def set_normal_owner(pod: dict) -> None:
    """GetNormalPodOwnerRefList: kind Pod, no name, no UID (so every such pod shares the owner UID "")."""
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": ""}]


def set_ss_owner(pod: dict) -> None:
    pod["metadata"]["ownerReferences"] = [owner_ref("StatefulSet", "statefulset-1", "ss-uid")]


def set_mirror_annotations(pod: dict) -> None:
    """GetMirrorPodAnnotation: replaces the annotations, as upstream's SetMirrorPodAnnotation does."""
    pod["metadata"]["annotations"] = {
        "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
        "kubernetes.io/config.source": "api",
        "kubernetes.io/config.mirror": "mirror",
    }


def set_host_path_empty_dir(pod: dict) -> None:
    """SetHostPathEmptyDirVolumeSource: one volume carrying both hostPath and emptyDir."""
    pod["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]


def set_pvc_volume(pod: dict, claim: str = "foo", name: str = "pvc") -> None:
    pod["spec"].setdefault("volumes", []).append({"name": name, "persistentVolumeClaim": {"claimName": claim}})


def make_burstable(pod: dict) -> None:
    """MakeBurstablePod: drop the limits of the first container."""
    pod["spec"]["containers"][0]["resources"].pop("limits", None)


def make_guaranteed_from_requests(pod: dict) -> None:
    """MakeGuaranteedPod: cpu and memory limits equal to the first container's requests."""
    resources = pod["spec"]["containers"][0]["resources"]
    requests = resources.get("requests") or {}
    resources.setdefault("limits", {}).update({k: requests[k] for k in ("cpu", "memory") if k in requests})


def set_container_requests(pod: dict, **requests: str) -> None:
    """Extra requests on the first container, e.g. ephemeral_storage="10G" (underscores become dashes)."""
    target = pod["spec"]["containers"][0]["resources"].setdefault("requests", {})
    target.update({k.replace("_", "-"): v for k, v in requests.items()})


def set_node_allocatable(node: dict, **resources: str) -> None:
    """Extra allocatable (and capacity) resources, e.g. ephemeral_storage="1T"; dotted names go through a dict."""
    for key, amount in resources.items():
        node["status"]["allocatable"][key.replace("_", "-")] = amount
        node["status"]["capacity"][key.replace("_", "-")] = amount


def set_creation(obj: dict, timestamp: str) -> None:
    obj["metadata"]["creationTimestamp"] = timestamp


def set_deletion(obj: dict, timestamp: str = "2026-01-01T00:00:00Z") -> None:
    obj["metadata"]["deletionTimestamp"] = timestamp


def filler_node(name: str = "filler-unschedulable") -> dict:
    """An unschedulable node without pods.

    Upstream's plugin tests call Deschedule on a single node; compute_plan skips a cycle with fewer than two nodes.
    This node lets those cases run while staying out of every fit check (NodeFit rejects unschedulable nodes) and
    carrying no labels or taints a plugin could react to.
    """
    return build_node(name, 1000, 1000, 10, set_unschedulable)


def build_namespace(name: str, **labels: str) -> dict:
    """BuildTestNamespace: carries the kubernetes.io/metadata.name label the API server adds."""
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}


def build_pdb(name: str, app: str, namespace: str = "default") -> dict:
    """BuildTestPDB: selects app=<app>."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1}}


def build_pvc(name: str, storage_class: str, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"]}}


def build_priority_class(name: str, value: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


# --- upstream test_utils.go helpers used by the node-utilization tests ---

def set_node_extended_resource(node: dict, resource: str, quantity: int) -> None:
    node["status"]["capacity"][resource] = str(quantity)
    node["status"]["allocatable"][resource] = str(quantity)


def set_pod_extended_request(pod: dict, resource: str, quantity: int) -> None:
    pod["spec"]["containers"][0]["resources"].setdefault("requests", {})[resource] = str(quantity)


def set_node_selector(pod: dict, **selector: str) -> None:
    pod["spec"]["nodeSelector"] = dict(selector)


def set_required_node_affinity(pod: dict, key: str, operator: str, values: list[str]) -> None:
    term = {"matchExpressions": [{"key": key, "operator": operator, "values": list(values)}]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }


def node_classes(plan: dict, plugin_key: str) -> dict[str, str]:
    """node name → the class the plugin recorded (profile/plugin key, e.g. "test/LowNodeUtilization")."""
    return {n["name"]: n["classes"][plugin_key] for n in plan["utilization"]["nodes"] if plugin_key in n["classes"]}


# --- shapes for the topology spread, duplicates and anti-affinity ports ---

def set_rs_owner_named(pod: dict, name: str = "replicaset-1") -> None:
    """GetReplicaSetOwnerRefList: kind ReplicaSet with a name and no UID (RemoveDuplicates keys on kind/name)."""
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": name, "uid": ""}]


def set_pod_anti_affinity(pod: dict, key: str, value: str, topology_key: str = "region") -> None:
    """SetPodAntiAffinity: one required term selecting <key> In [<value>] over <topology_key>."""
    term = {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
            "topologyKey": topology_key}
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
