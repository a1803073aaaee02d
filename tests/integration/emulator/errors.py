"""API errors rendered as `Status` bodies exactly like kube-apiserver (k8s.io/apimachinery/pkg/api/errors)."""

from __future__ import annotations

from typing import Any

# Reasons kube-apiserver uses for each code when it builds a generic error (NewGenericServerResponse).
REASON_BY_CODE = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

CONFLICT_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


class ApiError(Exception):
    """An error answered as a `Status` body; raise it anywhere below the HTTP layer (hooks, handlers, faults)."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        metadata: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.metadata = metadata or {}
        self.headers = headers or {}

    def to_status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": self.metadata,
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # kube-apiserver leaves it out where its handler gives none (two PDBs on an eviction)
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def resource_details(plural: str, group: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def qualified_resource(plural: str, group: str) -> str:
    """`pods` for the core group, `deployments.apps` otherwise (schema.GroupResource.String())."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    message = f'{qualified_resource(plural, group)} "{name}" not found'
    return ApiError(404, "NotFound", message, resource_details(plural, group, name))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified_resource(plural, group)} "{name}" already exists',
        resource_details(plural, group, name),
    )


def conflict(plural: str, group: str, name: str, why: str = CONFLICT_MODIFIED) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(plural, group)} "{name}": {why}',
        resource_details(plural, group, name),
    )


def invalid(kind: str, group: str, name: str, causes: list[dict[str, str]]) -> ApiError:
    """`causes` items: {"reason": "FieldValueInvalid", "message": "Invalid value: ...", "field": "metadata.name"}."""
    qualified_kind = f"{kind}.{group}" if group else kind
    summary = ", ".join(f"{cause['field']}: {cause['message']}" for cause in causes)
    if len(causes) > 1:
        summary = f"[{summary}]"
    message = f'{qualified_kind} "{name}" is invalid' + (f": {summary}" if causes else "")
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = causes
    return ApiError(422, "Invalid", message, details)


def field_required(field: str, detail: str) -> dict[str, str]:
    return {"reason": "FieldValueRequired", "message": f"Required value: {detail}", "field": field}


def field_invalid(field: str, value: Any, detail: str) -> dict[str, str]:
    rendered = f'"{value}"' if isinstance(value, str) else str(value)
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {rendered}: {detail}", "field": field}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})


def resource_not_found_route() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def unsupported_media_type(accepted: list[str]) -> ApiError:
    message = "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted)
    return ApiError(415, "UnsupportedMediaType", message, {})


def expired_continue(inconsistent_continue: str) -> ApiError:
    return ApiError(410, "Expired", CONTINUE_EXPIRED, metadata={"continue": inconsistent_continue})


def too_many_requests(message: str, causes: list[dict[str, str]] | None = None, retry_after: int = 0) -> ApiError:
    details: dict[str, Any] = {}
    if causes:
        details["causes"] = causes
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    headers = {"Retry-After": str(retry_after)} if retry_after else {}
    return ApiError(429, "TooManyRequests", message, details, headers=headers)


def internal_error(cause: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]})


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(plural: str, group: str, name: str, why: str) -> ApiError:
    resource = qualified_resource(plural, group)
    subject = f'{resource} "{name}"' if name else resource
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {why}", resource_details(plural, group, name))


def generic(code: int, message: str | None = None, retry_after: int = 0) -> ApiError:
    """What a fault rule answers: the reason kube-apiserver pairs with `code`, and its usual wording."""
    reason = REASON_BY_CODE.get(code, "Unknown")
    if code == 429:
        return too_many_requests(message or "Too many requests, please try again later.", retry_after=retry_after)
    if code == 500:
        return internal_error(message or "injected fault")
    if code == 410 and not message:
        return ApiError(410, "Expired", CONTINUE_EXPIRED)
    default_messages = {
        503: "the server is currently unable to handle the request",
        504: "the server was unable to return a response in the time allotted, but may still be processing the request",
        409: "the server reported a conflict",
    }
    headers = {"Retry-After": str(retry_after)} if retry_after else {}
    details: dict[str, Any] | None = {"retryAfterSeconds": retry_after} if retry_after else None
    return ApiError(code, reason, message or default_messages.get(code, f"injected fault {code}"), details,
                    headers=headers)
