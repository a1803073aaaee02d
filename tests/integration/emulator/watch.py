"""A minimal watch: `?watch=true` streams `{"type": ..., "object": ...}` lines.

Without `resourceVersion` (or with "0") the stream starts with ADDED events for the current objects; with a
resourceVersion it replays the recent events after it (a bounded history), or sends a 410 ERROR event when that
version is older than the history. The stream ends at `timeoutSeconds` (default 300) or when the emulator stops.
Objects that stop matching a selector are not turned into DELETED events (the real cacher does that).
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .store import GroupResource

_CLOSED = object()
Event = tuple[int, str, GroupResource, dict[str, Any]]  # (resourceVersion, type, table, object)


@dataclass
class Watcher:
    group_resource: GroupResource
    namespace: str | None
    predicate: Callable[[dict[str, Any]], bool] | None
    events: queue.Queue[Any]

    def wants(self, group_resource: GroupResource, obj: dict[str, Any]) -> bool:
        if group_resource != self.group_resource:
            return False
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.predicate is None or self.predicate(obj)


class WatchHub:
    def __init__(self, history: int = 5000) -> None:
        self._lock = threading.Lock()
        self._watchers: list[Watcher] = []
        self._history: deque[Event] = deque(maxlen=history)
        self._closed = False

    def publish(self, event_type: str, group_resource: GroupResource, obj: dict[str, Any]) -> None:
        """Called under the store lock for every write, in resourceVersion order."""
        event = (int(obj["metadata"].get("resourceVersion") or 0), event_type, group_resource, obj)
        with self._lock:
            self._history.append(event)
            watchers = list(self._watchers)
        for watcher in watchers:
            if watcher.wants(group_resource, obj):
                watcher.events.put(event)

    def subscribe(self, watcher: Watcher, since: int | None) -> tuple[list[Event], bool]:
        """Register `watcher`; returns the history after `since` to replay, and False when it is too old."""
        with self._lock:
            self._watchers.append(watcher)
            if since is None:
                return [], True
            oldest = self._history[0][0] if self._history else None
            if oldest is not None and since < oldest - 1:
                return [], False
            replay = [e for e in self._history if e[0] > since and watcher.wants(e[2], e[3])]
            return replay, True

    def unsubscribe(self, watcher: Watcher) -> None:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.events.put(_CLOSED)

    def stream(self, watcher: Watcher, initial: list[dict[str, Any]], timeout: float,
               present: Callable[[dict[str, Any]], dict[str, Any]]) -> Iterator[bytes]:
        """The response body: initial events, then live ones until the timeout."""
        deadline = time.monotonic() + timeout
        try:
            for item in initial:
                yield encode_event(item["type"], item["object"])
            while not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                try:
                    event = watcher.events.get(timeout=min(remaining, 0.5))
                except queue.Empty:
                    continue
                if event is _CLOSED:
                    return
                yield encode_event(event[1], present(event[3]))
        finally:
            self.unsubscribe(watcher)


def encode_event(event_type: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"
