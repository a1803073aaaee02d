"""The one poll loop and the readiness rules per kind (cluster/wait.py)."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import (
    DONE,
    STOPPED,
    TIMED_OUT,
    Waiter,
    crd_readiness,
    deployment_readiness,
)


class TimedOut(Exception):
    pass


def fake_time_waiter(timeout: float, interval: float) -> tuple[Waiter, list[float]]:
    now = [0.0]
    return Waiter(timeout=timeout, interval=interval, clock=lambda: now[0],
                  sleep=lambda seconds: now.__setitem__(0, now[0] + seconds)), now


def test_waits_until_done_and_reports_the_seconds() -> None:
    waiter, now = fake_time_waiter(timeout=10, interval=3)
    waited = waiter.until(lambda: now[0], lambda seen: seen >= 6, TimedOut)
    assert (waited.value, waited.seconds) == (6, 6)


def test_stops_at_the_deadline_with_the_last_observation() -> None:
    waiter, now = fake_time_waiter(timeout=10, interval=3)
    observed: list[float] = []

    def observe() -> float:
        observed.append(now[0])
        return now[0]

    with pytest.raises(TimedOut) as raised:
        waiter.until(observe, lambda seen: False, lambda seen: TimedOut(f"last seen at {seen:g}s"))
    assert observed == [0, 3, 6, 9, 10]  # the last sleep is cut to the deadline, and observed once more there
    assert str(raised.value) == "last seen at 10s"


def test_an_observation_may_stop_the_wait_early() -> None:
    waiter, now = fake_time_waiter(timeout=100, interval=5)

    def observe() -> float:
        if now[0] >= 10:
            raise RuntimeError("failed for good")
        return now[0]

    with pytest.raises(RuntimeError, match="failed for good"):
        waiter.until(observe, lambda seen: False, TimedOut)
    assert now[0] == 10


def test_poll_says_whether_it_ended_done_stopped_or_timed_out() -> None:
    waiter, now = fake_time_waiter(timeout=10, interval=3)
    done = waiter.poll(lambda: now[0], lambda seen: seen >= 6)
    assert (done.value, done.seconds, done.ended) == (6, 6, DONE)

    waiter, now = fake_time_waiter(timeout=10, interval=3)
    timed_out = waiter.poll(lambda: now[0], lambda seen: False)
    assert (timed_out.value, timed_out.ended) == (10, TIMED_OUT)  # no exception: the caller reports the timeout


def test_poll_stops_once_stopped_without_waiting_out_the_deadline() -> None:
    waiter, now = fake_time_waiter(timeout=100, interval=5)
    polled = waiter.poll(lambda: now[0], lambda seen: False, stopped=lambda: now[0] >= 15)
    assert (polled.value, polled.ended) == (15, STOPPED)


def test_poll_prefers_done_to_stopped_on_the_same_observation() -> None:
    waiter, _now = fake_time_waiter(timeout=100, interval=5)
    polled = waiter.poll(lambda: "ready", lambda seen: seen == "ready", stopped=lambda: True)
    assert polled.ended == DONE  # what was awaited happened: a cancellation after it changes nothing


def test_a_zero_timeout_observes_once() -> None:
    waiter, now = fake_time_waiter(timeout=0, interval=5)
    assert waiter.until(lambda: "ready", lambda seen: seen == "ready", TimedOut).seconds == 0
    with pytest.raises(TimedOut):
        waiter.until(lambda: "not yet", lambda seen: False, TimedOut)
    assert now[0] == 0


def deployment(*, generation: int = 2, observed: int = 2, wanted: Optional[int] = 3, replicas: int = 3,
               updated: int = 3, available: int = 3, conditions: Optional[list[dict]] = None) -> dict[str, Any]:
    spec = {} if wanted is None else {"replicas": wanted}
    return {"metadata": {"name": "d", "generation": generation}, "spec": spec,
            "status": {"observedGeneration": observed, "replicas": replicas, "updatedReplicas": updated,
                       "availableReplicas": available, "conditions": conditions or []}}


STALLED = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
           "message": 'ReplicaSet "d-5f" has timed out progressing.'}


@pytest.mark.parametrize(
    ("obj", "ready", "message"),
    [
        (deployment(), True, "successfully rolled out"),
        (deployment(available=4, replicas=3), True, "successfully rolled out"),
        (deployment(wanted=None, replicas=1, updated=1, available=1), True, "successfully rolled out"),  # default 1
        (deployment(wanted=0, replicas=0, updated=0, available=0), True, "successfully rolled out"),
        (deployment(generation=3), False, "waiting for the deployment spec update to be observed"),
        (deployment(updated=1), False, "1 out of 3 new replicas have been updated"),
        (deployment(wanted=None, replicas=0, updated=0, available=0), False,
         "0 out of 1 new replicas have been updated"),
        (deployment(replicas=4), False, "1 old replicas are pending termination"),  # a surge pod of the old spec
        (deployment(available=2), False, "2 of 3 updated replicas are available"),
        (None, False, "the Deployment does not exist"),
    ],
)
def test_deployment_rolled_out_as_kubectl_rollout_status(obj: Optional[dict], ready: bool, message: str) -> None:
    state = deployment_readiness(obj)
    assert (state.ready, state.message, state.failed) == (ready, message, False)


def test_progress_deadline_exceeded_fails_the_rollout() -> None:
    state = deployment_readiness(deployment(updated=1, conditions=[STALLED]))
    assert (state.ready, state.failed) == (False, True)
    assert state.message == 'exceeded its progress deadline: ReplicaSet "d-5f" has timed out progressing.'


def test_a_stalled_condition_of_a_spec_not_yet_observed_does_not_fail() -> None:
    state = deployment_readiness(deployment(generation=3, conditions=[STALLED]))
    assert (state.ready, state.failed) == (False, False)


def test_crd_is_ready_once_established() -> None:
    established = {"status": {"conditions": [{"type": "Established", "status": "True"}]}}
    names_accepted_only = {"status": {"conditions": [{"type": "NamesAccepted", "status": "True"}]}}
    assert crd_readiness(established).ready
    assert not crd_readiness(names_accepted_only).ready
    assert not crd_readiness(None).ready
