"""The HTTP side: a stdlib ThreadingHTTPServer on 127.0.0.1 (HTTP/1.1 keep-alive) handing parsed requests to
`Emulator.handle` and writing its responses (JSON, text, or a chunked stream for watches)."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .errors import ApiError

if TYPE_CHECKING:
    from .emulator import Emulator

log = logging.getLogger(__name__)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def flag(self, name: str) -> bool:
        return (self.param(name) or "").lower() in ("true", "1")

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "application/json").split(";")[0].strip().lower()


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    stream: Iterator[bytes] | None = None


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    # Compact JSON plus the newline json.Encoder writes, as kube-apiserver answers.
    return Response(status, json.dumps(body, separators=(",", ":")).encode() + b"\n", headers=headers or {})


def text_response(status: int, text: str) -> Response:
    return Response(status, text.encode(), content_type="text/plain")


def error_response(error: ApiError) -> Response:
    return json_response(error.code, error.to_status(), error.headers)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-emulator"
    timeout = 300  # idle keep-alive connections give up their thread eventually
    server: EmulatorHTTPServer

    def setup(self) -> None:
        super().setup()
        # One small response per request: without NODELAY, Nagle + delayed ACK add ~40 ms per keep-alive request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        super().finish()

    def _serve(self) -> None:
        url = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=url.path,
            query=parse_qs(url.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self._read_body(),
        )
        self._write(self.server.emulator.handle(request))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _write(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Cache-Control", "no-cache, private")
        for name, value in response.headers.items():
            self.send_header(name, value)
        if response.stream is None:
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in response.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True  # the client went away mid-stream

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s - %s", self.address_string(), format % args)


class EmulatorHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, emulator: Emulator, host: str = "127.0.0.1", port: int = 0) -> None:
        self.emulator = emulator
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients dropping keep-alive or watch connections is routine; keep test output clean.
        log.debug("connection from %s failed", client_address, exc_info=True)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def close_connections(self) -> None:
        """Unblock handler threads parked on keep-alive connections so they end with the server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class ServerThread:
    """Runs an EmulatorHTTPServer in a daemon thread."""

    def __init__(self, emulator: Emulator, host: str = "127.0.0.1", port: int = 0) -> None:
        self.httpd = EmulatorHTTPServer(emulator, host, port)
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"kube-emulator:{self.port}", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.close_connections()
        self.httpd.server_close()
        self._thread.join(timeout=5)
