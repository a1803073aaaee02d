"""The placement preview against a real kube-scheduler (v1.36.3, built by tests/controlplane): random clusters of
nodes and bound pods on the real API server, one pending pod, and the node the real scheduler binds it to must be one
of the preview's tied best nodes - for several seeds, with the default profile and with MostAllocated (binpack), half
of the pending pods with a claim bound (by the real kube-controller-manager) to a volume pinned to a node or a zone.

Runs on the suite's own control plane (the default backend); the test starts its own kube-scheduler with a
KubeSchedulerConfiguration holding both profiles, and tells the kubelet stand-in to leave its pods alone.
"""

from __future__ import annotations

import copy
import os
import random
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

SCHEDULER_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [
        {"schedulerName": "preview-default"},
        {"schedulerName": "preview-binpack", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]},
    ],
}
SEEDS = (1, 2, 3, 4, 5)
ZONES = ("zone-a", "zone-b", "zone-c")
# images some nodes report holding (status.images) and the pending pod may run: ImageLocality
IMAGES = (("registry.local/preview/app", 900), ("registry.local/preview/web", 300), ("registry.local/preview/tiny", 10))
MIB = 1024 * 1024
BIND_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def plane(request: pytest.FixtureRequest) -> Any:
    if os.environ.get("TEST_KUBECONFIG"):
        pytest.skip("compares with a real kube-scheduler: needs the suite's own control plane (tests/controlplane), "
                    "not TEST_KUBECONFIG")
    return request.getfixturevalue("control_plane")


@pytest.fixture
def api_client(plane: Any) -> Any:
    from kubernetes import config

    client = config.new_client_from_config(str(plane.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def namespace(api_client: Any) -> Any:
    from kubernetes import client

    name = f"preview-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api_client)
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # pods need the namespace's default ServiceAccount
        if core.list_namespaced_service_account(name).items:
            break
        time.sleep(0.2)
    try:
        yield name
    finally:
        core.delete_namespace(name)


@pytest.fixture(scope="module")
def scheduler(plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Our own kube-scheduler process running both profiles."""
    from controlplane import free_port

    workdir = tmp_path_factory.mktemp("preview-scheduler")
    kubeconfig = Path(plane.workdir) / "kube-scheduler.kubeconfig"
    config = dict(SCHEDULER_CONFIG, clientConnection={"kubeconfig": str(kubeconfig)})
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    log = (workdir / "kube-scheduler.log").open("ab")
    process = subprocess.Popen(
        [str(Path(plane.binaries) / "kube-scheduler"), f"--config={workdir / 'config.yaml'}",
         "--bind-address=127.0.0.1", f"--secure-port={free_port()}", f"--authentication-kubeconfig={kubeconfig}",
         f"--authorization-kubeconfig={kubeconfig}", "--v=2"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def random_cluster(rng: random.Random, prefix: str, namespace: str) -> tuple[list[dict], list[dict]]:
    nodes, pods = [], []
    for index in range(rng.randint(4, 9)):
        name = f"{prefix}-n{index}"
        capacity = {"cpu": str(rng.choice((2, 4, 8))), "memory": f"{rng.choice((4, 8, 16))}Gi", "pods": "110"}
        taints = []
        if rng.random() < 0.25:
            taints.append({"key": "preview/soft", "value": "x", "effect": "PreferNoSchedule"})
        if rng.random() < 0.15:
            taints.append({"key": "preview/hard", "value": "x", "effect": "NoSchedule"})
        held = rng.sample(IMAGES, rng.randint(0, len(IMAGES)))
        nodes.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "preview": prefix,
                                                            "topology.kubernetes.io/zone": rng.choice(ZONES)}},
                      "spec": {"taints": taints},
                      "status": {"capacity": capacity, "allocatable": capacity,
                                 "conditions": [{"type": "Ready", "status": "True"}],
                                 "images": [{"names": [f"{image}:latest", f"{image}:v1"], "sizeBytes": size * MIB}
                                            for image, size in held]}})
        for number in range(rng.randint(0, 5)):
            pods.append(_pod(f"{name}-p{number}", namespace, _requests(rng), rng.choice(("web", "db", "batch")),
                             node_name=name))
    return nodes, pods


def _requests(rng: random.Random) -> dict:
    requests = {}
    if rng.random() < 0.9:
        requests["cpu"] = f"{rng.choice((100, 250, 500, 750, 1000, 1500))}m"
    if rng.random() < 0.9:
        requests["memory"] = f"{rng.choice((128, 256, 512, 1024, 2048))}Mi"
    return requests


def _pod(name: str, namespace: str, requests: dict, app: str, node_name: str = "", spec: dict | None = None) -> dict:
    body = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}],
            "tolerations": [{"key": "preview/hard", "operator": "Exists", "effect": "NoExecute"}]}
    if node_name:
        body["nodeName"] = node_name
    body.update(spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                            "labels": {"app": app}}, "spec": body}


def pending_pod(rng: random.Random, namespace: str, scheduler_name: str, prefix: str) -> dict:
    # only this test's nodes: the control plane may hold other tests' nodes meanwhile
    spec: dict[str, Any] = {"schedulerName": scheduler_name, "nodeSelector": {"preview": prefix}}
    if rng.random() < 0.4:
        spec["tolerations"] = [{"key": "preview/hard", "operator": "Exists"}]
    affinity: dict[str, Any] = {}
    if rng.random() < 0.4:
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]}]}}]}
    if rng.random() < 0.4:
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = [{"maxSkew": rng.randint(1, 3), "whenUnsatisfiable": "ScheduleAnyway",
                                              "topologyKey": "topology.kubernetes.io/zone",
                                              "labelSelector": {"matchLabels": {"app": "web"}}}]
    pending = _pod("pending", namespace, _requests(rng), "web", spec=spec)
    if rng.random() < 0.7:
        pending["spec"]["containers"][0]["image"] = rng.choice(IMAGES)[0] + rng.choice(("", ":v1"))
    return pending


def volume_objects(rng: random.Random, nodes: list[dict], namespace: str, prefix: str) -> list[dict]:
    """A claim bound to a volume that pins the pod: a local volume with node affinity to one node, or a volume
    labelled with one zone (VolumeZone), or none (half the cases)."""
    choice = rng.choice(("none", "none", "node", "zone"))
    if choice == "none":
        return []
    name = f"{prefix}-data"
    volume: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume",
                              "metadata": {"name": name, "labels": {}},
                              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                       "storageClassName": "", "persistentVolumeReclaimPolicy": "Retain",
                                       "claimRef": {"namespace": namespace, "name": "data"}}}
    if choice == "node":
        target = rng.choice(nodes)["metadata"]["name"]
        volume["spec"]["local"] = {"path": "/mnt/data"}
        volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [target]}]}]}}
    else:
        volume["spec"]["hostPath"] = {"path": "/mnt/data"}
        volume["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": namespace},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": name,
                      "resources": {"requests": {"storage": "1Gi"}}}}
    return [volume, claim]


def _bound_claims(api_client: Any, plane: Any, volumes: list[dict]) -> list[dict]:
    """Create the volume and claim and wait until kube-controller-manager has bound them; the objects as read."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    if not volumes:
        return []
    volume, claim = volumes
    core.create_persistent_volume(volume)
    namespace = claim["metadata"]["namespace"]
    core.create_namespaced_persistent_volume_claim(namespace, claim)
    deadline = time.monotonic() + BIND_TIMEOUT
    while time.monotonic() < deadline:
        read = core.read_namespaced_persistent_volume_claim("data", namespace)
        if read.status.phase == "Bound":
            bound_volume = core.read_persistent_volume(volume["metadata"]["name"])
            return [{**api_client.sanitize_for_serialization(read), "kind": "PersistentVolumeClaim"},
                    {**api_client.sanitize_for_serialization(bound_volume), "kind": "PersistentVolume"}]
        time.sleep(0.2)
    raise AssertionError(f"kube-controller-manager did not bind claim {namespace}/data within {BIND_TIMEOUT} s")


def _create(api_client: Any, plane: Any, objects: list[dict]) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    for obj in objects:
        if obj["kind"] == "Node":
            core.create_node(obj)
        else:
            plane.kubelet.hands_off(obj["metadata"]["namespace"], obj["metadata"]["name"])
            core.create_namespaced_pod(obj["metadata"]["namespace"], obj)


def _bound_node(api_client: Any, namespace: str, name: str) -> str:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    deadline = time.monotonic() + BIND_TIMEOUT
    while time.monotonic() < deadline:
        pod = core.read_namespaced_pod(name, namespace)
        if pod.spec.node_name:
            return pod.spec.node_name
        time.sleep(0.2)
    raise AssertionError(f"the real kube-scheduler did not bind {namespace}/{name} within {BIND_TIMEOUT} s")


def _let_the_scheduler_catch_up(api_client: Any, plane: Any, namespace: str, prefix: str, scheduler_name: str,
                                nodes: list[dict]) -> None:
    """Return once kube-scheduler has seen every node and pod created so far (and the deletions of earlier tests'
    nodes): a node created after them and a pod only that node takes. Each of the scheduler's informers receives
    one resource's events in the order the API server wrote them, so once it bound that pod, its node informer
    has had every earlier node event and its pod informer every earlier pod. The sentinel node has none of the
    labels the test's pods select or spread over, and is appended to `nodes` for the test's cleanup."""
    from kubernetes import client

    name = f"{prefix}-sentinel"
    capacity = {"cpu": "1", "memory": "1Gi", "pods": "10"}
    sentinel = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"sentinel": prefix}},
                "status": {"capacity": capacity, "allocatable": capacity,
                           "conditions": [{"type": "Ready", "status": "True"}]}}
    client.CoreV1Api(api_client).create_node(sentinel)
    nodes.append(sentinel)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sentinel", "namespace": namespace},
           "spec": {"schedulerName": scheduler_name, "nodeSelector": {"sentinel": prefix},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "c", "image": "registry.local/preview/sentinel:v1"}]}}
    _create(api_client, plane, [pod])
    _bound_node(api_client, namespace, "sentinel")


def _preview(api_client: Any, prefix: str, namespace: str, pending: dict, storage: list[dict]) -> Any:
    """Our placement of the pending pod on what the API server holds for this test's nodes and pods."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
        StaticCache,
        load_profiles,
        schedule,
    )
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.imagelocality import (
        ImageStates,
    )
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
        ExtrasIndex,
        SchedPod,
        extract_extras,
    )
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.storage import Storage
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    # every node, as the scheduler's snapshot: ImageLocality weighs an image by the share of all nodes holding it
    # (the pending pod's nodeSelector keeps it on this test's nodes, whose pods are all in this namespace)
    nodes = api_client.sanitize_for_serialization(core.list_node())["items"]
    pods = api_client.sanitize_for_serialization(core.list_namespaced_pod(namespace))["items"]
    cluster = Cluster([Node(n) for n in nodes], {})
    for obj in pods:
        if obj["spec"].get("nodeName") and obj["metadata"]["name"] != "pending":
            cluster.bind(SchedPod(Pod(obj), extract_extras(obj)), obj["spec"]["nodeName"])
    cluster.storage = Storage.from_objects(storage) if storage else None
    extras = ExtrasIndex.from_objects([{**n, "kind": "Node"} for n in nodes])
    cluster.images = ImageStates.from_nodes(cluster.nodes, extras.node_images)
    profile = load_profiles(SCHEDULER_CONFIG)[pending["spec"]["schedulerName"]]
    return schedule(profile, SchedPod(Pod(pending), extract_extras(pending)), cluster, StaticCache())


def _scheduling_outcome(api_client: Any, namespace: str, name: str) -> Any:
    """The pod once kube-scheduler decided: bound, or marked PodScheduled=False (Unschedulable) after a failed
    attempt."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    deadline = time.monotonic() + BIND_TIMEOUT
    while time.monotonic() < deadline:
        pod = core.read_namespaced_pod(name, namespace)
        conditions = {c.type: c for c in pod.status.conditions or []}
        scheduled = conditions.get("PodScheduled")
        if pod.spec.node_name or (scheduled and scheduled.status == "False" and scheduled.reason == "Unschedulable"):
            return pod
        time.sleep(0.2)
    raise AssertionError(f"kube-scheduler neither bound {namespace}/{name} nor marked it unschedulable within "
                         f"{BIND_TIMEOUT} s")


def _assert_real_scheduler_agrees(api_client: Any, plane: Any, namespace: str, pending: dict, expected: Any,
                                  label: str) -> None:
    """Create the pending pod: the real scheduler must bind it to one of the preview's tied best nodes, or leave it
    pending when the preview found no node."""

    _create(api_client, plane, [pending])
    if expected.node is None:
        pod = _scheduling_outcome(api_client, namespace, "pending")
        assert not pod.spec.node_name, (f"{label}: the preview said unschedulable ({expected.reason}), "
                                        f"kube-scheduler bound it to {pod.spec.node_name}")
        return
    actual = _bound_node(api_client, namespace, "pending")
    assert actual in expected.tied, (f"{label}: kube-scheduler chose {actual}, the preview's best were "
                                     f"{expected.tied} ({expected.reason})")


@pytest.mark.parametrize("profile", ["preview-default", "preview-binpack"])
@pytest.mark.parametrize("seed", SEEDS)
def test_real_scheduler_binds_to_one_of_the_tied_best_nodes(plane: Any, scheduler: Any, api_client: Any,
                                                            namespace: str, seed: int, profile: str) -> None:
    from kubernetes import client

    rng = random.Random(f"{seed}-{profile}")
    prefix = f"pv{uuid.uuid4().hex[:6]}"
    nodes, pods = random_cluster(rng, prefix, namespace)
    _create(api_client, plane, nodes + pods)
    try:
        _let_the_scheduler_catch_up(api_client, plane, namespace, prefix, profile, nodes)
        pending = pending_pod(rng, namespace, profile, prefix)
        volumes = volume_objects(rng, nodes, namespace, prefix)
        storage = _bound_claims(api_client, plane, volumes)
        if storage:
            pending["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
        expected = _preview(api_client, prefix, namespace, pending, storage)
        _assert_real_scheduler_agrees(api_client, plane, namespace, pending, expected, f"seed {seed} {profile}")
    finally:
        core = client.CoreV1Api(api_client)
        for node in nodes:
            core.delete_node(node["metadata"]["name"])
        for volume in volumes[:1]:
            core.delete_persistent_volume(volume["metadata"]["name"])


def test_a_local_volume_keeps_the_pod_on_its_busier_node(plane: Any, scheduler: Any, api_client: Any,
                                                         namespace: str) -> None:
    """Scores alone send the pod to the idle node; its claim's local volume pins it to the busy one, for the real
    scheduler and for the preview (which without the volume would have said otherwise)."""
    from kubernetes import client

    prefix = f"pv{uuid.uuid4().hex[:6]}"
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "preview": prefix}},
              "status": {"capacity": capacity, "allocatable": capacity,
                         "conditions": [{"type": "Ready", "status": "True"}]}}
             for name in (f"{prefix}-busy", f"{prefix}-idle")]
    load = _pod("load", namespace, {"cpu": "3", "memory": "6Gi"}, "db", node_name=f"{prefix}-busy")
    volumes = [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{prefix}-data"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                  "local": {"path": "/mnt/data"}, "claimRef": {"namespace": namespace, "name": "data"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "kubernetes.io/hostname", "operator": "In", "values": [f"{prefix}-busy"]}]}]}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": f"{prefix}-data",
                  "resources": {"requests": {"storage": "1Gi"}}}},
    ]
    _create(api_client, plane, nodes + [load])
    try:
        storage = _bound_claims(api_client, plane, volumes)
        # the volume and claim need no wait: until the scheduler's informers have them it cannot place the pod,
        # and their arrival retries it
        _let_the_scheduler_catch_up(api_client, plane, namespace, prefix, "preview-default", nodes)
        pending = _pod("pending", namespace, {"cpu": "500m", "memory": "512Mi"}, "db", spec={
            "schedulerName": "preview-default", "nodeSelector": {"preview": prefix},
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]})
        expected = _preview(api_client, prefix, namespace, pending, storage)
        unaware = _preview(api_client, prefix, namespace, pending, [])
        assert (expected.tied, unaware.tied) == ([f"{prefix}-busy"], [f"{prefix}-idle"])
        _create(api_client, plane, [pending])
        assert _bound_node(api_client, namespace, "pending") == f"{prefix}-busy"
    finally:
        core = client.CoreV1Api(api_client)
        for node in nodes:
            core.delete_node(node["metadata"]["name"])
        core.delete_persistent_volume(f"{prefix}-data")


def test_the_node_holding_the_image_wins_between_equal_nodes(plane: Any, scheduler: Any, api_client: Any,
                                                             namespace: str) -> None:
    """Two empty, equal nodes; one reports the pod's 900 MiB image in status.images. ImageLocality sends the pod
    there, for the real scheduler and for the preview (which without the node images would call it a tie)."""
    from kubernetes import client

    prefix = f"pv{uuid.uuid4().hex[:6]}"
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    image = "registry.local/preview/big"
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "preview": prefix}},
              "status": {"capacity": capacity, "allocatable": capacity,
                         "conditions": [{"type": "Ready", "status": "True"}],
                         "images": [{"names": [f"{image}:v1"], "sizeBytes": 900 * MIB}] if warm else []}}
             for name, warm in ((f"{prefix}-cold", False), (f"{prefix}-warm", True))]
    _create(api_client, plane, nodes)
    try:
        _let_the_scheduler_catch_up(api_client, plane, namespace, prefix, "preview-default", nodes)
        pending = _pod("pending", namespace, {"cpu": "500m", "memory": "512Mi"}, "db",
                       spec={"schedulerName": "preview-default", "nodeSelector": {"preview": prefix}})
        pending["spec"]["containers"][0]["image"] = f"{image}:v1"
        expected = _preview(api_client, prefix, namespace, pending, [])
        assert expected.tied == [f"{prefix}-warm"]
        unaware = copy.deepcopy(pending)
        unaware["spec"]["containers"][0]["image"] = "registry.local/preview/elsewhere:v1"
        assert _preview(api_client, prefix, namespace, unaware, []).tied == [f"{prefix}-cold", f"{prefix}-warm"]
        _create(api_client, plane, [pending])
        assert _bound_node(api_client, namespace, "pending") == f"{prefix}-warm"
    finally:
        core = client.CoreV1Api(api_client)
        for node in nodes:
            core.delete_node(node["metadata"]["name"])


# ---- richer random clusters: every filter and score the preview models, against the real scheduler ----
APPS = ("web", "db", "batch")
RICH_SEEDS = range(12)


def _rich_requests(rng: random.Random) -> dict:
    requests = {}
    if rng.random() < 0.8:
        requests["cpu"] = f"{rng.choice((50, 100, 250, 500, 750, 1000, 1500, 3000))}m"
    if rng.random() < 0.8:
        requests["memory"] = f"{rng.choice((64, 128, 256, 512, 1024, 2048, 6000))}Mi"
    if rng.random() < 0.1:
        requests["ephemeral-storage"] = f"{rng.choice((1, 5, 20))}Gi"
    return requests


def _rich_spec(rng: random.Random) -> dict:
    """One or two containers (some without requests, some with a host port), sometimes an init container."""
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": rng.choice(IMAGES)[0] + rng.choice(("", ":v1")),
         "resources": {"requests": _rich_requests(rng)}} for i in range(rng.choice((1, 1, 2)))]}
    if rng.random() < 0.15:
        spec["initContainers"] = [{"name": "init", "image": rng.choice(IMAGES)[0],
                                   "resources": {"requests": _rich_requests(rng)}}]
    if rng.random() < 0.15:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": rng.choice((8080, 8081))}]
    spec["tolerations"] = [{"key": "preview/hard", "operator": "Exists", "effect": "NoExecute"}]
    return spec


def _rich_term(rng: random.Random) -> dict:
    return {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
            "topologyKey": rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone"))}


def _rich_pod(rng: random.Random, name: str, namespace: str, spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec, "metadata": {
        "name": name, "namespace": namespace, "labels": {"app": rng.choice(APPS), "tier": rng.choice("ab")}}}


def rich_cluster(rng: random.Random, prefix: str, namespace: str) -> tuple[list[dict], list[dict]]:
    """Nodes with small pod capacities, cordons, taints, missing zone labels, racks, disks and images; bound pods
    with required anti-affinity and preferred (anti-)affinity terms, host ports, init containers."""
    nodes, pods = [], []
    for index in range(rng.randint(3, 10)):
        name = f"{prefix}-n{index}"
        capacity = {"cpu": str(rng.choice((2, 4, 8))), "memory": f"{rng.choice((4, 8, 16))}Gi",
                    "pods": str(rng.choice((4, 8, 110, 110))), "ephemeral-storage": "50Gi"}
        taints = []
        if rng.random() < 0.25:
            taints.append({"key": "preview/soft", "value": "x", "effect": "PreferNoSchedule"})
        if rng.random() < 0.15:
            taints.append({"key": "preview/hard", "value": "x", "effect": "NoSchedule"})
        labels = {"kubernetes.io/hostname": name, "preview": prefix}
        if rng.random() < 0.85:
            labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
        if rng.random() < 0.5:
            labels["rack"] = rng.choice(("r1", "r2"))
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
        held = rng.sample(IMAGES, rng.randint(0, len(IMAGES)))
        nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                      "spec": {"taints": taints, "unschedulable": rng.random() < 0.08},
                      "status": {"capacity": capacity, "allocatable": capacity,
                                 "conditions": [{"type": "Ready", "status": "True"}],
                                 "images": [{"names": [f"{image}:latest", f"{image}:v1"], "sizeBytes": size * MIB}
                                            for image, size in held]}})
        for number in range(rng.randint(0, 5)):
            spec = _rich_spec(rng)
            spec["nodeName"] = name
            affinity: dict[str, Any] = {}
            if rng.random() < 0.15:
                affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_rich_term(rng)]}
            if rng.random() < 0.15:
                affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _rich_term(rng)}]}
            if rng.random() < 0.1:
                affinity.setdefault("podAntiAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _rich_term(rng)}]
            if affinity:
                spec["affinity"] = affinity
            pods.append(_rich_pod(rng, f"{name}-p{number}", namespace, spec))
    return nodes, pods


def rich_pending_pod(rng: random.Random, namespace: str, scheduler_name: str, prefix: str) -> dict:
    """Tolerations, node selector and required/preferred node affinity, required and preferred pod (anti-)affinity,
    up to two spread constraints of either kind (minDomains, inclusion policies, matchLabelKeys)."""
    spec = _rich_spec(rng)
    spec["schedulerName"] = scheduler_name
    spec["nodeSelector"] = {"preview": prefix, **({"disk": "ssd"} if rng.random() < 0.15 else {})}
    if rng.random() < 0.4:
        spec["tolerations"].append({"key": "preview/hard", "operator": "Exists"})
    if rng.random() < 0.2:
        spec["tolerations"].append({"key": "preview/soft", "operator": "Exists", "effect": "PreferNoSchedule"})
    affinity: dict[str, Any] = {}
    if rng.random() < 0.3:
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]}]}}]}
    if rng.random() < 0.15:
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "Exists"}]}]}
    if rng.random() < 0.3:
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _rich_term(rng)}]}
    if rng.random() < 0.2:
        affinity.setdefault("podAntiAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
            _rich_term(rng)]
    if rng.random() < 0.2:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_rich_term(rng)]}
    if rng.random() < 0.2:
        affinity.setdefault("podAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _rich_term(rng)}]
    if affinity:
        spec["affinity"] = affinity
    constraints: list[dict] = []
    for _unused in range(rng.choice((0, 0, 1, 2))):
        constraint: dict[str, Any] = {
            "maxSkew": rng.randint(1, 3), "whenUnsatisfiable": rng.choice(("ScheduleAnyway", "DoNotSchedule")),
            "topologyKey": rng.choice(("topology.kubernetes.io/zone", "kubernetes.io/hostname", "rack")),
            "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}}
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.2:
            constraint["nodeAffinityPolicy"] = "Ignore"
        if constraint["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.2:
            constraint["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            constraint["matchLabelKeys"] = ["tier"]
        kind = (constraint["topologyKey"], constraint["whenUnsatisfiable"])
        if not any((c["topologyKey"], c["whenUnsatisfiable"]) == kind for c in constraints):
            constraints.append(constraint)
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    return _rich_pod(rng, "pending", namespace, spec)


@pytest.mark.parametrize("profile", ["preview-default", "preview-binpack"])
@pytest.mark.parametrize("seed", RICH_SEEDS)
def test_real_scheduler_agrees_on_rich_random_clusters(plane: Any, scheduler: Any, api_client: Any, namespace: str,
                                                       seed: int, profile: str) -> None:
    """Unschedulable predictions included: the pod must then stay pending."""
    from kubernetes import client

    rng = random.Random(f"rich-{seed}-{profile}")
    prefix = f"pr{uuid.uuid4().hex[:6]}"
    nodes, pods = rich_cluster(rng, prefix, namespace)
    _create(api_client, plane, nodes + pods)
    try:
        _let_the_scheduler_catch_up(api_client, plane, namespace, prefix, profile, nodes)
        pending = rich_pending_pod(rng, namespace, profile, prefix)
        expected = _preview(api_client, prefix, namespace, pending, [])
        _assert_real_scheduler_agrees(api_client, plane, namespace, pending, expected, f"seed {seed} {profile}")
    finally:
        core = client.CoreV1Api(api_client)
        for node in nodes:
            core.delete_node(node["metadata"]["name"])
