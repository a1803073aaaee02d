"""One run at a time per cluster: a ``coordination.k8s.io/v1`` Lease, taken, renewed while the run goes on, released.

The rules are client-go's leader election (tools/leaderelection), kept small:

- free: no Lease, an empty ``holderIdentity``, or an expired one - ``renewTime + leaseDurationSeconds`` in the past
  (the control nodes' clocks must agree to within a few seconds; NTP does that) - or a holder that wrote it from
  this host with a pid that no longer runs (a killed run, seen at once instead of after the expiry);
- every write (take, renew, release) is an update carrying the ``resourceVersion`` that was read, so of two runs
  taking a free Lease at the same moment the API server lets exactly one through (the other gets 409 and reads
  again);
- the holder renews every ``duration / 4`` seconds; if no renewal succeeded for ``renew_deadline`` seconds (or
  someone else holds it now), the Lease is lost and the run is cancelled before it could overlap another holder;
- at the end the holder clears ``holderIdentity`` (client-go's ReleaseOnCancel), so the next run needs no waiting.

The holder's details (pid, host, start time, playbook, AWX job) are in the annotation ``descheduler.fleet/holder``.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError, ClusterError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    get_raw,
    post_raw,
    request_raw,
    resource_path,
)

API_VERSION = "coordination.k8s.io/v1"
HOLDER_ANNOTATION = "descheduler.fleet/holder"
DEFAULT_NAME = "descheduler-fleet-evict"
WAIT_SLICE = 1.0  # seconds between two attempts while waiting for the Lease
RETRY_SECONDS = 1.0  # after a failed renewal, try again this soon
MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"
CONFLICT = "another run wrote the Lease at the same moment"  # a 409: read it again at once to see who holds it
MAX_CONFLICTS = 5


class LeaseBusy(ClusterError):
    """The Lease is held by another live run; the message names it."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class LeaseSettings:
    namespace: str
    name: str = DEFAULT_NAME
    duration: int = 60
    renew_deadline: float = 40.0
    holder_kind: str = "evict run"  # who holds this Lease, in the message a second run gets
    rule: str = "only one run at a time may evict on this cluster"

    @property
    def renew_every(self) -> float:
        return max(1.0, self.duration / 4)


class ClusterLease:
    def __init__(self, api_client: Any, settings: LeaseSettings, identity: str, holder: dict, *,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.api_client = api_client
        self.settings = settings
        self.identity = identity
        self.holder = holder
        self.taken_over: Optional[dict] = None
        self.waited_seconds = 0.0
        self._now = now
        self._clock = clock
        self._lease: Optional[dict] = None
        self._renewer: Optional[threading.Thread] = None
        self._done = threading.Event()
        self.lost_reason: Optional[str] = None

    @property
    def path(self) -> str:
        return resource_path(API_VERSION, "leases", self.settings.namespace, self.settings.name)

    # ---- take -------------------------------------------------------------------------------------------------------

    def acquire(self, timeout: float = 0.0, cancelled: Callable[[], bool] = lambda: False) -> ClusterLease:
        started = self._clock()
        conflicts = 0
        while True:
            busy = self._try_acquire()
            if busy == CONFLICT and conflicts < MAX_CONFLICTS:
                conflicts += 1
                continue
            if busy is None:
                self.waited_seconds = self._clock() - started
                return self
            waited = self._clock() - started
            if waited >= timeout or cancelled():
                wait = (f"after waiting {waited:.0f}s (lock_timeout {timeout:g})" if timeout
                        else "(lock_timeout is 0: not waiting)")
                if cancelled():
                    wait = "and this run was cancelled while waiting"
                raise LeaseBusy(f"Lease {self.settings.namespace}/{self.settings.name} is held by another "
                                f"{self.settings.holder_kind} ({busy}) {wait}: {self.settings.rule}. Wait for it to "
                                "end, cancel it, or set lock_timeout to wait for it")
            self._done.wait(min(WAIT_SLICE, timeout - waited))

    def holder_now(self) -> Optional[str]:
        """Who holds the Lease now (a live holder other than this one), read only: None when it is free."""
        lease = get_raw(self.api_client, self.path, kind="Lease")
        return None if lease is None else self._holder_if_live(lease)

    def _try_acquire(self) -> Optional[str]:
        """None when taken; else who holds it (and until when)."""
        lease = get_raw(self.api_client, self.path, kind="Lease")
        if lease is None:
            return self._create()
        busy = self._holder_if_live(lease)
        if busy is not None:
            return busy
        previous = _holder_details(lease)
        if (lease.get("spec") or {}).get("holderIdentity"):
            self.taken_over = previous or {"identity": lease["spec"]["holderIdentity"]}
        return self._update(lease, taking=True)

    def _create(self) -> Optional[str]:
        body = {"apiVersion": API_VERSION, "kind": "Lease",
                "metadata": {"name": self.settings.name, "namespace": self.settings.namespace,
                             "annotations": {HOLDER_ANNOTATION: json.dumps(self.holder, sort_keys=True)}},
                "spec": self._spec(transitions=0, acquire=True)}
        try:
            self._lease = post_raw(self.api_client, resource_path(API_VERSION, "leases", self.settings.namespace),
                                   body, kind="Lease")
        except ClusterApiError as error:
            if error.status == 409:
                return CONFLICT
            raise
        return None

    def _update(self, lease: dict, *, taking: bool) -> Optional[str]:
        spec = lease.get("spec") or {}
        transitions = int(spec.get("leaseTransitions") or 0) + (1 if taking else 0)
        new_spec = self._spec(transitions, acquire=taking)
        if not taking:
            new_spec["acquireTime"] = spec.get("acquireTime")
        metadata = dict(lease.get("metadata") or {})
        metadata["annotations"] = {**(metadata.get("annotations") or {}),
                                   HOLDER_ANNOTATION: json.dumps(self.holder, sort_keys=True)}
        body = {"apiVersion": API_VERSION, "kind": "Lease", "metadata": metadata, "spec": new_spec}
        try:
            self._lease = request_raw(self.api_client, "PUT", self.path, body=body, kind="Lease")
        except ClusterApiError as error:
            if error.status == 409:  # someone wrote it since we read it: read again
                return CONFLICT
            raise
        return None

    def _spec(self, transitions: int, acquire: bool) -> dict:
        now = self._now().strftime(MICRO_TIME)
        spec: dict[str, Any] = {"holderIdentity": self.identity, "leaseDurationSeconds": self.settings.duration,
                                "renewTime": now, "leaseTransitions": transitions}
        if acquire:
            spec["acquireTime"] = now
        return spec

    def _holder_if_live(self, lease: dict) -> Optional[str]:
        spec = lease.get("spec") or {}
        identity = spec.get("holderIdentity")
        if not identity or identity == self.identity:
            return None
        expires = _expiry(spec)
        if expires is None or expires <= self._now():
            return None
        details = _holder_details(lease) or {}
        if details.get("host") == socket.gethostname() and isinstance(details.get("pid"), int) \
                and not _pid_alive(details["pid"]):
            return None  # its process is gone: no need to wait for the expiry
        who = _describe(identity, details)
        until = expires.strftime("%Y-%m-%dT%H:%M:%SZ")
        return (f"{who}; held since {spec.get('acquireTime')}, renewed {spec.get('renewTime')}, expires {until} "
                "unless renewed")

    # ---- keep -------------------------------------------------------------------------------------------------------

    def start_renewing(self, on_lost: Callable[[str], None]) -> None:
        self._renewer = threading.Thread(target=self._renew_loop, args=(on_lost,), name=f"lease-{self.settings.name}",
                                         daemon=True)
        self._renewer.start()

    def _renew_loop(self, on_lost: Callable[[str], None]) -> None:
        last_renewed = self._clock()
        delay = self.settings.renew_every
        while not self._done.wait(delay):
            problem = self._renew()
            if problem is None:
                last_renewed, delay = self._clock(), self.settings.renew_every
                continue
            delay = RETRY_SECONDS
            if problem.startswith("held by") or self._clock() - last_renewed >= self.settings.renew_deadline:
                self.lost_reason = f"lost the Lease {self.settings.namespace}/{self.settings.name}: {problem}"
                on_lost(self.lost_reason)
                return

    def _renew(self) -> Optional[str]:
        try:
            lease = get_raw(self.api_client, self.path, kind="Lease")
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                holder = (lease or {}).get("spec", {}).get("holderIdentity") if lease else None
                return f"held by {holder or 'nobody (it was deleted)'} now"
            return self._update(lease, taking=False)
        except ClusterError as error:
            return f"renewal failed: {error}"

    # ---- release ----------------------------------------------------------------------------------------------------

    def release(self) -> None:
        """Stop renewing; clear the holder if it is still us (a failure here only means the next run waits for the
        expiry)."""
        self._done.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        try:
            lease = get_raw(self.api_client, self.path, kind="Lease")
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = dict(lease.get("spec") or {})
            spec.update({"holderIdentity": None, "leaseDurationSeconds": 1,
                         "renewTime": self._now().strftime(MICRO_TIME)})
            request_raw(self.api_client, "PUT", self.path, body={**lease, "spec": spec}, kind="Lease")
        except ClusterError:
            pass

    def as_dict(self) -> dict:
        return {"namespace": self.settings.namespace, "name": self.settings.name, "identity": self.identity,
                "duration": self.settings.duration, "renew_deadline": self.settings.renew_deadline,
                "waited_seconds": round(self.waited_seconds, 3), "taken_over_from": self.taken_over,
                "lost": self.lost_reason}


def identity_of(holder: dict, run_id: str) -> str:
    return f"{holder.get('host')}/pid-{holder.get('pid')}/{run_id}"


def _expiry(spec: dict) -> Optional[datetime]:
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    if not renewed:
        return None
    try:  # a MicroTime: its fraction counts (cut off, a Lease would look expired up to a second early)
        moment = datetime.fromisoformat(renewed.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment + timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))


def _holder_details(lease: dict) -> Optional[dict]:
    text = ((lease.get("metadata") or {}).get("annotations") or {}).get(HOLDER_ANNOTATION)
    try:
        details = json.loads(text) if text else None
    except ValueError:
        return None
    return details if isinstance(details, dict) else None


def _describe(identity: str, details: dict) -> str:
    text = identity
    if details.get("pid"):
        text += f": pid {details['pid']} on {details.get('host')}, started {details.get('started')}"
    if details.get("playbook"):
        text += f", {details['playbook']}"
    if details.get("job"):
        text += f", AWX job {details['job']}"
    return text


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it runs
    return True
