"""A stand-in Prometheus HTTP API: ``/api/v1/query`` answers instant queries from a table, like Prometheus, sent
as a form ``POST`` (what Prometheus' Go client sends first) or a ``GET``; ``refuse_post=405`` (or 501) answers
POST with that status, as a read-only proxy in front of Prometheus does.

Answers are ``{status: success, data: {resultType: vector, result: [...]}}`` evaluated at the request's ``time``:
a table entry ``{instance: value}`` gives one sample per instance (label ``instance``), a list of ``(labels, value)``
gives those samples in that order with exactly those labels (a pod query's series as cAdvisor's relabelled
metrics carry them, with or without ``instance``). An unknown query gets an empty vector, a request without the
expected bearer token a 401 as the OpenShift monitoring route's oauth proxy gives. Requests are recorded
(``method``, ``path``, the parameters as ``query`` whether they came in the URL or the form, ``authorization``).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .httpserver import BackgroundServer


class PrometheusStandIn:
    def __init__(self, answers: dict[str, dict[str, Any]], token: str | None = None,
                 refuse_post: int | None = None) -> None:
        # query → {instance: value} or [(labels, value), ...]; a value is a float or the raw string sent
        self.answers = answers
        self.token = token
        self.refuse_post = refuse_post
        self.requests: list[dict[str, Any]] = []
        self._server = BackgroundServer(self._handler(), "prometheus-standin")

    @property
    def url(self) -> str:
        return self._server.url

    def start(self) -> PrometheusStandIn:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> PrometheusStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                parts = urlsplit(self.path)
                self._serve("GET", parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()})

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                form = self.rfile.read(length).decode() if length else ""
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
                    params.update({k: v[0] for k, v in parse_qs(form).items()})
                self._serve("POST", parts.path, params)

            def _serve(self, method: str, path: str, query: dict[str, str]) -> None:
                standin.requests.append({"method": method, "path": path, "query": query,
                                         "authorization": self.headers.get("Authorization")})
                if method == "POST" and standin.refuse_post:
                    self._send(standin.refuse_post, {"error": "POST is not allowed here"})
                    return
                if standin.token and self.headers.get("Authorization") != f"Bearer {standin.token}":
                    self._send(401, {"error": "Unauthorized"})
                    return
                if path != "/api/v1/query" or "query" not in query:
                    self._send(400, {"status": "error", "errorType": "bad_data", "error": "missing query"})
                    return
                at = float(query.get("time") or 0)
                samples = standin.answers.get(query["query"], {})
                series = [({"instance": node}, value) for node, value in samples.items()] \
                    if isinstance(samples, dict) else list(samples)
                result = [{"metric": dict(labels), "value": [at, str(value)]} for labels, value in series]
                self._send(200, {"status": "success", "data": {"resultType": "vector", "result": result}})

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
