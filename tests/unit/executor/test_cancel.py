"""Cancellation: the ancestor watch on real processes, and the signal handlers on this process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import (
    AncestorWatch,
    Cancellation,
    ancestors_to_watch,
    cancel_on_signals_and_parent_exit,
    read_process,
)


def test_the_first_reason_wins_and_listeners_hear_of_it_once() -> None:
    cancellation = Cancellation()
    heard = []
    cancellation.on_cancel(lambda: heard.append(cancellation.reason))
    cancellation.cancel("cancelled: first")
    cancellation.cancel("lost the Lease", code="lease_lost")
    assert (cancellation.code, cancellation.reason, heard) == ("cancelled", "cancelled: first", ["cancelled: first"])
    late = []
    cancellation.on_cancel(lambda: late.append(True))
    assert late == [True], "a listener added after the cancel is called at once"


def test_the_exit_of_a_watched_process_cancels_the_run_at_once() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        process = read_process(child.pid)
        assert process is not None
        cancellation = Cancellation()
        watch = AncestorWatch(cancellation, [process]).start()
        time.sleep(0.3)
        assert not cancellation.is_set(), "a live process cancels nothing"
        child.kill()
        child.wait()
        assert cancellation.event.wait(2)
        assert f"process {child.pid}" in cancellation.reason and "is gone" in cancellation.reason
        watch.stop()
    finally:
        child.kill()
        child.wait()


def test_only_the_direct_parent_is_watched_without_an_ansible_ancestor() -> None:
    chain = ancestors_to_watch()
    assert [process.pid for process in chain] == [os.getppid()]


def test_ansible_ancestors_are_watched_up_to_the_topmost_one(tmp_path: Path) -> None:
    """pytest -> ansible-playbook -> sh -> module: the module watches sh and ansible-playbook, not pytest (a
    controller that outlives what started it must not cancel its run)."""
    probe = tmp_path / "module.py"
    probe.write_text("import json\n"
                     "from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import "
                     "ancestors_to_watch\n"
                     "print(json.dumps([[p.pid, p.command] for p in ancestors_to_watch()]))\n")
    playbook = tmp_path / "ansible-playbook"
    playbook.write_text("import subprocess, sys\n"
                        f"subprocess.run(['/bin/sh', '-c', '{sys.executable} {probe} && sleep 0'])\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    output = subprocess.run([sys.executable, str(playbook)], capture_output=True, text=True, env=env,
                            check=True).stdout
    chain = json.loads(output)
    assert len(chain) == 2, chain
    assert chain[0][1].startswith("/bin/sh -c") and chain[1][1].endswith(str(playbook))


def test_sigterm_to_the_module_cancels_the_run() -> None:
    cancellation = Cancellation()
    previous = signal.getsignal(signal.SIGTERM)
    with cancel_on_signals_and_parent_exit(cancellation):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
    assert cancellation.reason == "cancelled: the module received SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is previous, "the previous handler is back"
