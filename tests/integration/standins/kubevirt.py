"""A KubeVirt stand-in: virt-api's eviction webhook, virt-controller's evacuation and migration controllers and
virt-handler's part of a live migration, acting on an API server only over HTTP.

    kubevirt = KubeVirt.on(kube, eviction_strategy="LiveMigrate")   # CRDs, KubeVirt CR, webhook, loop
    pod = kubevirt.create_vm("vms", "db", "worker-1")    # a running VMI and its virt-launcher pod (Running, Ready)
    ... evicting `pod` answers 429 "Eviction triggered evacuation of VMI "vms/db"" and marks the VMI ...
    kubevirt.fail_migrations("vms", "db", 1)   # the VMI's annotation: its next migration fails (or "always")
    kubevirt.uninstall()

What it does (kubevirt/kubevirt, see /work/shared/reference/peers.md §3):
- the webhook `virt-launcher-eviction-interceptor.kubevirt.io`: a ValidatingWebhookConfiguration on pods/eviction
  pointing at an HTTPS server of this process (its own CA), so a real kube-apiserver calls it for every eviction.
  For a virt-launcher pod whose VMI's effective strategy asks for a live migration it marks the VMI
  (`status.evacuationNodeName`, the `kubevirt.io/eviction-source` annotation for the descheduler's evictions) and
  denies with 429; LiveMigrate without the LiveMigratable condition is denied, no strategy (or
  LiveMigrateIfPossible on a VM that cannot migrate) is allowed: the pod goes and the VM stops. A dry run marks
  nothing (sideEffects NoneOnDryRun);
- each pass of the loop: a marked VMI without an active migration gets a VirtualMachineInstanceMigration
  (`generateName: kubevirt-evacuation-`, label `kubevirt.io/vmi-name`) within the parallel migration limits (5 per
  cluster, 2 outbound per node; the others wait); an active migration moves one phase: Pending -> Scheduling (a
  target virt-launcher pod on another node, which the kubelet stand-in runs) -> Scheduled (the target pod runs) ->
  TargetReady -> Running -> Succeeded: the source pod ends, the VMI runs on the target (`status.nodeName`,
  `migrationState`), its mark and eviction-source annotation are cleared. A migration of a VMI annotated
  `FAIL_ANNOTATION` fails at Running instead (the count goes down by one; "always" never runs out): the target pod
  ends, the VMI stays marked and gets a new migration, as KubeVirt retries.
Not modelled: the VirtualMachine object, the `eviction-in-progress` pod annotation, migration policies and timeouts,
real placement (the target is the other node with the fewest pods).
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

from kubelet_standin import fits

from .httpserver import BackgroundServer
from .kubevirt_types import API, KUBEVIRT_CRDS
from .loop import StandIn
from .rest import install_crds, path, wait_until

WEBHOOK_NAME = "virt-launcher-eviction-interceptor.kubevirt.io"
WEBHOOK_CONFIGURATION = "virt-api-validator"
FAIL_ANNOTATION = "kubevirt-standin.test/fail-migrations"
EVICTION_SOURCE = "kubevirt.io/eviction-source"
EVACUATION_ANNOTATION = "kubevirt.io/evacuationMigration"
DOMAIN_ANNOTATION = "kubevirt.io/domain"
CREATED_BY = "kubevirt.io/created-by"
LAUNCHER_IMAGE = "quay.io/kubevirt/virt-launcher:v1.6.0"
TERMINAL = ("Succeeded", "Failed")
MIGRATING_STRATEGIES = ("LiveMigrate", "LiveMigrateIfPossible", "External")
VMIS = "virtualmachineinstances"
MIGRATIONS = "virtualmachineinstancemigrations"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_migratable(vmi: dict[str, Any]) -> bool:
    conditions = (vmi.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "LiveMigratable" and c.get("status") == "True" for c in conditions)


def phase_of(migration: dict[str, Any]) -> str:
    return (migration.get("status") or {}).get("phase") or "Pending"


@dataclass
class Review:
    """One eviction the webhook was asked about, and its answer (200 allowed, else the denial's code)."""

    namespace: str
    name: str
    dry_run: bool
    code: int
    message: str = ""


@dataclass
class Observations:
    """What tests assert on: every review, every evacuation mark, the most VMIs marked at once."""

    reviews: list[Review] = field(default_factory=list)
    marks: list[tuple[float, str, str, str]] = field(default_factory=list)  # (time, namespace, vmi, node)
    max_marked: int = 0
    max_marked_per_node: int = 0


class KubeVirt(StandIn):
    name = "kubevirt-stand-in"

    def __init__(self, api_client: Any, *, eviction_strategy: str | None = "LiveMigrate",
                 namespace: str = "kubevirt", interval: float = 0.2, parallel_migrations_per_cluster: int = 5,
                 parallel_outbound_migrations_per_node: int = 2) -> None:
        super().__init__(api_client)
        self.interval = interval
        self.eviction_strategy = eviction_strategy
        self.namespace = namespace
        self.parallel_per_cluster = parallel_migrations_per_cluster
        self.parallel_per_node = parallel_outbound_migrations_per_node
        self.observed = Observations()
        self._marking = threading.Lock()
        self._webhook: WebhookServer | None = None
        self._owned_client: Any = None

    @classmethod
    def on(cls, kube: Any, **options: Any) -> KubeVirt:
        """Installed on a test's cluster handle (`kube` fixture) with a client of its own, closed by uninstall()."""
        client = kube.api_client()
        standin = cls(client, **options)
        standin._owned_client = client
        return standin.install()

    # ---- install / uninstall ---------------------------------------------------------------------------------------

    def install(self) -> KubeVirt:
        install_crds(self.rest, KUBEVIRT_CRDS)
        self.rest.create_if_absent(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                              "metadata": {"name": self.namespace}})
        configuration = {"evictionStrategy": self.eviction_strategy} if self.eviction_strategy else {}
        self.rest.create_if_absent(path(API, "kubevirts", self.namespace), {
            "apiVersion": API, "kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": self.namespace},
            "spec": {"configuration": configuration}})
        self._webhook = WebhookServer(self.review).start()
        self.rest.create(path("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations"),
                         self._webhook.configuration())
        self.start()
        return self

    def uninstall(self) -> None:
        """Stop the loop and the webhook (its configuration first: evictions must not fail on a server that left).
        The CRDs, the KubeVirt namespace and the VMs are left to the test's cleanup."""
        self.stop()
        self.rest.delete(path("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations",
                              name=WEBHOOK_CONFIGURATION))
        if self._webhook is not None:
            self._webhook.stop()
            self._webhook = None
        if self._owned_client is not None:
            self._owned_client.close()
            self._owned_client = None

    # ---- test controls ---------------------------------------------------------------------------------------------

    def create_vm(self, namespace: str, name: str, node: str, *, strategy: str | None = None,
                  migratable: bool = True, labels: dict[str, str] | None = None) -> dict[str, Any]:
        """A running VMI on `node` and its virt-launcher pod, as virt-controller and virt-handler leave them once the
        VM runs; returns the pod when the kubelet stand-in reports it Running."""
        spec: dict[str, Any] = {"domain": {"devices": {}}}
        if strategy:
            spec["evictionStrategy"] = strategy
        vmi = self.rest.create(path(API, VMIS, namespace), {
            "apiVersion": API, "kind": "VirtualMachineInstance",
            "metadata": {"namespace": namespace, "name": name,
                         "labels": {**(labels or {}), "kubevirt.io/nodeName": node}},
            "spec": spec,
            "status": {"phase": "Running", "nodeName": node, "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "LiveMigratable", "status": "True" if migratable else "False"}]}})
        pod = self.rest.create(path("v1", "pods", namespace), launcher_pod(vmi, node, labels or {}))
        pod_url = path("v1", "pods", namespace, pod["metadata"]["name"])
        return wait_until(lambda: running(self.rest.get(pod_url)), 30, what=f"the launcher pod of VMI {name}")

    def fail_migrations(self, namespace: str, vmi: str, times: int | str = 1) -> None:
        """The VMI's next `times` migrations fail ("always": every one), through the VMI's annotation."""
        self.rest.merge_patch(path(API, VMIS, namespace, vmi), {"metadata": {"annotations": {
            FAIL_ANNOTATION: str(times)}}})

    def launchers(self, namespace: str, vmi: str) -> list[dict[str, Any]]:
        return [p for p in self.rest.list(path("v1", "pods", namespace))
                if (p["metadata"].get("annotations") or {}).get(DOMAIN_ANNOTATION) == vmi]

    # ---- the eviction webhook (virt-api's pod-eviction admitter) -------------------------------------------------

    def review(self, request: dict[str, Any]) -> tuple[int, str]:
        """Answer one AdmissionReview request for pods/eviction: (200, "") allows it, else (code, message)."""
        namespace, name = request.get("namespace", ""), request.get("name", "")
        dry_run = bool(request.get("dryRun"))
        try:
            code, message = self._admit(namespace, name, dry_run, request.get("object") or {})
        except Exception:
            self.errors.append(traceback.format_exc())  # for check(): a broken stand-in is not a product bug
            raise
        self.observed.reviews.append(Review(namespace, name, dry_run, code, message))
        return code, message

    def _admit(self, namespace: str, name: str, dry_run: bool, eviction: dict[str, Any]) -> tuple[int, str]:
        pod = self.rest.get(path("v1", "pods", namespace, name))
        metadata = (pod or {}).get("metadata") or {}
        vmi_name = (metadata.get("annotations") or {}).get(DOMAIN_ANNOTATION)
        if pod is None or (metadata.get("labels") or {}).get("kubevirt.io") != "virt-launcher" or not vmi_name:
            return 200, ""
        vmi = self.rest.get(path(API, VMIS, namespace, vmi_name))
        if vmi is None:
            return 200, ""
        strategy, migratable = self.strategy(vmi), is_migratable(vmi)
        if strategy == "LiveMigrate" and not migratable:
            return 429, f"VMI {vmi_name} is configured with an eviction strategy but is not live-migratable"
        if strategy not in MIGRATING_STRATEGIES or (strategy == "LiveMigrateIfPossible" and not migratable):
            return 200, ""  # an ordinary eviction: the VM stops with its pod
        if (vmi.get("status") or {}).get("nodeName") != (pod.get("spec") or {}).get("nodeName"):
            return 429, "Eviction request for target Pod"
        text = f'Eviction triggered evacuation of VMI "{namespace}/{vmi_name}"'
        if (vmi.get("status") or {}).get("evacuationNodeName"):
            return 429, "Evacuation in progress: " + text
        if not dry_run:
            self._mark(vmi, pod["spec"]["nodeName"], eviction)
        return 429, text

    def strategy(self, vmi: dict[str, Any]) -> str | None:
        """The VMI's own eviction strategy, else the KubeVirt CR's (KubeVirt's code default: none)."""
        own = (vmi.get("spec") or {}).get("evictionStrategy")
        if own:
            return own
        for cluster in self.rest.list(path(API, "kubevirts")):
            return ((cluster.get("spec") or {}).get("configuration") or {}).get("evictionStrategy")
        return None

    def _mark(self, vmi: dict[str, Any], node: str, eviction: dict[str, Any]) -> None:
        metadata = vmi["metadata"]
        patch: dict[str, Any] = {"status": {"evacuationNodeName": node}}
        if ((eviction.get("metadata") or {}).get("annotations") or {}).get("requested-by") == \
                "sigs.k8s.io/descheduler":
            patch["metadata"] = {"annotations": {EVICTION_SOURCE: "descheduler"}}
        with self._marking:  # one mark at a time, so that the counts below are exact
            self.rest.merge_patch(path(API, VMIS, metadata["namespace"], metadata["name"]), patch)
            marked = [v for v in self.rest.list(path(API, VMIS)) if (v.get("status") or {}).get("evacuationNodeName")]
            per_node = Counter(v["status"]["evacuationNodeName"] for v in marked)
            observed = self.observed
            observed.marks.append((time.monotonic(), metadata["namespace"], metadata["name"], node))
            observed.max_marked = max(observed.max_marked, len(marked))
            observed.max_marked_per_node = max(observed.max_marked_per_node, *per_node.values())

    # ---- virt-controller / virt-handler ----------------------------------------------------------------------------

    def reconcile(self) -> None:
        vmis = {(v["metadata"]["namespace"], v["metadata"]["name"]): v for v in self.rest.list(path(API, VMIS))}
        for migration in sorted(self._active_migrations(), key=lambda m: m["metadata"]["name"]):
            namespace = migration["metadata"]["namespace"]
            self._advance(migration, vmis.get((namespace, migration["spec"]["vmiName"])))
        active = self._active_migrations()
        for vmi in self.rest.list(path(API, VMIS)):
            self._maybe_start_migration(vmi, active)

    def _active_migrations(self) -> list[dict[str, Any]]:
        return [m for m in self.rest.list(path(API, MIGRATIONS)) if phase_of(m) not in TERMINAL]

    def _maybe_start_migration(self, vmi: dict[str, Any], active: list[dict[str, Any]]) -> None:
        """virt-controller's evacuation controller: a migration for a marked VMI, within the parallel limits."""
        source = (vmi.get("status") or {}).get("evacuationNodeName")
        metadata = vmi["metadata"]
        if not source or any(m["spec"]["vmiName"] == metadata["name"]
                             and m["metadata"]["namespace"] == metadata["namespace"] for m in active):
            return
        outbound = [m for m in active if (m["metadata"].get("annotations") or {}).get(EVACUATION_ANNOTATION) == source]
        if len(active) >= self.parallel_per_cluster or len(outbound) >= self.parallel_per_node:
            return  # KubeVirt queues it
        priority = ("system-maintenance" if (metadata.get("annotations") or {}).get(EVICTION_SOURCE) == "descheduler"
                    else "system-critical")
        created = self.rest.create(path(API, MIGRATIONS, metadata["namespace"]), {
            "apiVersion": API, "kind": "VirtualMachineInstanceMigration",
            "metadata": {"generateName": "kubevirt-evacuation-", "namespace": metadata["namespace"],
                         "labels": {"kubevirt.io/vmi-name": metadata["name"]},
                         "annotations": {EVACUATION_ANNOTATION: source}},
            "spec": {"vmiName": metadata["name"], "priority": priority},
            "status": {"phase": "Pending"}})
        active.append(created)

    def _advance(self, migration: dict[str, Any], vmi: dict[str, Any] | None) -> None:
        """One phase of one migration."""
        phase = phase_of(migration)
        if vmi is None:
            self._set_migration(migration, "Failed", failed=True, failureReason="the VMI is gone")
        elif phase == "Pending":
            self._schedule_target(migration, vmi)
        elif phase == "Scheduling":
            target = self._target_pod(migration)
            if target is None:
                self._set_migration(migration, "Failed", failed=True, failureReason="the target pod is gone")
            elif running(target):
                self._set_migration(migration, "Scheduled")
        elif phase == "Scheduled":
            self._set_migration(migration, "TargetReady")
        elif phase == "TargetReady":
            updated = self._set_migration(migration, "Running", startTimestamp=now()) or migration
            self._change_vmi(vmi, lambda v: v["status"].update(migrationState=self._state(updated)))
        elif phase == "Running" and self._take_failure(vmi):
            self._fail(migration, vmi)
        elif phase == "Running":
            self._complete(migration, vmi)

    def _schedule_target(self, migration: dict[str, Any], vmi: dict[str, Any]) -> None:
        """The target virt-launcher pod, on the node the scheduler would take: not the source, fewest pods."""
        source = vmi["status"].get("nodeName")
        template = {"metadata": {}, "spec": {}}
        busy = Counter(p["spec"].get("nodeName") for p in self.rest.list(path("v1", "pods"))
                       if (p.get("status") or {}).get("phase") not in TERMINAL)
        nodes = [n["metadata"]["name"] for n in self.rest.list(path("v1", "nodes"))
                 if n["metadata"]["name"] != source and fits(template, n)]
        if not nodes:
            return  # no other node fits: the migration stays Pending, as KubeVirt's would
        target = min(nodes, key=lambda name: (busy[name], name))
        pod = launcher_pod(vmi, target, vmi["metadata"].get("labels") or {})
        pod["metadata"]["labels"]["kubevirt.io/migrationJobUID"] = migration["metadata"]["uid"]
        created = self.rest.create(path("v1", "pods", vmi["metadata"]["namespace"]), pod)
        self._set_migration(migration, "Scheduling", sourceNode=source, targetNode=target,
                            targetPod=created["metadata"]["name"], migrationUid=migration["metadata"]["uid"])

    def _take_failure(self, vmi: dict[str, Any]) -> bool:
        wanted = (vmi["metadata"].get("annotations") or {}).get(FAIL_ANNOTATION, "")
        if wanted == "always":
            return True
        if not wanted.isdigit() or int(wanted) <= 0:
            return False
        self.rest.merge_patch(path(API, VMIS, vmi["metadata"]["namespace"], vmi["metadata"]["name"]),
                              {"metadata": {"annotations": {FAIL_ANNOTATION: str(int(wanted) - 1)}}})
        return True

    def _fail(self, migration: dict[str, Any], vmi: dict[str, Any]) -> None:
        """The migration failed: the target pod ends, the VMI keeps running on the source and stays marked."""
        reason = "injected migration failure"
        updated = self._set_migration(migration, "Failed", failed=True, completed=True, failureReason=reason,
                                      endTimestamp=now())
        self._delete_pod(migration, (updated or migration)["status"]["migrationState"].get("targetPod"))
        self._change_vmi(vmi, lambda v: v["status"].update(migrationState=self._state(updated or migration)))

    def _complete(self, migration: dict[str, Any], vmi: dict[str, Any]) -> None:
        """virt-handler's end of a migration: the source launcher pod ends, the VMI runs on the target."""
        updated = self._set_migration(migration, "Succeeded", completed=True, failed=False, endTimestamp=now())
        state = self._state(updated or migration)
        source = vmi["status"].get("nodeName")
        for pod in self.launchers(vmi["metadata"]["namespace"], vmi["metadata"]["name"]):
            if pod["spec"].get("nodeName") == source:
                self._delete_pod(migration, pod["metadata"]["name"])

        def moved(current: dict[str, Any]) -> None:
            current["status"]["nodeName"] = state["targetNode"]
            current["status"].pop("evacuationNodeName", None)
            current["status"]["migrationState"] = state
            current["metadata"].setdefault("labels", {})["kubevirt.io/nodeName"] = state["targetNode"]
            (current["metadata"].get("annotations") or {}).pop(EVICTION_SOURCE, None)

        self._change_vmi(vmi, moved)

    # ---- helpers ---------------------------------------------------------------------------------------------------

    @staticmethod
    def _state(migration: dict[str, Any]) -> dict[str, Any]:
        return dict((migration.get("status") or {}).get("migrationState") or {})

    def _set_migration(self, migration: dict[str, Any], phase: str, **state: Any) -> dict[str, Any] | None:
        metadata = migration["metadata"]

        def change(current: dict[str, Any]) -> None:
            status = current.setdefault("status", {})
            status["phase"] = phase
            status["migrationState"] = {**(status.get("migrationState") or {}), **state}

        return self.rest.change(path(API, MIGRATIONS, metadata["namespace"], metadata["name"]), change)

    def _change_vmi(self, vmi: dict[str, Any], edit: Any) -> None:
        def change(current: dict[str, Any]) -> None:
            current.setdefault("status", {})
            edit(current)

        self.rest.change(path(API, VMIS, vmi["metadata"]["namespace"], vmi["metadata"]["name"]), change)

    def _target_pod(self, migration: dict[str, Any]) -> dict[str, Any] | None:
        name = self._state(migration).get("targetPod")
        return self.rest.get(path("v1", "pods", migration["metadata"]["namespace"], name)) if name else None

    def _delete_pod(self, migration: dict[str, Any], name: str | None) -> None:
        """A virt-launcher pod whose VM left it: its process has ended, so nothing is left to wait for."""
        if name:
            self.rest.request("DELETE", path("v1", "pods", migration["metadata"]["namespace"], name),
                              {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


def launcher_pod(vmi: dict[str, Any], node: str, labels: dict[str, str]) -> dict[str, Any]:
    """The virt-launcher pod virt-controller renders for a VMI (pkg/virt-controller/services/template.go), placed."""
    metadata = vmi["metadata"]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": metadata["namespace"], "generateName": f"virt-launcher-{metadata['name']}-",
                     "labels": {**labels, "kubevirt.io": "virt-launcher", CREATED_BY: metadata["uid"]},
                     "annotations": {DOMAIN_ANNOTATION: metadata["name"],
                                     "descheduler.alpha.kubernetes.io/request-evict-only": ""},
                     "ownerReferences": [{"apiVersion": API, "kind": "VirtualMachineInstance",
                                          "name": metadata["name"], "uid": metadata["uid"], "controller": True,
                                          "blockOwnerDeletion": True}]},
        # No grace period: these VMs have no guest to shut down, so a deleted launcher pod is gone at once.
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "compute", "image": LAUNCHER_IMAGE}]},
    }


def running(pod: dict[str, Any] | None) -> dict[str, Any] | None:
    return pod if pod and (pod.get("status") or {}).get("phase") == "Running" else None


class WebhookServer:
    """virt-api's HTTPS endpoint for the API server's admission calls, with a CA of its own."""

    def __init__(self, review: Any) -> None:
        self._server = BackgroundServer(_handler(review), "kubevirt-webhook", tls=True)
        self.ca_bundle = base64.b64encode(self._server.ca_pem).decode()
        self.path = f"/pod-eviction-validate-{secrets.token_hex(4)}"

    @property
    def url(self) -> str:
        return f"{self._server.url}{self.path}"

    def start(self) -> WebhookServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def configuration(self) -> dict[str, Any]:
        """KubeVirt's webhook on pods/eviction. KubeVirt's failurePolicy is Ignore (its PDB still guards the pod); the
        stand-in's is Fail, so a broken stand-in shows as an error, never as a VM silently stopped."""
        return {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": WEBHOOK_CONFIGURATION},
            "webhooks": [{
                "name": WEBHOOK_NAME, "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
                "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10,
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                           "resources": ["pods/eviction"], "scope": "*"}],
                "clientConfig": {"url": self.url, "caBundle": self.ca_bundle}}],
        }


def _handler(review: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            request = body.get("request") or {}
            try:
                code, message = review(request)
            except Exception as error:  # noqa: BLE001 - answered as virt-api would: an internal error, not a hang
                code, message = 500, f"kubevirt stand-in: {error!r}"
            response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": code == 200}
            if code != 200:
                response["status"] = {"code": code, "message": message,
                                      "reason": "TooManyRequests" if code == 429 else "InternalError"}
            data = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                               "response": response}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
