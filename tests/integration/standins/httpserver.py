"""The small HTTP(S) server the stand-ins serve from, in a background thread on 127.0.0.1: the kubelet's container
logs, KubeVirt's admission webhook and Prometheus' query API. `server_tls` gives a server a CA of its own, for
the API server (webhooks) or a client that verifies it, or none at all (the API server does not verify kubelets
here)."""

from __future__ import annotations

import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LOOPBACK = "127.0.0.1"


class ServerTLS:
    """A CA and a certificate it signed for 127.0.0.1, kept in a temporary directory until `cleanup()`."""

    def __init__(self, name: str) -> None:
        from controlplane.certs import CertificateAuthority

        self._directory = tempfile.TemporaryDirectory(prefix=f"{name}-tls-")
        authority = CertificateAuthority(Path(self._directory.name))
        pair = authority.issue(name, name, server_names=(LOOPBACK,))
        self.ca_pem = authority.pair.cert.read_bytes()
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(pair.cert), str(pair.key))

    def cleanup(self) -> None:
        self._directory.cleanup()


class BackgroundServer:
    """`handler` served by a threading server (TLS when given) on a free port; `start()`, `port`, `stop()`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str, tls: ServerTLS | None = None) -> None:
        self.tls = tls
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        if tls is not None:
            self._server.socket = tls.context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self.tls is not None:
            self.tls.cleanup()
