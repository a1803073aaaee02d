"""The one small HTTP(S) server every network-facing stand-in serves from: the kubelet's container logs, KubeVirt's
admission webhook, Prometheus' query API and the fault proxy. A threading server on 127.0.0.1 (a free port) in a
background thread:

    with BackgroundServer(Handler, "prometheus-standin") as server:          # plain HTTP
        requests.get(f"{server.url}/api/v1/query?...")
    webhook = BackgroundServer(Handler, "kubevirt-webhook", tls=True).start()  # HTTPS
    webhook.ca_pem                                                           # a caBundle for the API server
    webhook.stop()

With `tls=True` the server presents a certificate for 127.0.0.1 signed by a CA of its own (the control plane's
certificate helper). The pair is made once per process and shared by all servers: the API server checks a webhook's
certificate against its caBundle, and does not verify kubelets here.
"""

from __future__ import annotations

import functools
import ssl
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from controlplane.certs import CertificateAuthority

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class ServerTLS:
    ca_pem: bytes  # the CA that signed the server certificate, PEM
    context: ssl.SSLContext  # a server context holding that certificate and its key


@functools.cache
def server_tls() -> ServerTLS:
    """The process's CA and server certificate for 127.0.0.1. The context keeps the loaded key, so the files it was
    read from are removed at once."""
    with tempfile.TemporaryDirectory(prefix="standin-tls-") as directory:
        authority = CertificateAuthority(Path(directory))
        pair = authority.issue("standin", "descheduler-fleet-standin", server_names=(LOOPBACK,))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(pair.cert), str(pair.key))
        return ServerTLS(authority.pair.cert.read_bytes(), context)


class BackgroundServer:
    """`handler` served in a thread named `name`: `start()` (or `with`), `port`, `url`, `ca_pem` (TLS), `stop()`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str, *, tls: bool = False) -> None:
        self.tls = server_tls() if tls else None
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        if self.tls is not None:
            self._server.socket = self.tls.context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{LOOPBACK}:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        if self.tls is None:
            raise AttributeError("a plain HTTP server has no CA: create it with tls=True")
        return self.tls.ca_pem

    def start(self) -> BackgroundServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever, which never ran if never started
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
