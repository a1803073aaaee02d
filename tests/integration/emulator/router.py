"""From an HTTP request to an API call: path parsing, verbs, faults, authn/authz, discovery, and dispatch to
`ObjectApi`, the status/scale subresources, registered subresource handlers, custom routes and watches."""

from __future__ import annotations

import json
import logging
import queue
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml

from . import discovery, errors
from .api import DeleteOptions, ListOptions, present
from .errors import ApiError
from .resources import ResourceType
from .selectors import label_selector_to_string, object_predicate, parse_field_selector, parse_label_selector
from .server import Request, Response, error_response, json_response, text_response
from .store import clone
from .watch import Watcher

if TYPE_CHECKING:
    from .emulator import Emulator

log = logging.getLogger(__name__)

NAMESPACE_SUBRESOURCES = ("status", "finalize")
VERB_BY_METHOD = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                  "DELETE": "delete"}
DEFAULT_WATCH_TIMEOUT = 300.0
SubresourceHandler = Callable[["Emulator", "ResourceRequest"], Response]
RouteHandler = Callable[["Emulator", Request, re.Match[str]], Response]


@dataclass(frozen=True)
class ParsedPath:
    group: str
    version: str
    namespace: str = ""
    plural: str = ""  # "" for the group-version discovery document
    name: str = ""
    subresource: str = ""
    watch_prefix: bool = False  # the legacy /watch/ path form


@dataclass
class ResourceRequest:
    """A request for a resource, resolved: what subresource handlers receive."""

    request: Request
    verb: str
    resource_type: ResourceType
    namespace: str
    name: str
    subresource: str
    user: str

    @property
    def dry_run(self) -> bool:
        return "All" in self.request.query.get("dryRun", [])

    def json_body(self) -> Any:
        return decode_body(self.request)


def parse_path(path: str) -> ParsedPath | None:
    """/api/v1/... and /apis/<group>/<version>/...; None for anything else. Raises 404 for over-long paths."""
    parts = [unquote(part) for part in path.split("/") if part]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_prefix = bool(rest) and rest[0] == "watch"
    rest = rest[1:] if watch_prefix else rest
    namespace = ""
    is_namespace_subresource = group == "" and len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES
    if len(rest) >= 3 and rest[0] == "namespaces" and not is_namespace_subresource:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise errors.resource_not_found_route()
    plural, name, subresource = (rest + ["", "", ""])[:3]
    return ParsedPath(group, version, namespace, plural, name, subresource, watch_prefix)


def kubernetes_verb(request: Request, parsed: ParsedPath | None) -> str:
    if parsed is None or not parsed.plural:
        return request.method.lower()
    if request.method == "GET" and not parsed.subresource:
        if parsed.watch_prefix or request.flag("watch"):
            return "watch"
        return "get" if parsed.name else "list"
    if request.method == "DELETE" and not parsed.name:
        return "deletecollection"
    return VERB_BY_METHOD.get(request.method, request.method.lower())


def decode_body(request: Request) -> Any:
    if not request.body:
        raise errors.bad_request("the body of the request was in an unknown format: empty body")
    try:
        if "yaml" in request.content_type:
            return yaml.safe_load(request.body)
        return json.loads(request.body)
    except (ValueError, yaml.YAMLError) as exc:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None


def delete_options(request: Request) -> DeleteOptions:
    body = decode_body(request) if request.body.strip() else {}
    if not isinstance(body, dict):
        raise errors.bad_request("DeleteOptions must be a JSON object")
    grace = body.get("gracePeriodSeconds")
    if grace is None and request.param("gracePeriodSeconds") not in (None, ""):
        grace = int(request.param("gracePeriodSeconds") or 0)
    propagation = body.get("propagationPolicy") or request.param("propagationPolicy")
    orphan = body.get("orphanDependents")
    if orphan is None and request.param("orphanDependents") is not None:
        orphan = request.flag("orphanDependents")
    if propagation is None and orphan is not None:
        propagation = "Orphan" if orphan else "Background"
    if propagation not in (None, "Orphan", "Background", "Foreground"):
        raise errors.bad_request(f"propagationPolicy: Unsupported value: {propagation!r}: supported values: "
                                 '"Foreground", "Background", "Orphan"')
    dry_run = "All" in (body.get("dryRun") or []) or "All" in request.query.get("dryRun", [])
    return DeleteOptions(grace, propagation, body.get("preconditions") or {}, dry_run)


def list_options(request: Request) -> ListOptions:
    limit = request.param("limit") or "0"
    if not limit.lstrip("-").isdigit():
        raise errors.bad_request(f"limit: Invalid value: {limit!r}")
    return ListOptions(request.param("labelSelector"), request.param("fieldSelector"), int(limit),
                       request.param("continue"), request.param("resourceVersion"))


def _path_value(obj: dict[str, Any], path: str) -> Any:
    node: Any = obj
    for part in path.strip(".").split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _set_path_value(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    node = obj
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


class Router:
    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    def handle(self, request: Request) -> Response:
        try:
            parsed = parse_path(request.path)
            verb = kubernetes_verb(request, parsed)
            self.emulator.faults.apply(request.method, verb, request.path)
            user = self.emulator.auth.authenticate(request.headers)
            for method, pattern, handler in list(self.emulator.routes):
                match = pattern.search(request.path)
                if match and method in (None, request.method):
                    return handler(self.emulator, request, match)
            if parsed is None or not parsed.plural:
                return self._non_resource(request, parsed)
            resolved = self._resolve(request, parsed, verb, user)
            self.emulator.auth.authorize(user, verb, resolved.resource_type.group, resolved.resource_type.plural,
                                         resolved.subresource, resolved.namespace, resolved.name)
            return self._dispatch(resolved)
        except ApiError as error:
            return error_response(error)
        except Exception as exc:  # a bug in a handler or hook must not hang the client
            log.exception("emulator failed on %s %s", request.method, request.path)
            return error_response(errors.internal_error(f"{type(exc).__name__}: {exc}"))

    # --- non-resource endpoints ----------------------------------------------------------------------------------

    def _non_resource(self, request: Request, parsed: ParsedPath | None) -> Response:
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        registry, path = self.emulator.registry, request.path.rstrip("/") or "/"
        document: dict[str, Any] | None = None
        if parsed is not None:
            document = discovery.resource_list(registry, parsed.group, parsed.version)
        elif path == "/version":
            document = discovery.version_info(self.emulator.kubernetes_version)
        elif path == "/api":
            document = discovery.api_versions(f"127.0.0.1:{self.emulator.port}")
        elif path == "/apis":
            document = discovery.group_list(registry)
        elif path.startswith("/apis/") and path.count("/") == 2:
            document = discovery.group(registry, path.split("/")[2])
        elif path in ("/healthz", "/livez", "/readyz"):
            return text_response(200, "ok")
        if document is None:
            if path.startswith(("/openapi", "/api")):  # clients decode these as JSON
                raise errors.resource_not_found_route()
            return text_response(404, "404 page not found\n")
        return json_response(200, document)

    # --- resources ----------------------------------------------------------------------------------------------

    def _resolve(self, request: Request, parsed: ParsedPath, verb: str, user: str) -> ResourceRequest:
        resource_type = self.emulator.registry.lookup(parsed.group, parsed.version, parsed.plural)
        if resource_type is None:
            raise errors.resource_not_found_route()
        if parsed.namespace and not resource_type.namespaced:
            raise errors.resource_not_found_route()
        if resource_type.namespaced and parsed.name and not parsed.namespace:
            raise errors.resource_not_found_route()
        if parsed.subresource:
            subresource = resource_type.subresource(parsed.subresource)
            handled = (resource_type.group, resource_type.plural, parsed.subresource) in self.emulator.subresources
            if subresource is None and not handled:
                raise errors.resource_not_found_route()
            if subresource is not None and verb not in subresource.verbs:
                raise errors.method_not_allowed()
        elif verb not in resource_type.verbs or (verb == "create" and parsed.name):
            raise errors.method_not_allowed()
        elif not parsed.name and verb in ("update", "patch"):
            raise errors.method_not_allowed()
        return ResourceRequest(request, verb, resource_type, parsed.namespace, parsed.name, parsed.subresource, user)

    def _dispatch(self, rr: ResourceRequest) -> Response:
        if rr.subresource:
            return self._subresource(rr)
        api, rt, request = self.emulator.api, rr.resource_type, rr.request
        if rr.verb == "get":
            return json_response(200, api.get(rt, rr.namespace, rr.name))
        if rr.verb == "list":
            return json_response(200, api.list(rt, rr.namespace or None, list_options(request)))
        if rr.verb == "watch":
            return self._watch(rr)
        if rr.verb == "create":
            return json_response(201, api.create(rt, rr.namespace, decode_body(request), dry_run=rr.dry_run,
                                                 user=rr.user))
        if rr.verb == "update":
            obj, created = api.update(rt, rr.namespace, rr.name, decode_body(request), dry_run=rr.dry_run,
                                      user=rr.user)
            return json_response(201 if created else 200, obj)
        if rr.verb == "patch":
            return self._patch(rr, subresource="")
        if rr.verb == "delete":
            return json_response(200, api.delete(rt, rr.namespace, rr.name, delete_options(request), user=rr.user))
        if rr.verb == "deletecollection":
            return json_response(200, api.delete_collection(rt, rr.namespace or None, list_options(request),
                                                            delete_options(request), user=rr.user))
        raise errors.method_not_allowed()

    def _patch(self, rr: ResourceRequest, subresource: str) -> Response:
        obj, created = self.emulator.api.patch(
            rr.resource_type, rr.namespace, rr.name, rr.request.content_type, decode_body(rr.request),
            dry_run=rr.dry_run, subresource=subresource, user=rr.user,
            field_manager=rr.request.param("fieldManager"),
        )
        return json_response(201 if created else 200, obj)

    def _subresource(self, rr: ResourceRequest) -> Response:
        handler = self.emulator.subresources.get((rr.resource_type.group, rr.resource_type.plural, rr.subresource))
        if handler is not None:
            return handler(self.emulator, rr)
        if rr.subresource == "status":
            return self._status(rr)
        if rr.subresource == "scale":
            return self._scale(rr)
        raise errors.method_not_allowed()

    def _status(self, rr: ResourceRequest) -> Response:
        api = self.emulator.api
        if rr.verb == "get":
            return json_response(200, api.get(rr.resource_type, rr.namespace, rr.name))
        if rr.verb == "update":
            obj, _created = api.update(rr.resource_type, rr.namespace, rr.name, decode_body(rr.request),
                                       dry_run=rr.dry_run, subresource="status", user=rr.user)
            return json_response(200, obj)
        return self._patch(rr, subresource="status")

    # --- scale ---------------------------------------------------------------------------------------------------

    def _scale(self, rr: ResourceRequest) -> Response:
        rt, api = rr.resource_type, self.emulator.api
        with self.emulator.store.lock:
            current = api.get(rt, rr.namespace, rr.name)
            view = scale_view(rt, current)
            if rr.verb == "get":
                return json_response(200, view)
            if rr.verb == "update":
                wanted = decode_body(rr.request)
            else:
                wanted = api.apply_patch(rt, clone(view), rr.request.content_type, decode_body(rr.request))
            if not isinstance(wanted, dict):
                raise errors.bad_request("a Scale object is required")
            replicas = (wanted.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or replicas < 0:
                raise errors.invalid("Scale", "autoscaling", rr.name, [
                    errors.field_invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
            updated = clone(current)
            paths = rt.extra.get("scale") or {}
            _set_path_value(updated, paths.get("specReplicasPath", ".spec.replicas"), replicas)
            updated["metadata"]["resourceVersion"] = (wanted.get("metadata") or {}).get("resourceVersion") or \
                current["metadata"].get("resourceVersion")
            obj, _created = api.update(rt, rr.namespace, rr.name, updated, dry_run=rr.dry_run, user=rr.user)
            return json_response(200, scale_view(rt, obj))

    # --- watch ---------------------------------------------------------------------------------------------------

    def _watch(self, rr: ResourceRequest) -> Response:
        rt, request, hub = rr.resource_type, rr.request, self.emulator.watches
        field_selector = request.param("fieldSelector") or ""
        if rr.name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={rr.name}"]))
        predicate = object_predicate(parse_label_selector(request.param("labelSelector")),
                                     parse_field_selector(field_selector, rt.field_labels))
        watcher = Watcher(rt.group_resource, rr.namespace or None, predicate, queue.Queue())
        since = request.param("resourceVersion") or ""
        timeout = float(request.param("timeoutSeconds") or DEFAULT_WATCH_TIMEOUT)
        with self.emulator.store.lock:
            if since in ("", "0"):
                hub.subscribe(watcher, None)
                listed = self.emulator.api.list(rt, rr.namespace or None, ListOptions(
                    request.param("labelSelector"), field_selector or None))
                initial = [{"type": "ADDED", "object": obj} for obj in listed["items"]]
            else:
                if not since.isdigit():
                    raise errors.bad_request(f"invalid resource version: {since}")
                replay, fresh = hub.subscribe(watcher, int(since))
                if not fresh:
                    hub.unsubscribe(watcher)
                    too_old = ApiError(410, "Expired", f"too old resource version: {since} "
                                                       f"({self.emulator.store.resource_version})")
                    initial = [{"type": "ERROR", "object": too_old.to_status()}]
                    return Response(200, stream=iter([_event_line(initial[0])]))
                initial = [{"type": e[1], "object": present(rt, e[3])} for e in replay]
        return Response(200, stream=hub.stream(watcher, initial, timeout, lambda obj: present(rt, obj)))


def _event_line(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def scale_view(resource_type: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale of a workload (or of a custom resource, through its CRD's scale paths)."""
    paths = resource_type.extra.get("scale") or {}
    metadata = obj["metadata"]
    if resource_type.custom:
        selector = _path_value(obj, paths["labelSelectorPath"]) if paths.get("labelSelectorPath") else ""
    else:
        selector = label_selector_to_string((obj.get("spec") or {}).get("selector"))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {key: metadata[key] for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if key in metadata},
        "spec": {"replicas": _path_value(obj, paths.get("specReplicasPath", ".spec.replicas")) or 0},
        "status": {"replicas": _path_value(obj, paths.get("statusReplicasPath", ".status.replicas")) or 0,
                   "selector": selector or ""},
    }
