"""A real restricted user on the test's cluster: a ServiceAccount whose only permissions are the RBAC rules a test
gives, authenticated with a bearer token from the TokenRequest API (what `kubectl create token` does).

    path = restricted_kubeconfig(kube, tmp_path, "reader", rules=[
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], namespace=namespace)
    client = build_api_client({"kubeconfig": str(path), "context": kube.context})   # acts as the restricted user
    user = user_name("reader", namespace)          # "system:serviceaccount:<namespace>:reader", as 403s name it
    token = service_account_token(kube, "reader", namespace)  # another token, e.g. for host + api_key

Where the permissions live:
- `namespace` given: the ServiceAccount, a Role with exactly `rules` and its RoleBinding in that namespace
  (`cluster_rules`, if any, go to a ClusterRole bound cluster-wide to the same account);
- `namespace` None: the ServiceAccount in `default`, a ClusterRole with exactly `rules` and a ClusterRoleBinding.
Every authenticated user also keeps what Kubernetes grants all of them (discovery, SelfSubjectReview,
SelfSubjectAccessReview: the `system:discovery`, `system:basic-user` and `system:public-info-viewer` roles).

The kubeconfig holds the cluster entry of `kube.kubeconfig`'s context (server and CA unchanged) and a user with
only the token; its context is named `kube.context`. The helper returns once the server authenticates the token
and its authorizer (fed by informers, so a moment behind the API) allows every rule, so the first request of the
test already sees them. Roles and bindings are named `<name>`; calling again with the same name replaces their
rules. On the suite's control plane the test's cleanup removes the ClusterRole/ClusterRoleBinding and namespaces;
a ServiceAccount in `default` stays for the session (harmless: it can do nothing once its role is gone).

A test marked `faults` must not use it: the fault proxy authenticates every request as the admin.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import request_raw

RBAC = "/apis/rbac.authorization.k8s.io/v1"
DEFAULT_SERVICE_ACCOUNT_NAMESPACE = "default"
TOKEN_SECONDS = 3600
READY_TIMEOUT = 30.0


def user_name(name: str, namespace: str | None = None) -> str:
    """The user the API server sees (and names in its 403 messages) for `restricted_kubeconfig(..., name, ...)`."""
    return f"system:serviceaccount:{namespace or DEFAULT_SERVICE_ACCOUNT_NAMESPACE}:{name}"


def restricted_kubeconfig(kube: Any, tmp_path: Path, name: str, rules: list[dict[str, Any]],
                          namespace: str | None = None, *,
                          cluster_rules: list[dict[str, Any]] | None = None) -> Path:
    """A kubeconfig (written to `tmp_path/<name>.kubeconfig`) for a ServiceAccount allowed exactly `rules`
    (RBAC PolicyRules: apiGroups, resources, verbs, optional resourceNames); see the module docstring."""
    _require_real_server(kube)
    account_namespace = namespace or DEFAULT_SERVICE_ACCOUNT_NAMESPACE
    with kube.api_client() as admin:
        _apply(admin, f"/api/v1/namespaces/{account_namespace}/serviceaccounts", name,
               {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        if namespace:
            _grant(admin, name, account_namespace, rules, namespace)
            if cluster_rules:
                _grant(admin, name, account_namespace, cluster_rules, None)
        else:
            _grant(admin, name, account_namespace, [*rules, *(cluster_rules or [])], None)
        token = _request_token(admin, name, account_namespace, TOKEN_SECONDS)
        _wait_until_effective(admin, token, user_name(name, account_namespace), rules, namespace,
                              cluster_rules or [])
    path = tmp_path / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(_token_kubeconfig(kube, token)))
    return path


def service_account_token(kube: Any, name: str, namespace: str | None = None,
                          expiration_seconds: int = TOKEN_SECONDS) -> str:
    """A fresh bearer token for an existing ServiceAccount (`namespace` None: `default`), from the TokenRequest API."""
    _require_real_server(kube)
    with kube.api_client() as admin:
        return _request_token(admin, name, namespace or DEFAULT_SERVICE_ACCOUNT_NAMESPACE, expiration_seconds)


def server_and_ca(kube: Any) -> tuple[str, str | None]:
    """The API server URL and the CA file of `kube.kubeconfig`'s context (None when the CA is inline or absent)."""
    cluster = _cluster_entry(kube)
    return cluster["server"], cluster.get("certificate-authority")


# ---- what the admin does ----------------------------------------------------------------------------------------


def _grant(admin: Any, name: str, account_namespace: str, rules: list[dict[str, Any]],
           namespace: str | None) -> None:
    """A Role (namespace given) or ClusterRole with exactly `rules`, bound to the ServiceAccount."""
    scope = f"{RBAC}/namespaces/{namespace}" if namespace else RBAC
    role_kind = "Role" if namespace else "ClusterRole"
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    _apply(admin, f"{scope}/{role_kind.lower()}s", name,
           {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": role_kind, "metadata": metadata, "rules": rules})
    _apply(admin, f"{scope}/{role_kind.lower()}bindings", name, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": f"{role_kind}Binding", "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": account_namespace}]})


def _apply(admin: Any, collection: str, name: str, body: dict[str, Any]) -> None:
    """Create, or replace what a previous call with the same name made."""
    try:
        request_raw(admin, "POST", collection, body=body)
    except ClusterApiError as error:
        if error.status != 409:
            raise
        if body["kind"] != "ServiceAccount":  # a ServiceAccount has nothing to replace
            current = request_raw(admin, "GET", f"{collection}/{name}")
            replaced = dict(body, metadata=dict(body["metadata"],
                                                resourceVersion=current["metadata"]["resourceVersion"]))
            request_raw(admin, "PUT", f"{collection}/{name}", body=replaced)


def _request_token(admin: Any, name: str, namespace: str, expiration_seconds: int) -> str:
    answer = request_raw(admin, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", body={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": expiration_seconds}})
    return answer["status"]["token"]


def _wait_until_effective(admin: Any, token: str, user: str, rules: list[dict[str, Any]], namespace: str | None,
                          cluster_rules: list[dict[str, Any]]) -> None:
    """Until the token authenticates as `user` and a SubjectAccessReview allows one verb/resource of every rule."""
    deadline = time.monotonic() + READY_TIMEOUT
    checks = [(rule, namespace) for rule in rules] + [(rule, None) for rule in cluster_rules]
    while not (_authenticates_as(admin, token, user) and all(_allowed(admin, user, rule, scope)
                                                             for rule, scope in checks)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{user}: token or RBAC rules not effective after {READY_TIMEOUT:.0f}s")
        time.sleep(0.1)


def _authenticates_as(admin: Any, token: str, user: str) -> bool:
    review = request_raw(admin, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
    status = review.get("status") or {}
    return bool(status.get("authenticated")) and (status.get("user") or {}).get("username") == user


def _allowed(admin: Any, user: str, rule: dict[str, Any], namespace: str | None) -> bool:
    if rule.get("nonResourceURLs"):
        attributes: dict[str, Any] = {"nonResourceAttributes": {"path": rule["nonResourceURLs"][0],
                                                                "verb": rule["verbs"][0]}}
    else:
        resource, _slash, subresource = rule["resources"][0].partition("/")
        attributes = {"resourceAttributes": {
            "group": rule["apiGroups"][0], "resource": resource, "subresource": subresource,
            "verb": rule["verbs"][0], "namespace": namespace or "",
            "name": (rule.get("resourceNames") or [""])[0]}}
    service_account_namespace = user.split(":")[2]
    review = request_raw(admin, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["system:serviceaccounts",
                                          f"system:serviceaccounts:{service_account_namespace}",
                                          "system:authenticated"], **attributes}})
    return bool((review.get("status") or {}).get("allowed"))


# ---- the kubeconfig ---------------------------------------------------------------------------------------------


def _token_kubeconfig(kube: Any, token: str) -> dict[str, Any]:
    context = kube.context
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": context, "cluster": _cluster_entry(kube)}],
        "users": [{"name": context, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
    }


def _cluster_entry(kube: Any) -> dict[str, Any]:
    config = yaml.safe_load(Path(kube.kubeconfig).read_text()) or {}
    contexts = {entry["name"]: entry["context"] for entry in config.get("contexts") or []}
    clusters = {entry["name"]: entry["cluster"] for entry in config.get("clusters") or []}
    cluster = dict(clusters[contexts[kube.context]["cluster"]])
    ca = cluster.get("certificate-authority")
    if ca and not Path(ca).is_absolute():  # relative to the kubeconfig it came from, as kubectl reads it
        cluster["certificate-authority"] = str((Path(kube.kubeconfig).parent / ca).resolve())
    return cluster


def _require_real_server(kube: Any) -> None:
    if _cluster_entry(kube)["server"].startswith("http://"):
        raise RuntimeError("restricted_kubeconfig cannot go through the fault proxy: it authenticates every request "
                           "as the admin. Use it in a test not marked `faults`")
