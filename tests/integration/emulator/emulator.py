"""`Emulator`: the in-process Kubernetes API server the integration tests talk to.

    emulator = Emulator(controllers=["replicaset"]).start()
    emulator.write_kubeconfig(tmp_path / "kubeconfig")
    emulator.load([...])                       # seed objects fast, bypassing HTTP
    emulator.faults.fail(429, verb="create", path="/eviction$")
    ...
    emulator.stop()

Extension points (all per instance):
- `registry.register(ResourceType(...))` / `register_type(...)`, or create a CRD object;
- `add_controller(Controller)` – on_create/on_update/on_delete hooks run synchronously after each write;
- `add_admission(hook)` – mutating/validating admission (e.g. a webhook) before each write;
- `add_subresource(group, plural, name, handler, ...)` and `add_route(method, regex, handler)`;
- `eviction_handler` – replace the pod eviction logic; `scheduler` – where the ReplicaSet controller binds pods;
- `faults` (fault injection) and `auth` (tokens, forbidden rules).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from .api import (
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    SYSTEM_USER,
    AdmissionRequest,
    DeleteOptions,
    ListOptions,
    ObjectApi,
    generate_name,
    present,
)
from .auth import Auth
from .controllers import (
    OPTIONAL_CONTROLLERS,
    Controller,
    CustomResourceDefinitionController,
    FewestPodsScheduler,
    Scheduler,
    validate_crd,
)
from .disruption import DisruptionController, evict_pod
from .faults import Faults
from .pods import eviction_subresource, log_subresource
from .resources import Registry, ResourceType, Subresource, builtin_types
from .router import RouteHandler, Router, SubresourceHandler
from .server import Request, Response, ServerThread
from .store import GroupResource, Store, clone, new_uid, now_rfc3339
from .watch import WatchHub

EvictionHandler = Callable[["Emulator", str, str, dict[str, Any], bool, str], dict[str, Any]]
AdmissionHook = Callable[[AdmissionRequest], None]
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
PATCH_TYPE_ALIASES = {"merge": MERGE_PATCH, "json": JSON_PATCH, "strategic": STRATEGIC_PATCH}
CRDS: GroupResource = ("apiextensions.k8s.io", "customresourcedefinitions")


class Emulator:
    context = "emulator"

    def __init__(
        self,
        controllers: Iterable[str | Controller] = (),
        *,
        graceful_pod_deletion: bool = False,
        scheduler: Scheduler | None = None,
        kubernetes_version: str = "1.31.0",
        token: str = "emulator-token",
        user: str = "kubernetes-admin",
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
    ) -> None:
        """`controllers`: opt-in controller names ("replicaset") or Controller instances.
        `graceful_pod_deletion`: deleted pods on a node stay terminating (deletionTimestamp set) for their grace
        period until `complete_terminations()`; by default they are removed at once."""
        self.registry = Registry()
        self.store = Store()
        self.faults = Faults()
        self.auth = Auth(user)
        self.api = ObjectApi(self)
        self.watches = WatchHub()
        self.router = Router(self)
        self.controllers: list[Controller] = []
        self.admission_hooks: list[AdmissionHook] = [validate_crd]
        self.subresources: dict[tuple[str, str, str], SubresourceHandler] = {
            ("", "pods", "eviction"): eviction_subresource,
            ("", "pods", "log"): log_subresource,
        }
        self.routes: list[tuple[str | None, re.Pattern[str], RouteHandler]] = []
        self.eviction_handler: EvictionHandler = evict_pod
        self.scheduler: Scheduler = scheduler or FewestPodsScheduler()
        self.graceful_pod_deletion = graceful_pod_deletion
        self.kubernetes_version = kubernetes_version
        self.token = token
        self.kubeconfig: Path | None = None
        self._pod_logs: dict[tuple[str, str, str | None], str] = {}
        self._server: ServerThread | None = None
        for resource_type in builtin_types():
            self.register_type(resource_type)
        self.add_controller(CustomResourceDefinitionController())
        self.add_controller(DisruptionController())
        for controller in controllers:
            self.add_controller(OPTIONAL_CONTROLLERS[controller]() if isinstance(controller, str) else controller)
        self.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in namespaces])

    # --- lifecycle -----------------------------------------------------------------------------------------------

    def start(self) -> Emulator:
        if self._server is None:
            self._server = ServerThread(self)
        return self

    def stop(self) -> None:
        self.watches.close()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the emulator is not started")
        return self._server.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_kubeconfig(self, path: str | Path, namespace: str = "default") -> Path:
        """A kubeconfig whose `emulator` context (the current one) points at this server with a bearer token."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": self.context, "cluster": {"server": self.url}}],
            "users": [{"name": f"{self.context}-user", "user": {"token": self.token}}],
            "contexts": [{"name": self.context, "context": {"cluster": self.context, "user": f"{self.context}-user",
                                                            "namespace": namespace}}],
            "current-context": self.context,
            "preferences": {},
        }
        self.kubeconfig = Path(path)
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        return self.kubeconfig

    is_emulator = True

    def api_client(self) -> Any:
        """A `kubernetes.client.ApiClient` for this server (after `write_kubeconfig`)."""
        from kubernetes import config

        if self.kubeconfig is None:
            raise RuntimeError("call write_kubeconfig() first")
        return config.new_client_from_config(str(self.kubeconfig), context=self.context)

    def handle(self, request: Request) -> Response:
        """Answer one HTTP request (also usable without the server, e.g. from unit tests)."""
        return self.router.handle(request)

    # --- types and hooks -----------------------------------------------------------------------------------------

    def register_type(self, resource_type: ResourceType) -> ResourceType:
        self.store.ensure_table(resource_type.group_resource, resource_type.indexed_fields)
        return self.registry.register(resource_type)

    def resource(self, kind: str, api_version: str | None = None) -> ResourceType:
        """A type by kind, plural, singular, short name or `plural.group` (KeyError when unknown)."""
        return self.registry.find(kind, api_version)

    def storage_type(self, group_resource: GroupResource) -> ResourceType | None:
        """The preferred served version of a storage table."""
        versions = self.registry.versions_of(*group_resource)
        return versions[0] if versions else None

    def add_controller(self, controller: Controller) -> Controller:
        self.controllers.append(controller)
        return controller

    def add_admission(self, hook: AdmissionHook) -> AdmissionHook:
        self.admission_hooks.append(hook)
        return hook

    def add_subresource(self, group: str, plural: str, name: str, handler: SubresourceHandler, *, kind: str = "",
                        verbs: tuple[str, ...] = ("get",), kind_group: str | None = None,
                        kind_version: str | None = None) -> None:
        """Serve `<plural>/<name>` with `handler(emulator, ResourceRequest) -> Response`, listed in discovery."""
        self.subresources[(group, plural, name)] = handler
        for resource_type in self.registry.versions_of(group, plural):
            if resource_type.subresource(name) is None:
                resource_type.subresources += (Subresource(name, kind, verbs, kind_group, kind_version),)

    def add_route(self, method: str | None, pattern: str, handler: RouteHandler) -> None:
        """Serve paths matching `pattern` (searched) with `handler(emulator, Request, match) -> Response`."""
        self.routes.append((method, re.compile(pattern), handler))

    def notify(self, event_type: str, resource_type: ResourceType, old: dict[str, Any] | None,
               new: dict[str, Any] | None) -> None:
        """Fan a committed write out to watchers and controllers (called under the store lock)."""
        obj = new if new is not None else old
        assert obj is not None
        group_resource = resource_type.group_resource
        self.watches.publish(event_type, group_resource, obj)
        for controller in list(self.controllers):
            if controller.watches and group_resource not in controller.watches:
                continue
            if event_type == "ADDED":
                controller.on_create(self, resource_type, obj)
            elif event_type == "MODIFIED":
                assert old is not None and new is not None
                controller.on_update(self, resource_type, old, new)
            else:
                controller.on_delete(self, resource_type, obj)

    # --- seeding and inspection (no HTTP, auth, faults or admission) ---------------------------------------------

    def load(self, objects: Iterable[dict[str, Any]], create_namespaces: bool = True) -> int:
        """Store objects as they are (status included), fast; fills uid, resourceVersion, creationTimestamp,
        generation and defaults. Missing namespaces are created. Fires no events: controllers only resync."""
        copies: list[dict[str, Any]] = clone(list(objects))
        crds = [obj for obj in copies if obj.get("kind") == "CustomResourceDefinition"]
        others = [obj for obj in copies if obj.get("kind") != "CustomResourceDefinition"]
        with self.store.lock:
            self._load_batch(crds, create_namespaces)  # first, so the custom resources below have a type
            self._load_batch(others, create_namespaces)
        return len(copies)

    def _load_batch(self, objects: list[dict[str, Any]], create_namespaces: bool) -> None:
        if not objects:
            return
        typed = [(self._type_of(obj), obj) for obj in objects]
        if create_namespaces:
            typed = self._missing_namespaces(typed) + typed
        now, touched = now_rfc3339(), set()
        for resource_type, obj in typed:
            self._prepare_loaded(resource_type, obj, now)
            self.store.put(resource_type.group_resource, obj, bulk=True)
            touched.add(obj["metadata"].get("namespace", ""))
        for controller in list(self.controllers):
            controller.resync(self, touched)

    def _missing_namespaces(self, typed: list[tuple[ResourceType, dict[str, Any]]]) -> list[
            tuple[ResourceType, dict[str, Any]]]:
        namespace_type = self.resource("Namespace")
        listed = {obj["metadata"].get("name") for rt, obj in typed if rt is namespace_type}
        wanted = {(obj.get("metadata") or {}).get("namespace") or "default" for rt, obj in typed if rt.namespaced}
        missing = sorted(n for n in wanted - listed if self.store.get(namespace_type.group_resource, "", n) is None)
        return [(namespace_type, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}) for n in missing]

    def _prepare_loaded(self, resource_type: ResourceType, obj: dict[str, Any], now: str) -> None:
        metadata = obj.setdefault("metadata", {})
        if not resource_type.namespaced:
            metadata.pop("namespace", None)
        elif not metadata.get("namespace"):
            metadata["namespace"] = "default"
        if not metadata.get("name"):
            if not metadata.get("generateName"):
                raise ValueError(f"{resource_type.kind} without metadata.name or generateName: {obj}")
            metadata["name"] = self._generated_name(resource_type, metadata)
        metadata.setdefault("uid", new_uid())
        metadata.setdefault("creationTimestamp", now)
        metadata["resourceVersion"] = self.store.next_version()
        if resource_type.tracks_generation:
            metadata.setdefault("generation", 1)
        if resource_type.defaulter:
            resource_type.defaulter(obj)

    def _generated_name(self, resource_type: ResourceType, metadata: dict[str, Any]) -> str:
        while True:
            name = generate_name(metadata["generateName"])
            if self.store.get(resource_type.group_resource, metadata.get("namespace", ""), name) is None:
                return name

    def _type_of(self, obj: dict[str, Any]) -> ResourceType:
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        resource_type = self.registry.find_by_kind(api_version, kind)
        if resource_type is None:
            raise KeyError(f"no resource type serves {api_version} {kind}")
        return resource_type

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        """A copy of a stored object, or None. `kind` may be a kind, plural, short name or `plural.group`."""
        resource_type = self.resource(kind)
        obj = self.store.get(resource_type.group_resource, namespace or "" if resource_type.namespaced else "", name)
        return clone(present(resource_type, obj)) if obj is not None else None

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        """Copies of the matching objects, in namespace/name order."""
        resource_type = self.resource(kind)
        listed = self.api.list(resource_type, namespace, ListOptions(label_selector, field_selector))
        return clone(listed["items"])

    def create(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """Create with the API's full semantics (admission, defaults, events), as the system user."""
        resource_type = self._type_of(obj)
        namespace = (obj.get("metadata") or {}).get("namespace") or ("default" if resource_type.namespaced else "")
        return clone(self.api.create(resource_type, namespace, clone(obj), dry_run=dry_run))

    def replace(self, obj: dict[str, Any], subresource: str = "") -> dict[str, Any]:
        resource_type = self._type_of(obj)
        metadata = obj.get("metadata") or {}
        updated, _created = self.api.update(resource_type, metadata.get("namespace", ""), metadata.get("name", ""),
                                            clone(obj), subresource=subresource)
        return clone(updated)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.replace(obj, subresource="status")

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, patch_type: str = "merge",
              subresource: str = "") -> dict[str, Any]:
        """`patch_type`: merge, json, strategic (or a content type)."""
        resource_type = self.resource(kind)
        content_type = PATCH_TYPE_ALIASES.get(patch_type, patch_type)
        patched, _created = self.api.patch(resource_type, namespace or "", name, content_type, patch,
                                           subresource=subresource, field_manager="emulator")
        return clone(patched)

    def delete(self, kind: str, namespace: str | None, name: str, grace_period_seconds: int | None = None,
               propagation_policy: str | None = None) -> dict[str, Any]:
        resource_type = self.resource(kind)
        options = DeleteOptions(grace_period_seconds=grace_period_seconds, propagation_policy=propagation_policy)
        return clone(self.api.delete(resource_type, namespace or "", name, options))

    def evict(self, namespace: str, name: str, dry_run: bool = False) -> dict[str, Any]:
        """Evict through `eviction_handler`, raising ApiError (429, 500, 404) like the subresource."""
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        return self.eviction_handler(self, namespace, name, eviction, dry_run, SYSTEM_USER)

    def complete_terminations(self, namespace: str | None = None) -> int:
        """Remove terminating pods, as kubelets would once their grace period ends; returns how many."""
        pods_type = self.resource("Pod")
        with self.store.lock:
            table = self.store.table(pods_type.group_resource)
            terminating = [table.objects[k] for k in list(table.keys(namespace))
                           if table.objects[k]["metadata"].get("deletionTimestamp")]
            for pod in terminating:
                self.api.delete_object(pods_type, pod, DeleteOptions(), force=True)
        return len(terminating)

    def compact(self) -> None:
        """Like an etcd compaction: every continue token handed out so far answers 410 Expired."""
        self.faults.compacted_revision = self.store.resource_version

    # --- pod logs ------------------------------------------------------------------------------------------------

    def set_pod_log(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        """The text `GET .../pods/<name>/log` returns (for `container`, or for any container when None)."""
        self._pod_logs[(namespace, name, container)] = text

    def pod_log(self, namespace: str, name: str, container: str | None) -> str:
        found = self._pod_logs.get((namespace, name, container))
        return found if found is not None else self._pod_logs.get((namespace, name, None), "")
