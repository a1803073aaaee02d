"""Authentication (bearer tokens) and a deny-list authorizer with RBAC's Forbidden wording.

By default any request is accepted as `default_user`. `require_token(token, user)` makes the emulator answer
401 to requests without a known token; `forbid(verb, resource)` answers 403 exactly as RBAC words it. The
`Impersonate-User` header replaces the user name (as if impersonation were allowed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .errors import ApiError, forbidden, unauthorized


@dataclass(frozen=True)
class ForbidRule:
    verb: str  # a Kubernetes verb, or "*"
    plural: str
    group: str | None  # None: any group
    subresource: str  # "" for the resource itself, "*" for any
    namespace: str | None  # None: any namespace
    user: str | None  # None: any user

    def matches(self, user: str, verb: str, group: str, plural: str, subresource: str, namespace: str) -> bool:
        return (
            self.verb in ("*", verb)
            and self.plural in ("*", plural)
            and self.group in (None, "*", group)
            and self.subresource in ("*", subresource)
            and self.namespace in (None, namespace)
            and self.user in (None, user)
        )


def parse_resource(resource: str) -> tuple[str, str | None, str]:
    """`pods` → (pods, None, ""); `deployments.apps/scale` → (deployments, apps, scale)."""
    name, _slash, subresource = resource.partition("/")
    plural, _dot, group = name.partition(".")
    return plural, (group if "." in name else None), subresource


class Auth:
    def __init__(self, default_user: str = "kubernetes-admin") -> None:
        self._lock = threading.Lock()
        self.default_user = default_user
        self._tokens: dict[str, str] = {}
        self._rules: list[ForbidRule] = []

    def require_token(self, token: str, user: str | None = None) -> None:
        """Only accept requests bearing a registered token (call again to register more)."""
        with self._lock:
            self._tokens[token] = user or self.default_user

    def forbid(self, verb: str, resource: str, namespace: str | None = None, user: str | None = None) -> ForbidRule:
        """Deny `verb` ("*" for all) on `resource` (`pods`, `pods/eviction`, `deployments.apps`, `*`)."""
        plural, group, subresource = parse_resource(resource)
        rule = ForbidRule(verb, plural, group, subresource, namespace, user)
        with self._lock:
            self._rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()
            self._rules.clear()

    def authenticate(self, headers: dict[str, str]) -> str:
        """The requesting user's name; raises 401 when tokens are required and this one is unknown."""
        user = self.default_user
        if self._tokens:
            scheme, _space, token = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or token.strip() not in self._tokens:
                raise unauthorized()
            user = self._tokens[token.strip()]
        return headers.get("impersonate-user") or user

    def authorize(self, user: str, verb: str, group: str, plural: str, subresource: str, namespace: str,
                  name: str) -> None:
        if not self._rules:
            return
        with self._lock:
            denied = any(rule.matches(user, verb, group, plural, subresource, namespace) for rule in self._rules)
        if denied:
            raise forbidden_error(user, verb, group, plural, subresource, namespace, name)


def forbidden_error(user: str, verb: str, group: str, plural: str, subresource: str, namespace: str,
                    name: str) -> ApiError:
    resource = f"{plural}/{subresource}" if subresource else plural
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    why = f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'
    return forbidden(plural, group, name, why)
