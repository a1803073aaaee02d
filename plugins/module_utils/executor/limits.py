"""Limits and pacing: who may start an eviction now, who must wait, and who will never get a turn.

Run-wide caps (per node, per namespace, per owner, total) count evictions that happened (``committed``), as the
descheduler's ``maxNoOfPodsToEvict*`` do: a pod refused by its PDB does not use up a node's quota. While a pod is being
tried it holds a reservation, so ``committed + reserved`` never exceeds a cap and a cap can never be overshot by
concurrent workers. Concurrency caps (in flight, KubeVirt migrations per cluster and per source node) count pods
between their first request and their end (evicted and replaced, migrated, or given up).

Everything is guarded by one condition variable; waiting threads wake on every release.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorOptions

WAIT_SLICE = 0.5  # seconds between re-checks of a stop request while waiting


@dataclass(frozen=True)
class SlotRequest:
    node: Optional[str]
    namespace: str
    owner: Optional[str]  # "namespace/Kind/name"
    migration: bool = False


@dataclass
class Slot:
    request: SlotRequest
    committed: bool = False
    released: bool = False


@dataclass
class Admission:
    """The gate's answer: a slot, a reason never to try (a cap is used up), or "the workload is busy, look again"."""

    slot: Optional[Slot] = None
    skip_reason: Optional[str] = None
    owner_busy: bool = False


@dataclass
class GateStats:
    max_in_flight_seen: int = 0
    max_migrations_seen: int = 0
    limits_hit: dict = field(default_factory=dict)  # dimension -> sorted keys whose cap was reached


class Gate:
    def __init__(self, options: ExecutorOptions, clock: Callable[[], float] = time.monotonic) -> None:
        self.options = options
        self._clock = clock
        self._condition = threading.Condition()
        self._committed: dict[str, Counter] = {dim: Counter() for dim in ("node", "namespace", "owner", "total")}
        self._reserved: dict[str, Counter] = {dim: Counter() for dim in ("node", "namespace", "owner", "total")}
        self._owner_in_flight: Counter = Counter()
        self._migrations_by_node: Counter = Counter()
        self._migrations = 0
        self._in_flight = 0
        self._next_start = 0.0  # when the next eviction request may go (``pause`` after the last one's answer)
        self._request_unanswered = False  # with a pause, one request at a time: the next waits for this one's answer
        self.stats = GateStats()

    # ---- caps -------------------------------------------------------------------------------------------------------

    def _caps(self) -> dict[str, Optional[int]]:
        return {"node": self.options.max_per_node, "namespace": self.options.max_per_namespace,
                "owner": self.options.max_per_owner, "total": self.options.max_total}

    @staticmethod
    def _keys(request: SlotRequest) -> dict[str, Optional[str]]:
        return {"node": request.node, "namespace": request.namespace, "owner": request.owner, "total": "*"}

    def _used_up(self, request: SlotRequest) -> Optional[str]:
        """The first cap this pod's eviction would pass (the widest first), recording every cap reached."""
        reasons = []
        for dimension in ("total", "namespace", "owner", "node"):
            key, cap = self._keys(request)[dimension], self._caps()[dimension]
            if cap is not None and key is not None and self._committed[dimension][key] >= cap:
                self.stats.limits_hit.setdefault(dimension, set()).add(key)
                option = "max_total" if dimension == "total" else f"max_per_{dimension}"
                where = "" if dimension == "total" else f" for {dimension} {key}"
                reasons.append(f"limit reached: {option} ({cap}){where}")
        return reasons[0] if reasons else None

    def _busy(self, request: SlotRequest) -> bool:
        for dimension, key in self._keys(request).items():
            cap = self._caps()[dimension]
            if cap is not None and key is not None and \
                    self._committed[dimension][key] + self._reserved[dimension][key] >= cap:
                return True
        if self._in_flight >= self.options.max_in_flight:
            return True
        if request.migration:
            kubevirt = self.options.kubevirt
            if self._migrations >= kubevirt.max_migrations_per_cluster:
                return True
            if self._migrations_by_node[request.node] >= kubevirt.max_migrations_per_node:
                return True
        return False

    # ---- slots ------------------------------------------------------------------------------------------------------

    def acquire(self, request: SlotRequest, stop: threading.Event, owner_unavailable: Optional[int] = None,
                owner_allowance: Optional[int] = None) -> Admission:
        """Wait for a slot. ``owner_unavailable``/``owner_allowance``: the workload's currently unavailable replicas
        and how many may be; when one more would be too many, answer ``owner_busy`` at once (the caller re-reads
        the workload and asks again) rather than hold up the other pods."""
        with self._condition:
            while True:
                if stop.is_set():
                    return Admission(skip_reason="not started: the run was stopped")
                used_up = self._used_up(request)
                if used_up:
                    return Admission(skip_reason=used_up)
                if owner_allowance is not None and request.owner is not None:
                    unavailable = max(owner_unavailable or 0, self._owner_in_flight[request.owner])
                    if unavailable + 1 > owner_allowance:
                        return Admission(owner_busy=True)
                if self._busy(request):
                    self._condition.wait(WAIT_SLICE)
                    continue
                return Admission(slot=self._reserve(request))

    def await_request_turn(self, stop: threading.Event) -> bool:
        """Space the eviction requests themselves by ``pause`` (not the slots: a worker reads the pod and its
        workload between its slot and its request, which would let two requests come closer). With a pause the
        turn lasts until ``request_answered()``, and the pause runs from that answer: the API server has received
        one request before the next is sent, so it sees them at least ``pause`` apart however the threads and the
        network are scheduled. False when the run was stopped while waiting."""
        with self._condition:
            while True:
                if stop.is_set():
                    return False
                pause_left = self._next_start - self._clock()
                if pause_left <= 0 and not self._request_unanswered:
                    break
                self._condition.wait(min(pause_left, WAIT_SLICE) if pause_left > 0 else WAIT_SLICE)
            self._request_unanswered = self._spaced()
            return True

    def request_answered(self) -> None:
        """The request of the current turn was answered (or failed): the next may go ``pause`` from now."""
        with self._condition:
            if self._request_unanswered:
                self._request_unanswered = False
                self._next_start = self._clock() + self.options.pause
                self._condition.notify_all()

    def _spaced(self) -> bool:
        # check mode disrupts nothing, so there is nothing to space out
        return self.options.pause > 0 and not self.options.check_mode

    def _reserve(self, request: SlotRequest) -> Slot:
        for dimension, key in self._keys(request).items():
            if key is not None:
                self._reserved[dimension][key] += 1
        self._in_flight += 1
        if request.owner is not None:
            self._owner_in_flight[request.owner] += 1
        if request.migration:
            self._migrations += 1
            self._migrations_by_node[request.node] += 1
        self.stats.max_in_flight_seen = max(self.stats.max_in_flight_seen, self._in_flight)
        self.stats.max_migrations_seen = max(self.stats.max_migrations_seen, self._migrations)
        return Slot(request)

    def commit(self, slot: Slot) -> None:
        """The eviction happened (or the migration started): it counts against the caps for the rest of the run."""
        with self._condition:
            if slot.committed or slot.released:
                return
            slot.committed = True
            for dimension, key in self._keys(slot.request).items():
                if key is not None:
                    self._reserved[dimension][key] -= 1
                    self._committed[dimension][key] += 1

    def release(self, slot: Slot) -> None:
        """The pod's turn is over: free its concurrency slot (and its reservation if it was never evicted)."""
        with self._condition:
            if slot.released:
                return
            slot.released = True
            if not slot.committed:
                for dimension, key in self._keys(slot.request).items():
                    if key is not None:
                        self._reserved[dimension][key] -= 1
            self._in_flight -= 1
            if slot.request.owner is not None:
                self._owner_in_flight[slot.request.owner] -= 1
            if slot.request.migration:
                self._migrations -= 1
                self._migrations_by_node[slot.request.node] -= 1
            self._condition.notify_all()

    def count_done(self, request: SlotRequest) -> None:
        """An eviction a previous run of the same journal already made: it uses up the caps like one of ours."""
        with self._condition:
            for dimension, key in self._keys(request).items():
                if key is not None:
                    self._committed[dimension][key] += 1

    def wake_all(self) -> None:
        with self._condition:
            self._condition.notify_all()

    def hits(self) -> dict:
        with self._condition:
            return {dimension: sorted(keys) for dimension, keys in self.stats.limits_hit.items()}
