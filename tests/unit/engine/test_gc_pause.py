"""gc_paused: no collection during the block, none owed right after it, and cycles made in it still freed.
keep_until_exit: what it keeps is never freed, not even when the process exits."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


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


# A child process: "keep" hands the object to keep_until_exit, "drop" deletes the last reference, "exit" keeps it in
# a global until the interpreter exits. The object says when it is freed.
KEEP_CHILD = """
import gc, os, sys
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused, keep_until_exit

class Loud:
    def __del__(self, write=os.write):
        write(1, b"freed\\n")

structure = Loud()
if sys.argv[1] == "keep":
    keep_until_exit(structure)
if sys.argv[1] != "exit":
    del structure
with gc_paused():  # a pause after keep_until_exit must not release what it keeps
    pass
gc.collect()
os.write(1, b"end\\n")
"""


def _child(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                          env=env, timeout=120).stdout


@pytest.mark.parametrize("how, printed", [
    ("keep", "end\n"),  # never freed, not even by the interpreter's exit
    ("drop", "freed\nend\n"),
    ("exit", "end\nfreed\n"),  # what the test would see if the exit freed it
])
def test_a_kept_structure_is_left_to_the_operating_system(how: str, printed: str) -> None:
    assert _child(KEEP_CHILD, how) == printed


# A child process: the plan or whatif runner on a snapshot file, watching the snapshot it read.
RUNNER_CHILD = """
import gc, json, sys, weakref
from ansible_collections.descheduler.fleet.plugins.module_utils.runner import plan, whatif

snapshot, policy, metrics, runner, how = sys.argv[1:]
module = {"plan": plan, "whatif": whatif}[runner]
read, watched = module.read_input, []
def read_and_watch(*args):
    found = read(*args)
    watched.append(weakref.ref(found[0]))
    return found
module.read_input = read_and_watch
params = {"snapshot": snapshot, "prometheus_result": metrics, "now": "2026-11-22T12:00:00Z"}
if runner == "plan":
    result = plan.run_plan({**params, "policy": json.loads(policy)}, process_exits_after=how == "keep")
    evictions = len(result["evictions"])
else:
    candidates = [{"name": "addon", "policy": json.loads(policy)}]
    result = whatif.run_whatif({**params, "candidates": candidates}, process_exits_after=how == "keep")
    evictions = result["candidates"][0]["evictions"]
gc.collect()
print(evictions, "kept" if watched[0]() is not None else "freed")
"""


@pytest.mark.parametrize("runner", ["plan", "whatif"])
@pytest.mark.parametrize("how", ["keep", "free"])
def test_a_module_keeps_its_snapshot_until_exit_and_an_in_process_caller_does_not(runner: str, how: str) -> None:
    policy = (EXAMPLES / "policies" / "cce-volcano-addon.json").read_text()
    snapshot = str(EXAMPLES / "snapshots" / "cce-volcano.json")
    metrics = str(EXAMPLES / "metrics" / "cce-volcano-prometheus.json")
    evictions, fate = _child(RUNNER_CHILD, snapshot, policy, metrics, runner, how).split()
    assert int(evictions) > 0
    assert fate == ("kept" if how == "keep" else "freed")
