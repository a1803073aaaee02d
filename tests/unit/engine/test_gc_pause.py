"""gc_paused: no collection during the block, none owed right after it, and cycles made in it still freed."""

from __future__ import annotations

import gc
import weakref

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused


class Node:
    def __init__(self) -> None:
        self.other: object = None


def test_no_collection_runs_in_the_block_and_none_is_owed_after_it() -> None:
    started: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        with gc_paused():
            kept = [[index] for index in range(200_000)]  # far past the youngest generation's threshold
            assert not gc.isenabled()
        assert started == []
        assert gc.isenabled()
        # the young objects were moved on without being walked: a few allocations now start no collection
        # (after a plain gc.enable() the first one would walk all 200,000)
        _few = [[index] for index in range(50)]
        assert started == []
    finally:
        gc.callbacks.remove(record)
    assert len(kept) == 200_000


def test_cycles_made_in_the_block_are_still_collected() -> None:
    with gc_paused():
        first, second = Node(), Node()
        first.other, second.other = second, first
        watcher = weakref.ref(first)
        del first, second
    assert watcher() is not None  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert watcher() is None


def test_nested_pauses_leave_the_collector_off_until_the_outermost_ends() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_objects_the_caller_froze_stay_frozen() -> None:
    frozen_before = gc.get_freeze_count()
    kept = [[index] for index in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= frozen_before + 100
        with gc_paused():
            more = [[index] for index in range(1000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    assert len(kept) + len(more) == 1100
