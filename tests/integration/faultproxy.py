"""A fault-injection HTTP proxy in front of a real kube-apiserver: the `kube.faults` of tests marked `faults`.

    proxy = FaultProxy(upstream_url, ssl_context).start()   # serves plain HTTP on 127.0.0.1:<port>
    proxy.fail(429, verb="create", path=r"/eviction$", times=2, retry_after=1)   # a 429 storm with Retry-After
    proxy.fail(500, path="/configmaps", message="etcdserver: request timed out")
    proxy.drop(verb="list", path="/pods$")       # the connection closes without an answer
    proxy.delay(0.5, verb="get")                 # slow responses, until cleared
    proxy.expire_continue_after(2)               # pages 1-2 of the next chunked list, then 410 Expired
    proxy.observe(verb="create", path=r"/eviction$", observer=recorder)   # recorder.started(...) / .finished(...)
    proxy.before_continue(hook, path="/pods$")   # hook(n, path, query) before the n-th list with a continue token
    held = proxy.hold(verb="update", path="/kubedeschedulers/cluster$", body=lambda b: ...)  # held until released
    held.arrived.wait(); ...; held.release()
    proxy.clear(); proxy.stop()

The proxy authenticates to the server itself (the admin client certificate in `ssl_context`), like
`kubectl proxy`: a kubeconfig for it names only `http://127.0.0.1:<port>`. Requests that no rule matches are
passed through unchanged, watches streamed. `verb` is a Kubernetes verb when lower-case (get, list, watch,
create, update, patch, delete, deletecollection) or an HTTP method when upper-case; `path` is a regex searched
in the URL path. Every rule counts its `hits`, so a test can also use a zero-delay rule as a request counter.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Protocol
from urllib.parse import parse_qs, urlsplit

from standins.httpserver import BackgroundServer

# The reasons kube-apiserver gives for these codes (metav1.StatusReason).
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
           410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}
EXPIRED_MESSAGE = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                   "new list without the continue parameter.")
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


def kube_verb(method: str, path: str, query: dict[str, list[str]]) -> str:
    """The Kubernetes verb of a request, from its method and whether the path names one object."""
    if method == "GET":
        if query.get("watch", ["false"])[0] in ("true", "1"):
            return "watch"
        return "get" if _names_an_object(path) else "list"
    if method == "DELETE":
        return "delete" if _names_an_object(path) else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def _names_an_object(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]  # after /api/v1
    elif parts[:1] == ["apis"]:
        rest = parts[3:]  # after /apis/<group>/<version>
    else:
        return True  # /healthz, /version, discovery documents: single documents
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]  # a namespaced resource; /namespaces/<name> alone is the Namespace object
    return len(rest) >= 2


@dataclass
class FaultRule:
    verb: str | None
    path: re.Pattern[str]
    status: int | None = None  # None: no error (a delay or a drop)
    message: str = ""
    retry_after: int = 0
    latency: float = 0.0
    drop: bool = False
    times: int | None = 1  # None: forever
    hits: int = field(default=0)

    def matches(self, method: str, verb: str, path: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.verb is not None and self.verb not in (method, verb):
            return False
        return self.path.search(path) is not None


class Observer(Protocol):
    """Told about each matching request that reaches the server: `started` before it is forwarded (its return
    value is handed back to `finished` with the answer's status code)."""

    def started(self, method: str, path: str, body: bytes | None) -> Any: ...

    def finished(self, token: Any, status: int) -> None: ...


class Hold:
    """An observer that holds the matching requests (whose body `body` accepts) before they are forwarded, until
    `release()`: the test acts while a client waits at a known step. `arrived` is set when the first is held."""

    def __init__(self, body: Callable[[bytes | None], bool]) -> None:
        self.body = body
        self.arrived = threading.Event()
        self._released = threading.Event()

    def started(self, method: str, path: str, body: bytes | None) -> None:
        if not self._released.is_set() and self.body(body):
            self.arrived.set()
            self._released.wait()

    def finished(self, token: Any, status: int) -> None:
        pass

    def release(self) -> None:
        self._released.set()


# hook(n, path, query): called before the n-th list request with a continue token is forwarded
ContinueHook = Callable[[int, str, dict[str, list[str]]], None]


class FaultProxy:
    def __init__(self, upstream: str, ssl_context: ssl.SSLContext | None) -> None:
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname or "127.0.0.1", parts.port or 443
        self.upstream_tls = parts.scheme == "https"
        self.ssl_context = ssl_context
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._observers: list[tuple[FaultRule, Observer]] = []
        self._continue_hooks: list[tuple[re.Pattern[str], ContinueHook]] = []
        self._continues_seen = 0
        self._expire_after_pages: int | None = None
        self._pages_served = 0
        self.continues_expired = 0  # how many 410 Expired answers expire_continue_after gave
        handler = type("Handler", (_Handler,), {"proxy": self})
        self._server = BackgroundServer(handler, "fault-proxy")

    @property
    def url(self) -> str:
        return self._server.url

    def start(self) -> FaultProxy:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    # ---- rules -------------------------------------------------------------------------------------------------------

    def fail(self, status: int, verb: str | None = None, path: str = "", times: int | None = 1,
             message: str | None = None, retry_after: int = 0) -> FaultRule:
        text = message or f"injected {status} {REASONS.get(status, HTTPStatus(status).phrase)}"
        return self._add(FaultRule(verb, re.compile(path), status=status, message=text, retry_after=retry_after,
                                   times=times))

    def delay(self, seconds: float, verb: str | None = None, path: str = "", times: int | None = None) -> FaultRule:
        return self._add(FaultRule(verb, re.compile(path), latency=seconds, times=times))

    def drop(self, verb: str | None = None, path: str = "", times: int | None = 1) -> FaultRule:
        return self._add(FaultRule(verb, re.compile(path), drop=True, times=times))

    def observe(self, observer: Observer, verb: str | None = None, path: str = "") -> None:
        with self._lock:
            self._observers.append((FaultRule(verb, re.compile(path), times=None), observer))

    def hold(self, verb: str | None = None, path: str = "",
             body: Callable[[bytes | None], bool] = lambda _body: True) -> Hold:
        held = Hold(body)
        self.observe(held, verb=verb, path=path)
        return held

    def observers_for(self, method: str, path: str, query: dict[str, list[str]]) -> list[Observer]:
        verb = kube_verb(method, path, query)
        with self._lock:
            return [observer for rule, observer in self._observers if rule.matches(method, verb, path)]

    def before_continue(self, hook: ContinueHook, path: str = "") -> None:
        """Call `hook(n, path, query)` before forwarding the n-th (1, 2, ...) list request that carries a continue
        token and whose path matches: the test changes the server between two pages of a chunked list (e.g.
        compacts etcd, so the real server finds the token expired)."""
        with self._lock:
            self._continue_hooks.append((re.compile(path), hook))

    def run_continue_hooks(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        if "continue" not in query or kube_verb(method, path, query) != "list":
            return
        with self._lock:
            hooks = [hook for pattern, hook in self._continue_hooks if pattern.search(path)]
            if hooks:
                self._continues_seen += 1
            number = self._continues_seen
        for hook in hooks:  # outside the lock: a hook may take a while (a compaction)
            hook(number, path, query)

    def expire_continue_after(self, pages: int) -> None:
        with self._lock:
            self._expire_after_pages, self._pages_served = pages, 0

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
            self._observers.clear()
            self._continue_hooks.clear()
            self._continues_seen = 0
            self._expire_after_pages = None

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def _add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    # ---- decisions -----------------------------------------------------------------------------------------------

    def decide(self, method: str, path: str, query: dict[str, list[str]]) -> tuple[float, FaultRule | None]:
        """Latency to add and the first error/drop rule that applies (hits counted here)."""
        verb = kube_verb(method, path, query)
        with self._lock:
            delays = [r for r in self._rules if r.status is None and not r.drop and r.matches(method, verb, path)]
            failing = next((r for r in self._rules if (r.status is not None or r.drop)
                            and r.matches(method, verb, path)), None)
            for rule in delays + ([failing] if failing else []):
                rule.hits += 1
            if failing is None and verb == "list" and self._continue_expired(query):
                failing = FaultRule(None, re.compile(""), status=410, message=EXPIRED_MESSAGE)
        return sum(r.latency for r in delays), failing

    def _continue_expired(self, query: dict[str, list[str]]) -> bool:
        if self._expire_after_pages is None or "limit" not in query:
            return False
        if "continue" not in query:
            self._pages_served = 1  # the first page of a new chunked list
            return False
        if self._pages_served >= self._expire_after_pages:
            self._expire_after_pages = None  # once
            self.continues_expired += 1
            return True
        self._pages_served += 1
        return False


class _Handler(BaseHTTPRequestHandler):
    proxy: FaultProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's signature
        pass  # quiet: pytest would print every request

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET  # noqa: N815

    def _forward(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        pause, rule = self.proxy.decide(self.command, parts.path, parse_qs(parts.query))
        if pause:
            time.sleep(pause)
        if rule is not None and rule.drop:
            self.close_connection = True
            self.connection.close()  # no status line at all: the client sees the connection reset
            return
        if rule is not None and rule.status is not None:
            self._status(rule)
            return
        try:
            self.proxy.run_continue_hooks(self.command, parts.path, parse_qs(parts.query))
        except Exception as error:  # noqa: BLE001 - the test's own hook: its failure goes to the client, readable
            self._status(FaultRule(None, re.compile(""), status=500, message=f"before_continue hook failed: {error!r}"))
            return
        observers = self.proxy.observers_for(self.command, parts.path, parse_qs(parts.query))
        tokens = [observer.started(self.command, parts.path, body) for observer in observers]
        status = self._pass_through(body)
        for observer, token in zip(observers, tokens, strict=True):
            observer.finished(token, status)

    def _status(self, rule: FaultRule) -> None:
        status = rule.status or 500
        payload = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": rule.message, "reason": REASONS.get(status, ""), "code": status}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if rule.retry_after:
            self.send_header("Retry-After", str(rule.retry_after))
        self.end_headers()
        self.wfile.write(payload)

    def _pass_through(self, body: bytes | None) -> int:
        """Forward the request; the status code answered (0 when the server could not be reached)."""
        proxy = self.proxy
        if proxy.upstream_tls:
            upstream = http.client.HTTPSConnection(proxy.upstream_host, proxy.upstream_port, timeout=120,
                                                   context=proxy.ssl_context)
        else:
            upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP | {"content-length"}:
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            # Chunk by chunk, so watches stream instead of waiting for the server to end them.
            while chunk := response.read1(65536):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return response.status
        except (OSError, http.client.HTTPException):
            self.close_connection = True
            return 0
        finally:
            upstream.close()
