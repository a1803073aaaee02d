"""How a streamed list's bytes become objects, whatever pieces the connection delivers them in (the real server's
stream is tested in tests/integration/test_listing.py)."""

from __future__ import annotations

import json

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    INITIAL_EVENTS_END,
    STREAM_READ_BYTES,
    _initial_events,
    _watch_events,
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
