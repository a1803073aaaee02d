"""The Kubernetes API emulator, exercised through the real `kubernetes` client.

Tests on the `kube` fixture hold for a real cluster too (TEST_KUBECONFIG); `needs_emulator` tests use seeding,
fault injection or controllers only the emulator has.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

import pytest
from emulator import ApiError, Emulator
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

Obj = dict[str, Any]


# --- helpers -----------------------------------------------------------------------------------------------------

def status_of(exc: ApiException) -> Obj:
    return json.loads(exc.body)


def expect_error(code: int, reason: str | None, call: Any, *args: Any, **kwargs: Any) -> Obj:
    """The Status a failed call answers; `reason` None: kube-apiserver sends none."""
    with pytest.raises(ApiException) as caught:
        call(*args, **kwargs)
    body = status_of(caught.value)
    assert caught.value.status == code, body
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["code"] == code
    assert body.get("reason") == reason, body
    return body


def raw(api_client: Any, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
        query: list[tuple[str, Any]] | None = None) -> tuple[int, Any, Any]:
    """A request through ApiClient.call_api: (status, decoded body, headers)."""
    header_params = {"Accept": "application/json", **(headers or {})}
    if body is not None:
        header_params.setdefault("Content-Type", "application/json")
    request = api_client.param_serialize(method, path, query_params=query or [], header_params=header_params,
                                         body=body, auth_settings=["BearerToken"])
    response = api_client.call_api(*request)
    data = response.read()
    content_type = response.headers.get("Content-Type", "")
    decoded = json.loads(data) if data and "json" in content_type else data.decode()
    return response.status, decoded, response.headers


def pod(name: str, namespace: str = "default", labels: dict[str, str] | None = None, node: str = "node-a",
        phase: str = "Running", ready: bool = True, owner: Obj | None = None, containers: int = 1) -> Obj:
    metadata: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner is not None:
        metadata["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                        "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                        "controller": True, "blockOwnerDeletion": True}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"nodeName": node, "containers": [{"name": f"c{i}" if i else "app", "image": "registry/app:1"}
                                                  for i in range(containers)]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def pdb(name: str, namespace: str = "default", selector: Obj | None = None, **spec: Any) -> Obj:
    body: Obj = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": name, "namespace": namespace}, "spec": dict(spec)}
    if selector is not None:
        body["spec"]["selector"] = selector
    return body


def node(name: str, unschedulable: bool = False) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"unschedulable": unschedulable},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def configmap(name: str, namespace: str, labels: dict[str, str] | None = None, data: Obj | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                  "labels": labels or {}}, "data": data or {}}


def eviction(name: str, namespace: str = "default", dry_run: bool = False) -> client.V1Eviction:
    options = client.V1DeleteOptions(dry_run=["All"]) if dry_run else None
    return client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace), delete_options=options)


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kubedeschedulers.operator.openshift.io"},
    "spec": {
        "group": "operator.openshift.io",
        "names": {"kind": "KubeDescheduler", "listKind": "KubeDeschedulerList", "plural": "kubedeschedulers",
                  "singular": "kubedescheduler"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}


# --- discovery ---------------------------------------------------------------------------------------------------

def test_discovery_through_dynamic_client(dynamic_client: Any, api_client: Any) -> None:
    pods = dynamic_client.resources.get(api_version="v1", kind="Pod")
    assert pods.namespaced and pods.name == "pods" and "po" in pods.short_names
    assert {"eviction", "log", "status"} <= set(pods.subresources)
    deployments = dynamic_client.resources.get(api_version="apps/v1", kind="Deployment")
    assert "scale" in deployments.subresources
    assert dynamic_client.resources.get(api_version="policy/v1", kind="PodDisruptionBudget").short_names == ["pdb"]
    assert not dynamic_client.resources.get(api_version="v1", kind="Node").namespaced

    status, core, _headers = raw(api_client, "GET", "/api/v1")
    assert status == 200 and core["kind"] == "APIResourceList" and core["groupVersion"] == "v1"
    eviction_entry = next(r for r in core["resources"] if r["name"] == "pods/eviction")
    assert eviction_entry == {"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                              "version": "v1", "kind": "Eviction", "verbs": ["create"]}
    _status, groups, _headers = raw(api_client, "GET", "/apis")
    apps = next(g for g in groups["groups"] if g["name"] == "apps")
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    _status, version, _headers = raw(api_client, "GET", "/version")
    assert version["major"] == "1" and version["gitVersion"].startswith("v1.")


@pytest.mark.needs_emulator
def test_openapi_is_absent_and_unknown_resources_are_404(emulator: Emulator, api_client: Any) -> None:
    started = time.perf_counter()
    status, _body, _headers = raw(api_client, "GET", "/openapi/v2")
    assert status == 404 and time.perf_counter() - started < 0.5
    status, body, _headers = raw(api_client, "GET", "/api/v1/widgets")
    assert status == 404 and body["message"] == "the server could not find the requested resource"


# --- CRUD --------------------------------------------------------------------------------------------------------

def test_create_get_list_delete(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    settings = configmap("settings", namespace, data={"a": "1"})
    created, code, _headers = core.create_namespaced_config_map_with_http_info(namespace, settings)
    assert code == 201
    assert created.metadata.uid and created.metadata.resource_version and created.metadata.creation_timestamp
    assert core.read_namespaced_config_map("settings", namespace).data == {"a": "1"}
    listed = core.list_namespaced_config_map(namespace)
    # kube-root-ca.crt: the root CA publisher of kube-controller-manager puts it in every namespace
    assert listed.kind == "ConfigMapList"
    assert [c.metadata.name for c in listed.items if c.metadata.name != "kube-root-ca.crt"] == ["settings"]
    assert int(listed.metadata.resource_version) >= int(created.metadata.resource_version)

    body = expect_error(409, "AlreadyExists", core.create_namespaced_config_map, namespace,
                        configmap("settings", namespace))
    assert body["message"] == 'configmaps "settings" already exists'
    assert body["details"] == {"name": "settings", "kind": "configmaps"}

    status, deleted, _headers = raw(api_client, "DELETE", f"/api/v1/namespaces/{namespace}/configmaps/settings")
    assert status == 200 and deleted["kind"] == "Status" and deleted["status"] == "Success"
    assert deleted["details"]["name"] == "settings" and deleted["details"]["kind"] == "configmaps"
    body = expect_error(404, "NotFound", core.read_namespaced_config_map, "settings", namespace)
    assert body["message"] == 'configmaps "settings" not found'
    assert body["details"] == {"name": "settings", "kind": "configmaps"}


def test_not_found_names_the_group(api_client: Any, namespace: str) -> None:
    body = expect_error(404, "NotFound", client.AppsV1Api(api_client).read_namespaced_deployment, "web", namespace)
    assert body["message"] == 'deployments.apps "web" not found'
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}


def test_create_rejects_bad_bodies(api_client: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, body, _headers = raw(api_client, "POST", path, {"apiVersion": "apps/v1", "kind": "ConfigMap",
                                                            "metadata": {"name": "x"}})
    assert status == 400 and body["reason"] == "BadRequest"
    # kube-apiserver words it 'ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is
    # registered for version "apps/v1" ...': what a caller can rely on is the code, the reason and the version named
    assert "apps/v1" in body["message"]
    status, body, _headers = raw(api_client, "POST", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    assert body["details"]["causes"] == [{"reason": "FieldValueRequired", "field": "metadata.name",
                                          "message": "Required value: name or generateName is required"}]
    status, body, _headers = raw(api_client, "POST", path, {"apiVersion": "v1", "kind": "ConfigMap",
                                                            "metadata": {"name": "Bad_Name"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.name"
    status, body, _headers = raw(api_client, "POST", path, {"apiVersion": "v1", "kind": "ConfigMap",
                                                            "metadata": {"name": "x", "namespace": "elsewhere"}})
    assert status == 400
    assert body["message"] == "the namespace of the provided object does not match the namespace sent on the request"


def test_create_in_missing_namespace_is_404(api_client: Any) -> None:
    body = expect_error(404, "NotFound", client.CoreV1Api(api_client).create_namespaced_config_map,
                        "no-such-namespace", configmap("x", "no-such-namespace"))
    assert body["message"] == 'namespaces "no-such-namespace" not found'
    assert body["details"] == {"name": "no-such-namespace", "kind": "namespaces"}


def test_generate_name(api_client: Any, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "job-", "namespace": namespace}}
    first = client.CoreV1Api(api_client).create_namespaced_config_map(namespace, body)
    second = client.CoreV1Api(api_client).create_namespaced_config_map(namespace, body)
    assert first.metadata.name.startswith("job-") and len(first.metadata.name) == len("job-") + 5
    assert first.metadata.name != second.metadata.name


def test_replace_with_stale_resource_version_conflicts(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_config_map(namespace, configmap("cfg", namespace, data={"v": "1"}))
    fresh = core.read_namespaced_config_map("cfg", namespace)
    fresh.data = {"v": "2"}
    replaced = core.replace_namespaced_config_map("cfg", namespace, fresh)
    assert replaced.data == {"v": "2"}
    assert replaced.metadata.resource_version != created.metadata.resource_version
    assert replaced.metadata.uid == created.metadata.uid

    stale_body = api_client.sanitize_for_serialization(created)
    stale_body["data"] = {"v": "3"}
    body = expect_error(409, "Conflict", core.replace_namespaced_config_map, "cfg", namespace, stale_body)
    assert body["message"] == ('Operation cannot be fulfilled on configmaps "cfg": the object has been modified; '
                               "please apply your changes to the latest version and try again")

    unchanged = core.replace_namespaced_config_map("cfg", namespace, replaced)
    assert unchanged.metadata.resource_version == replaced.metadata.resource_version  # a no-op write


def test_three_patch_types(api_client: Any, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web", "tier": "front"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                                    {"name": "sidecar", "image": "proxy:1"}],
                     "tolerations": [{"key": "a", "operator": "Exists"}]}}},
    }
    created = apps.create_namespaced_deployment(namespace, deployment)
    assert created.metadata.generation == 1

    merged = apps.patch_namespaced_deployment("web", namespace, {"metadata": {"labels": {"tier": None, "x": "y"}}},
                                              _content_type="application/merge-patch+json")
    assert merged.metadata.labels == {"app": "web", "x": "y"}
    assert merged.metadata.generation == 1  # metadata changes leave generation alone

    strategic = apps.patch_namespaced_deployment("web", namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}],
        "tolerations": [{"key": "b", "operator": "Exists"}]}}}})
    containers = strategic.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [("app", "app:2"), ("sidecar", "proxy:1")]
    # merged by name; kube-apiserver puts the patch's new item first (B, A): the order is the server's to choose
    assert sorted(e.name for e in containers[0].env) == ["A", "B"]
    assert [t.key for t in strategic.spec.template.spec.tolerations] == ["b"]  # atomic list, as upstream
    assert strategic.metadata.generation == 2

    removed = apps.patch_namespaced_deployment("web", namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "sidecar", "$patch": "delete"}]}}}})
    assert [c.name for c in removed.spec.template.spec.containers] == ["app"]

    json_patched = apps.patch_namespaced_deployment("web", namespace, [
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 3},
        {"op": "add", "path": "/metadata/annotations", "value": {"note": "hi"}},
    ])
    assert json_patched.spec.replicas == 3 and json_patched.metadata.annotations == {"note": "hi"}
    body = expect_error(422, "Invalid", apps.patch_namespaced_deployment, "web", namespace,
                        [{"op": "test", "path": "/spec/replicas", "value": 99}])
    assert body["code"] == 422  # kube-apiserver's message is generic ("the server rejected our request ...")
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 3  # the failed patch changed nothing


def test_status_subresource_is_separate(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_pod(namespace, {**pod("p", namespace), "status": {"phase": "Running"}})
    assert created.status.phase == "Pending"  # status sent on create is dropped
    patched = core.patch_namespaced_pod_status("p", namespace, {"status": {"phase": "Running"}},
                                               _content_type="application/merge-patch+json")
    assert patched.status.phase == "Running"
    relabelled = core.patch_namespaced_pod("p", namespace, {"metadata": {"labels": {"x": "1"}},
                                                            "status": {"phase": "Failed"}})
    assert relabelled.status.phase == "Running" and relabelled.metadata.labels["x"] == "1"


def test_delete_pod_returns_the_pod_and_dry_run_keeps_it(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(namespace, pod("p", namespace))
    status, body, _headers = raw(api_client, "DELETE", f"/api/v1/namespaces/{namespace}/pods/p",
                                 query=[("dryRun", "All")])
    assert status == 200 and body["kind"] == "Pod"
    assert core.read_namespaced_pod("p", namespace).metadata.name == "p"
    dry = core.create_namespaced_config_map(namespace, configmap("dry", namespace), dry_run="All")
    assert dry.metadata.name == "dry"
    expect_error(404, "NotFound", core.read_namespaced_config_map, "dry", namespace)
    deleted = core.delete_namespaced_pod("p", namespace, grace_period_seconds=0)
    assert deleted.metadata.name == "p"
    expect_error(404, "NotFound", core.read_namespaced_pod, "p", namespace)


@pytest.fixture
def kubelet(kube: Any) -> Any:
    """What plays the kubelet: the control plane's stand-in, or None on the emulator (which has its own)."""
    return getattr(kube, "kubelet", None)


def eventually(check: Any, timeout: float = 30.0) -> Any:
    """Poll until `check()` is truthy: controllers (garbage collector, disruption, namespace) act asynchronously on a
    real server; the emulator's act within the request, so there the first call already holds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def budget_numbers(policy: Any, name: str, namespace: str) -> tuple[int, int, int, int]:
    status = policy.read_namespaced_pod_disruption_budget(name, namespace).status
    return status.current_healthy, status.desired_healthy, status.expected_pods, status.disruptions_allowed


def wait_budget(policy: Any, name: str, namespace: str, numbers: tuple[int, int, int, int]) -> None:
    """Until the disruption controller observed the budget and counted `numbers` (healthy, desired, expected,
    allowed); an eviction before that is refused as "still being processed"."""
    def observed() -> bool:
        budget = policy.read_namespaced_pod_disruption_budget(name, namespace)
        generation_seen = (budget.status.observed_generation or 0) >= (budget.metadata.generation or 0)
        return generation_seen and budget_numbers(policy, name, namespace) == numbers
    assert eventually(observed), budget_numbers(policy, name, namespace)


def delete_namespace(core: Any, name: str) -> None:
    try:
        core.delete_namespace(name)
    except ApiException as error:
        if error.status != 404:  # the emulator keeps objects in namespaces nobody created
            raise


def test_delete_namespace_deletes_its_objects(kube: Any, api_client: Any) -> None:
    doomed, kept = f"doomed-{uuid.uuid4().hex[:6]}", f"kept-{uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(api_client)
    kube.load([configmap("a", doomed), pod("p", doomed), configmap("b", kept)])
    try:
        deleted = core.delete_namespace(doomed)
        assert deleted["status"]["phase"] == "Terminating"  # the namespace, as it was when deletion began
        assert eventually(lambda: kube.get("Namespace", None, doomed) is None, timeout=60)
        assert kube.get("ConfigMap", doomed, "a") is None and kube.get("Pod", doomed, "p") is None
        assert kube.get("ConfigMap", kept, "b") is not None
    finally:
        delete_namespace(core, kept)


def test_deleting_an_owner_cascades_unless_orphaned(kube: Any, api_client: Any, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    # Owners that want exactly the pods the test makes: their controllers neither add nor remove any.
    replica_set_spec = {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "app", "image": "web:1"}]}}}
    kube.load([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": namespace},
                "spec": {**replica_set_spec, "paused": True}}])
    deployment = kube.get("Deployment", namespace, "web")
    # Labelled like its pods: a Deployment releases the ReplicaSets whose own labels its selector does not match.
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": namespace,
                                                                      "labels": {"app": "web"},
          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                               "uid": deployment["metadata"]["uid"], "controller": True}]},
          "spec": replica_set_spec}
    kube.load([rs])
    replica_set = kube.get("ReplicaSet", namespace, "web-1")
    kube.load([pod(f"web-1-{i}", namespace, {"app": "web"}, owner=replica_set) for i in range(3)])
    apps.delete_namespaced_deployment("web", namespace, propagation_policy="Background")
    assert eventually(lambda: kube.list("Pod", namespace) == [] and kube.get("ReplicaSet", namespace, "web-1") is None)

    solo_spec = {**replica_set_spec, "replicas": 1, "selector": {"matchLabels": {"app": "solo"}},
                 "template": {**replica_set_spec["template"], "metadata": {"labels": {"app": "solo"}}}}
    kube.load([{**rs, "metadata": {"name": "solo", "namespace": namespace}, "spec": solo_spec}])
    solo = kube.get("ReplicaSet", namespace, "solo")
    kube.load([pod("solo-1", namespace, {"app": "solo"}, owner=solo)])
    apps.delete_namespaced_replica_set("solo", namespace,
                                       body=client.V1DeleteOptions(propagation_policy="Orphan"))
    assert eventually(lambda: kube.get("ReplicaSet", namespace, "solo") is None)

    def orphaned() -> Obj | None:
        found = kube.get("Pod", namespace, "solo-1")
        return found if found and not found["metadata"].get("ownerReferences") else None

    orphan = eventually(orphaned)
    assert orphan is not None and not orphan["metadata"].get("ownerReferences")


def test_finalizers_hold_deletion_until_removed(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {**configmap("held", namespace),
                                                  "metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    core.delete_namespaced_config_map("held", namespace)
    held = core.read_namespaced_config_map("held", namespace)
    assert held.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}},
                                     _content_type="application/merge-patch+json")
    expect_error(404, "NotFound", core.read_namespaced_config_map, "held", namespace)


# --- selectors and paging ----------------------------------------------------------------------------------------

def test_label_selectors(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([
        configmap("a", namespace, {"app": "web", "tier": "front"}),
        configmap("b", namespace, {"app": "web", "tier": "back"}),
        configmap("c", namespace, {"app": "db"}),
        configmap("d", namespace, {}),
    ])
    core = client.CoreV1Api(api_client)

    def names(selector: str) -> list[str]:
        listed = core.list_namespaced_config_map(namespace, label_selector=selector).items
        return [c.metadata.name for c in listed if c.metadata.name != "kube-root-ca.crt"]

    assert names("app=web") == ["a", "b"]
    assert names("app==web,tier!=front") == ["b"]
    assert names("app in (web, db)") == ["a", "b", "c"]
    assert names("app notin (web)") == ["c", "d"]
    assert names("tier") == ["a", "b"]
    assert names("!tier") == ["c", "d"]
    expect_error(400, "BadRequest", core.list_namespaced_config_map, namespace, label_selector="app in web")


def test_field_selectors(kube: Any, api_client: Any, namespace: str) -> None:
    other = f"{namespace}-other"
    node_a, node_b = f"{namespace}-n1", f"{namespace}-n2"
    kube.load([pod("p1", namespace, node=node_a), pod("p2", namespace, node=node_b, phase="Pending"),
               pod("p3", other, node=node_a)])
    core = client.CoreV1Api(api_client)

    def names(selector: str, ns: str | None = None) -> list[str]:
        items = (core.list_namespaced_pod(ns, field_selector=selector) if ns
                 else core.list_pod_for_all_namespaces(field_selector=selector)).items
        return sorted(f"{p.metadata.namespace}/{p.metadata.name}" for p in items
                      if p.metadata.namespace in (namespace, other))

    try:
        assert names(f"spec.nodeName={node_a}") == sorted([f"{namespace}/p1", f"{other}/p3"])
        assert names(f"spec.nodeName={node_a}", namespace) == [f"{namespace}/p1"]
        assert names("status.phase!=Running") == [f"{namespace}/p2"]
        assert names(f"metadata.name==p2,metadata.namespace={namespace}") == [f"{namespace}/p2"]
        body = expect_error(400, "BadRequest", core.list_pod_for_all_namespaces, field_selector="spec.image=x")
        assert body["message"] == "field label not supported: spec.image"
    finally:
        delete_namespace(core, other)


def test_paging_with_limit_and_continue(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([configmap(f"cm-{i:02d}", namespace, {"paged": "yes"}) for i in range(25)])
    core = client.CoreV1Api(api_client)
    first = core.list_namespaced_config_map(namespace, limit=10, label_selector="paged")
    assert len(first.items) == 10 and first.metadata._continue
    second = core.list_namespaced_config_map(namespace, limit=10, _continue=first.metadata._continue,
                                             label_selector="paged")
    third = core.list_namespaced_config_map(namespace, limit=10, _continue=second.metadata._continue,
                                            label_selector="paged")
    assert len(third.items) == 5 and not third.metadata._continue
    names = [c.metadata.name for page in (first, second, third) for c in page.items]
    assert names == [f"cm-{i:02d}" for i in range(25)]
    assert second.metadata.resource_version == first.metadata.resource_version
    # Without a selector the server also says how many are left (kube-root-ca.crt is one more on a real server).
    unfiltered = core.list_namespaced_config_map(namespace, limit=10)
    assert unfiltered.metadata.remaining_item_count == len(core.list_namespaced_config_map(namespace).items) - 10


@pytest.mark.needs_emulator
def test_expired_continue_token_is_410(emulator: Emulator, api_client: Any) -> None:
    emulator.load([configmap(f"cm-{i:02d}", "paged") for i in range(30)])
    core = client.CoreV1Api(api_client)
    emulator.faults.expire_continue_after(2)
    first = core.list_namespaced_config_map("paged", limit=10)
    second = core.list_namespaced_config_map("paged", limit=10, _continue=first.metadata._continue)
    body = expect_error(410, "Expired", core.list_namespaced_config_map, "paged", limit=10,
                        _continue=second.metadata._continue)
    assert body["message"].startswith("The provided continue parameter is too old to display a consistent list")
    assert body["metadata"]["continue"]  # the inconsistent continuation kube-apiserver offers
    rest = core.list_namespaced_config_map("paged", limit=10, _continue=body["metadata"]["continue"])
    assert [c.metadata.name for c in rest.items][0] == "cm-20"
    # a fresh list works again: the fault fired once
    restarted = core.list_namespaced_config_map("paged", limit=10)
    core.list_namespaced_config_map("paged", limit=10, _continue=restarted.metadata._continue)

    emulator.faults.expire_next_continue()
    expect_error(410, "Expired", core.list_namespaced_config_map, "paged", limit=10,
                 _continue=restarted.metadata._continue)
    emulator.compact()
    expect_error(410, "Expired", core.list_namespaced_config_map, "paged", limit=10,
                 _continue=restarted.metadata._continue)
    emulator.faults.clear()
    emulator.faults.continue_ttl_seconds = 0.0
    fresh = core.list_namespaced_config_map("paged", limit=10)
    time.sleep(0.01)
    expect_error(410, "Expired", core.list_namespaced_config_map, "paged", limit=10, _continue=fresh.metadata._continue)


# --- eviction ----------------------------------------------------------------------------------------------------

def test_eviction_allowed_decrements_the_budget(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([pdb("web", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable=1)]
              + [pod(f"web-{i}", namespace, labels={"app": "web"}) for i in range(3)])
    policy = client.PolicyV1Api(api_client)
    wait_budget(policy, "web", namespace, (3, 1, 3, 2))

    status, body, _headers = raw(api_client, "POST", f"/api/v1/namespaces/{namespace}/pods/web-0/eviction",
                                 {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0"}})
    assert status == 201 and body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                      "code": 201}
    assert eventually(lambda: kube.get("Pod", namespace, "web-0") is None)
    wait_budget(policy, "web", namespace, (2, 1, 2, 1))


def test_eviction_refused_by_budget_is_429(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([pdb("web-pdb", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable=2),
               pod("web-0", namespace, labels={"app": "web"}), pod("web-1", namespace, labels={"app": "web"})])
    wait_budget(client.PolicyV1Api(api_client), "web-pdb", namespace, (2, 2, 2, 0))
    core = client.CoreV1Api(api_client)
    body = expect_error(429, "TooManyRequests", core.create_namespaced_pod_eviction, "web-0", namespace,
                        eviction("web-0", namespace))
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [{"reason": "DisruptionBudget", "message":
                                          "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"}]
    assert kube.get("Pod", namespace, "web-0") is not None


def test_eviction_with_two_budgets_is_500(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([pdb("all", namespace, selector={}, minAvailable=0),
               pdb("web", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable=0),
               pdb("nil-selector", namespace, minAvailable=5), pod("web-0", namespace, labels={"app": "web"})])
    body = expect_error(500, None, client.CoreV1Api(api_client).create_namespaced_pod_eviction,
                        "web-0", namespace, eviction("web-0", namespace))
    assert body["message"] == "This pod has more than one PodDisruptionBudget, which the eviction subresource does " \
                              "not support."


def test_eviction_of_missing_pod_is_404_and_dry_run_keeps_the_pod(kube: Any, api_client: Any,
                                                                  namespace: str) -> None:
    core, policy = client.CoreV1Api(api_client), client.PolicyV1Api(api_client)
    body = expect_error(404, "NotFound", core.create_namespaced_pod_eviction, "ghost", namespace,
                        eviction("ghost", namespace))
    assert body["message"] == 'pods "ghost" not found'
    kube.load([pdb("web", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable=1),
               pod("web-0", namespace, labels={"app": "web"}), pod("web-1", namespace, labels={"app": "web"})])
    wait_budget(policy, "web", namespace, (2, 1, 2, 1))
    core.create_namespaced_pod_eviction("web-0", namespace, eviction("web-0", namespace, dry_run=True))
    status, _body, _headers = raw(api_client, "POST", f"/api/v1/namespaces/{namespace}/pods/web-1/eviction",
                                  {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1"}},
                                  query=[("dryRun", "All")])
    assert status == 201
    assert kube.get("Pod", namespace, "web-0") and kube.get("Pod", namespace, "web-1")
    assert kube.get("PodDisruptionBudget", namespace, "web")["status"]["disruptionsAllowed"] == 1


@pytest.mark.emulator(graceful_pod_deletion=True)
def test_eviction_with_grace_period_and_of_terminating_pods(kube: Any, kubelet: Any, api_client: Any,
                                                            namespace: str) -> None:
    if kubelet is not None:
        kubelet.stop_containers_slowly(namespace)
    kube.load([pdb("web", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable=1),
               pod("web-0", namespace, labels={"app": "web"}), pod("web-1", namespace, labels={"app": "web"})])
    core, policy = client.CoreV1Api(api_client), client.PolicyV1Api(api_client)
    wait_budget(policy, "web", namespace, (2, 1, 2, 1))
    core.create_namespaced_pod_eviction("web-0", namespace, eviction("web-0", namespace))
    terminating = kube.get("Pod", namespace, "web-0")
    assert terminating["metadata"]["deletionTimestamp"] and terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert kube.get("PodDisruptionBudget", namespace, "web")["status"]["disruptionsAllowed"] == 0
    # Terminating pods are evicted without consulting the (exhausted) budget.
    core.create_namespaced_pod_eviction("web-0", namespace, eviction("web-0", namespace))
    expect_error(429, "TooManyRequests", core.create_namespaced_pod_eviction, "web-1", namespace,
                 eviction("web-1", namespace))
    if kubelet is None:
        assert kube.complete_terminations() == 1
    else:
        kubelet.stop_containers_slowly(namespace, slow=False)
    assert eventually(lambda: kube.get("Pod", namespace, "web-0") is None)


# --- logs, CRDs, watch -------------------------------------------------------------------------------------------

def test_pod_logs(kube: Any, api_client: Any, namespace: str) -> None:
    node_name = f"{namespace}-node"
    kube.load([node(node_name), pod("single", namespace, node=node_name),
               pod("multi", namespace, node=node_name, containers=2)])

    def set_log(name: str, text: str, container: str | None = None) -> None:
        if getattr(kube, "is_emulator", False):
            kube.set_pod_log(namespace, name, text, container=container)
        else:  # the kubelet stand-in serves what the pod's log annotation holds (kubelet_logs.py)
            from kubelet_logs import write_pod_log

            write_pod_log(api_client, namespace, name, container, text)

    set_log("single", "one\ntwo\nthree\n")
    set_log("multi", "sidecar says hi\n", container="c1")
    core = client.CoreV1Api(api_client)
    assert eventually(lambda: _log_or_none(core, "single", namespace) == "one\ntwo\nthree\n")
    assert core.read_namespaced_pod_log("single", namespace, tail_lines=1) == "three\n"
    assert eventually(lambda: _log_or_none(core, "multi", namespace, container="c1") == "sidecar says hi\n")
    body = expect_error(400, "BadRequest", core.read_namespaced_pod_log, "multi", namespace)
    assert body["message"] == "a container name must be specified for pod multi, choose one of: [app c1]"
    expect_error(404, "NotFound", core.read_namespaced_pod_log, "ghost", namespace)


def _log_or_none(core: Any, name: str, namespace: str, **options: Any) -> str | None:
    """The log, or None while the node's kubelet is not reachable yet (it registers its endpoint first)."""
    try:
        return core.read_namespaced_pod_log(name, namespace, **options)
    except ApiException:
        return None


def test_crd_registers_a_custom_resource(api_client: Any, dynamic_client: Any, namespace: str) -> None:
    extensions = client.ApiextensionsV1Api(api_client)
    extensions.create_custom_resource_definition(CRD)
    try:
        deadline = time.time() + 30
        while True:
            crd = extensions.read_custom_resource_definition(CRD["metadata"]["name"])
            conditions = {c.type: c.status for c in (crd.status.conditions or [])} if crd.status else {}
            if conditions.get("Established") == "True" or time.time() > deadline:
                break
            time.sleep(0.2)
        assert conditions["Established"] == "True"
        custom = client.CustomObjectsApi(api_client)
        custom.create_namespaced_custom_object("operator.openshift.io", "v1", namespace, "kubedeschedulers", {
            "apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
            "metadata": {"name": "cluster"}, "spec": {"deschedulingIntervalSeconds": 3600}})
        listed = custom.list_namespaced_custom_object("operator.openshift.io", "v1", namespace, "kubedeschedulers")
        assert listed["kind"] == "KubeDeschedulerList" and listed["items"][0]["metadata"]["name"] == "cluster"
        resource = dynamic_client.resources.get(api_version="operator.openshift.io/v1", kind="KubeDescheduler")
        assert resource.get(name="cluster", namespace=namespace).spec.deschedulingIntervalSeconds == 3600
        with_status = custom.patch_namespaced_custom_object_status(
            "operator.openshift.io", "v1", namespace, "kubedeschedulers", "cluster",
            {"status": {"readyReplicas": 1}, "spec": {"deschedulingIntervalSeconds": 1}})
        assert with_status["status"] == {"readyReplicas": 1}
        assert with_status["spec"]["deschedulingIntervalSeconds"] == 3600  # a status write changes only status
        status, body, _headers = raw(api_client, "PATCH", f"/apis/operator.openshift.io/v1/namespaces/{namespace}/"
                                     "kubedeschedulers/cluster", {"spec": {"x": 1}},
                                     headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert status == 415 and body["reason"] == "UnsupportedMediaType"
    finally:
        extensions.delete_custom_resource_definition(CRD["metadata"]["name"])


def test_deleting_a_crd_stops_serving_it(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([CRD])
    custom = client.CustomObjectsApi(api_client)
    # The CRD is served once Established; creating the resource before that is a 404.
    eventually(lambda: any(c.type == "Established" and c.status == "True" for c in (
        client.ApiextensionsV1Api(api_client).read_custom_resource_definition(CRD["metadata"]["name"]).status
        .conditions or ())))
    eventually(lambda: _served(custom))
    kube.load([{"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                "metadata": {"name": "cluster", "namespace": namespace}}])
    assert custom.list_cluster_custom_object("operator.openshift.io", "v1", "kubedeschedulers")["items"]
    client.ApiextensionsV1Api(api_client).delete_custom_resource_definition(CRD["metadata"]["name"])
    # Once the group is gone kube-apiserver answers a plain-text "404 page not found", not a Status.
    assert eventually(lambda: not _served(custom))


def _served(custom: Any) -> bool:
    try:
        custom.list_cluster_custom_object("operator.openshift.io", "v1", "kubedeschedulers")
    except ApiException as error:
        if error.status == 404:
            return False
        raise
    return True


def test_watch_streams_events(kube: Any, api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    kube.load([configmap("existing", namespace, {"watched": "yes"})])

    def later() -> None:
        time.sleep(0.5)
        kube.create(configmap("new", namespace, {"watched": "yes"}))
        kube.delete("ConfigMap", namespace, "new")

    threading.Thread(target=later, daemon=True).start()
    seen = []
    for event in watch.Watch().stream(core.list_namespaced_config_map, namespace, label_selector="watched",
                                      timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "existing"), ("ADDED", "new"), ("DELETED", "new")]


# --- emulator-only features --------------------------------------------------------------------------------------

@pytest.mark.needs_emulator
def test_fault_injection(emulator: Emulator, api_client: Any) -> None:
    core = client.CoreV1Api(api_client)
    emulator.faults.fail(503, verb="list", path=r"/pods$")
    expect_error(503, "ServiceUnavailable", core.list_namespaced_pod, "default")
    assert core.list_namespaced_pod("default").items == []  # times=1 by default

    emulator.faults.fail(429, verb="POST", path="/eviction$", times=2, retry_after=1)
    emulator.load([pod("p")])
    for _attempt in range(2):
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_pod_eviction("p", "default", eviction("p"))
        assert caught.value.status == 429 and caught.value.headers["Retry-After"] == "1"
    core.create_namespaced_pod_eviction("p", "default", eviction("p"))

    emulator.faults.delay(0.2, verb="get")
    started = time.perf_counter()
    expect_error(404, "NotFound", core.read_namespaced_pod, "p", "default")
    assert time.perf_counter() - started >= 0.2
    emulator.faults.clear()
    emulator.faults.fail(ApiError(500, "InternalError", "etcdserver: request timed out"), path="/configmaps")
    body = expect_error(500, "InternalError", core.list_namespaced_config_map, "default")
    assert body["message"] == "etcdserver: request timed out"


@pytest.mark.needs_emulator
def test_auth_token_and_forbidden_rules(emulator: Emulator, api_client: Any) -> None:
    core = client.CoreV1Api(api_client)
    emulator.auth.require_token("other-token")
    body = expect_error(401, "Unauthorized", core.list_namespaced_pod, "default")
    assert body["message"] == "Unauthorized"
    emulator.auth.require_token(emulator.token, user="system:serviceaccount:ops:descheduler")
    emulator.auth.forbid("list", "pods")
    emulator.auth.forbid("create", "pods/eviction")
    body = expect_error(403, "Forbidden", core.list_pod_for_all_namespaces)
    assert body["message"] == ('pods is forbidden: User "system:serviceaccount:ops:descheduler" cannot list resource '
                               '"pods" in API group "" at the cluster scope')
    status, body, _headers = raw(api_client, "GET", "/api/v1/namespaces/default/pods",
                                 headers={"Impersonate-User": "jane"})
    assert status == 403 and body["message"] == ('pods is forbidden: User "jane" cannot list resource "pods" in API '
                                                 'group "" in the namespace "default"')
    emulator.load([pod("p")])
    body = expect_error(403, "Forbidden", core.create_namespaced_pod_eviction, "p", "default", eviction("p"))
    assert body["message"].startswith('pods "p" is forbidden: User "system:serviceaccount:ops:descheduler" cannot '
                                      'create resource "pods/eviction" in API group "" in the namespace "default"')
    assert core.read_namespaced_pod("p", "default").metadata.name == "p"


@pytest.mark.emulator(controllers=["replicaset"])
def test_replicaset_controller_replaces_an_evicted_pod(kube: Any, api_client: Any, namespace: str) -> None:
    prefix = namespace
    kube.load([node(f"{prefix}-a"), node(f"{prefix}-b"), node(f"{prefix}-c", unschedulable=True)])
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_replica_set(namespace, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-5d9c7"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "web:1"}]}}}})

    def running() -> list[Any]:
        pods = core.list_namespaced_pod(namespace, label_selector="app=web").items
        live = [p for p in pods if not p.metadata.deletion_timestamp]
        return live if len(live) == 2 and all(p.status.phase == "Running" for p in live) else []

    pods = eventually(running)
    assert len(pods) == 2 and {p.spec.node_name for p in pods} == {f"{prefix}-a", f"{prefix}-b"}
    # The pod on the first node: its replacement goes back there whether or not the victim is gone yet (a tie
    # between equally loaded nodes goes to the first name).
    victim = next(p for p in pods if p.spec.node_name == f"{prefix}-a")
    core.create_namespaced_pod_eviction(victim.metadata.name, namespace, eviction(victim.metadata.name, namespace))
    after = eventually(lambda: [p for p in running() if p.metadata.name != victim.metadata.name]
                       if victim.metadata.name not in {p.metadata.name for p in
                                                       core.list_namespaced_pod(namespace).items} else [])
    assert len(after) == 2 and victim.metadata.name not in {p.metadata.name for p in after}
    replacement = next(p for p in after if p.metadata.name not in {q.metadata.name for q in pods})
    assert replacement.metadata.name.startswith("web-5d9c7-")
    assert replacement.spec.node_name == victim.spec.node_name  # the node left with the fewest pods
    assert replacement.metadata.owner_references[0].name == "web-5d9c7"
    assert eventually(lambda: apps.read_namespaced_replica_set("web-5d9c7", namespace).status.ready_replicas == 2)


def test_scale_subresource(kube: Any, api_client: Any, namespace: str) -> None:
    kube.load([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": namespace},
                "spec": {"replicas": 2, "paused": True, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "app", "image": "web:1"}]}}}}])
    apps = client.AppsV1Api(api_client)
    scale = apps.read_namespaced_deployment_scale("web", namespace)
    assert scale.spec.replicas == 2
    assert eventually(lambda: apps.read_namespaced_deployment_scale("web", namespace).status.selector) == "app=web"
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 5}})
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 5


@pytest.mark.needs_emulator
def test_large_store_serves_pages_fast(emulator: Emulator, api_client: Any) -> None:
    pods = [pod(f"pod-{i:05d}", f"ns-{i % 50:02d}", {"app": f"app-{i % 10}"}, node=f"node-{i % 200:03d}")
            for i in range(20_000)]
    started = time.perf_counter()
    emulator.load(pods)
    assert time.perf_counter() - started < 10
    core = client.CoreV1Api(api_client)
    core.list_namespaced_pod("ns-00", limit=1)  # warm the connection

    started = time.perf_counter()
    page = core.list_pod_for_all_namespaces(limit=500, _preload_content=False)
    elapsed = time.perf_counter() - started
    items = json.loads(page.data)["items"]
    assert len(items) == 500 and elapsed < 0.5, elapsed

    started = time.perf_counter()
    for i in range(50):
        core.read_namespaced_pod(f"pod-{i * 50:05d}", "ns-00", _preload_content=False)
    assert (time.perf_counter() - started) / 50 < 0.05

    started = time.perf_counter()
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-007", _preload_content=False)
    assert len(json.loads(on_node.data)["items"]) == 100 and time.perf_counter() - started < 0.5


def test_method_not_allowed_and_delete_collection(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        core.create_namespaced_config_map(namespace, configmap(name, namespace, {"tier": tier}))
    status, body, _headers = raw(api_client, "PUT", f"/api/v1/namespaces/{namespace}/configmaps",
                                 configmap("a", namespace))
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    status, body, _headers = raw(api_client, "GET", f"/api/v1/namespaces/{namespace}/pods/nope/eviction")
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    core.delete_collection_namespaced_config_map(namespace, label_selector="tier=x")
    left = [c.metadata.name for c in core.list_namespaced_config_map(namespace).items]
    assert [name for name in left if name != "kube-root-ca.crt"] == ["c"]  # real clusters add kube-root-ca.crt


def test_apply_patch_creates_then_merges(api_client: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/applied"
    manifest = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: {namespace}\n"
                "data:\n  a: '1'\n")
    headers = {"Content-Type": "application/apply-patch+yaml"}
    status, created, _headers = raw(api_client, "PATCH", path, manifest, headers, query=[("fieldManager", "tests")])
    assert status == 201 and created["data"] == {"a": "1"}
    status, updated, _headers = raw(api_client, "PATCH", path, manifest.replace("'1'", "'2'"), headers,
                                    query=[("fieldManager", "tests")])
    assert status == 200 and updated["data"] == {"a": "2"}
    status, body, _headers = raw(api_client, "PATCH", path, manifest, headers)
    assert status == 422 and body["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required '
                                                 "value: is required for apply patch")


@pytest.mark.emulator(controllers=["replicaset"])
def test_pdb_status_follows_pod_health_and_percentages(kube: Any, api_client: Any, namespace: str) -> None:
    # Percentages and maxUnavailable count the pods the owners expect: the pods belong to ReplicaSets (4 and 5
    # replicas, already all there, so their controller adds none).
    def replica_set(app: str, replicas: int) -> Obj:
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": app, "namespace": namespace},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                         "template": {"metadata": {"labels": {"app": app}},
                                      "spec": {"containers": [{"name": "app", "image": f"{app}:1"}]}}}}

    owners = {}
    for app, replicas in (("web", 4), ("db", 5)):
        kube.load([pod(f"{app}-{i}", namespace, labels={"app": app}) for i in range(replicas)])
        kube.load([replica_set(app, replicas)])
        owners[app] = kube.get("ReplicaSet", namespace, app)
    kube.load([pdb("half", namespace, selector={"matchLabels": {"app": "web"}}, minAvailable="50%"),
               pdb("quarter", namespace, selector={"matchLabels": {"app": "db"}}, maxUnavailable="25%")])
    policy, core = client.PolicyV1Api(api_client), client.CoreV1Api(api_client)
    wait_budget(policy, "half", namespace, (4, 2, 4, 2))
    wait_budget(policy, "quarter", namespace, (5, 3, 5, 2))  # 25% of 5 rounds up to 2 unavailable
    core.patch_namespaced_pod_status("web-0", namespace, {"status": {"conditions": [{"type": "Ready",
                                                                                     "status": "False"}]}})
    wait_budget(policy, "half", namespace, (3, 2, 4, 1))
    # An unready pod is evicted without using the budget while the budget is met (IfHealthyBudget).
    core.create_namespaced_pod_eviction("web-0", namespace, eviction("web-0", namespace))
    assert budget_numbers(policy, "half", namespace)[3] == 1
    status, body, _headers = raw(api_client, "POST", f"/api/v1/namespaces/{namespace}/pods/db-0/eviction",
                                 {"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "db-0"}})
    assert status == 201 and budget_numbers(policy, "quarter", namespace)[3] == 1


@pytest.mark.needs_emulator
def test_extension_points(emulator: Emulator, api_client: Any) -> None:
    from emulator import AdmissionRequest, ResourceRequest, json_response

    def label_pods(request: AdmissionRequest) -> None:
        if request.operation == "CREATE" and request.resource_type.kind == "Pod" and request.object is not None:
            request.object["metadata"].setdefault("annotations", {})["admitted"] = "yes"
            if request.object["metadata"].get("labels", {}).get("forbidden"):
                raise ApiError(403, "Forbidden", 'admission webhook "vet.example.com" denied the request')

    def migrate(emu: Emulator, request: ResourceRequest) -> Any:
        return json_response(202, {"migrating": request.name, "by": request.user})

    emulator.add_admission(label_pods)
    emulator.add_subresource("", "pods", "migrate", migrate, kind="Pod", verbs=("update",))
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_pod("default", pod("p"))
    assert created.metadata.annotations == {"admitted": "yes"}
    body = expect_error(403, "Forbidden", core.create_namespaced_pod, "default", pod("q", labels={"forbidden": "1"}))
    assert "vet.example.com" in body["message"]
    status, answer, _headers = raw(api_client, "PUT", "/api/v1/namespaces/default/pods/p/migrate", {})
    assert status == 202 and answer == {"migrating": "p", "by": "kubernetes-admin"}
    _status, resources, _headers = raw(api_client, "GET", "/api/v1")
    assert any(r["name"] == "pods/migrate" for r in resources["resources"])

    def evict_nothing(emu: Emulator, namespace: str, name: str, body: Obj, dry_run: bool, user: str) -> Obj:
        raise ApiError(429, "TooManyRequests", "custom eviction policy says no")

    emulator.eviction_handler = evict_nothing
    body = expect_error(429, "TooManyRequests", core.create_namespaced_pod_eviction, "p", "default", eviction("p"))
    assert body["message"] == "custom eviction policy says no"
