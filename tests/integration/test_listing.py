"""The cluster I/O layer against the suite's real control plane (or TEST_KUBECONFIG's cluster).

Paging, selectors, restarts after 410 Expired continue tokens (a real etcd compaction between pages), error
descriptions (403 for a real ServiceAccount that RBAC denies, 404, 401), the two ways of connecting (kubeconfig +
context, host + api_key of a TokenRequest token, also from K8S_AUTH_*) and impersonation as the server sees it.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import listing
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import (
    ClusterConnectionError,
    build_api_client,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import (
    ClusterApiError,
    ContinueExpiredError,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    delete_raw,
    get_raw,
    list_raw,
    patch_raw,
    post_raw,
    request_raw,
    resource_path,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.snapshot_source import (
    DEFAULT_KINDS,
    KIND_RESOURCES,
    list_cluster_objects,
)
from real_cluster import RealCluster
from restricted_user import restricted_kubeconfig, server_and_ca, service_account_token, user_name

EXPIRY_TIMEOUT = 45.0  # kube-apiserver polls the compaction revision for its watch cache every 15 s
HERMETIC_ENV: dict[str, str] = {}  # K8S_AUTH_* of the machine running the tests must not redirect them


def pod(namespace: str, name: str, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9"}]},
    }


def pods(namespace: str, count: int, labels: dict | None = None) -> list[dict]:
    return [pod(namespace, f"p-{index:05d}", labels) for index in range(count)]


def connect(kube: Any, **extra: Any) -> Any:
    return build_api_client({"kubeconfig": str(kube.kubeconfig), "context": kube.context, **extra}, env=HERMETIC_ENV)


@pytest.fixture
def client(kube: Any) -> Any:
    api_client = connect(kube)
    yield api_client
    api_client.close()


PODS, PAGE_SIZE = 120, 50


def names(items: list[dict]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


# ---- paging -----------------------------------------------------------------------------------------------------


def test_pages_list_every_pod_once_with_kind_and_api_version(kube, client, namespace):
    kube.load(pods(namespace, PODS))

    items, resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=PAGE_SIZE)

    assert sorted(names(items)) == [f"p-{index:05d}" for index in range(PODS)]
    assert {(item["apiVersion"], item["kind"]) for item in items} == {("v1", "Pod")}
    assert resource_version


def test_slim_is_applied_to_each_item(kube, client, namespace):
    kube.load(pods(namespace, 25))

    def slim(item: dict) -> dict:
        return {"kind": item["kind"], "name": item["metadata"]["name"]}

    items, _resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=10, slim=slim)
    assert items == [{"kind": "Pod", "name": f"p-{index:05d}"} for index in range(25)]


def test_label_and_field_selectors_pass_through(kube, client, namespace):
    kube.load([pod(namespace, f"web-{index}", {"tier": "web"}) for index in range(12)]
              + [pod(namespace, f"db-{index}", {"tier": "db"}) for index in range(5)])
    path = resource_path("v1", "pods", namespace)

    web, _resource_version = list_raw(client, path, page_size=5, label_selector="tier=web")
    assert sorted(names(web)) == sorted(f"web-{index}" for index in range(12))
    one, _resource_version = list_raw(client, path, page_size=5, field_selector="metadata.name=db-3")
    assert names(one) == ["db-3"]
    both, _resource_version = list_raw(client, path, label_selector="tier in (web,db)",
                                       field_selector="metadata.name!=web-0")
    assert len(both) == 16


# ---- 410 Expired continue tokens --------------------------------------------------------------------------------


class Etcd:
    """The control plane's etcd through its JSON gateway (tests/controlplane/etcd serves etcd's grpc-gateway)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, body: dict) -> dict:
        request = urllib.request.Request(f"{self.url}/v3/kv/{method}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as error:
            raise AssertionError(f"etcd {method}: {error.code} {error.read()[:500]!r}") from error

    def put(self, key: str, value: str) -> int:
        """Write a key; the revision it made."""
        answer = self.call("put", {"key": base64.b64encode(key.encode()).decode(),
                                   "value": base64.b64encode(value.encode()).decode()})
        return int(answer["header"]["revision"])

    def compact_as_the_api_server_does(self) -> int:
        """What kube-apiserver's compactor does every 5 minutes, now: compact etcd to its current revision (after
        one write, so every revision handed out before is now compacted) and record it in `compact_rev_key`, the
        key kube-apiserver watches to drop its watch cache's snapshots below that revision. Returns the revision."""
        revision = self.put("/descheduler-fleet-tests/compaction", str(time.time()))
        self.call("compaction", {"revision": str(revision), "physical": True})
        self.put("compact_rev_key", str(revision))
        return revision


def expire_continue_tokens(kube: Any, request: pytest.FixtureRequest, when: Callable[[int], bool]) -> None:
    """Make the n-th continue request of a chunked list find its token expired whenever `when(n)`.

    A real etcd compaction just before that page reaches the server (the fault proxy's hook), then a wait until
    kube-apiserver answers that very request 410 itself (its watch cache drops the compacted snapshots within about
    15 s, then the request goes to etcd, which has compacted the revision)."""
    plane = request.getfixturevalue("control_plane")
    etcd = Etcd(plane.etcd_url)

    def compact_before(number: int, path: str, query: dict[str, list[str]]) -> None:
        if not when(number):
            return
        etcd.compact_as_the_api_server_does()
        params = [(key, value) for key, values in query.items() for value in values]
        with RealCluster(plane.kubeconfig).api_client() as admin:
            deadline = time.monotonic() + EXPIRY_TIMEOUT
            while True:
                try:
                    request_raw(admin, "GET", path, query=params)
                except ClusterApiError as error:
                    if error.status == 410:
                        return
                    raise
                if time.monotonic() > deadline:
                    raise TimeoutError(f"kube-apiserver still serves the continue token {EXPIRY_TIMEOUT:.0f}s after "
                                       "the compaction")
                time.sleep(0.5)

    kube.faults.before_continue(compact_before, path="/pods$")


@pytest.mark.faults
def test_expired_continue_token_restarts_into_a_consistent_list(kube, client, namespace, request):
    kube.load(pods(namespace, PODS))
    expire_continue_tokens(kube, request, when=lambda number: number == 2)  # pages 1-2 served, page 3 410 Expired
    requests = kube.faults.delay(0.0, verb="list", path="/pods$")
    restarts: list[int] = []

    def on_restart(number: int, error: ClusterApiError) -> None:
        assert error.status == 410 and error.reason == "Expired"
        restarts.append(number)
        # the cluster changes while the list restarts: the result must be the new state, nothing of the old pages
        delete_raw(connect(kube), resource_path("v1", "pods", namespace, "p-00000"), body={"gracePeriodSeconds": 0})
        kube.load([pod(namespace, "p-new")])

    items, _resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=PAGE_SIZE,
                                        on_restart=on_restart)

    listed = names(items)
    assert restarts == [1]
    assert len(listed) == len(set(listed)) == PODS  # complete and duplicate-free
    assert "p-00000" not in listed and "p-new" in listed
    pages = -(-PODS // PAGE_SIZE)
    assert requests.hits == 3 + pages  # two pages and the 410, then the full list again


@pytest.mark.faults
def test_too_many_expired_continue_tokens_is_a_clear_error(kube, client, namespace, request):
    kube.load(pods(namespace, 50))
    expire_continue_tokens(kube, request, when=lambda _number: True)  # every page after the first, every time

    with pytest.raises(ContinueExpiredError) as caught:
        list_raw(client, resource_path("v1", "pods", namespace), page_size=10, max_restarts=2)

    error = caught.value
    assert isinstance(error, ClusterApiError) and error.status == 410
    assert error.restarts == 2
    message = error.describe()
    assert f"/api/v1/namespaces/{namespace}/pods" in message
    assert "continue token expired" in message and "restarted 2 time(s)" in message and "max_restarts" in message


# ---- streamed lists (watch_list) ------------------------------------------------------------------------------


@pytest.mark.faults
def test_streamed_list_is_one_watch_with_every_pod(kube, client, namespace):
    kube.load(pods(namespace, PODS, {"tier": "web"}) + [pod(namespace, "db-0", {"tier": "db"})])
    watches = kube.faults.delay(0.0, verb="watch", path="/pods$")
    lists = kube.faults.delay(0.0, verb="list", path="/pods$")

    paged: list[bool] = []
    items, resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=PAGE_SIZE,
                                       label_selector="tier=web", watch_list=True, on_pages=lambda: paged.append(True))

    assert sorted(names(items)) == [f"p-{index:05d}" for index in range(PODS)]
    assert paged == []
    assert {(item["apiVersion"], item["kind"]) for item in items} == {("v1", "Pod")}
    assert int(resource_version) > 0
    assert (watches.hits, lists.hits) == (1, 0)
    # the connection of the watch, left open by the server, is not reused: the next request is answered
    assert get_raw(client, resource_path("v1", "pods", namespace, "db-0"))["metadata"]["name"] == "db-0"


def test_a_streamed_list_is_decoded_from_the_connections_own_bytes(kube, client, namespace):
    """The server sends each event as a chunk of its own: the chunks are decoded from the connection's bytes, a
    block at a time, not one http.client call per chunk (what made 150k pods cost 25 CPU-s). How many events a
    read holds depends on how the server's writes arrive, so the test checks where the bytes came from."""
    kube.load(pods(namespace, PODS))
    query = [("watch", "true"), ("sendInitialEvents", "true"), ("resourceVersionMatch", "NotOlderThan"),
             ("allowWatchBookmarks", "true")]
    status, _reason, response = listing._open(client, "GET", resource_path("v1", "pods", namespace), query,
                                              {"Accept": "application/json"}, None, listing.DEFAULT_TIMEOUT)
    try:
        assert status == 200
        read1 = listing._raw_chunked_reader(response)
        assert read1 is not None
        blocks: list[bytes] = []

        def recorded(amount: int) -> bytes:
            blocks.append(read1(amount))
            return blocks[-1]
        response._fp.fp.read1 = recorded  # keep what the stream reads, still from the real connection
        items, resource_version = listing._initial_events(listing._watch_events(response), None)
    finally:
        response.close()
    assert sorted(names(items)) == [f"p-{index:05d}" for index in range(PODS)]
    assert int(resource_version) > 0
    raw = b"".join(blocks)
    assert raw.count(b'{"type":"ADDED"') == PODS  # every event came through the connection's own reads ...
    assert b"\r\n" in raw  # ... with the chunk framing dechunked removed


@pytest.mark.faults
def test_streamed_list_applies_slim_and_field_selectors(kube, client, namespace):
    kube.load(pods(namespace, 7))

    items, _resource_version = list_raw(
        client, resource_path("v1", "pods", namespace), field_selector="metadata.name!=p-00003",
        slim=lambda item: {"kind": item["kind"], "name": item["metadata"]["name"]}, watch_list=True)

    assert sorted(items, key=lambda item: item["name"]) == [
        {"kind": "Pod", "name": f"p-{index:05d}"} for index in range(7) if index != 3]


@pytest.mark.faults
@pytest.mark.parametrize("refusal", ["422", "dropped"])
def test_a_refused_or_broken_stream_is_listed_in_pages(kube, client, namespace, refusal):
    """A server without WatchList answers 422 (the parameter forbidden) or 400; a stream can also break off."""
    kube.load(pods(namespace, PODS))
    if refusal == "dropped":
        kube.faults.drop(verb="watch", path="/pods$", times=None)  # urllib3 retries a dropped GET
    else:
        kube.faults.fail(422, verb="watch", path="/pods$", message="sendInitialEvents is forbidden for watch unless "
                                                                   "the WatchList feature gate is enabled")
    lists = kube.faults.delay(0.0, verb="list", path="/pods$")

    paged: list[bool] = []
    items, resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=PAGE_SIZE,
                                       watch_list=True, on_pages=lambda: paged.append(True))

    assert sorted(names(items)) == [f"p-{index:05d}" for index in range(PODS)]
    assert resource_version
    assert paged == [True]
    assert lists.hits == -(-PODS // PAGE_SIZE)


def test_a_user_who_may_list_but_not_watch_gets_pages(kube, tmp_path, namespace):
    kube.load(pods(namespace, 12))
    client, _user = restricted_client(kube, tmp_path, "pod-lister", namespace=namespace,
                                      allow=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}])

    items, _resource_version = list_raw(client, resource_path("v1", "pods", namespace), page_size=5,
                                        watch_list=True)

    assert sorted(names(items)) == [f"p-{index:05d}" for index in range(12)]


def test_a_user_who_may_neither_list_nor_watch_gets_the_list_error(kube, tmp_path, namespace):
    client, user = restricted_client(kube, tmp_path, "pod-reader", namespace=namespace,
                                     allow=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])

    with pytest.raises(ClusterApiError) as caught:
        list_raw(client, resource_path("v1", "pods", namespace), watch_list=True)

    assert caught.value.status == 403
    assert caught.value.missing_permission() == {"user": user, "verb": "list", "resource": "pods", "group": "",
                                                 "namespace": namespace}


# ---- error descriptions -----------------------------------------------------------------------------------------


def restricted_client(kube: Any, tmp_path: Path, name: str, *, allow: list[dict],
                      namespace: str | None = None) -> tuple[Any, str]:
    """(client, user name) for a real ServiceAccount with exactly the RBAC rules `allow`."""
    kubeconfig = restricted_kubeconfig(kube, tmp_path, name, rules=allow, namespace=namespace)
    return build_api_client({"kubeconfig": str(kubeconfig), "context": kube.context}, env=HERMETIC_ENV), \
        user_name(name, namespace)


def test_forbidden_list_names_verb_and_resource(kube, tmp_path, namespace):
    client, user = restricted_client(kube, tmp_path, "pod-getter",
                                     allow=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])

    with pytest.raises(ClusterApiError) as caught:
        list_raw(client, resource_path("v1", "pods"))

    error = caught.value
    assert error.status == 403 and error.reason == "Forbidden"
    assert error.missing_permission() == {"user": user, "verb": "list", "resource": "pods",
                                          "group": "", "namespace": None}
    message = error.describe()
    assert "cannot list 'pods'" in message and "at the cluster scope" in message and user in message
    assert "grant verb 'list' on resource 'pods' in apiGroups ['']" in message  # the fix


def test_forbidden_in_a_namespace_and_group(kube, tmp_path, namespace):
    client, user = restricted_client(kube, tmp_path, "pdb-getter", namespace=namespace,
                                     allow=[{"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"],
                                             "verbs": ["get"]}])

    with pytest.raises(ClusterApiError) as caught:
        list_raw(client, resource_path("policy/v1", "poddisruptionbudgets", namespace))

    permission = caught.value.missing_permission()
    assert (permission["user"], permission["verb"], permission["resource"], permission["group"],
            permission["namespace"]) == (user, "list", "poddisruptionbudgets", "policy", namespace)
    message = caught.value.describe()
    assert f"in namespace '{namespace}'" in message
    assert "grant verb 'list' on resource 'poddisruptionbudgets' in apiGroups ['policy']" in message


# What the snapshot lists (DEFAULT_KINDS) but nodes: (apiGroup, resource)
SNAPSHOT_RESOURCES_BUT_NODES = [("", "pods"), ("", "namespaces"), ("scheduling.k8s.io", "priorityclasses"),
                                ("policy", "poddisruptionbudgets"), ("", "persistentvolumeclaims")]


def test_forbidden_kind_fails_the_snapshot(kube, tmp_path):
    client, _user = restricted_client(kube, tmp_path, "no-nodes", allow=[
        {"apiGroups": [group], "resources": [resource], "verbs": ["list"]}
        for group, resource in SNAPSHOT_RESOURCES_BUT_NODES])

    with pytest.raises(ClusterApiError, match="cannot list 'nodes'") as caught:
        list_cluster_objects(client)
    assert caught.value.status == 403
    # the user may list every other kind of the snapshot: only nodes stop it, nothing is returned half-listed
    for group, resource in SNAPSHOT_RESOURCES_BUT_NODES:
        api_version = f"{group}/v1" if group else "v1"
        assert list_raw(client, resource_path(api_version, resource), page_size=5)[1]


def test_kind_not_served_is_skipped_with_a_warning(kube, client, namespace, monkeypatch):
    kube.load([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}, pod(namespace, "a")])
    # The snapshot lists PodDisruptionBudgets at an API version this cluster does not serve (policy/v1beta1 was
    # removed in Kubernetes 1.25), as on a cluster older or newer than the collection: the server answers 404.
    monkeypatch.setitem(KIND_RESOURCES, "PodDisruptionBudget", ("policy/v1beta1", "poddisruptionbudgets"))

    snapshot = list_cluster_objects(client)

    assert len(snapshot.warnings) == 1
    warning = snapshot.warnings[0]
    assert warning.startswith("PodDisruptionBudget skipped:")
    assert ("the API policy/v1beta1 kind PodDisruptionBudget is not served by this cluster (CRD not installed?)"
            in warning)
    assert "PodDisruptionBudget" not in snapshot.resource_versions
    assert {"Node", "Pod", "Namespace"} <= {obj["kind"] for obj in snapshot.objects}
    assert ("Pod", "a") in {(obj["kind"], obj["metadata"]["name"]) for obj in snapshot.objects}


@pytest.mark.parametrize("watch_list", [False, True], ids=["pages", "stream"])
def test_snapshot_lists_each_default_kind_once(kube, client, namespace, watch_list):
    objects = [
        pod(namespace, "a"),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": namespace},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ]
    if not kube.is_external:  # an empty cluster (the suite's control plane)
        objects += [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}},
                    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                     "value": 1000}]
    kube.load(objects)

    snapshot = list_cluster_objects(client, [*DEFAULT_KINDS, "Pod"], page_size=100, watch_list=watch_list)

    assert snapshot.warnings == []
    assert sorted(snapshot.resource_versions) == sorted(DEFAULT_KINDS)
    if watch_list and kube.is_external:  # a tester's cluster may predate WatchList: pages are then right
        assert set(snapshot.read_as) == set(DEFAULT_KINDS) and set(snapshot.read_as.values()) <= {"stream", "pages"}
    else:
        assert snapshot.read_as == dict.fromkeys(DEFAULT_KINDS, "stream" if watch_list else "pages")
    mine = {(obj["kind"], obj["metadata"]["name"]) for obj in snapshot.objects
            if obj["metadata"].get("namespace") == namespace}
    assert mine == {("Pod", "a"), ("PodDisruptionBudget", "pdb"), ("PersistentVolumeClaim", "data")}
    pdb = next(obj for obj in snapshot.objects if obj["kind"] == "PodDisruptionBudget" and obj["metadata"]["name"]
               == "pdb")
    assert pdb["apiVersion"] == "policy/v1"
    assert any(obj["kind"] == "Node" for obj in snapshot.objects)
    if not getattr(kube, "is_external", False):
        assert any(obj["kind"] == "PriorityClass" and obj["apiVersion"] == "scheduling.k8s.io/v1"
                   for obj in snapshot.objects)


def test_unknown_kind_is_a_caller_error(client):
    with pytest.raises(ValueError, match="cannot list kind\\(s\\) Widget"):
        list_cluster_objects(client, ["Pod", "Widget"])


# ---- connecting -------------------------------------------------------------------------------------------------


def test_kubeconfig_and_context_reach_the_cluster(kube, client):
    namespaces = get_raw(client, resource_path("v1", "namespaces"))
    assert namespaces["kind"] == "NamespaceList"
    assert "default" in names(namespaces["items"])


def test_unknown_context_lists_the_kubeconfig_contexts(kube):
    with pytest.raises(ClusterConnectionError) as caught:
        build_api_client({"kubeconfig": str(kube.kubeconfig), "context": "no-such-context"}, env=HERMETIC_ENV)
    assert f"available contexts: {kube.context}" in str(caught.value)


def token_and_server(kube: Any, tmp_path: Path, name: str) -> tuple[str, str, str | None]:
    """(token, server URL, CA file) of a user who may read namespaces: a ServiceAccount's token from the TokenRequest
    API (what the AWX/AAP bearer-token credential holds)."""
    restricted_kubeconfig(kube, tmp_path, name, rules=[
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}])
    server, ca = server_and_ca(kube)
    return service_account_token(kube, name), server, ca


def who_am_i(api_client: Any) -> dict:
    """The user the server authenticated, as it says itself (authentication.k8s.io SelfSubjectReview)."""
    review = post_raw(api_client, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    return review["status"]["userInfo"]


def test_host_and_api_key_reach_the_server(kube, tmp_path):
    token, server, ca = token_and_server(kube, tmp_path, "token-user")
    api_client = build_api_client({"host": server + "/", "api_key": token, "ca_cert": ca}, env=HERMETIC_ENV)
    assert get_raw(api_client, "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    assert who_am_i(api_client)["username"] == user_name("token-user")  # the token's user, not the admin

    wrong = build_api_client({"host": server, "api_key": "not-the-token", "ca_cert": ca}, env=HERMETIC_ENV)
    with pytest.raises(ClusterApiError) as caught:
        get_raw(wrong, "/api/v1/namespaces/default")
    assert caught.value.status == 401
    assert "rejected the credentials" in caught.value.describe() and "api_key" in caught.value.describe()


def test_k8s_auth_env_variables_reach_the_server(kube, tmp_path):
    token, server, ca = token_and_server(kube, tmp_path, "env-user")
    env = {"K8S_AUTH_HOST": server, "K8S_AUTH_API_KEY": token}
    env.update({"K8S_AUTH_SSL_CA_CERT": ca} if ca else {"K8S_AUTH_VERIFY_SSL": "no"})
    api_client = build_api_client({}, env=env)
    assert get_raw(api_client, "/api/v1/namespaces/default") is not None
    assert who_am_i(api_client)["username"] == user_name("env-user")


def test_impersonation_headers_arrive(kube, namespace):
    impersonating = connect(kube, impersonate_user="alice", impersonate_groups=["ops", "system:authenticated"])

    with pytest.raises(ClusterApiError) as caught:
        list_raw(impersonating, resource_path("v1", "pods", namespace))
    assert caught.value.missing_permission()["user"] == "alice"  # the admin may; alice, who has no role, may not
    assert list_raw(connect(kube), resource_path("v1", "pods", namespace))[0] == []

    # The real server's view of the request: both group header lines arrived (a comma-joined single header would
    # be one group named "ops, system:authenticated").
    seen = who_am_i(impersonating)
    assert seen["username"] == "alice"
    assert set(seen["groups"]) == {"ops", "system:authenticated"}


# ---- single objects ---------------------------------------------------------------------------------------------


def test_post_patch_get_delete_raw(kube, client, namespace):
    path = resource_path("v1", "configmaps", namespace)
    name = f"cm-{uuid.uuid4().hex[:6]}"
    created = post_raw(client, path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                      "data": {"a": "1"}})
    assert created["metadata"]["name"] == name
    object_path = resource_path("v1", "configmaps", namespace, name)
    patched = patch_raw(client, object_path, {"data": {"b": "2"}})
    assert patched["data"] == {"a": "1", "b": "2"}
    patched = patch_raw(client, object_path, [{"op": "remove", "path": "/data/a"}], patch_type="json")
    assert patched["data"] == {"b": "2"}
    assert get_raw(client, object_path)["data"] == {"b": "2"}
    delete_raw(client, object_path)
    assert get_raw(client, object_path) is None
    with pytest.raises(ClusterApiError) as caught:
        delete_raw(client, object_path, kind="ConfigMap")
    assert caught.value.describe() == f"ConfigMap {namespace}/{name} not found"
