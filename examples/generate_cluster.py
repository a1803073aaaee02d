#!/usr/bin/env python3
"""Generate a synthetic Kubernetes or OpenShift cluster snapshot for the descheduler simulator.

The output is what `kubectl get ... -o json` would give for a whole cluster: one `kind: List` holding Namespaces,
Nodes, PriorityClasses, StorageClasses, workloads (Deployments/ReplicaSets, StatefulSets with PVCs, DaemonSets,
CronJobs/Jobs, bare pods), PodDisruptionBudgets and Pods. The pods are shaped so that every descheduler plugin has
something to do: skewed node load, duplicates, broken (anti-)affinity, untolerated taints, skewed topology spread,
old, crash-looping and failed pods.

    python examples/generate_cluster.py --nodes 300 --pods-per-node 20 --seed 7 --out examples/snapshots/large.json.gz

Importable too: `iter_cluster(...)` yields the objects one by one (constant memory), `build_cluster(...)` returns a
list and `write_cluster(objects, path)` streams them to a file. The same seed always gives the same cluster.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

Obj = dict[str, Any]

DEFAULT_NOW = "2026-11-22T12:00:00Z"
FLAVORS = ("kubernetes", "openshift")
REGION = "eu-west-1"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
CLUSTER_SCOPED_KINDS = frozenset({"Namespace", "Node", "PriorityClass", "StorageClass", "PersistentVolume"})

SYSTEM_CLUSTER_CRITICAL = 2000000000
SYSTEM_NODE_CRITICAL = 2000001000
# (name, value, description); the two system classes always exist in a real cluster.
PRIORITY_CLASSES = (
    ("system-cluster-critical", SYSTEM_CLUSTER_CRITICAL, "Used for system critical pods that must run in the cluster."),
    ("system-node-critical", SYSTEM_NODE_CRITICAL, "Used for system critical pods that must not be moved."),
    ("business-critical", 1000000, "Customer-facing services."),
    ("high-priority", 100000, "Important internal services."),
    ("default-priority", 1000, "Ordinary workloads."),
    ("preemptible", -10, "Batch and best-effort work that may be preempted."),
)
OPENSHIFT_PRIORITY_CLASSES = (("openshift-user-critical", 1000000000, "Critical OpenShift user workloads."),)
PRIORITY_VALUES = {name: value for name, value, _description in PRIORITY_CLASSES + OPENSHIFT_PRIORITY_CLASSES}
# Share of user workloads per priority class (None = no class, priority 0).
PRIORITY_WEIGHTS = (
    (None, 55), ("business-critical", 8), ("high-priority", 14), ("default-priority", 13), ("preemptible", 10),
)

# (instance type, cores, memory GiB, weight): the mix of worker sizes.
INSTANCE_TYPES = (
    ("m6i.2xlarge", 8, 32, 30), ("m6i.4xlarge", 16, 64, 35), ("r6i.2xlarge", 8, 64, 15),
    ("c6i.4xlarge", 16, 32, 12), ("m6i.8xlarge", 32, 128, 8),
)
MASTER_INSTANCE = ("m6i.2xlarge", 8, 32)

# (cpu millicores, memory MiB, weight) before scaling: most pods are small, a few are big.
REQUEST_SIZES = ((25, 48, 22), (100, 160, 38), (250, 512, 25), (500, 1024, 10), (1500, 3072, 5))
QOS_WEIGHTS = (("Burstable", 75), ("Guaranteed", 17), ("BestEffort", 8))
# Normal nodes sit near this share of allocatable cpu/memory; hot nodes get ~1.8x the pods, cold ones ~0.3x.
TARGET_NORMAL_UTILIZATION = 0.36
LOAD_FACTORS = {"hot": 1.8, "normal": 1.0, "cold": 0.3}

APP_WORDS = (
    "api", "web", "frontend", "backend", "worker", "cart", "checkout", "search", "auth", "billing", "orders",
    "inventory", "notifications", "gateway", "catalog", "pricing", "recommendation", "reports", "ledger", "media",
    "thumbnails", "profile", "sessions", "shipping", "tracking", "events", "ingest", "indexer", "mailer", "scheduler",
)
NAMESPACE_WORDS = (
    "shop", "payments", "search", "analytics", "ml-platform", "identity", "media", "data", "marketing", "support",
    "logistics", "finance", "growth", "mobile-backend", "partner-api", "content", "ads", "fraud", "risk", "platform",
)
IMAGES = {
    "app": ("registry.example.com/{ns}/{app}:{tag}",),
    "sidecar": ("envoyproxy/envoy:v1.36.2", "fluent/fluent-bit:4.1.1", "otel/opentelemetry-collector:0.139.0"),
    "init": ("busybox:1.37", "registry.example.com/tools/migrate:2.4.0", "alpine/git:2.49.1"),
    "job": ("registry.example.com/batch/{app}:{tag}", "python:3.13-slim"),
    "db": ("postgres:17.6", "redis:8.2", "bitnami/kafka:4.1", "mongo:8.0", "elasticsearch:9.2.0"),
}
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes uses for generated name suffixes
DEFAULT_TOLERATIONS = (  # added by the DefaultTolerationSeconds admission plugin to every pod
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)
TOLERATE_EVERYTHING = ({"operator": "Exists"},)
MASTER_TAINT = {"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}
MASTER_TOLERATIONS = (
    {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
)
DEDICATED_TEAM = "ml"


# --------------------------------------------------------------------------------------------------------------
# Small helpers


def parse_time(text: str) -> datetime:
    """RFC 3339 with a Z suffix, as Kubernetes writes it."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def format_epoch(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def cpu_quantity(millicores: int) -> str:
    return f"{millicores // 1000}" if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(mebibytes: int) -> str:
    return f"{mebibytes // 1024}Gi" if mebibytes % 1024 == 0 else f"{mebibytes}Mi"


def weighted_choice(rng: random.Random, options: Iterable[tuple[Any, int]]) -> Any:
    values, weights = zip(*options, strict=True)
    return rng.choices(values, weights=weights)[0]


def is_namespaced(kind: str) -> bool:
    return kind not in CLUSTER_SCOPED_KINDS


def validate_object(obj: Obj) -> list[str]:
    """The minimum every object in a snapshot needs: apiVersion, kind, metadata.name (+ namespace if namespaced)."""
    problems = [f"missing {key}" for key in ("apiVersion", "kind") if not obj.get(key)]
    metadata = obj.get("metadata") or {}
    if not metadata.get("name"):
        problems.append("missing metadata.name")
    if is_namespaced(obj.get("kind", "")) and not metadata.get("namespace"):
        problems.append("missing metadata.namespace")
    return problems


# --------------------------------------------------------------------------------------------------------------
# The model the generator keeps in memory: nodes and their load, not the pods.


@dataclass
class NodeSlot:
    """A node plus the running totals used to keep placements within allocatable."""

    index: int
    name: str
    zone: str
    role: str  # "master", "worker" or "master,worker" (compact OpenShift)
    instance_type: str
    cores: int
    memory_gib: int
    max_pods: int
    load: str = "normal"  # hot | normal | cold
    ssd: bool = False
    dedicated: bool = False  # tainted dedicated=ml:NoSchedule
    prefer_no_schedule: bool = False
    ready: bool = True
    cordoned: bool = False
    uid: str = ""
    internal_ip: str = ""
    cpu_used: int = 0  # millicores requested by non-terminal pods
    mem_used: int = 0  # MiB
    pods: int = 0

    @property
    def cpu_allocatable(self) -> int:
        # kube-reserved grows with the core count, as on managed node images
        return self.cores * 1000 - (60 + 10 * self.cores)

    @property
    def mem_allocatable_mib(self) -> int:
        return self.memory_gib * 1024 - 1024 - int(self.memory_gib * 1024 * 0.02)

    @property
    def is_master(self) -> bool:
        return "master" in self.role

    def has_room(self, cpu_m: int, mem_mi: int, headroom: float = 0.95) -> bool:
        return (
            self.pods < self.max_pods
            and self.cpu_used + cpu_m <= headroom * self.cpu_allocatable
            and self.mem_used + mem_mi <= headroom * self.mem_allocatable_mib
        )


@dataclass
class PodShape:
    """What every replica of one workload shares; the spec is kept serialized so each pod gets a fresh copy."""

    namespace: str
    app: str
    labels: dict[str, str]
    spec_json: str
    qos: str
    cpu_m: int  # the pod's effective request, for placement accounting
    mem_mi: int
    containers: list[str]
    init_containers: list[str]  # run-to-completion init containers
    sidecars: list[str]  # restartable init containers (restartPolicy: Always)

    def new_spec(self) -> Obj:
        return json.loads(self.spec_json)


@dataclass
class Traits:
    """Per-workload scenario switches (what makes a plugin notice it)."""

    priority_class: str | None = None
    qos: str = "Burstable"
    empty_dir: bool = False
    init_container: bool = False
    sidecar: bool = False  # native sidecar (restartable init container)
    second_container: bool = False  # classic sidecar in spec.containers
    runtime_overhead: bool = False
    pod_level_resources: bool = False
    topology_spread: bool = False
    skewed_spread: bool = False
    anti_affinity: str | None = None  # "hostname" | "zone"
    anti_affinity_violated: bool = False
    node_affinity: bool = False  # required disktype=ssd
    node_affinity_drift: bool = False  # some replicas on nodes that lost the label
    preferred_affinity: bool = False
    packed: bool = False  # all replicas on one node (RemoveDuplicates)
    dedicated: bool = False  # tolerates and selects the dedicated=ml nodes
    extra_annotations: dict[str, str] = field(default_factory=dict)

    @property
    def fresh_violation(self) -> bool:
        """Placements a descheduler running every hour would already have fixed: they must be recent."""
        return self.skewed_spread or self.anti_affinity_violated or self.packed or self.node_affinity_drift


# --------------------------------------------------------------------------------------------------------------
# The generator


class ClusterGenerator:
    """Builds a cluster deterministically from `random.Random(seed)`; `objects()` yields it item by item."""

    def __init__(self, nodes: int, pods_per_node: int, seed: int, now: datetime, flavor: str = "kubernetes"):
        if nodes < 1 or pods_per_node < 1:
            raise ValueError("--nodes and --pods-per-node must be at least 1")
        if flavor not in FLAVORS:
            raise ValueError(f"unknown flavor {flavor!r}; expected one of {', '.join(FLAVORS)}")
        self.rng = random.Random(seed)
        self.now = now.timestamp()
        self.flavor = flavor
        self.openshift = flavor == "openshift"
        self.pods_per_node = pods_per_node
        self.used_names: set[tuple[str, str, str]] = set()
        self.pod_names: set[tuple[str, str]] = set()
        self.nodes = self._layout_nodes(nodes)
        self.workers = [n for n in self.nodes if "worker" in n.role]
        self.general = [n for n in self.workers if not n.dedicated] or list(self.nodes)
        self.dedicated_nodes = [n for n in self.workers if n.dedicated]
        self.by_zone = {zone: [n for n in self.general if n.zone == zone] for zone in ZONES}
        self.ssd_nodes = [n for n in self.general if n.ssd]
        self.non_ssd_nodes = [n for n in self.general if not n.ssd]
        self.namespaces = self._user_namespaces(nodes * pods_per_node)
        self.daemonsets = self._daemonset_catalog()
        self.cpu_scale, self.mem_scale = self._request_scales()
        # no single pod asks for more than a third of the smallest node, or nothing could place it
        self.max_pod_cpu = min(n.cpu_allocatable for n in self.general) // 3
        self.max_pod_mem = min(n.mem_allocatable_mib for n in self.general) // 3
        self.slots = self._workload_slots()
        self.dedicated_slots = self._dedicated_slots()

    # ---- layout ------------------------------------------------------------------------------------------------

    def _layout_nodes(self, count: int) -> list[NodeSlot]:
        rng = self.rng
        masters = 0
        if self.openshift:
            masters = 3 if count >= 6 else min(3, count)
        compact = self.openshift and count < 6  # 3-node compact cluster or SNO: masters also run workloads
        nodes: list[NodeSlot] = []
        for i in range(count):
            zone = ZONES[i % len(ZONES)]
            if i < masters:
                instance, cores, mem = MASTER_INSTANCE
                role = "master,worker" if compact else "master"
                name = f"master-{i}"
            else:
                instance, cores, mem, _weight = weighted_choice(rng, ((t, t[3]) for t in INSTANCE_TYPES))
                role = "worker"
                name = f"worker-{zone[-1]}-{i - masters:05d}" if self.openshift else f"node-{i - masters:05d}"
            node = NodeSlot(
                index=i, name=name, zone=zone, role=role, instance_type=instance, cores=cores, memory_gib=mem,
                max_pods=250 if self.openshift else 110, uid=self.uid(),
                internal_ip=f"10.{i // 65536}.{(i // 256) % 256}.{i % 256 + 1}",
            )
            nodes.append(node)
        self._assign_node_situations([n for n in nodes if n.role == "worker" or compact])
        return nodes

    def _assign_node_situations(self, workers: list[NodeSlot]) -> None:
        """Load classes, ssd labels, taints, NotReady and cordoned nodes: the raw material for the plugins."""
        rng = self.rng
        for node in workers:
            node.load = weighted_choice(rng, (("hot", 15), ("normal", 65), ("cold", 20)))
            node.ssd = rng.random() < 0.3
            node.prefer_no_schedule = rng.random() < 0.04
        if len(workers) >= 3:  # make sure LowNodeUtilization has both ends even in tiny clusters
            workers[0].load, workers[1].load = "hot", "cold"
            workers[2].ssd = True
        pool = list(workers[2:]) if len(workers) > 4 else []
        rng.shuffle(pool)
        dedicated_count = max(1, len(workers) * 3 // 100) if len(workers) >= 5 else 0
        for node in pool[:dedicated_count]:
            node.dedicated, node.load = True, "normal"
        rest = pool[dedicated_count:]
        not_ready = (1 + (len(workers) >= 50)) if len(workers) >= 4 else 0
        for node in rest[:not_ready]:
            node.ready = False
        if len(rest) > not_ready:
            rest[not_ready].cordoned = True

    def _user_namespaces(self, total_pods: int) -> list[str]:
        count = max(4, min(10000, total_pods // 250))
        names = list(NAMESPACE_WORDS[:count])
        index = 0
        while len(names) < count:
            names.append(f"{NAMESPACE_WORDS[index % len(NAMESPACE_WORDS)]}-{index // len(NAMESPACE_WORDS) + 2}")
            index += 1
        return names

    def _daemonset_catalog(self) -> list[tuple[str, str, int, int, bool]]:
        """(namespace, name, cpu m, memory Mi, uses hostPath) of the per-node agents."""
        if self.openshift:
            return [
                ("openshift-dns", "dns-default", 60, 110, False),
                ("openshift-dns", "node-resolver", 5, 21, True),
                ("openshift-machine-config-operator", "machine-config-daemon", 40, 100, True),
                ("openshift-multus", "multus", 10, 65, True),
                ("openshift-ovn-kubernetes", "ovnkube-node", 80, 600, True),
                ("openshift-monitoring", "node-exporter", 9, 47, True),
                ("openshift-cluster-node-tuning-operator", "tuned", 10, 50, True),
                ("openshift-image-registry", "node-ca", 10, 10, False),
            ]
        return [
            ("kube-system", "kube-proxy", 100, 64, True),
            ("kube-system", "ebs-csi-node", 30, 120, True),
            ("monitoring", "node-exporter", 50, 64, True),
            ("logging", "fluent-bit", 100, 128, True),
        ]

    def _workload_pods_per_node(self) -> float:
        return max(1.0, self.pods_per_node - len(self.daemonsets))

    def _request_scales(self) -> tuple[float, float]:
        """Scale the request menu so a normal node lands near TARGET_NORMAL_UTILIZATION whatever --pods-per-node is."""
        total = sum(weight for _cpu, _mem, weight in REQUEST_SIZES)
        mean_cpu = sum(c * w for c, _mem, w in REQUEST_SIZES) / total
        mean_mem = sum(m * w for _cpu, m, w in REQUEST_SIZES) / total
        requested_share = 0.92 * 1.1  # BestEffort pods request nothing; sidecars and init containers add a bit
        workers = self.general or self.nodes
        cpu_per_pod = sum(n.cpu_allocatable for n in workers) / len(workers) / self._workload_pods_per_node()
        mem_per_pod = sum(n.mem_allocatable_mib for n in workers) / len(workers) / self._workload_pods_per_node()
        return (
            TARGET_NORMAL_UTILIZATION * cpu_per_pod / (mean_cpu * requested_share),
            TARGET_NORMAL_UTILIZATION * mem_per_pod / (mean_mem * requested_share),
        )

    def _slot_weight(self, node: NodeSlot, mean_cores: float) -> float:
        return LOAD_FACTORS[node.load] * node.cores / mean_cores

    def _slot_counts(self, nodes: list[NodeSlot], total: float) -> list[tuple[NodeSlot, int]]:
        """Share `total` user pods among `nodes` by load class and size, never beyond maxPods."""
        if not nodes:
            return []
        mean_cores = sum(n.cores for n in nodes) / len(nodes)
        weights = [self._slot_weight(n, mean_cores) for n in nodes]
        scale = total / sum(weights)
        return [(n, max(0, min(int(round(w * scale)), n.max_pods - len(self.daemonsets) - 2)))
                for n, w in zip(nodes, weights, strict=True)]

    def _workload_slots(self) -> list[int]:
        """Node indexes, one per user pod to place, shuffled: pop() hands out a node with the intended skew."""
        hosts = [n for n in self.general if n.role != "master"]
        per_node = self._workload_pods_per_node()
        slots: list[int] = []
        for node, count in self._slot_counts(hosts, per_node * len(hosts)):
            slots.extend([node.index] * count)
        for node in self.dedicated_nodes:  # a few ordinary pods sit on tainted nodes: they predate the taint
            slots.extend([node.index] * (1 + self.rng.randrange(2)))
        self.rng.shuffle(slots)
        return slots

    def _dedicated_slots(self) -> list[int]:
        per_node = self._workload_pods_per_node()
        counts = self._slot_counts(self.dedicated_nodes, per_node * len(self.dedicated_nodes))
        slots = [node.index for node, count in counts for _slot in range(count)]
        self.rng.shuffle(slots)
        return slots

    # ---- identity helpers --------------------------------------------------------------------------------------

    def uid(self) -> str:
        value = self.rng.getrandbits(128)
        value = (value & ~(0xF000 << 64)) | (0x4000 << 64)  # version 4
        value = (value & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def suffix(self, length: int) -> str:
        return "".join(self.rng.choices(NAME_ALPHABET, k=length))

    def generated_name(self, namespace: str, prefix: str) -> str:
        """`<prefix>-<5 chars>` as controllers name pods, never repeated (5,000 DaemonSet pods would collide)."""
        while True:
            name = f"{prefix}-{self.suffix(5)}"
            if (namespace, name) not in self.pod_names:
                self.pod_names.add((namespace, name))
                return name

    def unique_name(self, kind: str, namespace: str, base: str) -> str:
        name, attempt = base, 1
        while (kind, namespace, name) in self.used_names:
            attempt += 1
            name = f"{base}-{attempt}"
        self.used_names.add((kind, namespace, name))
        return name

    def age_seconds(self) -> int:
        """Minutes to 60 days: a third recent rollouts, a third this week, the rest long-running."""
        roll = self.rng.random()
        if roll < 0.35:
            return int(math.exp(self.rng.uniform(math.log(300), math.log(86400))))
        if roll < 0.62:
            return self.rng.randrange(86400, 7 * 86400)
        return self.rng.randrange(7 * 86400, 60 * 86400)

    def ts(self, epoch: float) -> str:
        return format_epoch(min(epoch, self.now))

    def metadata(self, name: str, namespace: str | None, created: float, labels: dict[str, str] | None = None,
                 owner: Obj | None = None, annotations: dict[str, str] | None = None) -> Obj:
        meta: Obj = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        meta["uid"] = self.uid()
        meta["creationTimestamp"] = self.ts(created)
        if labels:
            meta["labels"] = dict(labels)
        if annotations:
            meta["annotations"] = dict(annotations)
        if owner:
            meta["ownerReferences"] = [dict(owner)]  # a copy: callers reuse one reference for all replicas
        return meta

    @staticmethod
    def owner_ref(obj: Obj) -> Obj:
        return {
            "apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
        }

    # ---- top level ---------------------------------------------------------------------------------------------

    def objects(self) -> Iterator[Obj]:
        yield from self.namespace_objects()
        yield from self.priority_class_objects()
        yield from self.storage_class_objects()
        yield from (self.node_object(node) for node in self.nodes)
        yield from self.platform_workloads()
        yield from self.user_workloads()

    def namespace_objects(self) -> Iterator[Obj]:
        created = self.now - 90 * 86400
        system = ["default", "kube-system", "kube-public", "kube-node-lease"]
        system += self._openshift_namespaces() if self.openshift else ["monitoring", "logging"]
        for name in system + self.namespaces:
            labels = {"kubernetes.io/metadata.name": name}
            if name.startswith("openshift-"):
                labels["openshift.io/cluster-monitoring"] = "true"
            elif name in self.namespaces:
                labels["team"] = name.split("-")[0]
            yield {
                "apiVersion": "v1", "kind": "Namespace", "metadata": self.metadata(name, None, created, labels),
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
            }

    @staticmethod
    def _openshift_namespaces() -> list[str]:
        return [
            "openshift", "openshift-apiserver", "openshift-cluster-node-tuning-operator", "openshift-console",
            "openshift-dns", "openshift-etcd", "openshift-image-registry", "openshift-ingress",
            "openshift-kube-apiserver", "openshift-kube-controller-manager", "openshift-kube-descheduler-operator",
            "openshift-kube-scheduler", "openshift-machine-config-operator", "openshift-marketplace",
            "openshift-monitoring", "openshift-multus", "openshift-oauth-apiserver",
            "openshift-operator-lifecycle-manager", "openshift-ovn-kubernetes",
        ]

    def priority_class_objects(self) -> Iterator[Obj]:
        classes = PRIORITY_CLASSES + (OPENSHIFT_PRIORITY_CLASSES if self.openshift else ())
        for name, value, description in classes:
            yield {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": self.metadata(name, None, self.now - 90 * 86400), "value": value,
                "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority", "description": description,
            }

    def storage_class_name(self) -> str:
        return "ocs-storagecluster-ceph-rbd" if self.openshift else "gp3"

    def storage_class_objects(self) -> Iterator[Obj]:
        provisioner = "openshift-storage.rbd.csi.ceph.com" if self.openshift else "ebs.csi.aws.com"
        yield {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": self.metadata(self.storage_class_name(), None, self.now - 90 * 86400,
                                      annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
            "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }

    # ---- nodes -------------------------------------------------------------------------------------------------

    def node_object(self, node: NodeSlot) -> Obj:
        labels = {
            "kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "topology.kubernetes.io/region": REGION, "topology.kubernetes.io/zone": node.zone,
            "node.kubernetes.io/instance-type": node.instance_type,
        }
        for role in node.role.split(","):
            labels[f"node-role.kubernetes.io/{role}"] = ""
        if node.is_master:
            labels["node-role.kubernetes.io/control-plane"] = ""
        if "worker" in node.role:
            # "hdd" rather than absent: the label was re-written after pods requiring ssd were scheduled
            labels["disktype"] = "ssd" if node.ssd else "hdd"
        if node.dedicated:
            labels["dedicated"] = DEDICATED_TEAM
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": dict(self.metadata(node.name, None, self.now - 120 * 86400, labels), uid=node.uid),
            "spec": self._node_spec(node), "status": self._node_status(node),
        }

    def _node_spec(self, node: NodeSlot) -> Obj:
        taints: list[Obj] = []
        if node.role == "master":
            taints.append(dict(MASTER_TAINT))
        if node.dedicated:
            taints.append({"key": "dedicated", "value": DEDICATED_TEAM, "effect": "NoSchedule"})
        if node.prefer_no_schedule:
            taints.append({"key": "node.example.com/spot-reclaim", "value": "true", "effect": "PreferNoSchedule"})
        if not node.ready:  # what the node lifecycle controller adds once the kubelet stops reporting
            since = self.ts(self.now - 1800)
            taints.append({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": since})
            taints.append({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since})
        if node.cordoned:
            taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                           "timeAdded": self.ts(self.now - 7200)})
        spec: Obj = {"providerID": f"aws:///{node.zone}/i-{node.uid.replace('-', '')[:17]}"}
        if node.cordoned:
            spec["unschedulable"] = True
        if taints:
            spec["taints"] = taints
        return spec

    def _node_status(self, node: NodeSlot) -> Obj:
        capacity_ki = node.memory_gib * 1024 * 1024 - 600 * 1024
        allocatable_ki = node.mem_allocatable_mib * 1024
        ready = self._node_ready_condition(node)
        healthy = [
            {"type": kind, "status": "False", "reason": reason, "lastHeartbeatTime": self.ts(self.now - 30),
             "lastTransitionTime": self.ts(self.now - 100 * 86400)}
            for kind, reason in (("MemoryPressure", "KubeletHasSufficientMemory"),
                                 ("DiskPressure", "KubeletHasNoDiskPressure"),
                                 ("PIDPressure", "KubeletHasSufficientPID"))
        ]
        return {
            "capacity": {"cpu": str(node.cores), "memory": f"{capacity_ki}Ki", "pods": str(node.max_pods),
                         "ephemeral-storage": "125293548Ki"},
            "allocatable": {"cpu": cpu_quantity(node.cpu_allocatable), "memory": f"{allocatable_ki}Ki",
                            "pods": str(node.max_pods), "ephemeral-storage": "114396791822"},
            "conditions": healthy + [ready],
            "addresses": [{"type": "InternalIP", "address": node.internal_ip},
                          {"type": "Hostname", "address": node.name}],
            "nodeInfo": {"kubeletVersion": "v1.34.2", "containerRuntimeVersion": "containerd://2.1.4",
                         "operatingSystem": "linux", "architecture": "amd64",
                         "osImage": "Red Hat Enterprise Linux CoreOS 9.6" if self.openshift else "Bottlerocket OS"},
        }

    def _node_ready_condition(self, node: NodeSlot) -> Obj:
        if node.ready:
            return {"type": "Ready", "status": "True", "reason": "KubeletReady",
                    "message": "kubelet is posting ready status", "lastHeartbeatTime": self.ts(self.now - 30),
                    "lastTransitionTime": self.ts(self.now - 100 * 86400)}
        return {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": self.ts(self.now - 1900),
                "lastTransitionTime": self.ts(self.now - 1800)}

    # ---- pod building blocks -----------------------------------------------------------------------------------

    def scaled_request(self) -> tuple[int, int]:
        cpu, mem, _weight = weighted_choice(self.rng, ((size, size[2]) for size in REQUEST_SIZES))
        jitter = self.rng.uniform(0.7, 1.3)
        cpu_m = max(5, int(round(cpu * self.cpu_scale * jitter / 5.0)) * 5)
        mem_mi = max(16, int(round(mem * self.mem_scale * jitter / 16.0)) * 16)
        return min(cpu_m, self.max_pod_cpu), min(mem_mi, self.max_pod_mem)

    @staticmethod
    def resources(cpu_m: int, mem_mi: int, qos: str) -> Obj:
        if qos == "BestEffort":
            return {}
        requests = {"cpu": cpu_quantity(cpu_m), "memory": memory_quantity(mem_mi)}
        if qos == "Guaranteed":
            return {"requests": requests, "limits": dict(requests)}
        return {"requests": requests, "limits": {"memory": memory_quantity(mem_mi * 2)}}

    @staticmethod
    def container(name: str, image: str, cpu_m: int, mem_mi: int, qos: str, **extra: Any) -> Obj:
        spec: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
                     "resources": ClusterGenerator.resources(cpu_m, mem_mi, qos)}
        spec.update(extra)
        return spec

    def pick_traits(self, kind: str, replicas: int) -> Traits:
        rng = self.rng
        traits = Traits(priority_class=weighted_choice(rng, PRIORITY_WEIGHTS), qos=weighted_choice(rng, QOS_WEIGHTS))
        traits.empty_dir = rng.random() < 0.2
        traits.init_container = rng.random() < 0.15
        traits.sidecar = rng.random() < 0.08
        traits.second_container = rng.random() < 0.15
        traits.runtime_overhead = rng.random() < 0.005
        traits.pod_level_resources = traits.qos == "Burstable" and rng.random() < 0.003
        if rng.random() < 0.004:
            traits.extra_annotations["descheduler.alpha.kubernetes.io/prefer-no-eviction"] = ""
        if kind != "Deployment":
            return traits
        roll = rng.random()
        if roll < 0.10 and replicas >= 3:
            traits.topology_spread, traits.skewed_spread = True, rng.random() < 0.25
            traits.empty_dir = False  # counted by the plugin only if evictable
        elif roll < 0.14 and replicas >= 2:
            traits.anti_affinity = "zone" if replicas <= 3 and rng.random() < 0.3 else "hostname"
            traits.anti_affinity_violated = rng.random() < 0.3
        elif roll < 0.18 and self.ssd_nodes:
            traits.node_affinity, traits.node_affinity_drift = True, rng.random() < 0.35
        elif roll < 0.21 and replicas >= 2:
            traits.packed = True
        elif roll < 0.26:
            traits.preferred_affinity = True
        elif roll < 0.31 and self.dedicated_slots:
            traits.dedicated = True
        return traits

    def pod_shape(self, namespace: str, app: str, traits: Traits, image: str, labels: dict[str, str],
                  restart_policy: str = "Always") -> PodShape:
        """Build the pod template of a workload and its effective requests."""
        rng = self.rng
        qos = traits.qos
        cpu_m, mem_mi = self.scaled_request()
        containers = [self.container(app, image, cpu_m, mem_mi, qos,
                                     ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}])]
        total_cpu, total_mem = (0, 0) if qos == "BestEffort" else (cpu_m, mem_mi)
        if traits.second_container:
            side_cpu, side_mem = max(5, cpu_m // 5), max(32, mem_mi // 4)
            containers.append(self.container("log-shipper", rng.choice(IMAGES["sidecar"]), side_cpu, side_mem, qos))
            if qos != "BestEffort":
                total_cpu, total_mem = total_cpu + side_cpu, total_mem + side_mem
        init: list[Obj] = []
        sidecars: list[str] = []
        init_names: list[str] = []
        if traits.sidecar:
            side_cpu, side_mem = 50, 64
            init.append(self.container("istio-proxy", "istio/proxyv2:1.28.0", side_cpu, side_mem, qos,
                                       restartPolicy="Always"))
            sidecars.append("istio-proxy")
            if qos != "BestEffort":
                total_cpu, total_mem = total_cpu + side_cpu, total_mem + side_mem
        if traits.init_container:
            # a heavy one-off step: it can exceed the app's steady-state request, which PodRequests must honour
            init_cpu, init_mem = min(cpu_m * rng.choice((1, 2)), self.max_pod_cpu), mem_mi
            init.append(self.container("init-migrate", rng.choice(IMAGES["init"]), init_cpu, init_mem, qos,
                                       command=["/bin/sh", "-c", "migrate up"]))
            init_names.append("init-migrate")
            if qos != "BestEffort":
                before = (50, 64) if sidecars else (0, 0)  # sidecars declared earlier run beside it
                total_cpu = max(total_cpu, init_cpu + before[0])
                total_mem = max(total_mem, init_mem + before[1])
        spec: Obj = {"containers": containers}
        if init:
            spec["initContainers"] = init
        spec.update(self._placement_spec(traits, labels))
        if traits.empty_dir:
            spec["volumes"] = [{"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}]
            containers[0]["volumeMounts"] = [{"name": "cache", "mountPath": "/var/cache/app"}]
        if traits.runtime_overhead:
            spec["runtimeClassName"] = "kata"
            spec["overhead"] = {"cpu": "250m", "memory": "160Mi"}
            total_cpu, total_mem = total_cpu + 250, total_mem + 160
        if traits.pod_level_resources:
            spec["resources"] = {"requests": {"cpu": cpu_quantity(total_cpu + 100), "memory": memory_quantity(
                total_mem + 128)}}
            total_cpu, total_mem = total_cpu + 100, total_mem + 128
        priority = self._priority_of(traits.priority_class)
        if traits.priority_class:
            spec["priorityClassName"] = traits.priority_class
        spec.update({
            "priority": priority, "restartPolicy": restart_policy, "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        })
        return PodShape(
            namespace=namespace, app=app, labels=labels, spec_json=json.dumps(spec), qos=qos, cpu_m=total_cpu,
            mem_mi=total_mem, containers=[c["name"] for c in containers], init_containers=init_names,
            sidecars=sidecars,
        )

    @staticmethod
    def _priority_of(class_name: str | None) -> int:
        # what the Priority admission plugin writes into spec.priority
        return PRIORITY_VALUES.get(class_name, 0) if class_name else 0

    def _placement_spec(self, traits: Traits, labels: dict[str, str]) -> Obj:
        """nodeSelector, affinity, tolerations and topology spread constraints of a template."""
        rng = self.rng
        app = {"app": labels["app"]}
        spec: Obj = {}
        tolerations = [dict(t) for t in DEFAULT_TOLERATIONS]
        affinity: Obj = {}
        if traits.dedicated:
            spec["nodeSelector"] = {"dedicated": DEDICATED_TEAM}
            tolerations.insert(0, {"key": "dedicated", "operator": "Equal", "value": DEDICATED_TEAM,
                                   "effect": "NoSchedule"})
        if traits.node_affinity:
            affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}]}}
        if traits.preferred_affinity:
            affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]}]}},
                {"weight": 20, "preference": {"matchExpressions": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m6i.4xlarge"]}]}},
            ]}
        if traits.anti_affinity:
            key = "kubernetes.io/hostname" if traits.anti_affinity == "hostname" else "topology.kubernetes.io/zone"
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": app}, "topologyKey": key}]}
        elif rng.random() < 0.15:
            affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": app},
                                                    "topologyKey": "kubernetes.io/hostname"}}]}
        if affinity:
            spec["affinity"] = affinity
        if traits.topology_spread:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": app}},
                {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": app}, "matchLabelKeys": ["pod-template-hash"]},
            ]
        spec["tolerations"] = tolerations
        return spec

    # ---- placement ---------------------------------------------------------------------------------------------

    def take_slot(self) -> NodeSlot:
        if self.slots:
            return self.nodes[self.slots.pop()]
        return self.rng.choice(self.general)

    def take_dedicated_slot(self) -> NodeSlot:
        if self.dedicated_slots:
            return self.nodes[self.dedicated_slots.pop()]
        return self.rng.choice(self.dedicated_nodes or self.general)

    def place(self, shape: PodShape) -> NodeSlot:
        """Put one pod on the next slot's node, or elsewhere if that would overcommit the node."""
        node = self.take_slot()
        if not node.has_room(shape.cpu_m, shape.mem_mi):
            node = self.node_with_room(self.general, shape.cpu_m, shape.mem_mi, avoid_hot=True) or node
        self.account(node, shape.cpu_m, shape.mem_mi)
        return node

    def node_with_room(self, pool: list[NodeSlot], cpu_m: int, mem_mi: int, avoid_hot: bool = False,
                       exclude: Iterable[NodeSlot] = ()) -> NodeSlot | None:
        """A random node of `pool` that can take the request (a scheduler would not have overcommitted)."""
        if not pool:
            return None
        skip = {n.index for n in exclude}

        def fits(node: NodeSlot) -> bool:
            return (node.index not in skip and node.has_room(cpu_m, mem_mi)
                    and not (avoid_hot and node.load == "hot"))

        for node in self.rng.sample(pool, min(12, len(pool))):  # cheap first: usually one of these fits
            if fits(node):
                return node
        offset = self.rng.randrange(len(pool))
        return next((n for n in pool[offset:] + pool[:offset] if fits(n)), None)

    def pick_in(self, pool: list[NodeSlot], shape: PodShape, count: int = 1,
                exclude: Iterable[NodeSlot] = ()) -> NodeSlot:
        """A node of `pool` with room for `count` replicas, accounted for all of them."""
        cpu_m, mem_mi = shape.cpu_m * count, shape.mem_mi * count
        node = (self.node_with_room(pool, cpu_m, mem_mi, exclude=exclude)
                or self.node_with_room(self.general, cpu_m, mem_mi, exclude=exclude)
                or self.rng.choice(pool or self.general))
        for _replica in range(count):
            self.account(node, shape.cpu_m, shape.mem_mi)
        return node

    @staticmethod
    def account(node: NodeSlot, cpu_m: int, mem_mi: int) -> None:
        node.cpu_used += cpu_m
        node.mem_used += mem_mi
        node.pods += 1

    def deployment_nodes(self, traits: Traits, replicas: int, shape: PodShape) -> list[NodeSlot | None]:
        """Where each replica lands (already accounted); None means 'next slot'. Violations are placed on purpose."""
        rng = self.rng
        if traits.dedicated:
            return [self.dedicated_node(shape) for _replica in range(replicas)]
        if traits.packed:  # what RemoveDuplicates looks for
            return [self.pick_in(self.general, shape, replicas)] * replicas
        if traits.topology_spread:
            start = rng.randrange(len(ZONES))
            zones = [ZONES[start]] * replicas if traits.skewed_spread else [
                ZONES[(start + i) % len(ZONES)] for i in range(replicas)]
            return [self.pick_in(self.by_zone[zone], shape) for zone in zones]
        if traits.anti_affinity == "hostname":
            nodes = [self.pick_in(self.general, shape, 2 if traits.anti_affinity_violated else 1)]
            if traits.anti_affinity_violated:
                nodes.append(nodes[0])
            while len(nodes) < replicas:
                nodes.append(self.pick_in(self.general, shape, exclude=nodes))
            return nodes
        if traits.anti_affinity == "zone":
            zones = rng.sample(ZONES, replicas)
            if traits.anti_affinity_violated:
                zones[1] = zones[0]
            return [self.pick_in(self.by_zone[zone], shape) for zone in zones]
        if traits.node_affinity:
            # with drift, the first replica sits on a node whose disktype label was since changed to hdd
            return [self.pick_in(self.non_ssd_nodes if traits.node_affinity_drift and i == 0 else self.ssd_nodes,
                                 shape) for i in range(replicas)]
        return [None] * replicas

    def dedicated_node(self, shape: PodShape) -> NodeSlot:
        node = self.take_dedicated_slot()
        if not node.has_room(shape.cpu_m, shape.mem_mi):
            return self.pick_in(self.dedicated_nodes, shape)
        self.account(node, shape.cpu_m, shape.mem_mi)
        return node

    # ---- pods --------------------------------------------------------------------------------------------------

    def pod(self, shape: PodShape, name: str, node: NodeSlot | None, owner: Obj | None, created: float,
            outcome: str = "running", extra_labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, volumes: list[Obj] | None = None,
            spec_extra: Obj | None = None) -> Obj:
        """One Pod object. `outcome`: running | crashloop | succeeded | failed | oomkilled | evicted | pending |
        terminating."""
        labels = dict(shape.labels, **extra_labels) if extra_labels else shape.labels
        meta = self.metadata(name, shape.namespace, created, labels, owner, annotations)
        spec = shape.new_spec()
        if volumes:
            spec["volumes"] = spec.get("volumes", []) + volumes
        if spec_extra:
            spec.update(spec_extra)
        if node is not None:
            spec["nodeName"] = node.name
        if outcome == "terminating":
            meta["deletionTimestamp"] = self.ts(self.now - 20)
            meta["deletionGracePeriodSeconds"] = 30
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                "status": self.pod_status(shape, node, created, outcome)}

    def restarts(self) -> int:
        roll = self.rng.random()
        if roll < 0.85:
            return 0
        if roll < 0.95:
            return self.rng.randrange(1, 11)
        if roll < 0.995:
            return self.rng.randrange(11, 100)
        return self.rng.randrange(100, 301)

    def pod_status(self, shape: PodShape, node: NodeSlot | None, created: float, outcome: str) -> Obj:
        if node is None or outcome == "pending":
            return {"phase": "Pending", "qosClass": shape.qos, "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "lastTransitionTime": self.ts(created),
                 "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        started = min(created + self.rng.randrange(1, 20), self.now)
        status: Obj = {"phase": "Running", "qosClass": shape.qos, "hostIP": node.internal_ip,
                       "podIP": f"10.128.{self.rng.randrange(256)}.{self.rng.randrange(1, 255)}",
                       "startTime": self.ts(started)}
        if outcome in ("succeeded", "failed", "oomkilled"):
            self._finished_status(status, shape, started, outcome)
        elif outcome == "evicted":
            status.update(phase="Failed", reason="Evicted",
                          message="The node was low on resource: memory. Threshold quantity: 100Mi.")
            status["containerStatuses"] = [self._terminated(c, started, "ContainerStatusUnknown", 137, 0)
                                           for c in shape.containers]
        else:
            self._running_status(status, shape, started, outcome)
        return status

    def _running_status(self, status: Obj, shape: PodShape, started: float, outcome: str) -> None:
        restarts = self.rng.randrange(100, 301) if outcome == "crashloop" else self.restarts()
        crashloop = outcome == "crashloop" or (restarts >= 100 and self.rng.random() < 0.5)
        ready = "False" if crashloop else "True"
        status["conditions"] = [
            {"type": "Initialized", "status": "True", "lastTransitionTime": self.ts(started + 2)},
            {"type": "Ready", "status": ready, "lastTransitionTime": self.ts(started + 10)},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": self.ts(started + 10)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.ts(started - 1)},
        ]
        statuses = []
        for index, name in enumerate(shape.containers):
            if index == 0 and (restarts or crashloop):
                statuses.append(self._restarted(name, started, restarts, crashloop))
            else:
                statuses.append({"name": name, "ready": True, "started": True, "restartCount": 0,
                                 "state": {"running": {"startedAt": self.ts(started + 3)}}})
        status["containerStatuses"] = statuses
        init_statuses = [self._terminated(name, started, "Completed", 0, 0) for name in shape.init_containers]
        init_statuses += [{"name": name, "ready": True, "started": True, "restartCount": 0,
                           "state": {"running": {"startedAt": self.ts(started + 1)}}} for name in shape.sidecars]
        if init_statuses:
            status["initContainerStatuses"] = init_statuses

    def _restarted(self, name: str, started: float, restarts: int, crashloop: bool) -> Obj:
        last_exit = self.now - self.rng.randrange(30, 600)
        last = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": self.ts(last_exit - 40),
                               "finishedAt": self.ts(last_exit)}}
        if crashloop:
            state = {"waiting": {"reason": "CrashLoopBackOff",
                                 "message": f"back-off 5m0s restarting failed container={name}"}}
        else:
            state = {"running": {"startedAt": self.ts(last_exit + 10)}}
        return {"name": name, "ready": not crashloop, "started": not crashloop, "restartCount": restarts,
                "state": state, "lastState": last}

    def _terminated(self, name: str, started: float, reason: str, exit_code: int, restarts: int) -> Obj:
        finished = min(started + self.rng.randrange(5, 900), self.now)
        return {"name": name, "ready": False, "started": False, "restartCount": restarts,
                "state": {"terminated": {"exitCode": exit_code, "reason": reason,
                                         "startedAt": self.ts(started + 2), "finishedAt": self.ts(finished)}}}

    def _finished_status(self, status: Obj, shape: PodShape, started: float, outcome: str) -> None:
        reason, code = {"succeeded": ("Completed", 0), "oomkilled": ("OOMKilled", 137)}.get(
            outcome, ("Error", self.rng.choice((1, 1, 2, 126))))
        status["phase"] = "Succeeded" if outcome == "succeeded" else "Failed"
        status["conditions"] = [{"type": "Ready", "status": "False", "reason": "PodCompleted",
                                 "lastTransitionTime": self.ts(started + 60)}]
        status["containerStatuses"] = [self._terminated(c, started, reason, code, 0) for c in shape.containers]

    def replica_outcome(self) -> str:
        roll = self.rng.random()
        if roll < 0.002:
            return "crashloop"
        if roll < 0.004:
            return "terminating"
        return "running"

    # ---- workloads ---------------------------------------------------------------------------------------------

    def user_workloads(self) -> Iterator[Obj]:
        rng = self.rng
        while self.slots:
            kind = weighted_choice(rng, (("Deployment", 74), ("StatefulSet", 8), ("Job", 14), ("Pod", 4)))
            namespace = rng.choice(self.namespaces)
            replicas = min(self.replicas(), len(self.slots))  # the last workload only takes what is left
            if kind == "Deployment":
                yield from self.deployment(namespace, replicas)
            elif kind == "StatefulSet":
                yield from self.statefulset(namespace, min(replicas, 5))
            elif kind == "Job":
                yield from self.job(namespace)
            else:
                yield from self.bare_pod(namespace)
        while self.dedicated_slots:  # fill the dedicated nodes with the workloads they were tainted for
            replicas = min(self.replicas(), len(self.dedicated_slots))
            yield from self.deployment(rng.choice(self.namespaces), replicas, dedicated=True)

    def replicas(self) -> int:
        roll = self.rng.random()
        if roll < 0.25:
            return 1
        if roll < 0.5:
            return 2
        if roll < 0.75:
            return 3
        if roll < 0.9:
            return self.rng.randrange(4, 7)
        if roll < 0.98:
            return self.rng.randrange(7, 16)
        return self.rng.randrange(16, 41)

    def deployment(self, namespace: str, replicas: int, dedicated: bool = False) -> Iterator[Obj]:
        rng = self.rng
        app = self.unique_name("Deployment", namespace, rng.choice(APP_WORDS))
        traits = self.pick_traits("Deployment", replicas)
        if dedicated:
            traits = Traits(priority_class=traits.priority_class, qos=traits.qos, dedicated=True)
        created = self.now - (self.rng.randrange(600, 40 * 3600) if traits.fresh_violation else self.age_seconds())
        tag = f"v{rng.randrange(1, 5)}.{rng.randrange(0, 30)}.{rng.randrange(0, 10)}"
        image = IMAGES["app"][0].format(ns=namespace, app=app, tag=tag)
        template_hash = self.suffix(10)
        labels = {"app": app, "app.kubernetes.io/name": app, "pod-template-hash": template_hash}
        shape = self.pod_shape(namespace, app, traits, image, labels)
        deployment = self.workload_object("apps/v1", "Deployment", app, namespace, created, replicas, shape,
                                          {"app": app})
        yield deployment
        rs_name = f"{app}-{template_hash}"
        replicaset = self.workload_object(
            "apps/v1", "ReplicaSet", rs_name, namespace, created, replicas, shape,
            {"app": app, "pod-template-hash": template_hash}, owner=self.owner_ref(deployment),
            annotations={"deployment.kubernetes.io/revision": str(rng.randrange(1, 12)),
                         "deployment.kubernetes.io/desired-replicas": str(replicas)})
        yield replicaset
        owner = self.owner_ref(replicaset)
        annotations = dict(traits.extra_annotations) or None
        for preferred in self.deployment_nodes(traits, replicas, shape):
            if preferred is not None:
                if not traits.dedicated:  # keep the pod count on target even for hand-placed replicas
                    self.take_slot()
                node = preferred
            else:
                node = self.place(shape)
            pod_created = created + rng.randrange(5, 120) if rng.random() < 0.8 else rng.uniform(created, self.now)
            name = self.generated_name(namespace, rs_name)
            yield self.pod(shape, name, node, owner, pod_created, self.replica_outcome(), annotations=annotations)
        yield from self.deployment_leftovers(shape, rs_name, owner, created)
        if replicas >= 2 and rng.random() < 0.3:
            yield self.pdb(namespace, app, replicas)

    def deployment_leftovers(self, shape: PodShape, rs_name: str, owner: Obj, created: float) -> Iterator[Obj]:
        """Pods a real ReplicaSet leaves behind: kubelet-evicted ones (Failed) and ones that never got scheduled."""
        rng = self.rng
        if rng.random() < 0.02:
            for _evicted in range(rng.randrange(1, 4)):
                node = self.take_slot()
                node.pods += 1
                yield self.pod(shape, self.generated_name(shape.namespace, rs_name), node, owner,
                               rng.uniform(created, self.now - 3600), "evicted")
        if rng.random() < 0.003:
            yield self.pod(shape, self.generated_name(shape.namespace, rs_name), None, owner,
                           self.now - rng.randrange(60, 3600), "pending")

    def workload_object(self, api_version: str, kind: str, name: str, namespace: str, created: float,
                        replicas: int, shape: PodShape, selector: dict[str, str], owner: Obj | None = None,
                        annotations: dict[str, str] | None = None, extra_spec: Obj | None = None) -> Obj:
        template_labels = {k: v for k, v in shape.labels.items() if k != "pod-template-hash" or kind != "Deployment"}
        spec: Obj = {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": template_labels}, "spec": shape.new_spec()}}
        if extra_spec:
            spec.update(extra_spec)
        return {
            "apiVersion": api_version, "kind": kind,
            "metadata": self.metadata(name, namespace, created, {"app": shape.app}, owner, annotations),
            "spec": spec,
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                       "observedGeneration": 1},
        }

    def pdb(self, namespace: str, app: str, replicas: int) -> Obj:
        rule = weighted_choice(self.rng, (("minAvailable", 45), ("maxUnavailable", 45), ("blocking", 10)))
        if rule == "minAvailable":
            spec: Obj = {"minAvailable": self.rng.choice((1, "50%"))}
            allowed = replicas - 1 if spec["minAvailable"] == 1 else replicas - math.ceil(replicas / 2)
        elif rule == "maxUnavailable":
            spec, allowed = {"maxUnavailable": 1}, 1
        else:  # a budget that forbids every voluntary disruption: evictions get HTTP 429
            spec, allowed = {"maxUnavailable": 0}, 0
        spec["selector"] = {"matchLabels": {"app": app}}
        return {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": self.metadata(f"{app}-pdb", namespace, self.now - 30 * 86400, {"app": app}),
            "spec": spec,
            "status": {"currentHealthy": replicas, "desiredHealthy": replicas - allowed,
                       "disruptionsAllowed": allowed, "expectedPods": replicas, "observedGeneration": 1},
        }

    def statefulset(self, namespace: str, replicas: int) -> Iterator[Obj]:
        rng = self.rng
        app = self.unique_name("StatefulSet", namespace, rng.choice(("postgres", "redis", "kafka", "mongo", "es")))
        traits = self.pick_traits("StatefulSet", replicas)
        traits.qos = "Guaranteed" if rng.random() < 0.5 else "Burstable"
        created = self.now - self.age_seconds()
        revision = f"{app}-{self.suffix(10)}"
        labels = {"app": app, "app.kubernetes.io/name": app, "controller-revision-hash": revision}
        shape = self.pod_shape(namespace, app, traits, rng.choice(IMAGES["db"]), labels)
        storage_class = self.storage_class_name()
        claim_template = {"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
            "resources": {"requests": {"storage": f"{rng.choice((10, 20, 50, 100))}Gi"}}}}
        sts = self.workload_object("apps/v1", "StatefulSet", app, namespace, created, replicas, shape,
                                   {"app": app}, extra_spec={"serviceName": app,
                                                             "volumeClaimTemplates": [claim_template]})
        yield sts
        owner = self.owner_ref(sts)
        for index in range(replicas):
            claim = f"data-{app}-{index}"
            yield self.pvc(namespace, claim, app, storage_class, claim_template, created)
            node = self.place(shape)
            yield self.pod(
                shape, f"{app}-{index}", node, owner, created + 30 * index + rng.randrange(5, 30),
                self.replica_outcome(),
                extra_labels={"statefulset.kubernetes.io/pod-name": f"{app}-{index}",
                              "apps.kubernetes.io/pod-index": str(index)},
                volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
                spec_extra={"hostname": f"{app}-{index}", "subdomain": app})

    def pvc(self, namespace: str, name: str, app: str, storage_class: str, template: Obj, created: float) -> Obj:
        size = template["spec"]["resources"]["requests"]["storage"]
        return {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": self.metadata(name, namespace, created, {"app": app}),
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem",
                     "volumeName": f"pvc-{self.uid()}"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}},
        }

    def job(self, namespace: str) -> Iterator[Obj]:
        rng = self.rng
        base = self.unique_name("CronJob", namespace, rng.choice(("nightly-report", "cleanup", "backup", "etl",
                                                                  "reindex", "sync", "export", "billing-run")))
        traits = self.pick_traits("Job", 1)
        traits.empty_dir = rng.random() < 0.3
        owner: Obj | None = None
        if rng.random() < 0.6:
            cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
                       "metadata": self.metadata(base, namespace, self.now - 60 * 86400, {"app": base}),
                       "spec": {"schedule": rng.choice(("0 2 * * *", "*/30 * * * *", "15 * * * *")),
                                "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {"backoffLimit": 3}}}}
            yield cronjob
            owner = self.owner_ref(cronjob)
        job_name = f"{base}-{rng.randrange(29000000, 29400000)}" if owner else base
        created = self.now - self.age_seconds() if rng.random() < 0.5 else self.now - rng.randrange(600, 86400)
        labels = {"app": base, "job-name": job_name, "batch.kubernetes.io/job-name": job_name}
        image = rng.choice(IMAGES["job"]).format(app=base, tag=f"{rng.randrange(1, 9)}.{rng.randrange(0, 20)}")
        shape = self.pod_shape(namespace, base, traits, image, labels, restart_policy="Never")
        outcomes = self.job_outcomes()
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": self.metadata(job_name, namespace, created, labels, owner),
               "spec": {"backoffLimit": 3, "completions": 1, "parallelism": 1,
                        "template": {"metadata": {"labels": labels}, "spec": shape.new_spec()}},
               "status": self.job_status(outcomes, created)}
        yield job
        job_owner = self.owner_ref(job)
        for attempt, outcome in enumerate(outcomes):
            node = self.take_slot()
            if outcome == "running":
                self.account(node, shape.cpu_m, shape.mem_mi)
            else:
                node.pods += 1  # terminal pods hold no resources but still sit on the node
            name = self.generated_name(namespace, job_name)
            yield self.pod(shape, name, node, job_owner, created + attempt * 90, outcome)

    def job_outcomes(self) -> list[str]:
        roll = self.rng.random()
        if roll < 0.45:
            return ["succeeded"]
        if roll < 0.65:
            return ["running"]
        if roll < 0.8:
            return ["failed", "succeeded"]
        if roll < 0.92:
            return ["failed"] * 4  # backoffLimit 3 exhausted: the Job is Failed
        return ["oomkilled", "oomkilled"]

    def job_status(self, outcomes: list[str], created: float) -> Obj:
        status: Obj = {"startTime": self.ts(created)}
        failed = sum(1 for o in outcomes if o in ("failed", "oomkilled"))
        if failed:
            status["failed"] = failed
        if "succeeded" in outcomes:
            status["succeeded"] = 1
            status["completionTime"] = self.ts(created + 90 * len(outcomes) + 60)
        elif "running" in outcomes:
            status["active"] = 1
        return status

    def bare_pod(self, namespace: str) -> Iterator[Obj]:
        rng = self.rng
        app = self.unique_name("Pod", namespace, rng.choice(("debug", "netshoot", "migration-runner", "tmp-shell",
                                                             "load-test", "psql-client")))
        traits = self.pick_traits("Pod", 1)
        annotations = dict(traits.extra_annotations)
        if rng.random() < 0.15:  # a user asked the descheduler to take it away
            annotations["descheduler.alpha.kubernetes.io/evict"] = "true"
        shape = self.pod_shape(namespace, app, traits, "nicolaka/netshoot:v0.14", {"run": app, "app": app},
                               restart_policy=rng.choice(("Always", "Never")))
        outcome = weighted_choice(rng, (("running", 70), ("failed", 20), ("succeeded", 10)))
        node = self.place(shape) if outcome == "running" else self.take_slot()
        if outcome != "running":
            node.pods += 1
        yield self.pod(shape, app, node, None, self.now - self.age_seconds(), outcome, annotations=annotations or None)

    # ---- platform (system) workloads ---------------------------------------------------------------------------

    def platform_workloads(self) -> Iterator[Obj]:
        for namespace, name, cpu_m, mem_mi, host_path in self.daemonsets:
            yield from self.daemonset(namespace, name, cpu_m, mem_mi, host_path)
        if self.openshift:
            yield from self.openshift_control_plane()
            yield from self.openshift_services()
        else:
            yield from self.kubernetes_services()

    def system_shape(self, namespace: str, name: str, cpu_m: int, mem_mi: int, priority_class: str,
                     tolerations: Iterable[Obj], host_path: str | None = None, node_selector: dict | None = None,
                     anti_affinity: bool = False, labels: dict[str, str] | None = None) -> PodShape:
        labels = labels or {"app": name}
        spec: Obj = {"containers": [self.container(name, f"registry.example.com/platform/{name}:4.20",
                                                   cpu_m, mem_mi, "Burstable")],
                     "priorityClassName": priority_class, "priority": self._priority_of(priority_class),
                     "tolerations": [dict(t) for t in tolerations], "restartPolicy": "Always",
                     "schedulerName": "default-scheduler", "serviceAccountName": name}
        if host_path:
            spec["volumes"] = [{"name": "host", "hostPath": {"path": host_path, "type": "Directory"}}]
        if node_selector:
            spec["nodeSelector"] = node_selector
        if anti_affinity:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": "kubernetes.io/hostname"}]}}
        return PodShape(namespace=namespace, app=name, labels=labels, spec_json=json.dumps(spec), qos="Burstable",
                        cpu_m=cpu_m, mem_mi=mem_mi, containers=[name], init_containers=[], sidecars=[])

    def daemonset(self, namespace: str, name: str, cpu_m: int, mem_mi: int, host_path: bool) -> Iterator[Obj]:
        created = self.now - self.rng.randrange(2 * 86400, 40 * 86400)
        revision = self.suffix(10)
        labels = {"app": name, "controller-revision-hash": revision, "pod-template-generation": "3"}
        shape = self.system_shape(namespace, name, cpu_m, mem_mi, "system-node-critical", TOLERATE_EVERYTHING,
                                  "/var/log" if host_path else None, labels=labels)
        ds = self.workload_object("apps/v1", "DaemonSet", name, namespace, created, len(self.nodes), shape,
                                  {"app": name})
        del ds["spec"]["replicas"]
        ds["status"] = {"desiredNumberScheduled": len(self.nodes), "numberReady": len(self.nodes),
                        "currentNumberScheduled": len(self.nodes), "numberMisscheduled": 0}
        yield ds
        owner = self.owner_ref(ds)
        for node in self.nodes:
            self.account(node, cpu_m, mem_mi)
            # the DaemonSet controller pins each pod to its node with a matchFields term
            pin = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}}}}
            yield self.pod(shape, self.generated_name(namespace, name), node, owner,
                           created + self.rng.randrange(1, 600), spec_extra=pin)

    def fixed_deployment(self, namespace: str, name: str, replicas: int, cpu_m: int, mem_mi: int, nodes: list[NodeSlot],
                         priority_class: str = "system-cluster-critical", tolerations: Iterable[Obj] = (),
                         node_selector: dict | None = None, anti_affinity: bool = True,
                         empty_dir: bool = False) -> Iterator[Obj]:
        """A platform Deployment with replicas spread over `nodes` in order."""
        template_hash = self.suffix(10)
        labels = {"app": name, "pod-template-hash": template_hash}
        shape = self.system_shape(namespace, name, cpu_m, mem_mi, priority_class,
                                  list(tolerations) + list(DEFAULT_TOLERATIONS), node_selector=node_selector,
                                  anti_affinity=anti_affinity, labels=labels)
        if empty_dir:
            spec = shape.new_spec()
            spec["volumes"] = [{"name": "tmp", "emptyDir": {}}]
            shape.spec_json = json.dumps(spec)
        created = self.now - self.rng.randrange(3 * 86400, 50 * 86400)
        deployment = self.workload_object("apps/v1", "Deployment", name, namespace, created, replicas, shape,
                                          {"app": name})
        rs = self.workload_object("apps/v1", "ReplicaSet", f"{name}-{template_hash}", namespace, created, replicas,
                                  shape, {"app": name, "pod-template-hash": template_hash},
                                  owner=self.owner_ref(deployment))
        yield deployment
        yield rs
        for index in range(replicas):
            node = nodes[index % len(nodes)]
            self.account(node, cpu_m, mem_mi)
            yield self.pod(shape, self.generated_name(namespace, f"{name}-{template_hash}"), node, self.owner_ref(rs),
                           created + self.rng.randrange(5, 300))

    def system_statefulset(self, namespace: str, name: str, replicas: int, cpu_m: int, mem_mi: int,
                           nodes: list[NodeSlot], priority_class: str) -> Iterator[Obj]:
        shape = self.system_shape(namespace, name, cpu_m, mem_mi, priority_class, DEFAULT_TOLERATIONS,
                                  labels={"app": name})
        created = self.now - self.rng.randrange(10 * 86400, 50 * 86400)
        template = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "storageClassName": self.storage_class_name(), "resources": {"requests": {"storage": "100Gi"}}}}
        sts = self.workload_object("apps/v1", "StatefulSet", name, namespace, created, replicas, shape,
                                   {"app": name}, extra_spec={"serviceName": name,
                                                              "volumeClaimTemplates": [template]})
        yield sts
        for index in range(replicas):
            claim = f"data-{name}-{index}"
            yield self.pvc(namespace, claim, name, self.storage_class_name(), template, created)
            node = nodes[index % len(nodes)]
            self.account(node, cpu_m, mem_mi)
            yield self.pod(shape, f"{name}-{index}", node, self.owner_ref(sts), created + 60 * index,
                           extra_labels={"statefulset.kubernetes.io/pod-name": f"{name}-{index}"},
                           volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])

    def spread_nodes(self, count: int) -> list[NodeSlot]:
        pool = [n for n in self.general if "worker" in n.role and n.ready and not n.cordoned] or self.general
        return self.rng.sample(pool, min(count, len(pool)))

    def kubernetes_services(self) -> Iterator[Obj]:
        yield from self.fixed_deployment("kube-system", "coredns", 2, 100, 70, self.spread_nodes(2))
        yield from self.fixed_deployment("kube-system", "metrics-server", 1, 100, 200, self.spread_nodes(1),
                                         empty_dir=True)
        yield from self.fixed_deployment("kube-system", "ebs-csi-controller", 2, 60, 240, self.spread_nodes(2))
        yield from self.system_statefulset("monitoring", "prometheus", 1, 500, 2048, self.spread_nodes(1),
                                           "high-priority")

    def openshift_control_plane(self) -> Iterator[Obj]:
        masters = [n for n in self.nodes if n.is_master]
        master_selector = {"node-role.kubernetes.io/master": ""}
        for node in masters:
            yield from self.mirror_pods(node)
        for namespace, name, cpu_m, mem_mi in (
            ("openshift-apiserver", "apiserver", 110, 250), ("openshift-oauth-apiserver", "apiserver", 150, 200),
            ("openshift-console", "console", 10, 100),
            ("openshift-operator-lifecycle-manager", "olm-operator", 10, 160),
            ("openshift-kube-descheduler-operator", "descheduler-operator", 10, 50),
            ("openshift-kube-descheduler-operator", "descheduler", 100, 500),
        ):
            replicas = len(masters) if name == "apiserver" else (2 if name == "console" else 1)
            yield from self.fixed_deployment(namespace, name, replicas, cpu_m, mem_mi, masters,
                                             tolerations=MASTER_TOLERATIONS, node_selector=master_selector)
        yield from self.catalog_pod(masters[0])

    def mirror_pods(self, node: NodeSlot) -> Iterator[Obj]:
        """Static pods of a master as the API shows them: mirror pods owned by the Node."""
        node_owner = {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid, "controller": True}
        for namespace, name, cpu_m, mem_mi in (
            ("openshift-etcd", "etcd", 300, 600), ("openshift-kube-apiserver", "kube-apiserver", 290, 1224),
            ("openshift-kube-controller-manager", "kube-controller-manager", 60, 200),
            ("openshift-kube-scheduler", "openshift-kube-scheduler", 15, 50),
        ):
            config_hash = f"{self.rng.getrandbits(128):032x}"
            shape = self.system_shape(namespace, name, cpu_m, mem_mi, "system-node-critical", TOLERATE_EVERYTHING,
                                      "/etc/kubernetes/static-pod-resources", labels={"app": name, name: "true"})
            self.account(node, cpu_m, mem_mi)
            annotations = {"kubernetes.io/config.mirror": config_hash, "kubernetes.io/config.hash": config_hash,
                           "kubernetes.io/config.source": "file",
                           "kubernetes.io/config.seen": self.ts(self.now - 20 * 86400)}
            yield self.pod(shape, f"{name}-{node.name}", node, node_owner, self.now - 20 * 86400,
                           annotations=annotations, spec_extra={"hostNetwork": True})

    def catalog_pod(self, node: NodeSlot) -> Iterator[Obj]:
        """OLM catalog pods are owned by a CatalogSource, a kind the descheduler knows nothing about."""
        shape = self.system_shape("openshift-marketplace", "redhat-operators", 10, 50, "system-cluster-critical",
                                  list(MASTER_TOLERATIONS) + list(DEFAULT_TOLERATIONS),
                                  node_selector={"node-role.kubernetes.io/master": ""},
                                  labels={"olm.catalogSource": "redhat-operators"})
        owner = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource", "name": "redhat-operators",
                 "uid": self.uid(), "controller": False, "blockOwnerDeletion": False}
        self.account(node, 10, 50)
        name = self.generated_name("openshift-marketplace", "redhat-operators")
        yield self.pod(shape, name, node, owner, self.now - 6 * 3600)

    def openshift_services(self) -> Iterator[Obj]:
        yield from self.fixed_deployment("openshift-ingress", "router-default", 2, 100, 256, self.spread_nodes(2))
        yield from self.fixed_deployment("openshift-monitoring", "thanos-querier", 2, 15, 92, self.spread_nodes(2),
                                         anti_affinity=False)
        yield from self.fixed_deployment("openshift-image-registry", "image-registry", 2, 100, 256,
                                         self.spread_nodes(2), empty_dir=True)
        yield from self.system_statefulset("openshift-monitoring", "prometheus-k8s", 2, 70, 1024,
                                           self.spread_nodes(2), "system-cluster-critical")
        yield from self.system_statefulset("openshift-monitoring", "alertmanager-main", 2, 9, 120,
                                           self.spread_nodes(2), "system-cluster-critical")


# --------------------------------------------------------------------------------------------------------------
# Public API


def iter_cluster(nodes: int, pods_per_node: int, seed: int = 1, now: datetime | str = DEFAULT_NOW,
                 flavor: str = "kubernetes") -> Iterator[Obj]:
    """Yield every object of the synthetic cluster; each is checked with `validate_object`."""
    moment = parse_time(now) if isinstance(now, str) else now
    for obj in ClusterGenerator(nodes, pods_per_node, seed, moment, flavor).objects():
        problems = validate_object(obj)
        if problems:
            raise ValueError(f"generated an invalid {obj.get('kind')}: {', '.join(problems)}")
        yield obj


def build_cluster(nodes: int, pods_per_node: int, seed: int = 1, now: datetime | str = DEFAULT_NOW,
                  flavor: str = "kubernetes") -> list[Obj]:
    return list(iter_cluster(nodes, pods_per_node, seed, now, flavor))


def open_output(path: str) -> TextIO:
    if path == "-":
        return sys.stdout
    if path.endswith(".gz"):
        # level 5: most of the size win of 9 at a fraction of the time; mtime 0 keeps the file reproducible
        return io.TextIOWrapper(gzip.GzipFile(path, "wb", compresslevel=5, mtime=0), encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def write_json_list(objects: Iterable[Obj], stream: TextIO) -> Counter[str]:
    """Stream a `kind: List` one item at a time so the whole document never sits in memory."""
    counts: Counter[str] = Counter()
    stream.write('{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [\n')
    encode = json.JSONEncoder(separators=(",", ":")).encode
    for obj in objects:
        if counts:
            stream.write(",\n")
        stream.write(encode(obj))
        counts[obj["kind"]] += 1
    stream.write("\n]}\n")
    return counts


def write_yaml_list(objects: Iterable[Obj], stream: TextIO) -> Counter[str]:
    """The same List as `kubectl get -o yaml` prints it, also item by item."""
    import yaml  # only needed for this format

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    counts: Counter[str] = Counter()
    stream.write("apiVersion: v1\nitems:\n")
    for obj in objects:
        text = yaml.dump(obj, Dumper=dumper, default_flow_style=False, sort_keys=False, width=120)
        lines = text.rstrip("\n").split("\n")
        stream.write("- " + lines[0] + "\n")
        stream.writelines("  " + line + "\n" for line in lines[1:])
        counts[obj["kind"]] += 1
    stream.write("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
    return counts


def write_cluster(objects: Iterable[Obj], path: str, fmt: str = "json") -> Counter[str]:
    """Write the objects to `path` (gzip if it ends in .gz, '-' for stdout); returns the count per kind."""
    writer = write_yaml_list if fmt == "yaml" else write_json_list
    stream = open_output(path)
    try:
        return writer(objects, stream)
    finally:
        if stream is not sys.stdout:
            stream.close()


def guess_format(path: str) -> str:
    stem = path[:-3] if path.endswith(".gz") else path
    return "yaml" if stem.endswith((".yaml", ".yml")) else "json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--nodes", type=int, required=True, help="number of nodes (OpenShift: 3 of them masters)")
    parser.add_argument("--pods-per-node", type=int, required=True, help="average pods per node, DaemonSets included")
    parser.add_argument("--seed", type=int, default=1, help="random seed; the same seed gives the same cluster")
    parser.add_argument("--out", required=True, help="output file; .gz compresses; '-' writes to stdout")
    parser.add_argument("--flavor", choices=FLAVORS, default="kubernetes")
    parser.add_argument("--format", choices=("json", "yaml"), help="default: from the file name, else json")
    parser.add_argument("--now", default=DEFAULT_NOW, help=f"the time ages are relative to (default {DEFAULT_NOW})")
    parser.add_argument("--quiet", action="store_true", help="do not print the summary on stderr")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        objects = iter_cluster(args.nodes, args.pods_per_node, args.seed, parse_time(args.now), args.flavor)
        counts = write_cluster(objects, args.out, args.format or guess_format(args.out))
    except ValueError as error:
        print(f"generate_cluster: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        elapsed = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is KiB on Linux
        summary = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
        print(f"wrote {sum(counts.values())} objects to {args.out} in {elapsed:.1f}s (peak RSS {peak_mib:.0f} MiB)",
              file=sys.stderr)
        print(f"  {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
