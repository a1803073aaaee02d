"""One run at a time per journal: an exclusive ``flock`` on ``<journal>.lock``, with who holds it written inside.

The kernel drops a ``flock`` when its holder exits, however it ends (SIGKILL included), so a lock left by a dead run
is free by construction: the next run takes it at once and reports whose it was. A live holder keeps it, and the
next run fails naming that holder (pid, host, start time, playbook) or, with ``lock_timeout``, waits for it.

The lock file is never deleted: unlinking it while another run waits on the old file would let two runs hold "the"
lock at once. On NFS, Linux maps ``flock`` to a POSIX lock the server arbitrates; on a filesystem without working
locks two control nodes are only kept apart by the cluster-side Lease (cluster/lease.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError

WAIT_SLICE = 0.2  # seconds between two attempts while waiting for the lock


class RunLockBusy(FleetError, ValueError):
    """Another run holds the lock; the message names it and the way out."""


@dataclass
class Holder:
    """Who runs: written into the lock file and the Lease, shown to whoever finds them taken."""

    pid: int
    host: str
    started: str
    playbook: Optional[str] = None
    job: Optional[str] = None

    def as_dict(self) -> dict:
        return {key: value for key, value in vars(self).items() if value is not None}

    def describe(self) -> str:
        text = f"pid {self.pid} on {self.host}, started {self.started}"
        if self.playbook:
            text += f", {self.playbook}"
        if self.job:
            text += f", AWX job {self.job}"
        return text

    @classmethod
    def from_dict(cls, data: Any) -> Optional[Holder]:
        if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
            return None
        return cls(pid=data["pid"], host=str(data.get("host") or "?"), started=str(data.get("started") or "?"),
                   playbook=data.get("playbook"), job=data.get("job"))


def this_holder(playbook: Optional[str] = None) -> Holder:
    """This process. AWX (and ansible-runner) put the job id in the environment ansible-playbook hands to local
    modules."""
    return Holder(pid=os.getpid(), host=socket.gethostname(), started=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  playbook=playbook, job=os.environ.get("JOB_ID") or os.environ.get("AWX_JOB_ID"))


class RunLock:
    """``with RunLock(path, holder, timeout).acquire(): ...``; ``taken_over`` names a dead run whose lock file was
    found (for the result)."""

    def __init__(self, path: str, holder: Holder, timeout: float = 0.0, *,
                 cancelled: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.path = path
        self.holder = holder
        self.timeout = timeout
        self.taken_over: Optional[Holder] = None
        self.waited_seconds = 0.0
        self._cancelled = cancelled
        self._clock = clock
        self._sleep = sleep
        self._fd: Optional[int] = None

    def acquire(self) -> RunLock:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        started = self._clock()
        try:
            while not self._try_lock(fd):
                waited = self._clock() - started
                if waited >= self.timeout or self._cancelled():
                    raise RunLockBusy(self._busy_message(fd, waited))
                self._sleep(min(WAIT_SLICE, self.timeout - waited))
        except BaseException:
            os.close(fd)
            raise
        self.waited_seconds = self._clock() - started
        self._fd = fd
        previous = _read_holder(fd)
        if previous is not None and (previous.pid, previous.host) != (self.holder.pid, self.holder.host):
            self.taken_over = previous  # its process ended without releasing (else the file would be empty)
        _write_holder(fd, self.holder)
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)  # empty: released cleanly (a dead run leaves its holder behind)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def as_dict(self) -> dict:
        return {"path": self.path, "holder": self.holder.as_dict(), "waited_seconds": round(self.waited_seconds, 3),
                "taken_over_from": self.taken_over.as_dict() if self.taken_over else None}

    @staticmethod
    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _busy_message(self, fd: int, waited: float) -> str:
        holder = _read_holder(fd)
        who = holder.describe() if holder else "a run that has not yet written its name"
        wait = (f"after waiting {waited:.0f}s (lock_timeout {self.timeout:g})" if self.timeout
                else "(lock_timeout is 0: not waiting)")
        if self._cancelled():
            wait = "and this run was cancelled while waiting"
        return (f"journal {self.path[:-len('.lock')] if self.path.endswith('.lock') else self.path} is in use by "
                f"another evict run ({who}) {wait}: only one run at a time may use a journal. Wait for it to end, "
                "cancel it, or set lock_timeout to wait for it; lock file "
                f"{self.path}")


def lock_path(journal: str) -> str:
    return journal + ".lock"


def _read_holder(fd: int) -> Optional[Holder]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 65536)
        return Holder.from_dict(json.loads(data.decode("utf-8"))) if data.strip() else None
    except (OSError, ValueError):
        return None  # half-written by a holder that is starting: no name yet


def _write_holder(fd: int, holder: Holder) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(holder.as_dict(), sort_keys=True) + "\n").encode("utf-8"))
    os.fsync(fd)
