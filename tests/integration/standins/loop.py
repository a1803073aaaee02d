"""The control loop every stand-in shares: `reconcile()` in a background thread, level-triggered.

A poll loop rather than a watch: each pass reads the objects it owns and moves them one step towards what the real
controller would make of them, so a missed event cannot lose work (the same reason client-go informers resync).
Errors are kept (`errors`) and retried on the next pass; tests call `check()` to surface them.

The next pass comes `interval` after one that wrote something (a change in progress goes on at once); after passes
that wrote nothing the wait doubles up to `idle_interval`. A pass costs a dozen requests: at five passes a second an
idle operator stand-in kept the API server, etcd and the test process 18 CPU-seconds a minute busy, and a fleet test
runs one per cluster for minutes, on a suite that is CPU-bound on two cores. A write from outside (a module's) is
seen within `idle_interval`.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from kubernetes.client.exceptions import ApiException

from .rest import Rest


class StandIn:
    """Subclasses implement `reconcile()`; `lock` serialises it with the test-facing controls."""

    name = "stand-in"
    interval = 0.2  # seconds after a pass that wrote something
    idle_interval = 1.0  # at most, after passes that wrote nothing

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.rest = Rest(api_client)
        self.lock = threading.RLock()
        self.errors: list[str] = []
        self.passes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def reconcile(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        """One pass now (tests use it to settle a state before asserting)."""
        with self.lock:
            self.reconcile()
            self.passes += 1

    def start(self) -> StandIn:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def check(self) -> None:
        """Fail with the stand-in's own errors, if it had any (a broken stand-in must not look like a product bug)."""
        if self.errors:
            raise AssertionError(f"{self.name} failed: " + "\n".join(self.errors[-3:]))

    def _run(self) -> None:
        wait = self.interval
        while not self._stop.wait(wait):
            writes = self.rest.writes
            wait = min(wait * 2, max(self.idle_interval, self.interval))
            try:
                self.sync()
            except ApiException as error:
                # a race with a deletion or a concurrent write, or a write into a namespace being deleted (as for a
                # real controller, the next pass sees the new state)
                if error.status not in (404, 409) and not _namespace_terminating(error):
                    self.errors.append(f"{error.status} {error.reason}: {error.body}")
            except Exception:  # noqa: BLE001 - kept for check(); the loop must survive to be stopped
                self.errors.append(traceback.format_exc())
            if self.rest.writes != writes:
                wait = self.interval


def _namespace_terminating(error: ApiException) -> bool:
    return error.status == 403 and "NamespaceTerminating" in str(error.body or "")
