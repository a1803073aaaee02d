"""The plan module's placement preview through real ansible-playbook runs: from a snapshot with a scheduler
configuration file, from a live cluster, and the option errors a user sees."""

from __future__ import annotations

import json
import sys
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from evict_helpers import PAUSE_IMAGE
from fleet_support import generated_cluster
from playbook import REPO, run_tasks

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402
from standins.rest import wait_until

NOW = "2026-11-22T12:00:00Z"
# pods naming a scheduler nobody runs stay unbound until a test binds them (the kubelet stand-in binds the others)
UNSCHEDULED = "placement-test"
UNSCHEDULED_CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "profiles": [{"schedulerName": UNSCHEDULED}]}
KUBEDESCHEDULER = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                   "profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"]}
BINPACK = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [
    {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                   {"name": "memory", "weight": 1}]}}}]}]}


def _snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(build_cluster(30, 12, seed=5, now=NOW)))
    return path


def _assert_placement(plan: dict) -> None:
    assert plan["evictions"], "the generated cluster should give evictions"
    verdict = plan["placement"]
    assert verdict["evictions"] == len(plan["evictions"])
    assert verdict["placed"] + verdict["unplaced"] + verdict["not_replaced"] == len(plan["evictions"])
    node_names = {n["name"] for n in plan["utilization"]["nodes"]}
    for eviction in plan["evictions"]:
        placement = eviction["placement"]
        if placement["outcome"] == "placed":
            assert placement["node"] in node_names
            assert placement["node"] in placement["tied_nodes"]
            assert placement["same_node"] == (placement["node"] == eviction["node"])
        else:
            assert placement["node"] is None and placement["reason"]
    for state in ("before", "after_evictions", "after_placement"):
        assert verdict["spread"][state]["cpu"]["stddev"] is not None
    assert all("after_placement" in n for n in plan["utilization"]["nodes"])


def test_snapshot_plan_with_binpack_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(yaml.safe_dump(BINPACK))
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "placement": True, "scheduler_config": str(config),
                                       "report_dir": str(tmp_path / "report")}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-2000:]
    plan = results["plan"]
    _assert_placement(plan)
    fit = plan["placement"]["schedulers"]["default-scheduler"]
    assert fit["scores"]["NodeResourcesFit"] == 1
    html = (tmp_path / "report" / "plan.html").read_text()
    assert "after placement" in html.lower()


def test_placement_off_returns_no_placement(tmp_path: Path) -> None:
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:]
    assert "placement" not in results["plan"]
    assert all("placement" not in e for e in results["plan"]["evictions"])


def test_scheduler_config_without_placement_is_refused(tmp_path: Path) -> None:
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "scheduler_config": BINPACK}, "register": "plan",
            "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["plan"]["failed"] is True
    assert "set placement: true" in results["plan"]["msg"]


def test_bad_scheduler_config_names_the_field(tmp_path: Path) -> None:
    bad = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                           "args": {"scoringStrategy": {"type": "Binpack"}}}]}]}
    task = {"descheduler.fleet.plan": {"snapshot": str(_snapshot(tmp_path)), "kubedescheduler": KUBEDESCHEDULER,
                                       "now": NOW, "placement": True, "scheduler_config": bad},
            "register": "plan", "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["plan"]["failed"] is True
    message = results["plan"]["msg"]
    assert "scheduler_config.profiles[0].pluginConfig.NodeResourcesFit.args.scoringStrategy.type" in message
    assert "'Binpack'" in message and "MostAllocated" in message


def _aged_out(namespace: str, app: str) -> tuple[str, dict]:
    """A time two hours on and a PodLifeTime policy (one hour) that evicts the namespace's pods labelled app=``app``."""
    later = (datetime.now(UTC) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return later, {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "age", "pluginConfig": [{"name": "PodLifeTime", "args": {
            "maxPodLifeTimeSeconds": 3600, "namespaces": {"include": [namespace]},
            "labelSelector": {"matchLabels": {"app": app}}}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}


def _live_plan(kube: Any, tmp_path: Path, **options: Any) -> dict:
    """The plan module, with placement, run by ansible-playbook against the live cluster."""
    task = {"descheduler.fleet.plan": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                       "placement": True, **options}, "register": "plan"}
    process, results = run_tasks(tmp_path, [task])
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-2000:]
    return results["plan"]


def test_live_cluster_plan_with_placement(kube: Any, tmp_path: Path) -> None:
    """On the suite's control plane a generated cluster, loaded as fleet_support.generated_cluster keeps it; a cluster
    of the tester's is planned as it is, and may have nothing to evict."""
    with ExitStack() as stack:
        if not kube.is_external:
            stack.enter_context(generated_cluster(kube, build_cluster(8, 8, seed=7, now=NOW)))
        plan = _live_plan(kube, tmp_path, kubedescheduler=KUBEDESCHEDULER, now=NOW)
    if not kube.is_external or plan["evictions"]:
        _assert_placement(plan)
    assert plan["placement"]["evictions"] == len(plan["evictions"])


def test_live_plan_keeps_a_replacement_with_a_local_volume_on_its_node(kube: Any, namespace: str,
                                                                       tmp_path: Path) -> None:
    """The plan module lists PersistentVolumes with placement on: a ReplicaSet pod whose claim is bound (by the real
    kube-controller-manager) to a local volume on the busier node is predicted to come back there, although the
    scores alone prefer the idle node."""
    from kubernetes import client

    prefix = f"vol{uuid.uuid4().hex[:6]}"
    busy, idle = f"{prefix}-busy", f"{prefix}-idle"
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    with kube.api_client() as api_client:
        core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
        for name in (busy, idle):
            core.create_node({"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "vol": prefix}},
                              "status": {"capacity": capacity, "allocatable": capacity,
                                         "conditions": [{"type": "Ready", "status": "True"}]}})
        try:
            core.create_persistent_volume({
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{prefix}-data"},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                         "local": {"path": "/mnt/data"}, "claimRef": {"namespace": namespace, "name": "data"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "kubernetes.io/hostname", "operator": "In", "values": [busy]}]}]}}}})
            core.create_namespaced_persistent_volume_claim(namespace, {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": f"{prefix}-data",
                         "resources": {"requests": {"storage": "1Gi"}}}})
            wait_until(lambda: core.read_namespaced_persistent_volume_claim("data", namespace).status.phase == "Bound",
                       what="kube-controller-manager binding the claim")
            core.create_namespaced_pod(namespace, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "load", "labels": {"app": "load"}},
                "spec": {"nodeName": busy, "containers": [{"name": "c", "image": PAUSE_IMAGE, "resources": {
                    "requests": {"cpu": "3", "memory": "6Gi"}}}]}})
            # a ReplicaSet's pod, bound here as a scheduler would (the kubelet stand-in binds only pods asking for
            # default-scheduler, so this one waits for the test; the plan is given that scheduler's configuration)
            apps.create_namespaced_replica_set(namespace, {
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "db"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"nodeSelector": {"vol": prefix}, "schedulerName": UNSCHEDULED,
                             "containers": [{"name": "c", "image": PAUSE_IMAGE,
                                             "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
                             "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}}})
            pod = wait_until(lambda: core.list_namespaced_pod(namespace, label_selector="app=db").items,
                             what="the ReplicaSet's pod")[0]
            core.create_namespaced_binding(namespace, {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod.metadata.name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": busy}}, _preload_content=False)
            later, policy = _aged_out(namespace, "db")
            plan = _live_plan(kube, tmp_path, policy=policy, now=later, scheduler_config=UNSCHEDULED_CONFIG)
            assert [(e["name"], e["node"]) for e in plan["evictions"]] == [(pod.metadata.name, busy)]
            placement = plan["evictions"][0]["placement"]
            assert (placement["node"], placement["same_node"], placement["tied_nodes"]) == (busy, True, [busy])
            assert placement["reason"] == "the only feasible node"
            assert not any("PersistentVolumes" in note for note in plan["placement"]["not_modeled"])
            assert "PersistentVolume" in plan["source"]["resource_versions"]
        finally:
            for name in (busy, idle):
                core.delete_node(name)
            core.delete_persistent_volume(f"{prefix}-data")


def test_live_plan_sends_a_replacement_to_the_node_holding_its_image(kube: Any, namespace: str,
                                                                     tmp_path: Path) -> None:
    """The plan module reads the nodes' status.images while it lists them (placement on): of three empty, equal
    nodes the replacement goes to the one that holds its image (ImageLocality), where without it they would tie."""
    from kubernetes import client

    prefix = f"img{uuid.uuid4().hex[:6]}"
    image = f"registry.local/{prefix}/app:v1"
    names = {"cold": f"{prefix}-cold", "warm": f"{prefix}-warm", "other": f"{prefix}-other"}
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    with kube.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        for role, name in names.items():
            # big enough to count however many nodes the cluster has: the score weighs it by the share holding it
            images = [{"names": [image], "sizeBytes": 20 * 2**30}] if role == "warm" else []
            core.create_node({"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "img": prefix}},
                              "status": {"capacity": capacity, "allocatable": capacity, "images": images,
                                         "conditions": [{"type": "Ready", "status": "True"}]}})
        try:
            owner = client.AppsV1Api(api_client).create_namespaced_replica_set(namespace, {
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "app"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "app"}}, "template": {
                    "metadata": {"labels": {"app": "app"}},
                    "spec": {"nodeSelector": {"img": prefix}, "containers": [{
                        "name": "c", "image": image,
                        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}}}})
            # the kubelet stand-in binds it first fit (the first of the three equal nodes by name, "cold"); wherever
            # it runs, its replacement belongs on the warm node
            pod = wait_until(lambda: [p for p in core.list_namespaced_pod(namespace, label_selector="app=app").items
                                      if p.spec.node_name], what="the ReplicaSet's pod, bound")[0]
            assert pod.metadata.owner_references[0].uid == owner.metadata.uid
            later, policy = _aged_out(namespace, "app")
            plan = _live_plan(kube, tmp_path, policy=policy, now=later)
            assert [(e["name"], e["node"]) for e in plan["evictions"]] == [(pod.metadata.name, pod.spec.node_name)]
            placement = plan["evictions"][0]["placement"]
            assert (placement["node"], placement["tied_nodes"]) == (names["warm"], [names["warm"]])
            assert not any(note.startswith("ImageLocality") for note in plan["placement"]["not_modeled"])
        finally:
            for name in names.values():
                core.delete_node(name)
