"""`pause`: the gate lets one eviction request go at a time, the next `pause` after the previous one's answer.

The gate's clock is a counter the test moves, so what is checked is the order of events, not how fast threads run:
a second worker cannot take its turn before the first request is answered, nor before `pause` has passed since.
"""

from __future__ import annotations

import threading

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.limits import Gate
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorOptions


class SteppedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def second_turn_time(gate: Gate, clock: SteppedClock, answer_at: float, pause: float) -> float:
    """The first request takes its turn; a second worker asks for one; the first is answered at `answer_at`, then the
    clock moves on to `answer_at + pause`. Returns the clock's reading when the second worker got its turn."""
    stop = threading.Event()
    assert gate.await_request_turn(stop)
    taken: list[float] = []
    second = threading.Thread(target=lambda: taken.append(clock() if gate.await_request_turn(stop) else -1.0))
    second.start()
    clock.now = answer_at
    gate.request_answered()
    clock.now = answer_at + pause
    second.join(timeout=60)
    stop.set()
    assert taken, "the second worker never got its turn"
    return taken[0]


def test_with_a_pause_the_next_request_waits_for_the_answer_and_then_the_pause() -> None:
    clock = SteppedClock()
    gate = Gate(ExecutorOptions(pause=0.3), clock=clock)
    assert second_turn_time(gate, clock, answer_at=10.0, pause=0.3) == 10.3


def test_without_a_pause_requests_are_not_serialised() -> None:
    clock = SteppedClock()
    gate = Gate(ExecutorOptions(pause=0.0), clock=clock)
    stop = threading.Event()
    assert gate.await_request_turn(stop) and gate.await_request_turn(stop)  # both at once, nobody answered yet


def test_check_mode_spaces_nothing() -> None:
    clock = SteppedClock()
    gate = Gate(ExecutorOptions(pause=5.0, check_mode=True), clock=clock)
    stop = threading.Event()
    assert gate.await_request_turn(stop) and gate.await_request_turn(stop)


def test_a_stopped_run_takes_no_turn_while_a_request_is_unanswered() -> None:
    gate = Gate(ExecutorOptions(pause=0.3), clock=SteppedClock())
    stop = threading.Event()
    assert gate.await_request_turn(stop)
    stop.set()
    assert gate.await_request_turn(stop) is False
