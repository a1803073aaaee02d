"""Handles on a real kube-apiserver for the `kube` fixture: `.kubeconfig`, `.context`, `.load(objects)`, `.get(...)`,
`.list(...)`, `.create(...)`, `.patch(...)`, `.delete(...)`, `.api_client()`, `.is_external`.

- `RealCluster`: a cluster the tester points at (TEST_KUBECONFIG); it has its own nodes, scheduler and kubelets.
- `ControlPlaneCluster`: the suite's own control plane (tests/controlplane), shared by the session. Each test gets
  a handle that gives pods whose status the test writes to no kubelet (`kubelet.hands_off`) and, at the end,
  deletes the namespaces, cluster-scoped objects and kube-system/default objects the test made (`cleanup`), so the
  next test starts clean.
  Nodes exist only when a test creates them (`is_external` is False: tests load their own nodes).

`kind` is a Kind ("Deployment"), a plural ("pods") or plural.group ("subscriptions.operators.coreos.com");
`api_version` narrows it down when given.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError

NAMESPACE_GONE_TIMEOUT = 60.0
RANDOM_NAMESPACE = re.compile(r"it-[0-9a-f]{8}")  # the `namespace` fixture's names (tests/integration/conftest.py)
SERVICE_ACCOUNT_TIMEOUT = 30.0
# Cluster-scoped objects the control plane makes itself and tests must not remove.
SYSTEM_PREFIXES = ("system:", "kube-", "kubeadm:", "flowcontrol-", "apiserver-")


class RealCluster:
    is_external = True

    def __init__(self, kubeconfig: str | Path, context: str | None = None) -> None:
        self.kubeconfig = Path(kubeconfig)
        self.context = context or (yaml.safe_load(self.kubeconfig.read_text()) or {}).get("current-context")

    def api_client(self) -> Any:
        from kubernetes import config

        return config.new_client_from_config(str(self.kubeconfig), context=self.context)

    # ---- objects -----------------------------------------------------------------------------------------------

    def load(self, objects: list[dict[str, Any]]) -> int:
        """Create the objects through the API (namespaces first, missing ones created), then write their status."""
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.exceptions import ConflictError

        with self.api_client() as client:
            dynamic = DynamicClient(client)
            wanted = {(o.get("metadata") or {}).get("namespace") for o in objects} - {None, ""}
            for name in sorted(wanted):
                self.ensure_namespace(name, dynamic)
            for obj in objects:
                resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
                namespace = (obj.get("metadata") or {}).get("namespace") if resource.namespaced else None
                if obj["kind"] == "Namespace":
                    self.ensure_namespace(obj["metadata"]["name"], dynamic, obj)
                    continue
                self._before_create(obj)
                try:
                    created = resource.create(body=obj, namespace=namespace)
                except ConflictError:
                    if namespace:
                        raise
                    continue  # a cluster-scoped object the server has built in (PriorityClass system-*): keep it
                self._after_create(obj, created.to_dict())
                if obj.get("status") and "status" in (resource.subresources or {}):
                    resource.status.patch(body={"status": obj["status"]}, name=created.metadata.name,
                                          namespace=namespace, content_type="application/merge-patch+json")
        return len(objects)

    def ensure_namespace(self, name: str, dynamic: Any, body: dict[str, Any] | None = None) -> None:
        from kubernetes.dynamic.exceptions import ConflictError

        namespaces = dynamic.resources.get(api_version="v1", kind="Namespace")
        try:
            namespaces.create(body=body or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except ConflictError:
            pass

    def get(self, kind: str, namespace: str | None, name: str, api_version: str | None = None) -> dict | None:
        from kubernetes.dynamic.exceptions import NotFoundError

        with self.api_client() as client:
            resource = self._resource(client, kind, api_version)
            try:
                return resource.get(name=name, namespace=namespace if resource.namespaced else None).to_dict()
            except NotFoundError:
                return None

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None,
             api_version: str | None = None) -> list[dict[str, Any]]:
        with self.api_client() as client:
            resource = self._resource(client, kind, api_version)
            listed = resource.get(namespace=namespace if resource.namespaced else None, label_selector=label_selector)
            return sorted((item.to_dict() for item in listed.items),
                          key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        with self.api_client() as client:
            resource = self._resource(client, obj["kind"], obj["apiVersion"])
            namespace = obj["metadata"].get("namespace") if resource.namespaced else None
            self._before_create(obj)
            created = resource.create(body=obj, namespace=namespace).to_dict()
            self._after_create(obj, created)
            return created

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, patch_type: str = "merge",
              api_version: str | None = None) -> dict[str, Any]:
        content_type = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
                        "strategic": "application/strategic-merge-patch+json"}[patch_type]
        with self.api_client() as client:
            resource = self._resource(client, kind, api_version)
            return resource.patch(body=patch, name=name, namespace=namespace if resource.namespaced else None,
                                  content_type=content_type).to_dict()

    def delete(self, kind: str, namespace: str | None, name: str, api_version: str | None = None) -> None:
        from kubernetes.dynamic.exceptions import NotFoundError

        with self.api_client() as client:
            resource = self._resource(client, kind, api_version)
            try:
                resource.delete(name=name, namespace=namespace if resource.namespaced else None)
            except NotFoundError:
                pass

    # ---- hooks for the control plane's handle ------------------------------------------------------------------

    def _before_create(self, obj: dict[str, Any]) -> None:
        """Called before an object is created (the control plane's handle tells its kubelet stand-in)."""

    def _after_create(self, obj: dict[str, Any], created: dict[str, Any]) -> None:
        """Called with what the server returned for a created object."""

    @staticmethod
    def _resource(client: Any, kind: str, api_version: str | None) -> Any:
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        resources = DynamicClient(client).resources
        if api_version:
            found = resources.search(api_version=api_version, kind=kind) or \
                resources.search(api_version=api_version, name=kind)
        elif "." in kind:
            plural, group = kind.split(".", 1)
            found = resources.search(group=group, name=plural)
        else:
            found = resources.search(kind=kind) or resources.search(name=kind)
        found = [r for r in found if getattr(r, "kind", "") and "/" not in (r.name or "")
                 and not r.kind.endswith("List")]
        if not found:
            raise ResourceNotFoundError(f"no resource {kind!r} (apiVersion {api_version or 'any'}) is served")
        # The core group first, as kubectl does (events in v1 and events.k8s.io).
        return sorted(found, key=lambda r: (r.group != "", not getattr(r, "preferred", True)))[0]


class ControlPlaneCluster(RealCluster):
    is_external = False

    def __init__(self, kubeconfig: str | Path, context: str, kubelet: Any, baseline: dict[str, set[str]],
                 faults: Any = None, admin_kubeconfig: str | Path | None = None) -> None:
        super().__init__(kubeconfig, context)
        # Cleanup talks to the server directly: the fault proxy may hold rules, or be gone, by then.
        self._admin = RealCluster(admin_kubeconfig or kubeconfig, context)
        self.kubelet = kubelet
        self._service_accounts: set[tuple[str, str]] = set()
        self._baseline = baseline
        self._faults = faults

    @property
    def faults(self) -> Any:
        if self._faults is None:
            raise AttributeError("fault injection needs @pytest.mark.faults on the test: its kubeconfig then goes "
                                 "through the fault proxy (tests/integration/faultproxy.py)")
        return self._faults

    def ensure_namespace(self, name: str, dynamic: Any, body: dict[str, Any] | None = None) -> None:
        super().ensure_namespace(name, dynamic, body)
        wait_for_default_service_account(dynamic.client, name)

    def _before_create(self, obj: dict[str, Any]) -> None:
        if obj.get("kind") != "Pod":
            return
        namespace = obj["metadata"].get("namespace", "default")
        account = (obj.get("spec") or {}).get("serviceAccountName")
        if account and account != "default":
            # Generated clusters name accounts (kube-proxy) nobody created; the ServiceAccount admission plugin
            # refuses such a pod, so the account is made as an installer would have.
            self._ensure_service_account(namespace, account)
        if obj.get("status"):
            self.kubelet.hands_off(namespace, obj["metadata"]["name"])

    def _ensure_service_account(self, namespace: str, name: str) -> None:
        if (namespace, name) in self._service_accounts:
            return
        from kubernetes.client.exceptions import ApiException

        with self._admin.api_client() as client:
            try:
                _raw(client, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                     {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
            except (ApiException, ClusterApiError) as error:
                if getattr(error, "status", None) != 409:
                    raise
        self._service_accounts.add((namespace, name))

    def _after_create(self, obj: dict[str, Any], created: dict[str, Any]) -> None:
        if obj.get("kind") == "Pod" and obj.get("status"):
            metadata = created["metadata"]
            self.kubelet.owned_by_test(metadata["namespace"], metadata["name"], metadata["uid"])

    def cleanup(self) -> None:
        """Delete what the test added: namespaces, cluster-scoped objects and objects in kube-system and default,
        CRDs last (their custom resources go with them). Namespaces with a fixed name ("shop") may come back in the
        next test: those are waited for until gone (a few seconds of the namespace controller); the `namespace`
        fixture's random ones are not."""
        with self._admin.api_client() as client:
            left = cluster_scoped_names(client)
            for plural in sorted(left, key=lambda p: p == "customresourcedefinitions"):
                for name in sorted(left[plural] - self._baseline.get(plural, set())):
                    _delete_cluster_scoped(client, plural, name)
            added = left.get("namespaces", set()) - self._baseline.get("namespaces", set())
            wait_namespaces_gone(client, {name for name in added if not RANDOM_NAMESPACE.fullmatch(name)})


# ---- helpers shared by the fixtures ----------------------------------------------------------------------------

CLUSTER_SCOPED = {  # plural -> API path prefix; what tests create
    "namespaces": "/api/v1", "nodes": "/api/v1", "persistentvolumes": "/api/v1",
    "clusterroles": "/apis/rbac.authorization.k8s.io/v1",
    "clusterrolebindings": "/apis/rbac.authorization.k8s.io/v1",
    "priorityclasses": "/apis/scheduling.k8s.io/v1",
    "storageclasses": "/apis/storage.k8s.io/v1",
    "validatingwebhookconfigurations": "/apis/admissionregistration.k8s.io/v1",
    "mutatingwebhookconfigurations": "/apis/admissionregistration.k8s.io/v1",
    "apiservices": "/apis/apiregistration.k8s.io/v1",
    "customresourcedefinitions": "/apis/apiextensions.k8s.io/v1",
}
LASTING_NAMESPACES = ("kube-system", "default")
SYSTEM_MANAGERS = {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
# The ServiceAccounts kube-controller-manager makes for its controllers (--use-service-account-credentials)
CONTROLLER_ACCOUNT_SUFFIXES = ("-controller", "-collector", "-binder", "-publisher", "-cleaner")
CONTROLLER_ACCOUNTS = {"default"}
NAMESPACED_KINDS = [  # (API path prefix, plural): what tests and the collection create in the lasting namespaces
    ("/api/v1", "configmaps"), ("/api/v1", "secrets"), ("/api/v1", "serviceaccounts"), ("/api/v1", "services"),
    ("/api/v1", "pods"), ("/apis/apps/v1", "deployments"), ("/apis/apps/v1", "daemonsets"),
    ("/apis/batch/v1", "cronjobs"), ("/apis/batch/v1", "jobs"), ("/apis/coordination.k8s.io/v1", "leases"),
    ("/apis/rbac.authorization.k8s.io/v1", "roles"), ("/apis/rbac.authorization.k8s.io/v1", "rolebindings"),
    ("/apis/policy/v1", "poddisruptionbudgets"),
]


def _raw(client: Any, method: str, path: str, body: Any = None, content_type: str | None = None) -> Any:
    """One call through the collection's own transport (it speaks to every supported `kubernetes` client)."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import request_raw

    return request_raw(client, method, path, body=body, content_type=content_type)


def cluster_scoped_names(client: Any) -> dict[str, set[str]]:
    """Names per kind of the cluster-scoped objects tests create: the built-in kinds of CLUSTER_SCOPED by plural, and
    the objects of every cluster-scoped custom resource by their collection's path (``/apis/<group>/<v>/<plural>``):
    a CRD an earlier test left in place must not carry this test's objects (a `Scheduler` "cluster") into the next;
    and the objects of the namespaces that outlive the test, by their collection's path."""
    names: dict[str, set[str]] = {}
    for plural, prefix in CLUSTER_SCOPED.items():
        listed = _raw(client, "GET", f"{prefix}/{plural}")
        names[plural] = {item["metadata"]["name"] for item in listed["items"]
                         if not item["metadata"]["name"].startswith(SYSTEM_PREFIXES)}
    for collection in _custom_cluster_collections(client) + _lasting_namespace_collections():
        try:
            listed = _raw(client, "GET", collection)
        except ClusterApiError:
            continue  # not served (yet, or any more)
        names[collection] = {item["metadata"]["name"] for item in listed["items"] if not _made_by_the_system(item)}
    return names


def _made_by_the_system(item: dict[str, Any]) -> bool:
    """Written only by the control plane itself (the controllers' ServiceAccounts, the leader election Leases, the
    root CA ConfigMap): a plane that just started may still be making them while a test runs, and removing one
    would break that controller for every later test."""
    metadata = item["metadata"]
    if metadata["name"].endswith(CONTROLLER_ACCOUNT_SUFFIXES) or metadata["name"] in CONTROLLER_ACCOUNTS:
        return True  # kube-controller-manager's accounts carry no managedFields: known by their names
    managers = {entry.get("manager") for entry in metadata.get("managedFields") or []}
    return bool(managers) and managers <= SYSTEM_MANAGERS


def _lasting_namespace_collections() -> list[str]:
    """The collections of the namespaces that outlive every test (kube-system, default): what a test adds there (an
    upstream install's ConfigMap, a change Lease a killed run left held) is removed with the test like its
    cluster-scoped objects, or the next test finds it (AlreadyExists, a Lease held by nobody alive)."""
    return [f"{prefix}/namespaces/{namespace}/{plural}"
            for namespace in LASTING_NAMESPACES for prefix, plural in NAMESPACED_KINDS]


def _custom_cluster_collections(client: Any) -> list[str]:
    crds = _raw(client, "GET", f"{CLUSTER_SCOPED['customresourcedefinitions']}/customresourcedefinitions")
    collections = []
    for crd in crds["items"]:
        spec = crd.get("spec") or {}
        if spec.get("scope") != "Cluster" or crd["metadata"].get("deletionTimestamp"):
            continue
        served = [v["name"] for v in spec.get("versions") or [] if v.get("served")]
        if served:
            collections.append(f"/apis/{spec['group']}/{served[0]}/{spec['names']['plural']}")
    return collections


def _delete_cluster_scoped(client: Any, plural: str, name: str) -> None:
    """Deletes one object a test added, by plural or by collection path; a pod at once (no kubelet grace)."""
    prefix = plural if plural.startswith("/") else f"{CLUSTER_SCOPED[plural]}/{plural}"
    at_once = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    options = at_once if prefix.endswith("/pods") else None
    try:
        _raw(client, "DELETE", f"{prefix}/{name}", options)
    except ClusterApiError as error:
        if error.status not in (404, 409):
            raise


def wait_namespaces_gone(client: Any, names: set[str], timeout: float = NAMESPACE_GONE_TIMEOUT) -> None:
    """Waits until the namespaces are gone. Their pods are deleted at once (grace period 0): kube-controller-manager's
    namespace controller, finding pods still terminating, looks again only after half their grace period (16 s for
    the default 30 s), and when they are gone it is told so by a touch of the namespace (a changed namespace is
    looked at again within its 5 s)."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    pause = 0.2
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            try:
                _raw(client, "GET", f"/api/v1/namespaces/{name}")
            except ClusterApiError as error:
                if error.status == 404:
                    pending.discard(name)
                    continue
                raise
            if _force_delete_pods(client, name):
                _touch_namespace(client, name)
        if pending:
            time.sleep(pause)
            pause = min(pause * 1.5, 1.0)  # each round lists and may delete pods: no need for five a second
    if pending:
        raise TimeoutError(f"namespaces {sorted(pending)} still terminating after {timeout:.0f}s")


def _force_delete_pods(client: Any, namespace: str) -> bool:
    """Deletes the pods of a namespace with no grace period; says whether there were any."""
    listed = _raw(client, "GET", f"/api/v1/namespaces/{namespace}/pods")
    if not listed["items"]:
        return False
    try:
        _raw(client, "DELETE", f"/api/v1/namespaces/{namespace}/pods",
             {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    except ClusterApiError as error:
        if error.status != 404:
            raise
    return True


def _touch_namespace(client: Any, namespace: str) -> None:
    try:
        _raw(client, "PATCH", f"/api/v1/namespaces/{namespace}",
             {"metadata": {"annotations": {"descheduler-fleet.test/cleanup": str(time.monotonic_ns())}}},
             content_type="application/merge-patch+json")
    except ClusterApiError as error:
        if error.status not in (404, 409):
            raise


def wait_for_default_service_account(client: Any, namespace: str, timeout: float = SERVICE_ACCOUNT_TIMEOUT) -> None:
    """A new namespace gets its `default` ServiceAccount from kube-controller-manager a moment later; until then the
    ServiceAccount admission plugin refuses pods there (as on any real cluster)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _raw(client, "GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
            return
        except ClusterApiError as error:
            if error.status != 404 or time.monotonic() > deadline:
                raise
        time.sleep(0.1)
