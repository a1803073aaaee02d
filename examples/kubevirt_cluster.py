#!/usr/bin/env python3
"""Generate the example OpenShift Virtualization cluster and the Prometheus answers recorded with it.

    python examples/kubevirt_cluster.py --out examples/snapshots/kubevirt.yaml \
        --prometheus-out examples/snapshots/kubevirt-prometheus.json

Three control-plane nodes and six workers labelled ``kubevirt.io/schedulable=true``; VMs run as
VirtualMachineInstances with their ``virt-launcher`` pods (owned by the VMI, 10x CPU overcommit as KubeVirt requests
by default) and a virt-handler DaemonSet pod per worker. The load is skewed: worker-0 and worker-1 are under CPU
pressure; one VM there migrated minutes ago, another is migrating now. The Prometheus file maps the CPU PSI query
the operator sends for ``devActualUtilizationProfile: PrometheusCPUPSIPressure`` to its instant-query answer at the
simulation time (one sample per node, ``instance`` = node name, a fraction in [0, 1]). The same seed always gives
the same cluster.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]
DEFAULT_NOW = "2026-11-22T12:00:00Z"
PSI_CPU_QUERY = "rate(node_pressure_cpu_waiting_seconds_total[1m])"
# workers: (VMs, CPU PSI pressure as a fraction of time stalled)
WORKERS = ((9, 0.64), (8, 0.51), (5, 0.22), (4, 0.17), (3, 0.12), (3, 0.09))
VM_NAMESPACES = ("vm-prod", "vm-dev")


def node(name: str, worker: bool) -> Obj:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    labels.update({"node-role.kubernetes.io/worker": "", "kubevirt.io/schedulable": "true"} if worker
                  else {"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": ""})
    spec: Obj = {} if worker else {"taints": [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}]}
    resources = {"cpu": "32", "memory": "128Gi", "pods": "250"} if worker else {"cpu": "8", "memory": "32Gi",
                                                                                "pods": "250"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}


def vmi(name: str, ns: str, node_name: str, vcpus: int, memory_gi: int, created: str) -> Obj:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": ns, "uid": f"vmi-{ns}-{name}", "creationTimestamp": created,
                         "labels": {"kubevirt.io/vm": name}},
            "spec": {"domain": {"cpu": {"cores": vcpus}, "memory": {"guest": f"{memory_gi}Gi"}},
                     "evictionStrategy": "LiveMigrate"},
            "status": {"phase": "Running", "nodeName": node_name, "migrationMethod": "LiveMigration"}}


VIRT_LAUNCHER_IMAGE = "registry.redhat.io/container-native-virtualization/virt-launcher-rhel9:v4.21"


def virt_launcher(vm: Obj, suffix: str) -> Obj:
    meta, spec = vm["metadata"], vm["spec"]["domain"]
    cpu_millis = spec["cpu"]["cores"] * 100  # KubeVirt requests 1/10 of a core per vCPU by default
    memory = spec["memory"]["guest"]
    metadata = {
        "name": f"virt-launcher-{meta['name']}-{suffix}", "namespace": meta["namespace"],
        "uid": f"pod-{meta['namespace']}-{meta['name']}", "creationTimestamp": meta["creationTimestamp"],
        "labels": {"kubevirt.io": "virt-launcher", "vm.kubevirt.io/name": meta["name"],
                   "kubevirt.io/created-by": meta["uid"]},
        "annotations": {"kubevirt.io/domain": meta["name"]},
        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": meta["name"],
                             "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}]}
    container = {"name": "compute", "image": VIRT_LAUNCHER_IMAGE,
                 "resources": {"requests": {"cpu": f"{cpu_millis}m", "memory": memory}}}
    pod_spec = {"nodeName": vm["status"]["nodeName"], "priority": 0, "containers": [container],
                "volumes": [{"name": "private", "emptyDir": {}}, {"name": "hotplug-disks", "emptyDir": {}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec,
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": meta["creationTimestamp"]}}


def virt_handler(node_name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"virt-handler-{node_name}", "namespace": "openshift-cnv", "uid": f"pod-virt-handler-{node_name}",
        "creationTimestamp": "2026-10-01T08:00:00Z", "labels": {"kubevirt.io": "virt-handler"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "virt-handler",
                             "uid": "ds-virt-handler", "controller": True}]},
            "spec": {"nodeName": node_name, "priorityClassName": "kubevirt-cluster-critical", "priority": 1000000000,
                     "containers": [{"name": "virt-handler", "resources": {"requests": {"cpu": "10m",
                                                                                        "memory": "325Mi"}}}]},
            "status": {"phase": "Running"}}


def build(seed: int = 7) -> tuple[list[Obj], dict[str, str]]:
    """The cluster's objects and the PSI value per node."""
    randomness = random.Random(seed)
    objects: list[Obj] = [namespace(n) for n in ("openshift-cnv", *VM_NAMESPACES)]
    objects += [node(f"master-{i}", worker=False) for i in range(3)]
    pressure: dict[str, str] = {f"master-{i}": "0.02" for i in range(3)}
    number = 0
    for index, (vms, psi) in enumerate(WORKERS):
        name = f"worker-{index}"
        objects += [node(name, worker=True), virt_handler(name)]
        pressure[name] = f"{psi:.4f}"
        for _unused in range(vms):
            ns = VM_NAMESPACES[number % 2]
            day = 1 + number % 20
            vm = vmi(f"vm-{number:02d}", ns, name, randomness.choice((2, 4, 8)), randomness.choice((4, 8, 16)),
                     f"2026-11-{day:02d}T09:00:00Z")
            suffix = "".join(randomness.choice("bcdfghjklmnpqrstvwxz") for _unused in range(5))
            objects += [vm, virt_launcher(vm, suffix)]
            number += 1
    objects += recent_migrations(objects)
    return objects, pressure


def recent_migrations(objects: list[Obj]) -> list[Obj]:
    """vm-01 finished a live migration 5 minutes ago (KubevirtMigrationAware's cooldown protects it); vm-09 is
    migrating now (its pod is not evicted). Returns the VirtualMachineInstanceMigration of vm-01."""
    vmis = {o["metadata"]["name"]: o for o in objects if o["kind"] == "VirtualMachineInstance"}
    vmis["vm-01"]["status"]["migrationState"] = {"startTimestamp": "2026-11-22T11:52:30Z",
                                                 "endTimestamp": "2026-11-22T11:55:00Z", "completed": True}
    vmis["vm-09"]["status"]["migrationState"] = {"startTimestamp": "2026-11-22T11:59:10Z"}
    namespace = vmis["vm-01"]["metadata"]["namespace"]
    return [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
             "metadata": {"name": "vm-01-migration-k7x2p", "namespace": namespace},
             "spec": {"vmiName": "vm-01"},
             "status": {"phase": "Succeeded", "migrationState": {"startTimestamp": "2026-11-22T11:52:30Z",
                                                                 "endTimestamp": "2026-11-22T11:55:00Z"}}}]


def prometheus_answer(pressure: dict[str, str], now: str) -> dict:
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")).astimezone(UTC).timestamp()
    result = [{"metric": {"instance": node_name}, "value": [moment, value]} for node_name, value in pressure.items()]
    return {PSI_CPU_QUERY: {"status": "success", "data": {"resultType": "vector", "result": result}}}


def write_yaml(objects: list[Obj], path: str) -> None:
    import yaml

    class _NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:  # shared dicts are written out, as kubectl would
            return True

    header = ("# An OpenShift Virtualization cluster: 3 masters, 6 workers (kubevirt.io/schedulable=true) running\n"
              "# VirtualMachineInstances; worker-0 and worker-1 are under CPU pressure (PSI). Written by\n"
              "# examples/kubevirt_cluster.py; Prometheus answers: kubevirt-prometheus.json. Simulation time:\n"
              f"# {DEFAULT_NOW}. Policy: examples/policies/kubevirt-kubedescheduler.yaml\n")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(header)
        yaml.dump({"apiVersion": "v1", "kind": "List", "items": objects}, handle, Dumper=_NoAliases, sort_keys=False,
                  width=120, default_flow_style=None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="snapshot file (YAML)")
    parser.add_argument("--prometheus-out", required=True, help="recorded Prometheus answers (JSON)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--now", default=DEFAULT_NOW)
    args = parser.parse_args(argv)
    objects, pressure = build(args.seed)
    write_yaml(objects, args.out)
    with open(args.prometheus_out, "w", encoding="utf-8") as handle:
        json.dump(prometheus_answer(pressure, args.now), handle, indent=1)
        handle.write("\n")
    print(f"{len(objects)} objects to {args.out}, {len(pressure)} samples to {args.prometheus_out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
