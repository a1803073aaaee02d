"""KubeVirt, as far as eviction is concerned: VMIs, their migrations, the KubeVirt CR, and the eviction webhook.

    kubevirt = install_kubevirt(emulator, eviction_strategy="LiveMigrate")    # also emulator.kubevirt
    emulator.load(kubevirt.vm("vms", "db", "worker-1"))                       # a VMI and its virt-launcher pod
    ... evict the launcher pod: 429 "Eviction triggered evacuation of VMI "vms/db"", the VMI gets marked ...
    kubevirt.step()                      # one tick of virt-controller/virt-handler (or tick_seconds=0.1: a thread)
    kubevirt.fail_next_migrations(1)     # the next migration fails at Running; the mark stays, so it is retried

Installed through the emulator's extension points only: the CRDs are seeded, the eviction handler is wrapped
(non-launcher pods go to the previous handler, PDB bookkeeping included).

What each step does (virt-controller's evacuation controller and migration controller, virt-handler):
- a marked VMI (``status.evacuationNodeName``) without an active migration gets a VirtualMachineInstanceMigration
  (``generateName: kubevirt-evacuation-``, label ``kubevirt.io/vmi-name``), within the cluster's parallel
  migration limits (the others wait, as KubeVirt queues them);
- each active migration moves one phase: Pending -> Scheduling -> Scheduled -> TargetReady -> Running -> Succeeded
  (or Failed, when a failure was asked for: the VMI stays marked and gets a new migration on a later step);
- on success the VMI runs on the target node (``status.nodeName``), the mark is cleared, a new launcher pod runs
  there, and the old launcher pod is removed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import errors
from .api import DeleteOptions
from .controllers import node_fits, running_ready_status
from .store import GroupResource, clone, new_uid, now_rfc3339

if TYPE_CHECKING:
    from .emulator import Emulator

GROUP = "kubevirt.io"
PODS: GroupResource = ("", "pods")
NODES: GroupResource = ("", "nodes")
VMIS: GroupResource = (GROUP, "virtualmachineinstances")
MIGRATIONS: GroupResource = (GROUP, "virtualmachineinstancemigrations")
KUBEVIRTS: GroupResource = (GROUP, "kubevirts")
WEBHOOK = 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: '
PHASES = ("Pending", "Scheduling", "Scheduled", "TargetReady", "Running", "Succeeded")
ACTIVE_PHASES = PHASES[:-1]
LAUNCHER_LABELS = {"kubevirt.io": "virt-launcher"}


def _crd(kind: str, plural: str, short_names: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "shortNames": short_names,
                      "listKind": f"{kind}List"},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }


def crds() -> list[dict[str, Any]]:
    return [_crd("VirtualMachineInstance", "virtualmachineinstances", ["vmi", "vmis"]),
            _crd("VirtualMachineInstanceMigration", "virtualmachineinstancemigrations", ["vmim", "vmims"]),
            _crd("KubeVirt", "kubevirts", ["kv", "kvs"])]


@dataclass
class Observations:
    """What tests assert on: every evacuation mark, and the most VMIs marked at once (cluster, per source node)."""

    marks: list[tuple[float, str, str, str]] = field(default_factory=list)  # (time, namespace, vmi, node)
    max_marked: int = 0
    max_marked_per_node: int = 0
    migrations_created: int = 0
    migrations_failed: int = 0


class KubeVirtEmulation:
    def __init__(self, emulator: Emulator, *, eviction_strategy: str | None = "LiveMigrate",
                 namespace: str = "kubevirt", tick_seconds: float | None = None,
                 parallel_migrations_per_cluster: int = 5, parallel_outbound_migrations_per_node: int = 2) -> None:
        self.emulator = emulator
        self.namespace = namespace
        self.parallel_per_cluster = parallel_migrations_per_cluster
        self.parallel_per_node = parallel_outbound_migrations_per_node
        self.observed = Observations()
        self._failures: Counter = Counter()  # vmi name ("" = any) -> migrations still to fail
        self._lock = threading.RLock()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._previous_handler = emulator.eviction_handler
        configuration = {"evictionStrategy": eviction_strategy} if eviction_strategy else {}
        emulator.load([*crds(), {"apiVersion": f"{GROUP}/v1", "kind": "KubeVirt",
                                 "metadata": {"namespace": namespace, "name": "kubevirt"},
                                 "spec": {"configuration": configuration}, "status": {"phase": "Deployed"}}])
        emulator.eviction_handler = self.evict
        emulator.kubevirt = self  # type: ignore[attr-defined]
        if tick_seconds:
            self.start_ticker(tick_seconds)

    # --- seeding -------------------------------------------------------------------------------------------------

    def vm(self, namespace: str, name: str, node: str, *, strategy: str | None = None, migratable: bool = True,
           labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """A running VMI on `node` and its virt-launcher pod (Running, Ready), to pass to `emulator.load`."""
        vmi_uid = new_uid()
        spec: dict[str, Any] = {"domain": {"devices": {}}}
        if strategy:
            spec["evictionStrategy"] = strategy
        vmi = {"apiVersion": f"{GROUP}/v1", "kind": "VirtualMachineInstance",
               "metadata": {"namespace": namespace, "name": name, "uid": vmi_uid, "labels": dict(labels or {})},
               "spec": spec,
               "status": {"phase": "Running", "nodeName": node, "conditions": [
                   {"type": "Ready", "status": "True"},
                   {"type": "LiveMigratable", "status": "True" if migratable else "False"}]}}
        return [vmi, self._launcher_pod(vmi, node)]

    def _launcher_pod(self, vmi: dict[str, Any], node: str) -> dict[str, Any]:
        metadata = vmi["metadata"]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"namespace": metadata["namespace"],
                            "name": f"virt-launcher-{metadata['name']}-{new_uid()[:5]}",
                            "labels": {**metadata.get("labels", {}), **LAUNCHER_LABELS,
                                       "kubevirt.io/created-by": metadata["uid"]},
                            "annotations": {"kubevirt.io/domain": metadata["name"]},
                            "ownerReferences": [{"apiVersion": f"{GROUP}/v1", "kind": "VirtualMachineInstance",
                                                 "name": metadata["name"], "uid": metadata["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}]},
               "spec": {"nodeName": node, "containers": [{"name": "compute", "image": "virt-launcher"}]}}
        pod["status"] = running_ready_status(pod)
        return pod

    def fail_next_migrations(self, times: int = 1, vmi: str | None = None) -> None:
        """The next `times` migrations (of `vmi`, or of any VMI) fail when they reach Running."""
        with self._lock:
            self._failures[vmi or ""] += times

    # --- the eviction webhook ------------------------------------------------------------------------------------

    def evict(self, emulator: Emulator, namespace: str, name: str, eviction: dict[str, Any], dry_run: bool,
              user: str) -> dict[str, Any]:
        """KubeVirt's pod-eviction admitter in front of the previous handler."""
        with emulator.store.lock:
            pod = emulator.store.get(PODS, namespace, name)
            vmi = self._vmi_of(pod) if pod is not None else None
            if pod is None or vmi is None:
                return self._previous_handler(emulator, namespace, name, eviction, dry_run, user)
            dry_run = dry_run or "All" in ((eviction.get("deleteOptions") or {}).get("dryRun") or [])
            strategy = self.strategy(vmi)
            migratable = is_migratable(vmi)
            if strategy == "LiveMigrate" and not migratable:
                raise errors.too_many_requests(WEBHOOK + f"VMI {vmi['metadata']['name']} is configured with an "
                                               "eviction strategy but is not live-migratable")
            if strategy not in ("LiveMigrate", "LiveMigrateIfPossible", "External") or (
                    strategy == "LiveMigrateIfPossible" and not migratable):
                return self._previous_handler(emulator, namespace, name, eviction, dry_run, user)
            if (vmi.get("status") or {}).get("nodeName") != (pod.get("spec") or {}).get("nodeName"):
                raise errors.too_many_requests(WEBHOOK + "Eviction request for target Pod")
            text = f'Eviction triggered evacuation of VMI "{namespace}/{vmi["metadata"]["name"]}"'
            if (vmi.get("status") or {}).get("evacuationNodeName"):
                raise errors.too_many_requests(WEBHOOK + "Evacuation in progress: " + text)
            if not dry_run:
                self._mark(vmi, pod["spec"]["nodeName"], eviction)
            raise errors.too_many_requests(WEBHOOK + text)

    def _vmi_of(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        metadata = pod["metadata"]
        if (metadata.get("labels") or {}).get("kubevirt.io") != "virt-launcher":
            return None
        vmi_name = (metadata.get("annotations") or {}).get("kubevirt.io/domain")
        return self.emulator.store.get(VMIS, metadata.get("namespace", ""), vmi_name) if vmi_name else None

    def strategy(self, vmi: dict[str, Any]) -> str | None:
        own = (vmi.get("spec") or {}).get("evictionStrategy")
        if own:
            return own
        for key in self.emulator.store.table(KUBEVIRTS).keys():
            cluster = self.emulator.store.table(KUBEVIRTS).objects[key]
            return ((cluster.get("spec") or {}).get("configuration") or {}).get("evictionStrategy")
        return None

    def _mark(self, vmi: dict[str, Any], node: str, eviction: dict[str, Any]) -> None:
        def mark(updated: dict[str, Any]) -> None:
            updated["status"]["evacuationNodeName"] = node
            annotations = (eviction.get("metadata") or {}).get("annotations") or {}
            if annotations.get("requested-by") == "sigs.k8s.io/descheduler":
                updated["metadata"].setdefault("annotations", {})["kubevirt.io/eviction-source"] = "descheduler"

        self._update(VMIS, vmi, mark)
        marked = [v for v in self._all(VMIS) if (v.get("status") or {}).get("evacuationNodeName")]
        per_node = Counter(v["status"]["evacuationNodeName"] for v in marked)
        observed = self.observed
        observed.marks.append((time.monotonic(), vmi["metadata"]["namespace"], vmi["metadata"]["name"], node))
        observed.max_marked = max(observed.max_marked, len(marked))
        observed.max_marked_per_node = max(observed.max_marked_per_node, *per_node.values())

    # --- virt-controller / virt-handler --------------------------------------------------------------------------

    def step(self) -> None:
        """One tick: advance the active migrations, then start migrations for marked VMIs."""
        with self._lock, self.emulator.store.lock:
            for migration in sorted(self._active_migrations(), key=lambda m: m["metadata"]["name"]):
                self._advance(migration)
            for vmi in self._all(VMIS):
                self._maybe_start_migration(vmi)

    def run_until_idle(self, max_steps: int = 50) -> int:
        """Step until no VMI is marked; returns the number of steps."""
        for count in range(1, max_steps + 1):
            self.step()
            if not any((v.get("status") or {}).get("evacuationNodeName") for v in self._all(VMIS)):
                return count
        raise AssertionError(f"VMIs still marked after {max_steps} steps")

    def start_ticker(self, seconds: float) -> None:
        def tick() -> None:
            while not self._stop.wait(seconds):
                self.step()

        self._stop.clear()
        self._ticker = threading.Thread(target=tick, name="kubevirt-emulation", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)

    def _active_migrations(self) -> list[dict[str, Any]]:
        return [m for m in self._all(MIGRATIONS) if (m.get("status") or {}).get("phase", "Pending") in ACTIVE_PHASES]

    def _maybe_start_migration(self, vmi: dict[str, Any]) -> None:
        source = (vmi.get("status") or {}).get("evacuationNodeName")
        if not source:
            return
        active = self._active_migrations()
        name = vmi["metadata"]["name"]
        if any(m["spec"].get("vmiName") == name and m["metadata"].get("namespace") == vmi["metadata"]["namespace"]
               for m in active):
            return
        outbound = [m for m in active if (m.get("metadata", {}).get("annotations") or {}).get(
            "kubevirt.io/evacuationMigration") == source]
        if len(active) >= self.parallel_per_cluster or len(outbound) >= self.parallel_per_node:
            return  # KubeVirt queues it
        migration_type = self.emulator.storage_type(MIGRATIONS)
        assert migration_type is not None
        body = {"apiVersion": f"{GROUP}/v1", "kind": "VirtualMachineInstanceMigration",
                "metadata": {"generateName": "kubevirt-evacuation-", "namespace": vmi["metadata"]["namespace"],
                             "labels": {"kubevirt.io/vmi-name": name},
                             "annotations": {"kubevirt.io/evacuationMigration": source}},
                "spec": {"vmiName": name}}
        created = clone(self.emulator.api.create(migration_type, vmi["metadata"]["namespace"], body))
        created["status"] = {"phase": "Pending"}
        self.emulator.api.write(migration_type, created, self.emulator.store.get(
            MIGRATIONS, created["metadata"]["namespace"], created["metadata"]["name"]))
        self.observed.migrations_created += 1

    def _advance(self, migration: dict[str, Any]) -> None:
        namespace, vmi_name = migration["metadata"]["namespace"], migration["spec"]["vmiName"]
        vmi = self.emulator.store.get(VMIS, namespace, vmi_name)
        phase = (migration.get("status") or {}).get("phase", "Pending")
        if vmi is None:
            self._set_phase(migration, "Failed", "the VMI is gone")
            return
        following = PHASES[PHASES.index(phase) + 1]
        if following == "Succeeded" and self._take_failure(vmi_name):
            self._set_phase(migration, "Failed", "injected migration failure")
            self.observed.migrations_failed += 1
            self._update(VMIS, vmi, lambda updated: updated["status"].update(migrationState={
                "migrationUid": migration["metadata"]["uid"], "failed": True, "completed": True,
                "failureReason": "injected migration failure"}))
            return
        if following == "Scheduled":
            target = self._pick_target(vmi)
            if target is None:
                return  # no other node fits: the migration stays Scheduling
            self._set_phase(migration, following, target_node=target)
            return
        if following == "Succeeded":
            self._complete(migration, vmi)
        self._set_phase(migration, following)

    def _take_failure(self, vmi_name: str) -> bool:
        for key in (vmi_name, ""):
            if self._failures[key] > 0:
                self._failures[key] -= 1
                return True
        return False

    def _pick_target(self, vmi: dict[str, Any]) -> str | None:
        source = vmi["status"].get("nodeName")
        launcher = self._launcher_pods(vmi)
        template = launcher[0] if launcher else {"metadata": {}, "spec": {}}
        pods = self.emulator.store.table(PODS)
        fitting = [n for n in self._all(NODES) if n["metadata"]["name"] != source and node_fits(n, template)]
        if not fitting:
            return None
        chosen = min(fitting, key=lambda n: (len(pods.indexed("spec.nodeName", n["metadata"]["name"])),
                                             n["metadata"]["name"]))
        return chosen["metadata"]["name"]

    def _complete(self, migration: dict[str, Any], vmi: dict[str, Any]) -> None:
        """virt-handler's part: the VM runs on the target, the old launcher pod ends, a new one runs there."""
        target = (migration.get("status") or {}).get("targetNode") or self._pick_target(vmi)
        source = vmi["status"].get("nodeName")
        old_pods = self._launcher_pods(vmi)
        pods_type = self.emulator.storage_type(PODS)
        assert pods_type is not None and target
        new_pod = self._launcher_pod(vmi, target)
        status = new_pod.pop("status")
        created = clone(self.emulator.api.create(pods_type, vmi["metadata"]["namespace"], new_pod))
        created["status"] = {**status, "qosClass": created["status"].get("qosClass", "BestEffort")}
        self.emulator.api.write(pods_type, created, self.emulator.store.get(
            PODS, created["metadata"]["namespace"], created["metadata"]["name"]))

        def moved(updated: dict[str, Any]) -> None:
            updated["status"]["nodeName"] = target
            updated["status"].pop("evacuationNodeName", None)
            updated["status"]["migrationState"] = {
                "migrationUid": migration["metadata"]["uid"], "sourceNode": source, "targetNode": target,
                "targetPod": created["metadata"]["name"], "completed": True, "failed": False,
                "endTimestamp": now_rfc3339()}
            updated["metadata"].setdefault("labels", {})["kubevirt.io/nodeName"] = target
            (updated["metadata"].get("annotations") or {}).pop("kubevirt.io/eviction-source", None)

        self._update(VMIS, vmi, moved)
        for pod in old_pods:
            if pod["spec"].get("nodeName") == source:
                self.emulator.api.delete_object(pods_type, pod, DeleteOptions(), force=True)

    def _launcher_pods(self, vmi: dict[str, Any]) -> list[dict[str, Any]]:
        uid = vmi["metadata"].get("uid")
        pods = [self.emulator.store.get(gr, *key) for gr, key in self.emulator.store.dependents(uid) if gr == PODS]
        return [p for p in pods if p is not None]

    # --- helpers -------------------------------------------------------------------------------------------------

    def _set_phase(self, migration: dict[str, Any], phase: str, failure: str | None = None,
                   target_node: str | None = None) -> dict[str, Any]:
        def change(updated: dict[str, Any]) -> None:
            updated.setdefault("status", {})["phase"] = phase
            if failure:
                updated["status"]["migrationState"] = {"failed": True, "failureReason": failure}
            if target_node:
                updated["status"]["targetNode"] = target_node

        return self._update(MIGRATIONS, migration, change)

    def _update(self, group_resource: GroupResource, obj: dict[str, Any], change: Any) -> dict[str, Any]:
        resource_type = self.emulator.storage_type(group_resource)
        assert resource_type is not None
        with self.emulator.store.lock:
            current = self.emulator.store.get(group_resource, obj["metadata"].get("namespace", ""),
                                              obj["metadata"]["name"])
            if current is None:
                return obj
            updated = clone(current)
            updated.setdefault("status", {})
            change(updated)
            return self.emulator.api.write(resource_type, updated, current)

    def _all(self, group_resource: GroupResource) -> list[dict[str, Any]]:
        table = self.emulator.store.table(group_resource)
        return [table.objects[key] for key in table.keys()]


def is_migratable(vmi: dict[str, Any]) -> bool:
    conditions = (vmi.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "LiveMigratable" and c.get("status") == "True" for c in conditions)


def install_kubevirt(emulator: Emulator, **options: Any) -> KubeVirtEmulation:
    """Add KubeVirt to a (started or not) emulator; see KubeVirtEmulation for the options."""
    return KubeVirtEmulation(emulator, **options)
