"""One execution of a list of targets: workers in a thread pool (one per pod in flight), the shared gate, the journal,
the failure budget, and the result."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import Cancellation
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.journal import Journal
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.kubevirt import ClusterKubeVirt
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.limits import Gate, SlotRequest
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorOptions
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.replacements import ReplacementTracker
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.result import (
    DISRUPTED,
    WOULD_EVICT,
    WOULD_MIGRATE,
    PodResult,
    summarise,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import Target
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.worker import PodWorker, RunContext


class FailureBudget:
    """Counts failed pods; past the budget, or at once when the API server cannot be reached, stops the run (pods
    not yet started are skipped, pods already evicted are still followed to their end)."""

    def __init__(self, budget: int, stop: threading.Event, gate: Gate) -> None:
        self.budget = budget
        self.failures = 0
        self.exceeded = False
        self.unreachable: Optional[str] = None  # the first "cannot reach" error
        self._stop = stop
        self._gate = gate
        self._lock = threading.Lock()

    def record_failure(self) -> None:
        with self._lock:
            self.failures += 1
            if self.failures > self.budget and not self.exceeded:
                self.exceeded = True
                self._stop_run()

    def record_unreachable(self, message: str) -> None:
        with self._lock:
            if self.unreachable is None:
                self.unreachable = message
                self._stop_run()

    def _stop_run(self) -> None:
        self._stop.set()
        self._gate.wake_all()


def execute(api_client: Any, targets: list[Target], options: ExecutorOptions, *,
            cancellation: Optional[Cancellation] = None, clock: Callable[[], float] = time.monotonic,
            sleep: Callable[[float], None] = time.sleep, cluster: Optional[dict] = None) -> dict:
    """Evict (or, in check mode, dry-run) every target within the limits; returns the structured result.
    ``cluster`` (the identity the caller checked) is recorded in the journal's ``run_started``.

    Once ``cancellation`` is set, no eviction starts: pods not started are skipped (``cancelled``), requests under
    way get their answer, waits for replacements and migrations are abandoned, and the journal is closed."""
    started_at, started = _utc_now(), clock()
    cancellation = cancellation or Cancellation()
    journal = Journal(options.journal, read_only=options.check_mode)
    gate = Gate(options, clock)
    stop = threading.Event()
    budget = FailureBudget(options.failure_budget, stop, gate)
    cancellation.on_cancel(stop.set)  # only sets an event: this may run inside a signal handler
    context = RunContext(api_client=api_client, options=options, gate=gate, journal=journal,
                         tracker=ReplacementTracker(api_client, clock, sleep, cancelled=cancellation.is_set),
                         kubevirt=ClusterKubeVirt(api_client), stop=stop, clock=clock, sleep=sleep,
                         on_failure=budget.record_failure, on_unreachable=budget.record_unreachable,
                         cancellation=cancellation)
    _count_earlier_evictions(journal, targets, gate)
    journal.record("run_started", targets=len(targets), check_mode=options.check_mode, limits=options.limits(),
                   cluster=cluster)
    try:
        results = _run_workers(context, targets)
    finally:
        code, _message = _stop(options, budget, cancellation)
        journal.record("run_finished", stop_reason=code)
        journal.close()
    return _result(results, options, gate, journal, budget, cancellation, started_at, clock() - started)


def _run_workers(context: RunContext, targets: list[Target]) -> list[PodResult]:
    # check mode runs one pod at a time: nothing is held, and the order of the answers stays the plan's
    workers = 1 if context.options.check_mode else context.options.max_in_flight
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evict") as pool:
        futures = [pool.submit(PodWorker(context, target).run) for target in targets]
        return [future.result() for future in futures]


def _count_earlier_evictions(journal: Journal, targets: list[Target], gate: Gate) -> None:
    """A resumed run is the same run: what the journal shows as evicted uses up the caps."""
    for target in targets:
        history = journal.history.get(target.key)
        if history is not None and history.done:
            owner = target.owner or {}
            owner_key = f"{target.namespace}/{owner.get('kind')}/{owner.get('name')}" if owner.get("kind") else None
            gate.count_done(SlotRequest(history.node or target.node, target.namespace, owner_key))


def _stop(options: ExecutorOptions, budget: FailureBudget,
          cancellation: Cancellation) -> tuple[Optional[str], Optional[str]]:
    """Why the run stopped early (a stable code and a sentence), or (None, None)."""
    if cancellation.is_set():
        return cancellation.code, (f"{cancellation.reason}; no eviction was started after that, pods not started "
                                   "were skipped, and a rerun with the same journal resumes")
    if budget.unreachable is not None:
        return "unreachable", (f"the run stopped at its first connection failure: {budget.unreachable}; pods not "
                               "started were skipped, and a rerun with the same journal resumes")
    if budget.exceeded:
        return "failure_budget", (f"failure budget exceeded: {budget.failures} pod(s) failed, failure_budget is "
                                  f"{options.failure_budget}; pods not started were skipped")
    return None, None


def _result(results: list[PodResult], options: ExecutorOptions, gate: Gate, journal: Journal,
            budget: FailureBudget, cancellation: Cancellation, started_at: str, seconds: float) -> dict:
    summary = summarise(results)
    changed = any(r.changed for r in results) if not options.check_mode else any(
        r.status in (WOULD_EVICT, WOULD_MIGRATE) for r in results)
    stop_code, stop_message = _stop(options, budget, cancellation)
    summary["durations"]["run_seconds"] = round(seconds, 3)
    return {
        "changed": changed,
        "check_mode": options.check_mode,
        "started_at": started_at,
        "pods": [r.as_dict() for r in results],
        **summary,
        "evicted_now": sum(1 for r in results if r.changed and r.status in DISRUPTED),
        "limits": {**options.limits(), "hit": gate.hits(), "max_in_flight_seen": gate.stats.max_in_flight_seen,
                   "max_migrations_seen": gate.stats.max_migrations_seen},
        "failures": budget.failures,
        "stopped": stop_code is not None,
        "stop_reason": stop_code,
        "stop_message": stop_message,
        "journal": {"path": options.journal, "run_id": journal.run_id, "previous_runs": journal.previous_runs},
    }


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
