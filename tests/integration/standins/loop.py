"""The control loop every stand-in shares: `reconcile()` in a background thread, level-triggered.

A poll loop rather than a watch: each pass reads the objects it owns and moves them one step towards what the real
controller would make of them, so a missed event cannot lose work (the same reason client-go informers resync).
Errors are kept (`errors`) and retried on the next pass; tests call `check()` to surface them.

The next pass comes `interval` after one that wrote something (a change in progress goes on at once); after passes
that wrote nothing the wait doubles up to `idle_interval`. A change to one of the collections a stand-in names in
`watches` (its inputs: the custom resource a module writes, the pods it waits on) starts a pass at once, as an
informer's event handler queues a key, so such a stand-in can idle longer (`idle_interval` is then the resync).
Why: a pass costs a dozen requests (most of them reads that go to etcd); at five passes a second an idle operator
stand-in kept the API server, etcd and the test process 18 CPU-seconds a minute busy, and at one a second 4.8, with
a fleet test running one per cluster for minutes, on a suite that is CPU-bound on two cores.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from kubernetes.client.exceptions import ApiException

from .rest import Rest

WATCH_SECONDS = 60  # the server ends a watch after this; the watcher then watches again


class StandIn:
    """Subclasses implement `reconcile()`; `lock` serialises it with the test-facing controls."""

    name = "stand-in"
    interval = 0.2  # seconds after a pass that wrote something
    idle_interval = 1.0  # at most, after passes that wrote nothing
    watches: tuple[str, ...] = ()  # collection paths whose changes start a pass at once

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.rest = Rest(api_client)
        self.lock = threading.RLock()
        self.errors: list[str] = []
        self.passes = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
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
            self._stop = threading.Event()  # a watcher of an earlier start keeps its own, set, event
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
            for collection in self.watches:
                threading.Thread(target=self._watch, args=(collection, self._stop), name=f"{self.name} watch",
                                 daemon=True).start()
        return self

    def stop(self) -> None:
        """The loop ends now; a watcher at its next event or when the server ends its watch (WATCH_SECONDS)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def check(self) -> None:
        """Fail with the stand-in's own errors, if it had any (a broken stand-in must not look like a product bug)."""
        if self.errors:
            raise AssertionError(f"{self.name} failed: " + "\n".join(self.errors[-3:]))

    def _run(self) -> None:
        wait = self.interval
        while not self._stop.is_set():
            woken = self._wake.wait(wait)
            self._wake.clear()  # a change during the pass below sets it again
            if self._stop.is_set():
                return
            writes = self.rest.writes
            wait = self.interval if woken else min(wait * 2, max(self.idle_interval, self.interval))
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

    def _watch(self, collection: str, stop: threading.Event) -> None:
        """Wake the loop on each change of `collection` until `stop` is set. From the collection's current version
        on (a list of one item gives it), then from the last event's; listed again when the version expired (410)
        or the watch failed: a type not served yet (404), a server restarting."""
        version = None
        while not stop.is_set():
            try:
                if version is None:
                    version = self.rest.request("GET", collection, query=[("limit", 1)])["metadata"]["resourceVersion"]
                for event in self.rest.watch(collection, version, WATCH_SECONDS):
                    if stop.is_set():
                        return
                    if event.get("type") == "ERROR":
                        version = None
                        break
                    version = event["object"]["metadata"].get("resourceVersion") or version
                    self._wake.set()
            except Exception:  # noqa: BLE001 - see the docstring; the resync passes go on meanwhile
                version = None
                if stop.wait(self.idle_interval):
                    return


def _namespace_terminating(error: ApiException) -> bool:
    return error.status == 403 and "NamespaceTerminating" in str(error.body or "")
