"""How a streamed list's bytes become objects, whatever pieces the connection delivers them in (the real server's
stream is tested in tests/integration/test_listing.py)."""

from __future__ import annotations

import json

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    INITIAL_EVENTS_END,
    STREAM_READ_BYTES,
    _initial_events,
    _watch_events,
    dechunked,
)


class Arriving:
    """What urllib3's response offers a reader: read1 returns the next piece that arrived, b"" at the end."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)
        self.reads = 0

    def read1(self, _amount: int) -> bytes:
        self.reads += 1
        return self.pieces.pop(0) if self.pieces else b""


def added(name: str, padding: int = 0) -> bytes:
    metadata = {"name": name, "annotations": {"x": "y" * padding}}
    event = {"type": "ADDED", "object": {"kind": "Pod", "metadata": metadata}}
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def bookmark(resource_version: str = "42") -> bytes:
    event = {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {
        "resourceVersion": resource_version, "annotations": {INITIAL_EVENTS_END: "true"}}}}
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def test_events_split_anywhere_are_read_whole_and_in_order():
    stream = b"".join(added(f"p-{index}") for index in range(5)) + bookmark()
    for size in (1, 7, 64, len(stream)):
        pieces = [stream[start:start + size] for start in range(0, len(stream), size)]
        items, resource_version = _initial_events(_watch_events(Arriving(pieces)), None)
        assert [item["metadata"]["name"] for item in items] == [f"p-{index}" for index in range(5)]
        assert resource_version == "42"


def test_the_bookmark_ends_the_list_without_reading_further():
    """The server keeps the watch open after the bookmark: nothing after it may be waited for."""
    response = Arriving([added("a") + added("b"), bookmark(), added("later")])

    items, _resource_version = _initial_events(_watch_events(response), None)

    assert [item["metadata"]["name"] for item in items] == ["a", "b"]
    assert response.reads == 2


def test_large_batches_are_parsed_as_they_fill():
    big = added("big", padding=STREAM_READ_BYTES)
    response = Arriving([big, added("next"), b"", bookmark()])
    events = _watch_events(response)

    assert next(events)["object"]["metadata"]["name"] == "big"
    assert response.reads == 1  # handed on before the next read


def test_a_stream_that_ends_or_changes_course_is_not_a_list():
    assert _initial_events(_watch_events(Arriving([added("a")])), None) is None  # ended before the bookmark
    error = json.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410}}).encode() + b"\n"
    assert _initial_events(_watch_events(Arriving([added("a"), error])), None) is None
    modified = added("a").replace(b'"ADDED"', b'"MODIFIED"')
    assert _initial_events(_watch_events(Arriving([added("a"), modified, bookmark()])), None) is None


def test_a_bookmark_without_the_end_annotation_is_skipped():
    plain = json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "7"}}}).encode() + b"\n"

    items, resource_version = _initial_events(_watch_events(Arriving([added("a"), plain, bookmark("9")])), None)

    assert len(items) == 1 and resource_version == "9"


# ---- a chunked body read straight from the connection ----------------------------------------------------------


def chunked(*pieces: bytes, extension: bytes = b"") -> bytes:
    """HTTP/1.1 chunked framing of ``pieces``, then the last chunk and an empty trailer section."""
    framed = b"".join(b"%x%s\r\n%s\r\n" % (len(piece), extension, piece) for piece in pieces)
    return framed + b"0\r\n\r\n"


def test_a_chunked_body_split_anywhere_is_the_body_in_order():
    body_pieces = [added("a"), added("b") + added("c"), b"{\"type\":\"BOOK", b"MARK\"}\n"]
    wire = chunked(*body_pieces, extension=b";name=value")
    for size in (1, 2, 3, 5, 11, len(wire)):
        arriving = Arriving([wire[start:start + size] for start in range(0, len(wire), size)])
        assert b"".join(dechunked(arriving.read1)) == b"".join(body_pieces)


def test_the_last_chunk_ends_the_body_without_reading_further():
    arriving = Arriving([chunked(added("a")), b"never read"])
    assert list(dechunked(arriving.read1)) == [added("a")]
    assert arriving.reads == 1


def test_each_read_hands_on_what_arrived_without_waiting_for_more():
    wire = chunked(added("a"), added("b"))
    first_chunk_end = wire.index(added("a")) + len(added("a"))
    arriving = Arriving([wire[:first_chunk_end], wire[first_chunk_end:]])
    blocks = dechunked(arriving.read1)
    assert next(blocks) == added("a")
    assert arriving.reads == 1


@pytest.mark.parametrize("size_line", [b"zz", b"", b"-5"])
def test_a_malformed_chunk_size_is_a_connection_error(size_line):
    arriving = Arriving([size_line + b"\r\n" + added("a") + b"\r\n0\r\n\r\n"])
    with pytest.raises(ConnectionError, match="malformed chunked response"):
        list(dechunked(arriving.read1))


def test_a_body_without_chunk_framing_is_a_connection_error():
    arriving = Arriving([added("a") * 200])  # the bytes of a body sent without chunked framing
    with pytest.raises(ConnectionError, match="no chunk size"):
        list(dechunked(arriving.read1))
