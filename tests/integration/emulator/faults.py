"""Fault injection, configured in-process by tests (`emulator.faults`).

    emulator.faults.fail(429, verb="create", path=r"/pods/[^/]+/eviction$", times=2, retry_after=1)
    emulator.faults.fail(503)                       # the next request of any kind
    emulator.faults.delay(0.2, verb="list")         # every list, until cleared
    emulator.faults.expire_continue_after(2)        # pages 1-2 are served, asking for page 3 answers 410 Expired
    emulator.faults.expire_next_continue()          # the next continue request answers 410 Expired
    emulator.faults.continue_ttl_seconds = 5        # continue tokens older than 5 s answer 410 Expired
    emulator.faults.clear()

`verb` is a Kubernetes verb when lower-case (get, list, watch, create, update, patch, delete, deletecollection)
or an HTTP method when upper-case (GET, POST, ...); `path` is a regex searched in the URL path (no query).
Faults are checked before authentication and routing, so they also apply to discovery requests.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

from .errors import ApiError, generic


@dataclass
class FaultRule:
    verb: str | None
    path: re.Pattern[str]
    error: ApiError | None = None  # None: a latency-only rule
    latency: float = 0.0
    times: int | None = 1  # None: forever
    hits: int = field(default=0)

    def matches(self, method: str, verb: str, path: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.verb is not None and self.verb not in (method, verb):
            return False
        return self.path.search(path) is not None


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._expire_next_continue = False
        self._expire_after_pages: int | None = None
        self.continue_ttl_seconds: float | None = None
        self.compacted_revision = 0  # continue tokens from lists at or below this resourceVersion are expired

    def fail(
        self,
        status: int | ApiError,
        verb: str | None = None,
        path: str = "",
        times: int | None = 1,
        message: str | None = None,
        retry_after: int = 0,
    ) -> FaultRule:
        """Answer matching requests with `status` (a code or an exact ApiError) `times` times (None: forever)."""
        error = status if isinstance(status, ApiError) else generic(status, message, retry_after)
        return self._add(FaultRule(verb, re.compile(path), error=error, times=times))

    def delay(self, seconds: float, verb: str | None = None, path: str = "", times: int | None = None) -> FaultRule:
        """Add `seconds` of latency to matching requests."""
        return self._add(FaultRule(verb, re.compile(path), latency=seconds, times=times))

    def expire_next_continue(self) -> None:
        with self._lock:
            self._expire_next_continue = True

    def expire_continue_after(self, pages: int) -> None:
        """Serve `pages` pages of the next chunked list, then answer its next continue request with 410 (once)."""
        with self._lock:
            self._expire_after_pages = pages

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
            self._expire_next_continue = False
            self._expire_after_pages = None
            self.continue_ttl_seconds = None
            self.compacted_revision = 0

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def apply(self, method: str, verb: str, path: str) -> None:
        """Sleep for matching latency rules, then raise the first matching error rule's ApiError."""
        if not self._rules:
            return
        with self._lock:
            delays = [rule for rule in self._rules if rule.error is None and rule.matches(method, verb, path)]
            failing = next((r for r in self._rules if r.error is not None and r.matches(method, verb, path)), None)
            for rule in delays + ([failing] if failing else []):
                rule.hits += 1
        pause = sum(rule.latency for rule in delays)
        if pause:
            time.sleep(pause)
        if failing is not None and failing.error is not None:
            raise failing.error

    def continue_expired(self, page: int, issued_at: float, list_revision: int) -> bool:
        """Whether a continue token for `page` + 1 (issued at `issued_at`, for a list at `list_revision`) expired."""
        with self._lock:
            if self._expire_next_continue:
                self._expire_next_continue = False
                return True
            if self._expire_after_pages is not None and page >= self._expire_after_pages:
                self._expire_after_pages = None
                return True
        if self.continue_ttl_seconds is not None and time.time() - issued_at > self.continue_ttl_seconds:
            return True
        return 0 <= list_revision <= self.compacted_revision

    def _add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule
