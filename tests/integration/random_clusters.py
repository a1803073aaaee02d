"""Random clusters and DeschedulerPolicies for comparing plans with the real descheduler (test_upstream_agreement).

`random_cluster(seed, namespace)` gives nodes, ReplicaSets and their running pods as API objects. Pods are placed
at random, ignoring their constraints, so that every plugin finds work: nodes over and under the thresholds,
duplicates, pods on tainted nodes or on nodes their required node affinity no longer matches, anti-affinity and
topology-spread violations, restarting containers, local storage. `random_policy(seed)` draws a DeschedulerPolicy
(v1alpha2) over the plugins those objects exercise, with random thresholds, eviction limits and DefaultEvictor
arguments.

Loading order matters on a real control plane: the pods are created first, bound and with their status, and
each ReplicaSet after its pods with `replicas` equal to their count, so its controller adopts them and creates
none (`load_cluster`).
"""

from __future__ import annotations

import random
import time
from typing import Any

Obj = dict[str, Any]
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
ZONE = "topology.kubernetes.io/zone"


def random_nodes(rng: random.Random, prefix: str) -> list[Obj]:
    nodes = []
    for index in range(rng.randint(3, 6)):
        name = f"{prefix}-node-{index}"
        labels = {"kubernetes.io/hostname": name, ZONE: rng.choice(["zone-a", "zone-b"]),
                  "disk": rng.choice(["ssd", "hdd"])}
        spec: Obj = {"taints": [dict(TAINT)]} if rng.random() < 0.2 else {}
        cpu, memory = rng.choice([(2, 4), (4, 8), (8, 16)])
        capacity = {"cpu": str(cpu), "memory": f"{memory}Gi", "pods": "30"}
        nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                      "spec": spec,
                      "status": {"capacity": capacity, "allocatable": capacity,
                                 "conditions": [{"type": "Ready", "status": "True"}]}})
    return nodes


def random_template(rng: random.Random, app: str) -> Obj:
    cpu, memory = rng.choice([100, 200, 250, 500, 750, 1000]), rng.choice([128, 256, 512, 1024])
    spec: Obj = {"containers": [{"name": "app", "image": f"registry.example/{app}:1",
                                 "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}}}]}
    feature = rng.random()
    if feature < 0.15:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}
    elif feature < 0.3:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif feature < 0.45:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    if rng.random() < 0.15:  # local storage: the default evictor keeps such pods unless evictLocalStoragePods
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def running_status(rng: random.Random) -> Obj:
    restarts = rng.choice([0, 0, 0, 1, 5, 12, 30])
    return {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "ready": True, "restartCount": restarts, "image": "app",
                                   "imageID": "", "started": True, "state": {"running": {}}}]}


def random_cluster(seed: int, namespace: str) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """(nodes, pods, replica sets) of one random cluster."""
    rng = random.Random(seed)
    nodes = random_nodes(rng, namespace)
    pods, replica_sets = [], []
    for index in range(rng.randint(3, 7)):
        app = f"app-{index}"
        template = random_template(rng, app)
        replicas = rng.randint(1, 6)
        for replica in range(replicas):
            node = rng.choice(nodes)["metadata"]["name"]
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"{app}-{replica}", "namespace": namespace,
                                      "labels": dict(template["metadata"]["labels"])},
                         "spec": {**template["spec"], "nodeName": node},
                         "status": running_status(rng)})
        replica_sets.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                             "metadata": {"name": app, "namespace": namespace, "labels": {"app": app}},
                             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                                      "template": template}})
    return nodes, pods, replica_sets


def load_cluster(kube: Any, api_client: Any, cluster: tuple[list[Obj], list[Obj], list[Obj]],
                 timeout: float = 60.0) -> None:
    """Create the objects, then wait until every pod is owned by its ReplicaSet (the descheduler's default
    evictor never evicts a pod without an owner)."""
    from kubernetes import client

    nodes, pods, replica_sets = cluster
    kube.load(nodes)
    kube.load(pods)
    kube.load(replica_sets)
    namespace = pods[0]["metadata"]["namespace"]
    core = client.CoreV1Api(api_client)
    deadline = time.monotonic() + timeout
    while True:
        listed = core.list_namespaced_pod(namespace).items
        owned = [p for p in listed if p.metadata.owner_references]
        if len(listed) == len(pods) and len(owned) == len(pods):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(owned)} of {len(pods)} pods adopted ({len(listed)} pods in {namespace})")
        time.sleep(0.3)


def _thresholds(rng: random.Random, low: bool) -> Obj:
    values = {"cpu": rng.choice([10, 20, 30, 40]), "memory": rng.choice([10, 20, 30, 40]),
              "pods": rng.choice([5, 10, 20])}
    if not low:
        values = {key: value + rng.choice([20, 30, 40]) for key, value in values.items()}
    keys = rng.sample(sorted(values), rng.randint(1, 3))
    return {key: values[key] for key in sorted(keys)}


def _low_and_target(rng: random.Random) -> Obj:
    low = _thresholds(rng, low=True)
    target = {key: value + rng.choice([20, 30, 40]) for key, value in low.items()}
    return {"thresholds": low, "targetThresholds": target}


PLUGINS: dict[str, tuple[str, Any]] = {
    # name: (extension point, args factory)
    "LowNodeUtilization": ("balance", _low_and_target),
    "HighNodeUtilization": ("balance", lambda rng: {"thresholds": _thresholds(rng, low=False)}),
    "RemoveDuplicates": ("balance", lambda rng: {}),
    "RemovePodsViolatingTopologySpreadConstraint": ("balance", lambda rng: {}),
    "RemovePodsViolatingNodeAffinity": ("deschedule", lambda rng: {
        "nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}),
    "RemovePodsViolatingNodeTaints": ("deschedule", lambda rng: {}),
    "RemovePodsViolatingInterPodAntiAffinity": ("deschedule", lambda rng: {}),
    "RemovePodsHavingTooManyRestarts": ("deschedule", lambda rng: {"podRestartThreshold": rng.choice([3, 10, 20])}),
    # the pods are seconds old when both run: 1 s evicts every one, an hour none
    "PodLifeTime": ("deschedule", lambda rng: {"maxPodLifeTimeSeconds": rng.choice([1, 3600])}),
}


def random_policy(seed: int) -> Obj:
    rng = random.Random(seed * 7919 + 1)
    names = rng.sample(sorted(PLUGINS), rng.randint(1, 3))
    if "HighNodeUtilization" in names and "LowNodeUtilization" in names:
        names.remove("HighNodeUtilization")  # upstream refuses both in one profile's balance
    evictor_args: Obj = {"nodeFit": rng.random() < 0.5}
    if rng.random() < 0.3:
        evictor_args["evictLocalStoragePods"] = True
    if rng.random() < 0.3:
        evictor_args["minReplicas"] = rng.choice([2, 3])
    plugins: Obj = {"filter": {"enabled": ["DefaultEvictor"]}, "preEvictionFilter": {"enabled": ["DefaultEvictor"]}}
    config: list[Obj] = [{"name": "DefaultEvictor", "args": evictor_args}]
    for name in names:
        point, args = PLUGINS[name]
        plugins.setdefault(point, {"enabled": []})["enabled"].append(name)
        config.append({"name": name, "args": args(rng)})
    policy: Obj = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                   "profiles": [{"name": "random", "pluginConfig": config, "plugins": plugins}]}
    if rng.random() < 0.4:
        policy["maxNoOfPodsToEvictPerNode"] = rng.randint(1, 3)
    if rng.random() < 0.3:
        policy["maxNoOfPodsToEvictTotal"] = rng.randint(1, 5)
    return policy
