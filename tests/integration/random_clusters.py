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
    nodes, pods, replica_sets = cluster
    kube.load(nodes)
    kube.load(pods)
    kube.load(replica_sets)
    wait_until_adopted(api_client, {pod_key(p): "ReplicaSet" for p in pods}, timeout)


def pod_key(pod: Obj) -> tuple[str, str]:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]


def wait_until_adopted(api_client: Any, owners: dict[tuple[str, str], str | None], timeout: float) -> None:
    """Wait until the namespaces of `owners` ((namespace, name) -> the kind of the pod's controller, None for a bare
    pod) hold exactly those pods, each owned as named: a controller that adopted none, or made pods of its own,
    would change the cluster that the plan and the descheduler see."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    namespaces = sorted({namespace for namespace, _name in owners})
    deadline = time.monotonic() + timeout
    while True:
        listed = {(p.metadata.namespace, p.metadata.name):
                  p.metadata.owner_references[0].kind if p.metadata.owner_references else None
                  for namespace in namespaces for p in core.list_namespaced_pod(namespace).items}
        if listed == owners:
            return
        if time.monotonic() > deadline:
            wrong = sorted(key for key in owners.keys() & listed.keys() if owners[key] != listed[key])
            raise AssertionError(f"pods not as generated after {timeout:g}s: missing {sorted(owners.keys() - listed)}, "
                                 f"unexpected {sorted(listed.keys() - owners)}, not (yet) owned as expected {wrong}")
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


# ---- rich clusters and policies: more of what the descheduler reads -------------------------------------------------
# Two namespaces with labels, cordoned and NotReady nodes, PreferNoSchedule taints, bare Running and Failed pods,
# priorities, PVC volumes, PDBs, init containers, CrashLoopBackOff, start times, the evict and prefer-no-eviction
# annotations, DaemonSet and StatefulSet pods; policies with one or two profiles, podProtections or the legacy
# DefaultEvictor bools, and the plugins' namespace, label and state arguments (test_upstream_agreement's rich seeds).

SOFT_TAINT = {"key": "soft", "value": "yes", "effect": "PreferNoSchedule"}
EVICT = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
NOW_MINUS = {"fresh": 60, "hour": 2 * 3600, "day": 86400}


def _rich_node(rng: random.Random, name: str) -> Obj:
    labels = {"kubernetes.io/hostname": name, ZONE: rng.choice(["zone-a", "zone-b", "zone-c"]),
              "disk": rng.choice(["ssd", "hdd"])}
    spec: Obj = {}
    taints = []
    if rng.random() < 0.2:
        taints.append(dict(TAINT))
    if rng.random() < 0.2:
        taints.append(dict(SOFT_TAINT))
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    ready = "False" if rng.random() < 0.1 else "True"
    cpu, memory = rng.choice([(2, 4), (4, 8), (8, 16)])
    capacity = {"cpu": str(cpu), "memory": f"{memory}Gi", "pods": str(rng.choice([10, 30]))}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"capacity": capacity, "allocatable": capacity,
                       "conditions": [{"type": "Ready", "status": ready}]}}


def _rich_template(rng: random.Random, app: str, priority_class: str) -> Obj:
    template = random_template(rng, app)
    spec, labels = template["spec"], template["metadata"]["labels"]
    labels["tier"] = rng.choice(["web", "batch"])
    feature = rng.random()
    if feature < 0.15:
        hdd = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]}
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": hdd}]}}
    elif feature < 0.3:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": rng.choice([ZONE, "kubernetes.io/hostname"]),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": app}}}]
    elif feature < 0.4:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": ZONE}]}}
    if rng.random() < 0.2:
        spec.setdefault("tolerations", []).append({"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"})
    if rng.random() < 0.25:
        spec["initContainers"] = [{"name": "init", "image": "registry.example/init:1",
                                   "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]
    if rng.random() < 0.15:
        spec.setdefault("volumes", []).append({"name": "data", "persistentVolumeClaim": {"claimName": f"{app}-data"}})
    draw = rng.random()
    if draw < 0.1:
        spec["priorityClassName"] = "system-cluster-critical"
    elif draw < 0.35:
        spec["priorityClassName"] = priority_class
    annotations = {}
    if rng.random() < 0.08:
        annotations[EVICT] = "true"
    if rng.random() < 0.08:
        annotations[PREFER_NO_EVICTION] = "true"
    if annotations:
        template["metadata"]["annotations"] = annotations
    return template


def _timestamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _rich_status(rng: random.Random, spec: Obj, now: float) -> Obj:
    status = running_status(rng)
    age = NOW_MINUS[rng.choice(sorted(NOW_MINUS))]
    status["startTime"] = _timestamp(now - age)
    container = status["containerStatuses"][0]
    if container["restartCount"] >= 5 and rng.random() < 0.5:
        container["ready"] = False
        container["started"] = False
        container["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
        status["conditions"] = [{"type": "Ready", "status": "False"}]
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [{
            "name": "init", "ready": True, "restartCount": rng.choice([0, 2, 15]), "image": "init", "imageID": "",
            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
    return status


def _failed_bare_pod(rng: random.Random, name: str, namespace: str, node: str, now: float) -> Obj:
    reason = rng.choice(["Error", "OOMKilled"])
    status: Obj = {"phase": "Failed", "startTime": _timestamp(now - 7200),
                   "containerStatuses": [{"name": "app", "ready": False, "restartCount": 0, "image": "app",
                                          "imageID": "", "state": {"terminated": {
                                              "exitCode": 137 if reason == "OOMKilled" else 1, "reason": reason}}}]}
    if rng.random() < 0.3:
        status["reason"] = "Evicted"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bare", "tier": "batch"}},
            "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [
                {"name": "app", "image": "registry.example/bare:1",
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
            "status": status}


def rich_cluster(seed: int, namespace: str) -> dict[str, list[Obj]]:
    """The objects of one rich random cluster, by what load_rich_cluster creates in turn."""
    rng = random.Random(seed)
    now = time.time()
    other = f"{namespace}-b"
    priority_class = f"{namespace}-high"
    nodes = [_rich_node(rng, f"{namespace}-node-{index}") for index in range(rng.randint(3, 7))]
    names = [n["metadata"]["name"] for n in nodes]
    pods: list[Obj] = []
    replica_sets: list[Obj] = []
    budgets: list[Obj] = []
    for index in range(rng.randint(4, 9)):
        app = f"app-{index}"
        app_namespace = rng.choice([namespace, namespace, other])
        template = _rich_template(rng, app, priority_class)
        replicas = rng.randint(1, 6)
        for replica in range(replicas):
            pods.append(_template_pod(rng, template, f"{app}-{replica}", app_namespace, rng.choice(names), now))
        replica_sets.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                             "metadata": {"name": app, "namespace": app_namespace, "labels": {"app": app}},
                             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                                      "template": template}})
        if rng.random() < 0.3:
            budgets.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                            "metadata": {"name": app, "namespace": app_namespace},
                            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}}})
    controllers: list[Obj] = []
    if rng.random() < 0.5:
        controllers.append(_daemon_set(rng, namespace, names, now, pods))
    if rng.random() < 0.5:
        controllers.append(_stateful_set(rng, rng.choice([namespace, other]), priority_class, names, now, pods))
    bare = []
    for index in range(rng.randint(1, 3)):
        if rng.random() < 0.6:
            bare.append(_failed_bare_pod(rng, f"failed-{index}", rng.choice([namespace, other]), rng.choice(names),
                                         now))
        else:
            spec = {"nodeName": rng.choice(names), "containers": [
                {"name": "app", "image": "registry.example/bare:1",
                 "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]}
            bare.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"bare-{index}", "namespace": namespace, "labels": {"app": "bare"},
                                      **({"annotations": {EVICT: "true"}} if rng.random() < 0.5 else {})},
                         "spec": spec, "status": _rich_status(rng, spec, now)})
    return {
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other, "labels": {"team": "b"}}}],
        "priority_classes": [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": priority_class}, "value": 1000}],
        "nodes": nodes, "pods": pods + bare, "budgets": budgets, "replica_sets": replica_sets,
        "controllers": controllers,
    }


def _template_pod(rng: random.Random, template: Obj, name: str, namespace: str, node: str, now: float,
                  identity: Obj | None = None, labels: Obj | None = None) -> Obj:
    """A Running pod of a workload's template, bound to `node`, with the template's labels (plus `labels`) and
    annotations and `identity` added to its spec."""
    spec = {**template["spec"], "nodeName": node, **(identity or {})}
    metadata: Obj = {"name": name, "namespace": namespace,
                     "labels": {**template["metadata"]["labels"], **(labels or {})}}
    if template["metadata"].get("annotations"):
        metadata["annotations"] = dict(template["metadata"]["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec,
            "status": _rich_status(rng, spec, now)}


def _daemon_set(rng: random.Random, namespace: str, nodes: list[str], now: float, pods: list[Obj]) -> Obj:
    """A node agent: one Running pod on every node (it tolerates every taint, as agents do), then its DaemonSet,
    which adopts them and, with a pod on each node it would run on, creates none. OnDelete: it never replaces
    them. The default evictor never evicts its pods; the utilization plugins count their requests."""
    template = {"metadata": {"labels": {"app": "agent", "tier": "web"}},
                "spec": {"tolerations": [{"operator": "Exists"}], "containers": [
                    {"name": "app", "image": "registry.example/agent:1",
                     "resources": {"requests": {"cpu": rng.choice(["50m", "100m", "300m"]), "memory": "64Mi"}}}]}}
    for index, node in enumerate(nodes):
        pods.append(_template_pod(rng, template, f"agent-{index}", namespace, node, now))
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": "OnDelete"},
                     "template": template}}


def _stateful_set(rng: random.Random, namespace: str, priority_class: str, nodes: list[str], now: float,
                  pods: list[Obj]) -> Obj:
    """Pods db-0..db-N-1 with the identity a StatefulSet controller gives them (hostname, subdomain, pod-name
    and pod-index labels: it would otherwise try to rewrite them), then the StatefulSet, which adopts them and,
    with every ordinal present, creates none. Parallel and OnDelete: it never waits on or replaces them."""
    template = _rich_template(rng, "db", priority_class)
    replicas = rng.randint(1, 3)
    for ordinal in range(replicas):
        name = f"db-{ordinal}"
        pods.append(_template_pod(rng, template, name, namespace, rng.choice(nodes), now,
                                  identity={"hostname": name, "subdomain": "db"},
                                  labels={"statefulset.kubernetes.io/pod-name": name,
                                          "apps.kubernetes.io/pod-index": str(ordinal)}))
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": namespace},
            "spec": {"serviceName": "db", "replicas": replicas, "podManagementPolicy": "Parallel",
                     "updateStrategy": {"type": "OnDelete"}, "selector": {"matchLabels": {"app": "db"}},
                     "template": template}}


def load_rich_cluster(kube: Any, api_client: Any, cluster: dict[str, list[Obj]], namespace: str,
                      timeout: float = 60.0) -> None:
    """Label the test's namespace (team=a), create the objects, and wait until the namespaces hold exactly the
    generated pods, each but the bare ones owned by its ReplicaSet, DaemonSet or StatefulSet (Failed pods are all
    bare: controllers do not adopt them)."""
    kube.patch("Namespace", None, namespace, {"metadata": {"labels": {"team": "a"}}})
    for group in ("namespaces", "priority_classes", "nodes", "pods", "budgets", "replica_sets", "controllers"):
        kube.load(cluster[group])
    owner_kinds = {"bare": None, "agent": "DaemonSet", "db": "StatefulSet"}
    wait_until_adopted(api_client, {pod_key(p): owner_kinds.get(p["metadata"]["labels"]["app"], "ReplicaSet")
                                    for p in cluster["pods"]}, timeout)


def _scope(rng: random.Random, namespace: str, args: Obj, labels: bool = True) -> Obj:
    """Maybe a namespaces include/exclude and a labelSelector on a plugin's args."""
    draw = rng.random()
    if draw < 0.15:
        args["namespaces"] = {"include": [namespace]}
    elif draw < 0.3:
        args["namespaces"] = {"exclude": [f"{namespace}-b"]}
    if labels and rng.random() < 0.2:
        args["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}
    return args


def _rich_plugin_args(rng: random.Random, name: str, namespace: str) -> Obj:
    if name == "LowNodeUtilization":
        args = _low_and_target(rng)
        if rng.random() < 0.3:
            args["useDeviationThresholds"] = True
            args["thresholds"] = {k: rng.choice([5, 10, 20]) for k in args["thresholds"]}
            args["targetThresholds"] = {k: rng.choice([5, 10, 20]) for k in args["thresholds"]}
        if rng.random() < 0.2:
            args["numberOfNodes"] = rng.choice([1, 2])
        if rng.random() < 0.2:
            args["evictableNamespaces"] = {"exclude": [f"{namespace}-b"]}
        return args
    if name == "HighNodeUtilization":
        args = {"thresholds": _thresholds(rng, low=False)}
        if rng.random() < 0.2:
            args["evictableNamespaces"] = {"exclude": [f"{namespace}-b"]}
        return args
    if name == "RemoveDuplicates":
        return _scope(rng, namespace, {"excludeOwnerKinds": ["ReplicaSet"]} if rng.random() < 0.15 else {},
                      labels=False)
    if name == "RemovePodsViolatingTopologySpreadConstraint":
        args = _scope(rng, namespace, {})
        if rng.random() < 0.5:
            args["constraints"] = rng.choice([["DoNotSchedule"], ["ScheduleAnyway"],
                                              ["DoNotSchedule", "ScheduleAnyway"]])
        if rng.random() < 0.3:
            args["topologyBalanceNodeFit"] = False
        return args
    if name == "RemovePodsViolatingNodeAffinity":
        kinds = rng.choice([["requiredDuringSchedulingIgnoredDuringExecution"],
                            ["preferredDuringSchedulingIgnoredDuringExecution"],
                            ["requiredDuringSchedulingIgnoredDuringExecution",
                             "preferredDuringSchedulingIgnoredDuringExecution"]])
        return _scope(rng, namespace, {"nodeAffinityType": kinds})
    if name == "RemovePodsViolatingNodeTaints":
        args = _scope(rng, namespace, {})
        if rng.random() < 0.4:
            args["includePreferNoSchedule"] = True
        draw = rng.random()
        if draw < 0.2:
            args["excludedTaints"] = [rng.choice(["dedicated", "soft=yes", "dedicated=other"])]
        elif draw < 0.35:
            args["includedTaints"] = [rng.choice(["dedicated=infra", "soft"])]
        return args
    if name == "RemovePodsViolatingInterPodAntiAffinity":
        return _scope(rng, namespace, {})
    if name == "RemovePodsHavingTooManyRestarts":
        args = _scope(rng, namespace, {"podRestartThreshold": rng.choice([3, 10, 20])})
        if rng.random() < 0.3:
            args["includingInitContainers"] = True
        if rng.random() < 0.3:
            args["states"] = [rng.choice(["Running", "CrashLoopBackOff"])]
        return args
    if name == "PodLifeTime":
        args = _scope(rng, namespace, {})
        draw = rng.random()
        if draw < 0.5:
            args["maxPodLifeTimeSeconds"] = rng.choice([1, 3600])
        if draw >= 0.3:
            args["states"] = rng.sample(["Running", "CrashLoopBackOff", "Failed", "OOMKilled"], rng.randint(1, 2))
        return args
    if name == "RemoveFailedPods":
        args = _scope(rng, namespace, {"minPodLifetimeSeconds": rng.choice([0, 3600])})
        if rng.random() < 0.3:
            args["reasons"] = [rng.choice(["Error", "OOMKilled", "Evicted"])]
        if rng.random() < 0.2:
            args["exitCodes"] = [rng.choice([1, 137])]
        return args
    raise ValueError(name)


def _rich_evictor_args(rng: random.Random) -> Obj:
    args: Obj = {"nodeFit": rng.random() < 0.4}
    if rng.random() < 0.3:  # podProtections: the deprecated bools must then stay unset
        protections: Obj = {}
        disabled = [p for p in ("PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods")
                    if rng.random() < 0.5]
        enabled = [p for p in ("PodsWithPVC", "PodsWithoutPDB") if rng.random() < 0.2]
        if disabled:
            protections["defaultDisabled"] = disabled
        if enabled:
            protections["extraEnabled"] = enabled
        if protections:
            args["podProtections"] = protections
    else:
        for flag, chance in (("evictLocalStoragePods", 0.4), ("evictSystemCriticalPods", 0.3), ("ignorePvcPods", 0.15),
                             ("evictFailedBarePods", 0.5), ("ignorePodsWithoutPDB", 0.1),
                             ("evictDaemonSetPods", 0.3)):
            if rng.random() < chance:
                args[flag] = True
    for key, chance, draw in (
            ("priorityThreshold", 0.12, lambda: {"value": rng.choice([500, 1000, 5000])}),
            ("labelSelector", 0.1, lambda: {"matchLabels": {"tier": rng.choice(["web", "batch"])}}),
            ("namespaceLabelSelector", 0.1, lambda: {"matchLabels": {"team": rng.choice(["a", "b"])}}),
            ("minPodAge", 0.12, lambda: rng.choice(["30m", "12h"])),
            ("minReplicas", 0.12, lambda: rng.choice([2, 3])),
            ("noEvictionPolicy", 0.12, lambda: rng.choice(["Preferred", "Mandatory"]))):
        if rng.random() < chance:
            args[key] = draw()
    return args


RICH_PLUGINS = sorted([*PLUGINS, "RemoveFailedPods"])


def rich_policy(seed: int, namespace: str) -> Obj:
    """A DeschedulerPolicy of one or two profiles over the rich cluster's features."""
    rng = random.Random(seed * 104729 + 3)
    profiles = []
    for number in range(rng.choice([1, 1, 2])):
        names = rng.sample(RICH_PLUGINS, rng.randint(1, 3))
        if "HighNodeUtilization" in names and "LowNodeUtilization" in names:
            names.remove("HighNodeUtilization")
        plugins: Obj = {"filter": {"enabled": ["DefaultEvictor"]}, "preEvictionFilter": {"enabled": ["DefaultEvictor"]}}
        config: list[Obj] = [{"name": "DefaultEvictor", "args": _rich_evictor_args(rng)}]
        for name in names:
            point = "deschedule" if name == "RemoveFailedPods" else PLUGINS[name][0]
            plugins.setdefault(point, {"enabled": []})["enabled"].append(name)
            config.append({"name": name, "args": _rich_plugin_args(rng, name, namespace)})
        profiles.append({"name": f"profile-{number}", "pluginConfig": config, "plugins": plugins})
    policy: Obj = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": profiles}
    for key, chance, values in (("maxNoOfPodsToEvictPerNode", 0.3, (1, 2, 3)),
                                ("maxNoOfPodsToEvictPerNamespace", 0.2, (1, 2, 4)),
                                ("maxNoOfPodsToEvictTotal", 0.2, (1, 3, 6))):
        if rng.random() < chance:
            policy[key] = rng.choice(values)
    if rng.random() < 0.15:
        policy["nodeSelector"] = rng.choice(["disk=ssd", "disk in (ssd,hdd)"])
    return policy
