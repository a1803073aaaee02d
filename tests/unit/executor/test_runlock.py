"""The journal's lock: real flocks between real processes (a holder in a child process), not mocks."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.runlock import (
    Holder,
    RunLock,
    RunLockBusy,
    lock_path,
)


def _hold(path: str, ready: multiprocessing.Event, seconds: float) -> None:
    """A run in another process: takes the lock, says so, holds it ``seconds`` (or until killed)."""
    lock = RunLock(path, Holder(pid=os.getpid(), host="ctl-1", started="2026-11-24T01:00:00Z",
                                playbook="ansible-playbook evict.yml", job="77")).acquire()
    ready.set()
    time.sleep(seconds)
    lock.release()


def _holder_process(path: str, seconds: float) -> multiprocessing.Process:
    ready = multiprocessing.get_context("fork").Event()
    process = multiprocessing.get_context("fork").Process(target=_hold, args=(path, ready, seconds))
    process.start()
    assert ready.wait(10)
    return process


def me() -> Holder:
    return Holder(pid=os.getpid(), host="ctl-2", started="2026-11-24T02:00:00Z")


def test_a_second_run_fails_at_once_naming_the_holder(tmp_path: Path) -> None:
    path = lock_path(str(tmp_path / "journal.jsonl"))
    holder = _holder_process(path, 30)
    try:
        started = time.monotonic()
        with pytest.raises(RunLockBusy) as error:
            RunLock(path, me(), 0).acquire()
        assert time.monotonic() - started < 1
        message = str(error.value)
        assert f"pid {holder.pid} on ctl-1, started 2026-11-24T01:00:00Z, ansible-playbook evict.yml, AWX job 77" \
            in message
        assert str(tmp_path / "journal.jsonl") in message and "lock_timeout" in message
    finally:
        holder.kill()
        holder.join()


def test_lock_timeout_waits_for_the_holder_to_finish(tmp_path: Path) -> None:
    path = lock_path(str(tmp_path / "journal.jsonl"))
    holder = _holder_process(path, 1.5)
    lock = RunLock(path, me(), 30).acquire()
    try:
        assert lock.waited_seconds >= 1
        assert lock.taken_over is None, "the holder released it cleanly"
        assert json.loads(Path(path).read_text())["host"] == "ctl-2"
    finally:
        lock.release()
        holder.join()
    assert Path(path).read_text() == ""


def test_a_lock_timeout_that_runs_out_says_how_long_it_waited(tmp_path: Path) -> None:
    path = lock_path(str(tmp_path / "journal.jsonl"))
    holder = _holder_process(path, 30)
    try:
        with pytest.raises(RunLockBusy, match=r"after waiting 1s \(lock_timeout 1\)"):
            RunLock(path, me(), 1).acquire()
    finally:
        holder.kill()
        holder.join()


def test_the_lock_of_a_killed_run_is_taken_over_and_named(tmp_path: Path) -> None:
    path = lock_path(str(tmp_path / "journal.jsonl"))
    holder = _holder_process(path, 30)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join()
    lock = RunLock(path, me(), 0).acquire()
    try:
        assert lock.taken_over is not None and lock.taken_over.pid == holder.pid
        assert lock.as_dict()["taken_over_from"]["host"] == "ctl-1"
    finally:
        lock.release()


def test_waiting_ends_when_the_run_is_cancelled(tmp_path: Path) -> None:
    path = lock_path(str(tmp_path / "journal.jsonl"))
    holder = _holder_process(path, 30)
    try:
        deadline = time.monotonic() + 0.5
        with pytest.raises(RunLockBusy, match="cancelled while waiting"):
            RunLock(path, me(), 60, cancelled=lambda: time.monotonic() > deadline).acquire()
        assert time.monotonic() < deadline + 2
    finally:
        holder.kill()
        holder.join()
