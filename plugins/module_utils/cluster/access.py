"""Whether the connection's user may do something, asked of the API server before a run starts
(``SelfSubjectAccessReview``): a run that could not evict a single pod fails before its first request instead of
collecting one "forbidden" per pod."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import post_raw

ACCESS_REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


@dataclass(frozen=True)
class Permission:
    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: Optional[str] = None

    def describe(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        scope = f"in namespace {self.namespace}" if self.namespace else "at the cluster scope"
        return f"{self.verb} {resource} (API group {self.group!r}) {scope}"


def is_allowed(api_client: Any, permission: Permission) -> tuple[bool, str]:
    """(allowed, the authorizer's reason) for the user of ``api_client``."""
    attributes = {"verb": permission.verb, "resource": permission.resource, "group": permission.group}
    if permission.subresource:
        attributes["subresource"] = permission.subresource
    if permission.namespace:
        attributes["namespace"] = permission.namespace
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    answer = post_raw(api_client, ACCESS_REVIEW_PATH, body, kind="SelfSubjectAccessReview") or {}
    status = answer.get("status") or {}
    return bool(status.get("allowed")), status.get("reason") or status.get("evaluationError") or ""


def denied(api_client: Any, permissions: Iterable[Permission]) -> list[str]:
    """The permissions of ``permissions`` the user lacks, each described with the authorizer's reason."""
    missing = []
    for permission in permissions:
        allowed, reason = is_allowed(api_client, permission)
        if not allowed:
            missing.append(permission.describe() + (f" ({reason})" if reason else ""))
    return missing


# ---- a job's rights, in one batch -------------------------------------------------------------------------------

RULES_REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
# RBAC needs no namespace to exist: no RoleBinding can live in this one, so its review holds exactly the rules the
# user has everywhere (ClusterRoleBindings), which is what a cluster-scope request is authorized against.
CLUSTER_SCOPE_PROBE = "descheduler-fleet-no-such-namespace"


class MissingRights(ClusterError):
    """The connection's user lacks rights its job needs; raised before the module reads or writes anything else."""

    def __init__(self, message: str, missing: list[str]) -> None:
        self.details = {"missing_rights": missing}
        super().__init__(message)


def rules_review(api_client: Any, namespace: str) -> tuple[list[dict], bool]:
    """The user's resource rules in ``namespace`` (SelfSubjectRulesReview) and whether the list is incomplete (an
    authorizer other than RBAC, or an error evaluating a binding)."""
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": namespace}}
    status = (post_raw(api_client, RULES_REVIEW_PATH, body, kind="SelfSubjectRulesReview") or {}).get("status") or {}
    return list(status.get("resourceRules") or []), bool(status.get("incomplete"))


def _matches(wanted: str, granted: Iterable[str]) -> bool:
    return "*" in granted or wanted in granted


def _resource_matches(resource: str, granted: Iterable[str]) -> bool:
    """RBAC's resource match, subresources included (``pods/*``, ``*/log``)."""
    granted = list(granted)
    if _matches(resource, granted):
        return True
    base, _slash, sub = resource.partition("/")
    return bool(sub) and (f"{base}/*" in granted or f"*/{sub}" in granted)


def grants(resource_rules: Iterable[dict], permission: Permission) -> bool:
    """Whether one of ``resource_rules`` allows ``permission`` on every object (rules limited to some
    resourceNames do not: the collection acts on objects it cannot name in advance)."""
    resource = f"{permission.resource}/{permission.subresource}" if permission.subresource else permission.resource
    return any(
        not rule.get("resourceNames")
        and _matches(permission.verb, rule.get("verbs") or [])
        and _matches(permission.group, rule.get("apiGroups") or [])
        and _resource_matches(resource, rule.get("resources") or [])
        for rule in resource_rules
    )


def lacking(api_client: Any, permissions: Iterable[Permission]) -> list[Permission]:
    """The permissions the user lacks: one rules review per scope; when a review is incomplete, what it does not
    show is asked once more with a SelfSubjectAccessReview (another authorizer may allow it)."""
    by_scope: dict[Optional[str], list[Permission]] = {}
    for permission in permissions:
        by_scope.setdefault(permission.namespace, []).append(permission)
    missing: list[Permission] = []
    for scope, wanted in by_scope.items():
        rules, incomplete = rules_review(api_client, scope or CLUSTER_SCOPE_PROBE)
        for permission in wanted:
            if grants(rules, permission) or (incomplete and is_allowed(api_client, permission)[0]):
                continue
            missing.append(permission)
    return missing


def user_name(api_client: Any) -> Optional[str]:
    """Who the API server takes the connection for (SelfSubjectReview), for messages; None when it cannot say."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        answer = post_raw(api_client, "/apis/authentication.k8s.io/v1/selfsubjectreviews", body) or {}
    except ClusterError:
        return None
    return ((answer.get("status") or {}).get("userInfo") or {}).get("username")
