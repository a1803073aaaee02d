"""Cancellation of a run: a signal to the module, or the Ansible process that started it going away.

How ansible-core (2.18 and 2.19) runs a module on ``connection: local``, found by running one (see docs/evict.md,
"Cancellation"): ``ansible-playbook`` forks a worker process (2.19 puts it in a new session, 2.18 does not), which
starts ``/bin/sh -c "/bin/sh -c '<python> AnsiballZ_evict.py && sleep 0'"``; AnsiballZ runs the module in that
python process. When ``ansible-playbook`` is interrupted (SIGINT, then SIGTERM: what an AWX job cancel sends) it
exits and its worker dies, but the two shells and the module live on, reparented, and the module receives no
signal at all. ``prctl(PR_SET_PDEATHSIG)`` does not help: the module's parent is a shell that survives.

So a run watches its ancestors up to and including the Ansible processes (the worker and ``ansible-playbook``):
when one of them is gone, the run is cancelled. Each is identified by pid and start time, so a reused pid is not
mistaken for the original. Where Linux offers ``pidfd_open``, the watch is woken the moment a process exits;
elsewhere it polls. SIGINT, SIGTERM and SIGHUP to the module process itself cancel the run too.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

CANCELLED = "cancelled"
LEASE_LOST = "lease_lost"
POLL_SECONDS = 0.2  # how often the fallback (no pidfd) looks at the ancestors
ANSIBLE_PROGRAMS = ("ansible-playbook", "ansible", "ansible-console", "ansible-pull")
CANCEL_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Cancellation:
    """Set once, by whoever notices first (a signal handler, the ancestor watch, the lease renewal); the first
    reason wins. Listeners run in the cancelling thread (possibly a signal handler): they must only set events."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.code: Optional[str] = None
        self.reason: Optional[str] = None
        self._listeners: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self.event.is_set()

    def cancel(self, reason: str, code: str = CANCELLED) -> None:
        if self.event.is_set():
            return
        self.code, self.reason = code, reason
        self.event.set()
        for listener in list(self._listeners):
            listener()

    def on_cancel(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)
        if self.event.is_set():
            listener()


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    start_time: str  # clock ticks since boot (field 22 of /proc/<pid>/stat): tells a reused pid apart
    command: str


def read_process(pid: int) -> Optional[Process]:
    """The process ``pid`` from /proc, or None when it is gone (or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read().replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):  # a zombie has exited already
        return None
    return Process(pid=pid, ppid=int(fields[1]), start_time=fields[19], command=command)


def is_ansible(process: Process) -> bool:
    """An Ansible command-line program (or a worker forked from one: same command line), run directly or by a
    python interpreter."""
    words = process.command.split()
    if not words:
        return False
    program = os.path.basename(words[0])
    if program.startswith("python") and len(words) > 1:
        program = os.path.basename(words[1])
    return program in ANSIBLE_PROGRAMS


def ancestors_to_watch(first_parent: Optional[int] = None) -> list[Process]:
    """The module's ancestors up to and including the Ansible controller processes (the worker and
    ``ansible-playbook``). Their own parents (a shell, ansible-runner, a CI job) are not watched: a controller that
    outlives its shell (``nohup``) must not cancel its run. Without an Ansible ancestor (async_wrapper, a direct
    call), only the direct parent is watched."""
    chain: list[Process] = []
    pid = first_parent if first_parent is not None else os.getppid()
    seen_ansible = False
    while pid > 1:
        process = read_process(pid)
        if process is None:
            break
        if seen_ansible and not is_ansible(process):
            break
        chain.append(process)
        seen_ansible = seen_ansible or is_ansible(process)
        pid = process.ppid
    if not seen_ansible:
        return chain[:1]
    return chain


def still_there(process: Process) -> bool:
    current = read_process(process.pid)
    return current is not None and current.start_time == process.start_time


class AncestorWatch:
    """A daemon thread that cancels the run when a watched ancestor exits."""

    def __init__(self, cancellation: Cancellation, processes: list[Process]) -> None:
        self.cancellation = cancellation
        self.processes = processes
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="evict-ancestor-watch", daemon=True)

    def start(self) -> AncestorWatch:
        if self.processes:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def _run(self) -> None:
        pidfds = self._open_pidfds()
        try:
            while not self._done.is_set() and not self.cancellation.is_set():
                gone = next((p for p in self.processes if not still_there(p)), None)
                if gone is not None:
                    self.cancellation.cancel(f"cancelled: process {gone.pid} ({_short(gone.command)}), which started "
                                             "this run, is gone (the playbook was interrupted or killed)")
                    return
                self._wait(pidfds)
        finally:
            for pidfd in pidfds:
                os.close(pidfd)

    def _open_pidfds(self) -> list[int]:
        """A pidfd per process (readable once it exits), checked against the start time to rule out pid reuse
        between reading /proc and opening it."""
        if not hasattr(os, "pidfd_open"):
            return []
        pidfds = []
        for process in self.processes:
            try:
                pidfds.append(os.pidfd_open(process.pid))
            except OSError:
                continue  # already gone: the first still_there() notices
        return pidfds

    def _wait(self, pidfds: list[int]) -> None:
        if not pidfds:
            self._done.wait(POLL_SECONDS)
            return
        poller = select.poll()
        for pidfd in pidfds:
            poller.register(pidfd, select.POLLIN)
        poller.poll(1000)  # woken at once by an exit; the timeout lets stop() end the thread


def _short(command: str) -> str:
    return command if len(command) <= 80 else command[:77] + "..."


@contextmanager
def cancel_on_signals_and_parent_exit(cancellation: Cancellation) -> Iterator[Cancellation]:
    """For the module process: SIGINT/SIGTERM/SIGHUP and the exit of the Ansible processes above it cancel the
    run. The previous signal handlers are restored at the end. Signal handlers can only be set from the main
    thread; elsewhere (a test calling the runner from a thread) only the ancestors are watched."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in CANCEL_SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                previous[number] = signal.signal(number, _handler(cancellation, name))
    watch = AncestorWatch(cancellation, ancestors_to_watch()).start()
    try:
        yield cancellation
    finally:
        watch.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)


def _handler(cancellation: Cancellation, name: str) -> Callable:
    def handle(_signum: int, _frame: object) -> None:
        cancellation.cancel(f"cancelled: the module received {name}")
    return handle


def controller_command() -> Optional[str]:
    """The command line of the ``ansible-playbook`` that runs this module (the topmost Ansible ancestor), to name
    the holder of a lock; None when there is none."""
    chain = ancestors_to_watch()
    top = chain[-1] if chain else None
    return top.command[:300] if top is not None and is_ansible(top) else None
