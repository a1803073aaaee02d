"""Errors from talking to a cluster, with messages that tell the user what to fix.

Nothing here imports ``kubernetes`` or ``urllib3``: exceptions are read by their attributes, so this module loads
(and ansible-test's import sanity test passes) without the client library.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional
from urllib.parse import unquote, urlsplit

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError


class ClusterError(FleetError):
    """Base class of every error raised by the cluster I/O layer."""


class ClusterConnectionError(ClusterError):
    """The connection options cannot produce a client: the message names the option and what to set."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


# "User "alice" cannot list resource "pods" in API group "" in the namespace "shop"" (or "at the cluster scope")
_FORBIDDEN_RE = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]*)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<namespace>[^"]*)"| at the cluster scope)?'
)

_VERB_BY_METHOD = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "HEAD": "get"}


class ClusterApiError(ClusterError):
    """A failed API call. ``status`` is the HTTP code (0 when the server was not reached).

    ``reason`` and ``message`` come from the ``Status`` body the API server returns (``Forbidden``, ``NotFound``,
    ``Expired``...), ``kind`` is the resource concerned: the Kubernetes kind when the caller knows it, else the
    ``details.kind`` of the Status (a resource name such as ``pods``).
    """

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        kind: Optional[str] = None,
        *,
        details: Optional[dict] = None,
        method: Optional[str] = None,
        path: Optional[str] = None,
        host: Optional[str] = None,
        api_version: Optional[str] = None,
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.kind = kind or (details or {}).get("kind")
        self.details = details or {}
        self.method = method
        self.path = path
        self.host = host
        self.api_version = api_version or _api_version_from_path(path)
        super().__init__(self.describe())

    # ---- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_response(
        cls, status: int, reason: Optional[str], body: Any, *, kind: Optional[str] = None, **context: Any
    ) -> ClusterApiError:
        """Build from an HTTP status and body; a ``Status`` JSON body gives reason, message and details."""
        text = _body_text(body)
        status_body = _parse_status(text)
        if status_body is None:
            return cls(status, reason or "", text.strip()[:500], kind, **context)
        return cls(
            status,
            status_body.get("reason") or reason or "",
            status_body.get("message") or text.strip()[:500],
            kind,
            details=status_body.get("details") if isinstance(status_body.get("details"), dict) else None,
            **context,
        )

    @classmethod
    def from_api_exception(cls, exc: Any, *, kind: Optional[str] = None, **context: Any) -> ClusterApiError:
        """Build from a ``kubernetes.client.exceptions.ApiException`` (status 0 means the server was not reached)."""
        return cls.from_response(getattr(exc, "status", 0) or 0, getattr(exc, "reason", None),
                                 getattr(exc, "body", None), kind=kind, **context)

    @classmethod
    def from_connection_error(cls, exc: BaseException, **context: Any) -> ClusterApiError:
        """Build from a transport error (urllib3 ``MaxRetryError``, timeouts, refused connections, TLS failures)."""
        return cls(0, type(exc).__name__, _connection_error_text(exc), **context)

    # ---- user-facing text ---------------------------------------------------------------------------------------

    @property
    def is_not_found(self) -> bool:
        return self.status == 404

    @property
    def is_expired(self) -> bool:
        """410: a list continue token (or resourceVersion) is too old; the list must start again."""
        return self.status == 410

    def user_message(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """One message saying what failed and what to do about it."""
        describers = {0: self._describe_unreachable, 401: self._describe_unauthorized,
                      403: self._describe_forbidden, 404: self._describe_not_found, 410: self._describe_expired}
        return describers.get(self.status, self._describe_other)()

    def _describe_unreachable(self) -> str:
        hint = "check host (K8S_AUTH_HOST), the kubeconfig cluster server, proxy/no_proxy"
        if "ssl" in self.message.lower() or "certificate" in self.message.lower():
            hint = "check ca_cert (K8S_AUTH_SSL_CA_CERT) or the kubeconfig certificate-authority, or validate_certs"
        return f"cannot reach {self.host or 'the API server'}: {self.message} ({hint})"

    def _describe_unauthorized(self) -> str:
        return (f"{self.host or 'the API server'} rejected the credentials (401 Unauthorized): {self.message}. "
                "Check api_key (K8S_AUTH_API_KEY), client_cert/client_key or the kubeconfig user; "
                "a token may have expired")

    def _describe_forbidden(self) -> str:
        permission = self.missing_permission()
        who = f"{permission['user']!r}" if permission.get("user") else "the user"
        scope = (f"in namespace {permission['namespace']!r}" if permission.get("namespace")
                 else "at the cluster scope")
        group = permission.get("group") or ""
        return (f"permission denied: {who} cannot {permission['verb']} {permission['resource']!r} "
                f"(API group {group!r}) {scope}; grant verb {permission['verb']!r} on resource "
                f"{permission['resource']!r} in apiGroups [{group!r}] with a Role/ClusterRole binding. "
                f"API server: {self.message}")

    def _describe_not_found(self) -> str:
        target = _parse_path(self.path)
        name = self.details.get("name") or target.get("name")
        if name:
            where = f"{target['namespace']}/{name}" if target.get("namespace") else name
            return f"{self.kind or target.get('resource') or 'object'} {where} not found"
        return (f"the API {self.api_version or '(unknown group/version)'} kind "
                f"{self.kind or target.get('resource') or '(unknown)'} is not served by this cluster "
                "(CRD not installed?)")

    def _describe_expired(self) -> str:
        return (f"{self.method or 'GET'} {self.path}: the list continue token expired (410 {self.reason}): "
                f"{self.message}")

    def _describe_other(self) -> str:
        request = f"{self.method} {self.path}" if self.method and self.path else "API request"
        return f"{request} failed on {self.host or 'the API server'}: {self.status} {self.reason}: {self.message}"

    def missing_permission(self) -> dict[str, Optional[str]]:
        """verb, resource, group, namespace (and user) of a 403, from the message or else from the request."""
        match = _FORBIDDEN_RE.search(self.message or "")
        if match:
            return match.groupdict()
        target = _parse_path(self.path)
        return {
            "user": None,
            "verb": _verb_for(self.method, target),
            "resource": target.get("resource") or self.details.get("kind") or "(unknown)",
            "group": self.details.get("group", target.get("group")),
            "namespace": target.get("namespace"),
        }


class ContinueExpiredError(ClusterApiError):
    """A paged list kept losing its continue token (410) and was restarted too many times."""

    def __init__(self, path: str, restarts: int, last: ClusterApiError) -> None:
        self.restarts = restarts
        super().__init__(last.status, last.reason, last.message, last.kind, details=last.details,
                         method=last.method, path=path, host=last.host, api_version=last.api_version)

    def describe(self) -> str:
        return (f"listing {self.path} on {self.host or 'the API server'} did not finish: the continue token expired "
                f"(410 {self.reason}) and the list was restarted {self.restarts} time(s) without completing. "
                "The API server forgets continue tokens after a few minutes (etcd compaction); list during a quieter "
                "period, use a larger page_size, or raise max_restarts")


# ---- helpers ------------------------------------------------------------------------------------------------------


def _body_text(body: Any) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return str(body)


def _parse_status(text: str) -> Optional[dict]:
    if not text.lstrip().startswith("{"):
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    return document if isinstance(document, dict) and document.get("kind") == "Status" else None


def _connection_error_text(exc: BaseException) -> str:
    # MaxRetryError wraps the real cause (refused, DNS, TLS) in .reason; that is what the user needs to read
    cause = getattr(exc, "reason", None)
    text = str(cause) if isinstance(cause, BaseException) else str(exc)
    return text or type(exc).__name__


def _parse_path(path: Optional[str]) -> dict[str, Optional[str]]:
    """Split an API path (``/apis/apps/v1/namespaces/x/deployments/y``) into group, version, namespace, resource,
    name and subresource."""
    if not path:
        return {}
    segments = [unquote(part) for part in urlsplit(path).path.strip("/").split("/") if part]
    if segments[:1] == ["api"] and len(segments) >= 2:
        group, version, rest = "", segments[1], segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 3:
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        return {}
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":  # (/api/v1/namespaces/<name> is the Namespace object itself)
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] if rest else None
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    return {"group": group, "version": version, "namespace": namespace,
            "resource": f"{resource}/{subresource}" if subresource else resource, "name": name}


def _api_version_from_path(path: Optional[str]) -> Optional[str]:
    target = _parse_path(path)
    if not target.get("version"):
        return None
    return f"{target['group']}/{target['version']}" if target.get("group") else target["version"]


def _verb_for(method: Optional[str], target: dict) -> str:
    if not method:
        return "(unknown verb)"
    method = method.upper()
    if method == "GET":
        return "get" if target.get("name") else "list"
    if method == "DELETE" and not target.get("name"):
        return "deletecollection"
    return _VERB_BY_METHOD.get(method, method.lower())
