"""Waiting for the cluster to reach a state: the one poll loop, and when an object of a kind counts as ready.

As kubernetes.core's waiter: one loop with a deadline on a monotonic clock (injectable, so tests need no real time),
and readiness predicates per kind in one place. A Deployment is rolled out by the rule ``kubectl rollout status``
applies (kubectl's DeploymentStatusViewer), and its ProgressDeadlineExceeded condition is a failure, not a reason to
wait longer. The caller builds the timeout error from the last observation, so that every such error names what was
awaited and what was last seen in the caller's own terms (and error class).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Generic, Optional, TypeVar

T = TypeVar("T")
Clock = Callable[[], float]
Sleeper = Callable[[float], None]


@dataclass(frozen=True)
class Waited(Generic[T]):
    """What the wait ended on: the last observation and the seconds it took."""

    value: T
    seconds: float


DONE, STOPPED, TIMED_OUT = "done", "stopped", "timed_out"


@dataclass(frozen=True)
class Polled(Generic[T]):
    """How a poll ended (``DONE``, ``STOPPED`` or ``TIMED_OUT``), on which observation, after how many seconds."""

    value: T
    seconds: float
    ended: str


@dataclass
class Waiter:
    """``timeout`` seconds in all for one wait, observing every ``interval`` seconds."""

    timeout: float
    interval: float
    clock: Clock = field(default=time.monotonic)
    sleep: Sleeper = field(default=time.sleep)

    def until(self, observe: Callable[[], T], done: Callable[[T], bool],
              timeout_error: Callable[[T], Exception]) -> Waited[T]:
        """Observe until ``done(observation)``; raise ``timeout_error(last observation)`` once the deadline passed.

        ``observe`` may act between reads (approve an InstallPlan) and raise to stop early, when the outcome is
        already known (a failed CSV, a Deployment past its progress deadline). It runs at least once, and once more
        at the deadline, so a state reached during the last sleep is not missed.
        """
        polled = self.poll(observe, done)
        if polled.ended != DONE:
            raise timeout_error(polled.value)
        return Waited(polled.value, round(polled.seconds, 2))

    def poll(self, observe: Callable[[], T], done: Callable[[T], bool],
             stopped: Callable[[], bool] = lambda: False) -> Polled[T]:
        """Observe until ``done(observation)``, the deadline, or ``stopped()`` (a cancelled run); say which ended it.

        For the callers whose timeout is an outcome to report rather than an error (the executor's waits). Give a
        ``sleep`` that a cancellation interrupts (``threading.Event.wait``) to stop without waiting out an interval.
        """
        start = self.clock()
        deadline = start + self.timeout
        while True:
            observed = observe()
            if done(observed):
                return Polled(observed, round(self.clock() - start, 3), DONE)
            if stopped():
                return Polled(observed, round(self.clock() - start, 3), STOPPED)
            remaining = deadline - self.clock()
            if remaining <= 0:
                return Polled(observed, round(self.clock() - start, 3), TIMED_OUT)
            self.sleep(min(self.interval, remaining))


# ---- readiness per kind ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Readiness:
    """Whether an object is ready; ``message`` says what it still waits for (or that it is ready), ``failed`` that
    waiting longer will not help."""

    ready: bool
    message: str
    failed: bool = False


def _progress_deadline_exceeded(status: dict) -> Optional[dict]:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Progressing" and condition.get("reason") == "ProgressDeadlineExceeded":
            return condition
    return None


def deployment_readiness(deployment: Optional[dict]) -> Readiness:
    """``kubectl rollout status``: the controller observed the latest spec, every wanted replica is updated, no old
    replica is left and every updated one is available; ProgressDeadlineExceeded fails the rollout."""
    if deployment is None:
        return Readiness(False, "the Deployment does not exist")
    status = deployment.get("status") or {}
    if (deployment.get("metadata") or {}).get("generation", 0) > status.get("observedGeneration", 0):
        return Readiness(False, "waiting for the deployment spec update to be observed")
    stalled = _progress_deadline_exceeded(status)
    if stalled is not None:
        return Readiness(False, f"exceeded its progress deadline: {stalled.get('message') or '(no message)'}", True)
    wanted = (deployment.get("spec") or {}).get("replicas")
    wanted = 1 if wanted is None else int(wanted)  # the API server's default
    replicas, updated = status.get("replicas", 0), status.get("updatedReplicas", 0)
    available = status.get("availableReplicas", 0)
    if updated < wanted:
        return Readiness(False, f"{updated} out of {wanted} new replicas have been updated")
    if replicas > updated:
        return Readiness(False, f"{replicas - updated} old replicas are pending termination")
    if available < updated:
        return Readiness(False, f"{available} of {updated} updated replicas are available")
    return Readiness(True, "successfully rolled out")


def crd_readiness(crd: Optional[dict]) -> Readiness:
    """A CustomResourceDefinition serves its kind once its Established condition is True."""
    if crd is None:
        return Readiness(False, "the CustomResourceDefinition does not exist")
    conditions = (crd.get("status") or {}).get("conditions") or []
    if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
        return Readiness(True, "established")
    return Readiness(False, "not established")
