"""Raw API access: objects stay the JSON dicts the server sent, never typed models.

Typed deserialization costs roughly 10x more CPU than ``json.loads`` at 100k objects (kubernetes-client/python
#1921), so lists are read with ``_preload_content=False`` and parsed here. Large lists are paged with
``limit``/``continue``; when the server forgets a continue token (410 Expired, after a few minutes) the list starts
again from the beginning, so the result is always one consistent list.

A list may instead be streamed (``watch_list``): one watch request with ``sendInitialEvents=true``, whose initial
events are the list, ended by a bookmark (what client-go's informers do since Kubernetes 1.35, "WatchList"). The
server streams from its watch cache without building pages, and the objects are parsed while it sends, with one
request per kind and no extra API server memory (benchmarks/README.md, bench_live.py). The chunks of the stream
are decoded from the connection's bytes a block at a time (``dechunked``). A server that refuses it (before 1.27, or
WatchList off), a user allowed to list but not to watch, or a stream that ends before its bookmark, gets the
paged list instead.
"""

from __future__ import annotations

import json
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Iterator, Optional, Sequence
from urllib.parse import quote

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import (
    ClusterApiError,
    ContinueExpiredError,
)

try:
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError as Urllib3Error
except ImportError:  # the client factory reports the missing library; these are only used to classify errors
    _API_EXCEPTIONS: tuple[type[BaseException], ...] = ()
    _TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError,)
else:
    _API_EXCEPTIONS = (ApiException,)
    _TRANSPORT_ERRORS = (Urllib3Error, OSError)

DEFAULT_PAGE_SIZE = 500  # kubectl's --chunk-size default
WATCH_LIST_SECONDS = 900  # the server ends a streamed list after this; an unfinished one is then paged instead
INITIAL_EVENTS_END = "k8s.io/initial-events-end"  # the annotation of the bookmark that ends a streamed list
# A streamed list is read at most this much at a time (one TLS record is at most 16 KiB; a larger read buffer is
# allocated, and given back, at every read) and its ADDED events parsed about this much at a time: large enough
# that one parse shares key strings across a dozen objects, small enough for the parser's key table to stay in
# cache (1 MiB batches parse 760 MB of pods in 6.0 s, 64 KiB ones in 4.7 s)
STREAM_READ_BYTES = 1 << 16
MAX_CHUNK_SIZE_LINE = 4096  # a chunk size and its extensions: longer is not HTTP chunked framing
_ADDED_EVENT = b'{"type":"ADDED"'
_ADDED_AFTER_LINE_END = b"\n" + _ADDED_EVENT
DEFAULT_TIMEOUT = (15, 300)  # seconds to connect, seconds to read one response: a stuck server must not hang a task
PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}

Slim = Callable[[dict], Any]  # what a listing keeps of each object as it is read
QueryParams = Sequence[tuple[str, Any]]


class _ContinueTokenExpired(Exception):
    """Internal: a continued page answered 410; the whole list must restart."""

    def __init__(self, error: ClusterApiError) -> None:
        super().__init__(str(error))
        self.error = error


# ---- paths ------------------------------------------------------------------------------------------------------


def resource_path(
    api_version: str,
    plural: str,
    namespace: Optional[str] = None,
    name: Optional[str] = None,
    subresource: Optional[str] = None,
) -> str:
    """``/api/v1/...`` for the core group, ``/apis/<group>/<version>/...`` otherwise."""
    if not api_version or not plural:
        raise ValueError("resource_path needs an api_version and a resource plural")
    if subresource and not name:
        raise ValueError(f"subresource {subresource!r} needs an object name")
    segments = ["/api/" + api_version if "/" not in api_version else "/apis/" + api_version]
    if namespace:
        segments += ["namespaces", quote(namespace, safe="")]
    segments.append(plural)
    if name:
        segments.append(quote(name, safe=""))
    if subresource:
        segments.append(subresource)
    return "/".join(segments)


# ---- lists ------------------------------------------------------------------------------------------------------


def list_raw(
    api_client: Any,
    path: str,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    label_selector: Optional[str] = None,
    field_selector: Optional[str] = None,
    max_restarts: int = 3,
    slim: Optional[Slim] = None,
    kind: Optional[str] = None,
    on_restart: Optional[Callable[[int, ClusterApiError], None]] = None,
    timeout: Any = DEFAULT_TIMEOUT,
    watch_list: bool = False,
    on_pages: Optional[Callable[[], None]] = None,
) -> tuple[list[dict], str]:
    """Every item of a list (apiVersion/kind filled in, ``slim`` applied as each is read) and the list's
    resourceVersion. A 410 on a continued page discards what was read and lists again, at most ``max_restarts``
    times; then ``ContinueExpiredError``. ``kind`` only improves error messages (e.g. the 404 of a missing CRD).
    ``watch_list`` streams the list first (see the module's docstring); whatever stops the stream, the paged list
    follows (``on_pages`` is called then), so its errors are those of a plain list."""
    if page_size < 0:
        raise ValueError(f"page_size must be 0 (no paging) or more, got {page_size}")
    if watch_list:
        streamed = _stream_list(api_client, path, label_selector, field_selector, slim, timeout)
        if streamed is not None:
            return streamed
        if on_pages is not None:
            on_pages()
    restarts = 0
    while True:
        try:
            return _list_once(api_client, path, page_size, label_selector, field_selector, slim, kind, timeout)
        except _ContinueTokenExpired as expired:
            if restarts >= max_restarts:
                raise ContinueExpiredError(path, restarts, expired.error) from expired.error
            restarts += 1
            if on_restart is not None:
                on_restart(restarts, expired.error)


def _list_once(
    api_client: Any,
    path: str,
    page_size: int,
    label_selector: Optional[str],
    field_selector: Optional[str],
    slim: Optional[Slim],
    kind: Optional[str],
    timeout: Any,
) -> tuple[list[dict], str]:
    items: list[dict] = []
    resource_version: Optional[str] = None
    token: Optional[str] = None
    while True:
        page = _read_page(api_client, path, _list_query(page_size, label_selector, field_selector, token), kind,
                          timeout, continued=token is not None)
        _collect_items(page, items, slim)
        metadata = page.get("metadata") or {}
        if resource_version is None:  # every page of one list reports the first page's snapshot
            resource_version = str(metadata.get("resourceVersion") or "")
        next_token = metadata.get("continue") or None
        if not next_token:
            return items, resource_version
        if next_token == token:
            raise ClusterApiError(500, "InvalidContinue", f"the server returned the same continue token twice for "
                                  f"{path}", kind, method="GET", path=path, host=_host(api_client))
        token = next_token


def _list_query(
    page_size: int, label_selector: Optional[str], field_selector: Optional[str], token: Optional[str]
) -> list[tuple[str, Any]]:
    query: list[tuple[str, Any]] = []
    if page_size:
        query.append(("limit", page_size))
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))
    if token:
        query.append(("continue", token))
    return query


def _read_page(api_client: Any, path: str, query: QueryParams, kind: Optional[str], timeout: Any,
               continued: bool) -> dict:
    try:
        page = request_raw(api_client, "GET", path, query=query, kind=kind, timeout=timeout)
    except ClusterApiError as error:
        if continued and error.is_expired:
            raise _ContinueTokenExpired(error) from error
        raise
    if not isinstance(page, dict) or not isinstance(page.get("items", []), list):
        raise ClusterApiError(500, "InvalidList", f"GET {path} did not return a list object", kind,
                              method="GET", path=path, host=_host(api_client))
    return page


def _collect_items(page: dict, items: list[dict], slim: Optional[Slim]) -> None:
    """Items of a list carry no apiVersion/kind: take them from the list (``PodList`` -> ``Pod``)."""
    api_version = page.get("apiVersion")
    list_kind = page.get("kind") or ""
    item_kind = list_kind[: -len("List")] if list_kind.endswith("List") and list_kind != "List" else None
    for item in page.get("items") or []:
        if api_version and "apiVersion" not in item:
            item["apiVersion"] = api_version
        if item_kind and "kind" not in item:
            item["kind"] = item_kind
        items.append(slim(item) if slim is not None else item)


def _stream_list(api_client: Any, path: str, label_selector: Optional[str], field_selector: Optional[str],
                 slim: Optional[Slim], timeout: Any) -> Optional[tuple[list[dict], str]]:
    """The items and resourceVersion of a list streamed as a watch's initial events; None when the server did not
    give the whole list that way (it refused, failed, or the stream ended or changed course before its bookmark)."""
    query = [("watch", "true"), ("sendInitialEvents", "true"), ("resourceVersionMatch", "NotOlderThan"),
             ("allowWatchBookmarks", "true"), ("timeoutSeconds", WATCH_LIST_SECONDS)]
    query += _list_query(0, label_selector, field_selector, None)
    try:
        status, _reason, response = _open(api_client, "GET", path, query, {"Accept": "application/json"}, None,
                                          timeout)
    except _API_EXCEPTIONS + _TRANSPORT_ERRORS:
        return None
    try:
        if not 200 <= status <= 299:
            return None
        return _initial_events(_watch_events(response), slim)
    except _TRANSPORT_ERRORS + (json.JSONDecodeError, UnicodeDecodeError):  # a dropped stream, a line not JSON
        return None
    finally:
        response.close()  # never back into the pool: the watch is still open


def _initial_events(events: Iterator[dict], slim: Optional[Slim]) -> Optional[tuple[list[dict], str]]:
    items: list[dict] = []
    for event in events:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ADDED":
            items.append(slim(obj) if slim is not None else obj)
        elif kind == "BOOKMARK":
            metadata = obj.get("metadata") or {}
            if (metadata.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
                return items, str(metadata.get("resourceVersion") or "")
        else:  # ERROR (410 Expired, ...) or a change before the list ended: not a list
            return None
    return None


def _watch_events(response: Any) -> Iterator[dict]:
    """A watch's events (one JSON object per line) as they arrive. ADDED events are parsed a batch at a time, as
    one JSON array: the parser then shares the key strings of a batch's objects (one per object would cost 150 MiB
    more at 50k pods); a batch holding any other event (the bookmark that ends the list) is parsed at once."""
    ready: list[bytes] = []  # complete lines, each piece ending with a newline
    size = 0
    pending = b""  # the start of a line still arriving
    for block in _arriving_blocks(response):
        cut = block.rfind(b"\n") + 1
        if not cut:
            pending += block
            continue
        ready.append(pending + block[:cut] if pending else block[:cut])
        pending = block[cut:]
        size += cut
        if size >= STREAM_READ_BYTES or not _all_added(ready[-1]):
            yield from _parsed_lines(ready)
            ready, size = [], 0
    if pending.strip():
        ready.append(pending + b"\n")
    yield from _parsed_lines(ready)


def _all_added(lines: bytes) -> bool:
    """Whether every line of ``lines`` (complete lines) is an ADDED event: as many line ends as such starts."""
    return lines.count(b"\n") == lines.startswith(_ADDED_EVENT) + lines.count(_ADDED_AFTER_LINE_END)


def _parsed_lines(pieces: list[bytes]) -> list[dict]:
    """The JSON objects of pieces of complete lines (each piece ends with a newline), parsed as one array: the
    newlines become the array's commas in one copy, the last one its closing bracket."""
    text = bytearray(b"[")
    for piece in pieces:
        text += piece
    if len(text) == 1:
        return []
    text = text.replace(b"\n", b",")
    text[-1] = ord("]")
    return json.loads(text)  # a blank line (no server sends one) is not JSON: the list is then read in pages


def _arriving_blocks(response: Any) -> Iterator[bytes]:
    """What the server has sent so far, without waiting for a fixed amount (a watch never fills a buffer). A
    chunked response is read from its connection directly where the client allows it: http.client hands on one
    chunk a call, and the server flushes each event as a chunk of its own (150k pods: 320,000 calls)."""
    read_raw = _raw_chunked_reader(response)
    if read_raw is not None:
        yield from dechunked(read_raw)
        return
    read1 = getattr(response, "read1", None)  # urllib3 >= 2
    if read1 is None:
        yield from response.stream(STREAM_READ_BYTES)  # urllib3 1.26 yields each chunk as it arrives
        return
    while True:
        chunk = read1(STREAM_READ_BYTES)
        if not chunk:
            return
        yield chunk


def _raw_chunked_reader(response: Any) -> Optional[Callable[[int], bytes]]:
    """``read1`` of the connection under a chunked, uncompressed response nothing has been read from yet (urllib3
    keeps http.client's response as ``_fp``, whose ``fp`` is the connection's buffered reader); None otherwise."""
    http_response = getattr(response, "_fp", None)
    if http_response is None or getattr(http_response, "chunked", False) is not True:
        return None
    if getattr(http_response, "chunk_left", 0) is not None:  # http.client already read into the body
        return None
    encoding = str((getattr(response, "headers", None) or {}).get("content-encoding") or "identity").lower()
    if encoding != "identity":
        return None
    read1 = getattr(getattr(http_response, "fp", None), "read1", None)
    return read1 if callable(read1) else None


def dechunked(read1: Callable[[int], bytes]) -> Iterator[bytes]:
    """The body of a chunked HTTP/1.1 response (RFC 9112 7.1) from its raw bytes, one block per read: each read
    returns what arrived, so nothing is waited for that the server has not sent. Stops at the last (empty) chunk;
    trailers are not read (the response is closed after a stream). A malformed chunk size is a ConnectionError."""
    buffer = b""
    data_left = 0  # bytes of the current chunk's data still to come
    skip = 0  # bytes of the CRLF after a chunk's data still to skip
    while True:
        block = read1(STREAM_READ_BYTES)
        if not block:
            return
        buffer = buffer + block if buffer else block
        pieces: list[bytes] = []
        pos, end = 0, len(buffer)
        while pos < end:
            if data_left:
                take = min(data_left, end - pos)
                pieces.append(buffer[pos:pos + take])
                pos += take
                data_left -= take
                if not data_left:
                    skip = 2
            elif skip:
                step = min(skip, end - pos)
                pos += step
                skip -= step
            else:
                eol = buffer.find(b"\r\n", pos)
                if eol < 0:
                    if end - pos > MAX_CHUNK_SIZE_LINE:
                        raise ConnectionError(f"malformed chunked response: no chunk size in {buffer[pos:pos + 40]!r}")
                    break
                data_left = _chunk_size(buffer[pos:eol])
                pos = eol + 2
                if not data_left:
                    if pieces:
                        yield b"".join(pieces)
                    return
        buffer = buffer[pos:]
        if pieces:
            yield pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _chunk_size(line: bytes) -> int:
    digits = line.split(b";", 1)[0].strip()
    try:
        size = int(digits, 16)
    except ValueError:
        size = -1
    if size < 0 or not digits:
        raise ConnectionError(f"malformed chunked response: chunk size line {line[:40]!r}")
    return size


# ---- single objects ---------------------------------------------------------------------------------------------


def get_raw(api_client: Any, path: str, *, kind: Optional[str] = None,
            timeout: Any = DEFAULT_TIMEOUT) -> Optional[dict]:
    """The object at ``path``, or None when it does not exist (404)."""
    try:
        return request_raw(api_client, "GET", path, kind=kind, timeout=timeout)
    except ClusterApiError as error:
        if error.is_not_found:
            return None
        raise


def post_raw(api_client: Any, path: str, body: Any, *, query: QueryParams = (), kind: Optional[str] = None,
             timeout: Any = DEFAULT_TIMEOUT) -> Any:
    return request_raw(api_client, "POST", path, body=body, query=query, kind=kind, timeout=timeout)


def patch_raw(api_client: Any, path: str, body: Any, *, patch_type: str = "merge", query: QueryParams = (),
              kind: Optional[str] = None, timeout: Any = DEFAULT_TIMEOUT) -> Any:
    """``patch_type``: merge (RFC 7386), strategic (built-in kinds only) or json (RFC 6902, body is a list)."""
    if patch_type not in PATCH_CONTENT_TYPES:
        raise ValueError(f"patch_type must be one of {', '.join(PATCH_CONTENT_TYPES)}, got {patch_type!r}")
    return request_raw(api_client, "PATCH", path, body=body, query=query, kind=kind, timeout=timeout,
                       content_type=PATCH_CONTENT_TYPES[patch_type])


def delete_raw(api_client: Any, path: str, *, body: Any = None, query: QueryParams = (), kind: Optional[str] = None,
               timeout: Any = DEFAULT_TIMEOUT) -> Any:
    """``body`` is an optional DeleteOptions dict (gracePeriodSeconds, preconditions...)."""
    return request_raw(api_client, "DELETE", path, body=body, query=query, kind=kind, timeout=timeout)


# ---- transport --------------------------------------------------------------------------------------------------


def request_raw(
    api_client: Any,
    method: str,
    path: str,
    *,
    query: QueryParams = (),
    body: Any = None,
    content_type: Optional[str] = None,
    kind: Optional[str] = None,
    timeout: Any = DEFAULT_TIMEOUT,
) -> Any:
    """One API call; returns the parsed JSON body (None if empty). Raises ``ClusterApiError`` for a non-2xx answer
    and for a server that cannot be reached (status 0)."""
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = content_type or "application/json"
    data, context = _exchange(api_client, method, path, query, headers, body, kind, timeout)
    return _parse_json(data, method, path, context)


def get_text(api_client: Any, path: str, *, query: QueryParams = (), kind: Optional[str] = None,
             timeout: Any = DEFAULT_TIMEOUT) -> str:
    """A GET whose answer is plain text (pod logs); raises ``ClusterApiError`` like ``request_raw``."""
    data, _context = _exchange(api_client, "GET", path, query, {"Accept": "text/plain, */*"}, None, kind, timeout)
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data or "")


def server_clock(api_client: Any, path: str = "/version", timeout: Any = DEFAULT_TIMEOUT) -> Optional[float]:
    """The API server's clock, from the Date header of one GET (whole seconds); None when it sends none. Every
    answer carries it, a 401 or 403 too, so no right is needed. Raises ``ClusterApiError`` when the server cannot be
    reached."""
    context = {"method": "GET", "path": path, "host": _host(api_client)}
    try:
        _status, _reason, response = _open(api_client, "GET", path, [], {"Accept": "application/json"}, None, timeout)
        response.read()  # read the body, so the connection goes back to the pool
        headers = getattr(response, "headers", None)
    except _API_EXCEPTIONS as exc:  # older clients raise on an HTTP error; its answer still has the Date
        headers = getattr(exc, "headers", None)
        if getattr(exc, "status", 0) == 0:
            raise ClusterApiError.from_api_exception(exc, **context) from exc
    except _TRANSPORT_ERRORS as exc:
        raise ClusterApiError.from_connection_error(exc, **context) from exc
    date = (headers or {}).get("Date")
    try:
        return parsedate_to_datetime(date).timestamp() if date else None
    except (TypeError, ValueError):
        return None


def _exchange(api_client: Any, method: str, path: str, query: QueryParams, headers: dict, body: Any,
              kind: Optional[str], timeout: Any) -> tuple[Any, dict]:
    """Send one request with whichever client generation is installed; returns the answer's raw body and the call's
    context (method, path, host). Raises ``ClusterApiError`` for a non-2xx answer and for a server that cannot be
    reached (status 0)."""
    context = {"method": method, "path": path, "host": _host(api_client)}
    try:
        status, reason, data = _send(api_client, method, path, list(query), headers, body, timeout)
    except _API_EXCEPTIONS as exc:
        raise ClusterApiError.from_api_exception(exc, kind=kind, **context) from exc
    except _TRANSPORT_ERRORS as exc:
        raise ClusterApiError.from_connection_error(exc, **context) from exc
    if not 200 <= status <= 299:
        raise ClusterApiError.from_response(status, reason, data, kind=kind, **context)
    return data, context


def _send(api_client: Any, method: str, path: str, query: list, headers: dict, body: Any, timeout: Any) -> tuple:
    status, reason, response = _open(api_client, method, path, query, headers, body, timeout)
    return status, reason, response.data


def _open(api_client: Any, method: str, path: str, query: list, headers: dict, body: Any,
          timeout: Any) -> tuple[int, str, Any]:
    """Status, reason and the unread urllib3 response of one request, with whichever client generation is
    installed. kubernetes >= 35 (OpenAPI Generator 'python' templates): serialize, then ``call_api`` returns the
    response unread and does not raise on HTTP errors. Older clients: ``call_api(path, method, ...)`` raises
    ApiException on HTTP errors and, with ``_preload_content=False``, returns the urllib3 response."""
    if hasattr(api_client, "param_serialize"):
        method, url, header_params, body, post_params = api_client.param_serialize(
            method=method, resource_path=path, query_params=query, header_params=headers, body=body,
            auth_settings=["BearerToken"],
        )
        response = api_client.call_api(method, url, header_params=header_params, body=body,
                                       post_params=post_params, _request_timeout=timeout)
        return response.status, response.reason, response.response
    response = api_client.call_api(
        path, method, query_params=query, header_params=headers, body=body, auth_settings=["BearerToken"],
        _preload_content=False, _return_http_data_only=True, _request_timeout=timeout,
    )
    return response.status, response.reason, response


def _parse_json(data: Any, method: str, path: str, context: dict) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ClusterApiError(500, "InvalidJSON", f"{method} {path} returned a body that is not JSON: {exc}",
                              **context) from exc


def _host(api_client: Any) -> Optional[str]:
    configuration = getattr(api_client, "configuration", None)
    return getattr(configuration, "host", None)
