"""The flow of one call of the access module: a job's ServiceAccount, the shipped roles of cluster/rights.py bound to
it, and, when asked, a kubeconfig holding a token of that account (for an AWX/AAP credential). Every write goes
through ClusterSession (check mode, diff, one action per object); the token is never returned."""

from __future__ import annotations

import base64
import os
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import post_raw, resource_path
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import (
    JOBS,
    PART_OF,
    Job,
    bound_jobs,
    cluster_role,
    namespaced_role,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_atomically
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.operator import run_session

RBAC_GROUP = "rbac.authorization.k8s.io"


class AccessRequestError(FleetError, ValueError):
    """A bad option: names it, the value and the fix."""

    def __init__(self, field: str, value: Any, message: str) -> None:
        self.field, self.value = field, value
        super().__init__(f"{field}: {message} (got {value!r})")


def run_access(params: Mapping[str, Any], check_mode: bool = False, want_diff: bool = False) -> dict:
    job = _job(params)
    _check_options(job, params)
    api_client, identity = connect_to_intended_cluster(params)
    session = ClusterSession(api_client, check_mode=check_mode, want_diff=want_diff)
    account = params.get("service_account") or job.cluster_role
    result: dict[str, Any] = {
        "job": job.name,
        "service_account": account,
        "namespace": params["namespace"],
        "check_mode": check_mode,
        "cluster_identity": identity.as_dict(),
    }
    try:
        return run_session(session, lambda: _grant(session, job, account, params), result)
    finally:
        api_client.close()


def _job(params: Mapping[str, Any]) -> Job:
    if params.get("job") not in JOBS:
        raise AccessRequestError("job", params.get("job"), f"one of {', '.join(JOBS)}")
    return JOBS[params["job"]]


def _check_options(job: Job, params: Mapping[str, Any]) -> None:
    if job.namespaced_rules and not params.get("role_namespace"):
        raise AccessRequestError(
            "role_namespace",
            params.get("role_namespace"),
            f"the {job.name} job keeps a Lease or record in a namespace ({job.namespace_use}): "
            "name it, the job's Role is granted there",
        )


def _require_namespaces(session: ClusterSession, params: Mapping[str, Any]) -> None:
    """The ServiceAccount's and the Role's namespaces exist: the module does not create them (it would own a
    namespace someone else's objects may live in)."""
    for field in ("namespace", "role_namespace"):
        name = params.get(field)
        if name and session.read(Ref("Namespace", name)) is None:
            raise AccessRequestError(
                field,
                name,
                f"namespace {name} does not exist on this cluster; create it first (kubectl create namespace "
                f"{name}, or kubernetes.core.k8s) or name an existing one. Nothing was changed",
            )


def _grant(session: ClusterSession, job: Job, account: str, params: Mapping[str, Any]) -> dict:
    _require_namespaces(session, params)
    namespace = params["namespace"]
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]
    session.ensure("service_account", Ref("ServiceAccount", account, namespace), {"metadata": {"labels": PART_OF}})
    roles = []
    for bound in bound_jobs(job):
        role = cluster_role(bound)
        session.ensure("cluster_role", Ref("ClusterRole", bound.cluster_role), _body(role))
        binding = f"{account}-{namespace}-{bound.name}"
        session.ensure(
            "cluster_role_binding",
            Ref("ClusterRoleBinding", binding),
            {
                "metadata": {"labels": PART_OF},
                "subjects": subject,
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": bound.cluster_role},
            },
        )
        roles.append(bound.cluster_role)
        _grant_namespaced(session, bound, account, subject, params.get("role_namespace"))
    kubeconfig = _kubeconfig(session, account, namespace, params)
    return {"cluster_roles": roles, "kubeconfig": kubeconfig}


def _grant_namespaced(
    session: ClusterSession, job: Job, account: str, subject: list[dict], role_namespace: Optional[str]
) -> None:
    role = namespaced_role(job, role_namespace) if role_namespace else None
    if role is None:
        return
    session.ensure("role", Ref("Role", job.cluster_role, role_namespace), _body(role))
    session.ensure(
        "role_binding",
        Ref("RoleBinding", f"{account}-{job.name}", role_namespace),
        {
            "metadata": {"labels": PART_OF},
            "subjects": subject,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": job.cluster_role},
        },
    )


def _body(manifest: dict) -> dict:
    """What ClusterSession.ensure compares and writes: labels and rules (name and namespace come from the Ref)."""
    return {"metadata": {"labels": manifest["metadata"]["labels"]}, "rules": manifest["rules"]}


def _kubeconfig(session: ClusterSession, account: str, namespace: str, params: Mapping[str, Any]) -> Optional[str]:
    """Write ``kubeconfig_dest`` (mode 0600) with a token from the TokenRequest API, unless it exists and
    ``rotate_token`` is off: a re-run changes nothing. The token itself is never part of the result."""
    dest = params.get("kubeconfig_dest")
    if not dest:
        return None
    if os.path.exists(dest) and not params.get("rotate_token"):
        session.record("kubeconfig", dest, "none", False, "already written (rotate_token: true writes a new token)")
        return dest
    if not session.check_mode:
        answer = post_raw(
            session.api,
            resource_path("v1", "serviceaccounts", namespace, account, "token"),
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": int(params.get("token_seconds") or 0) or None},
            },
            kind="TokenRequest",
        )
        token = ((answer or {}).get("status") or {}).get("token")
        import yaml  # only here: the import sanity test runs module_utils without PyYAML

        write_atomically(dest, yaml.safe_dump(_kubeconfig_document(session.api, token, params.get("context_name"))))
        os.chmod(dest, 0o600)
    session.record(
        "kubeconfig",
        dest,
        "create",
        True,
        "would write (check mode)" if session.check_mode else "written with a new token of the ServiceAccount",
    )
    return dest


def _kubeconfig_document(api_client: Any, token: str, context_name: Optional[str]) -> dict:
    configuration = api_client.configuration
    name = context_name or "descheduler-fleet"
    cluster: dict[str, Any] = {"server": configuration.host}
    if getattr(configuration, "ssl_ca_cert", None):
        with open(configuration.ssl_ca_cert, "rb") as handle:
            cluster["certificate-authority-data"] = base64.b64encode(handle.read()).decode()
    if getattr(configuration, "verify_ssl", True) is False:
        cluster["insecure-skip-tls-verify"] = True
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
