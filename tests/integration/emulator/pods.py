"""Pod subresources served over HTTP: `eviction` (delegating to the replaceable `emulator.eviction_handler`)
and `log` (from the per-pod buffers tests fill with `emulator.set_pod_log`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import errors
from .server import Response, json_response, text_response

if TYPE_CHECKING:
    from .emulator import Emulator
    from .router import ResourceRequest

EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


def eviction_subresource(emulator: Emulator, request: ResourceRequest) -> Response:
    body = request.json_body()
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was in an unknown format")
    api_version = body.get("apiVersion") or "policy/v1"
    if api_version not in EVICTION_VERSIONS:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 f"version (policy/v1)")
    if body.get("kind", "Eviction") != "Eviction":
        raise errors.bad_request(f"the kind in the data ({body.get('kind')}) does not match the expected kind "
                                 f"(Eviction)")
    result = emulator.eviction_handler(emulator, request.namespace, request.name, body, request.dry_run,
                                       request.user)
    return json_response(201, result)


def container_names(pod: dict[str, Any]) -> tuple[list[str], list[str]]:
    spec = pod.get("spec") or {}
    containers = [c.get("name", "") for c in spec.get("containers") or []]
    others = [c.get("name", "") for key in ("initContainers", "ephemeralContainers") for c in spec.get(key) or []]
    return containers, others


def log_subresource(emulator: Emulator, request: ResourceRequest) -> Response:
    pod = emulator.api.get(request.resource_type, request.namespace, request.name)
    containers, others = container_names(pod)
    container = request.request.param("container")
    if not container:
        if len(containers) != 1:
            raise errors.bad_request(f"a container name must be specified for pod {request.name}, choose one of: "
                                     f"[{' '.join(containers)}]")
        container = containers[0]
    elif container not in containers + others:
        raise errors.bad_request(f"container {container} is not valid for pod {request.name}")
    text = emulator.pod_log(request.namespace, request.name, container)
    return text_response(200, trim_log(text, request.request.param("tailLines"), request.request.param("limitBytes")))


def trim_log(text: str, tail_lines: str | None, limit_bytes: str | None) -> str:
    """The kubelet's order: the last `tailLines` lines, then at most `limitBytes` bytes of them (the kubelet
    stand-in trims the same way)."""
    if tail_lines is not None:
        count = int(tail_lines)
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-count:]) if count > 0 else ""
    if limit_bytes is not None:
        text = text.encode()[: int(limit_bytes)].decode(errors="ignore")
    return text
