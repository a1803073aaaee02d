"""Write the CCE-style demo cluster: a Huawei CCE cluster running the Volcano add-on with load-aware descheduling.

    python examples/generate_cce_volcano.py        # rewrites the three files below (deterministic)

- examples/snapshots/cce-volcano.json          nodes, namespaces and pods (kind: List), as a snapshot
- examples/metrics/cce-volcano-prometheus.json what Prometheus answered to the queries Volcano's LoadAware sends,
                                               {query: /api/v1/query body}, recorded at the plan's `now`
- examples/policies/cce-volcano-addon.json     the Volcano add-on configuration, its `deschedulerPolicy` holding
                                               DefaultEvictor + LoadAware (thresholds as CCE's documentation shows)

Six 4-vCPU/16 GiB workers in two availability zones. Measured (not requested) usage:
  cce-node-1  cpu 88%  mem 62%   over the 80% cpu target: its biggest cpu user leaves
  cce-node-2  cpu 84%  mem 90%   over both targets: pods leave until cpu ≤ 80% and memory ≤ 85%
  cce-node-3  cpu 55%  mem 50%   appropriately used
  cce-node-4  cpu 12%  mem 20%   under 30%/30%: a destination
  cce-node-5  cpu  8%  mem 15%   under 30%/30%: a destination
  cce-node-6  cpu 45%  mem 40%   appropriately used
Protected: DaemonSet pods (everest-csi-driver, icagent), kube-system (excluded namespace), data/redis-0 (PVC,
ignorePvcPods). Requests are modest, so the same cluster looks balanced to request-based LowNodeUtilization.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "build" / "collections"))  # `make venv` links the collection there
NOW = "2026-11-22T12:00:00Z"
NOW_TS = 1_795_348_800
CREATED = "2026-11-01T08:00:00Z"
GI = 2**30
ZONES = ("cn-north-4a", "cn-north-4b")
NODES = {  # name: (cpu fraction, memory fraction)
    "cce-node-1": (0.88, 0.62), "cce-node-2": (0.84, 0.90), "cce-node-3": (0.55, 0.50),
    "cce-node-4": (0.12, 0.20), "cce-node-5": (0.08, 0.15), "cce-node-6": (0.45, 0.40),
}
# namespace, pod, node, owner kind, owner name, requests (m, Mi), measured (cores, GiB), extra
PODS = [
    ("shop", "web-7c9d8-a1", "cce-node-1", "ReplicaSet", "web-7c9d8", (500, 1024), (1.45, 2.0), {}),
    ("shop", "cart-5f6b4-a1", "cce-node-1", "ReplicaSet", "cart-5f6b4", (300, 512), (0.60, 1.5), {}),
    ("batch", "report-29014-x1", "cce-node-1", "Job", "report-29014", (200, 512), (0.40, 1.0), {}),
    ("shop", "web-7c9d8-b2", "cce-node-2", "ReplicaSet", "web-7c9d8", (500, 1024), (1.10, 3.0), {}),
    ("shop", "search-6d5c7-b1", "cce-node-2", "ReplicaSet", "search-6d5c7", (400, 2048), (0.50, 4.5), {}),
    ("shop", "cart-5f6b4-b2", "cce-node-2", "ReplicaSet", "cart-5f6b4", (300, 512), (0.45, 1.2), {}),
    ("data", "redis-0", "cce-node-2", "StatefulSet", "redis", (500, 4096), (0.40, 4.0), {"pvc": "data-redis-0"}),
    ("shop", "web-7c9d8-c3", "cce-node-3", "ReplicaSet", "web-7c9d8", (500, 1024), (0.90, 2.0), {}),
    ("shop", "search-6d5c7-c2", "cce-node-3", "ReplicaSet", "search-6d5c7", (400, 2048), (0.45, 3.5), {}),
    ("shop", "cart-5f6b4-d3", "cce-node-4", "ReplicaSet", "cart-5f6b4", (300, 512), (0.30, 1.0), {}),
    ("batch", "etl-7b4c9-f1", "cce-node-6", "ReplicaSet", "etl-7b4c9", (600, 2048), (1.20, 4.0), {}),
]
DAEMONSETS = (("kube-system", "everest-csi-driver", (50, 128), (0.05, 0.1)),
              ("kube-system", "icagent", (100, 256), (0.08, 0.2)))
ADDON_POLICY = {
    "profiles": [{
        "name": "ProfileName",
        "pluginConfig": [
            {"name": "DefaultEvictor", "args": {"ignorePvcPods": True, "nodeFit": True,
                                                "priorityThreshold": {"value": 100}}},
            {"name": "LoadAware", "args": {
                "evictableNamespaces": {"exclude": ["kube-system"]},
                "metrics": {"address": "http://10.247.77.45:9090", "type": "prometheus"},
                "targetThresholds": {"cpu": 80, "memory": 85},
                "thresholds": {"cpu": 30, "memory": 30},
            }},
        ],
        "plugins": {"balance": {"enabled": ["LoadAware"]}},
    }],
}


def uid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"cce-volcano/{name}"))


def node(name: str, index: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": uid(name), "creationTimestamp": "2026-09-01T00:00:00Z", "labels": {
            "kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "c7.xlarge.4",
            "topology.kubernetes.io/zone": ZONES[index % 2], "failure-domain.beta.kubernetes.io/region": "cn-north-4",
            "os.name": "EulerOS_2.0_SP10"}},
        "spec": {"providerID": f"{uid(name + '/ecs')}"},
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3920m", "memory": "13Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(namespace: str, name: str, node_name: str, kind: str, owner: str, requests: tuple[int, int],
        extra: dict) -> dict:
    spec: dict = {"nodeName": node_name, "schedulerName": "volcano", "containers": [{
        "name": name.split("-")[0], "image": f"swr.cn-north-4.myhuaweicloud.com/demo/{owner.split('-')[0]}:1.4",
        "resources": {"requests": {"cpu": f"{requests[0]}m", "memory": f"{requests[1]}Mi"}}}]}
    if extra.get("pvc"):
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": extra["pvc"]}}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "uid": uid(f"{namespace}/{name}"),
                     "creationTimestamp": CREATED, "labels": {"app": owner.split("-")[0]},
                     "ownerReferences": [{"apiVersion": "apps/v1" if kind != "Job" else "batch/v1", "kind": kind,
                                          "name": owner, "uid": uid(f"{namespace}/{kind}/{owner}"),
                                          "controller": True}]},
        "spec": spec,
        "status": {"phase": "Running", "qosClass": "Burstable", "startTime": CREATED},
    }


def all_pods() -> list[tuple[dict, tuple[float, float]]]:
    pods = [(pod(ns, name, node_name, kind, owner, requests, extra), measured)
            for ns, name, node_name, kind, owner, requests, measured, extra in PODS]
    for index, node_name in enumerate(NODES):
        for ns, ds, requests, measured in DAEMONSETS:
            pods.append((pod(ns, f"{ds}-{index + 1:02d}x", node_name, "DaemonSet", ds, requests, {}), measured))
    return pods


def snapshot() -> dict:
    namespaces = sorted({p[0] for p in PODS} | {"kube-system", "default"})
    items: list[dict] = [{"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": ns, "uid": uid(ns), "labels": {"kubernetes.io/metadata.name": ns}}}
                         for ns in namespaces]
    items += [node(name, index) for index, name in enumerate(NODES)]
    items += [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"namespace": "data", "name": "data-redis-0", "uid": uid("pvc")},
               "spec": {"storageClassName": "csi-disk"}}]
    items += [p for p, _measured in all_pods()]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def answer(value: float, labels: dict) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": labels, "value": [NOW_TS, format(value, "g")]}]}}


def prometheus_answers() -> dict:
    # the exact queries the plugin looks up
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware import (
        node_queries,
        pod_queries,
    )

    results = {}
    for name, (cpu, memory) in NODES.items():
        cpu_query, memory_query = node_queries(name)
        results[cpu_query] = answer(cpu, {"instance": name})
        results[memory_query] = answer(memory, {"instance": name})
    for obj, (cores, gib) in all_pods():
        name = obj["metadata"]["name"]
        labels = {"instance": obj["spec"]["nodeName"], "namespace": obj["metadata"]["namespace"], "pod": name}
        cpu_query, memory_query = pod_queries(name)
        results[cpu_query] = answer(cores, labels)
        results[memory_query] = answer(gib * GI, labels)
    return results


def addon_configuration() -> dict:
    return {"colocation_enable": "", "default_scheduler_conf": {"actions": "allocate, backfill, preempt",
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                      {"plugins": [{"name": "usage", "arguments": {"thresholds": {"cpu": 80, "mem": 80}}},
                                   {"name": "nodeorder"}]}]},
            "descheduler_enable": "true", "deschedulingInterval": "10m", "deschedulerPolicy": ADDON_POLICY}


def write(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def main() -> int:
    write(HERE / "snapshots" / "cce-volcano.json", snapshot())
    write(HERE / "metrics" / "cce-volcano-prometheus.json", prometheus_answers())
    write(HERE / "policies" / "cce-volcano-addon.json", addon_configuration())
    return 0


if __name__ == "__main__":
    sys.exit(main())
