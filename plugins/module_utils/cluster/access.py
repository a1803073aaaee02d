"""Whether the connection's user may do something, asked of the API server before a run starts
(``SelfSubjectAccessReview``): a run that could not evict a single pod fails before its first request instead of
collecting one "forbidden" per pod."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

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
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}
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
