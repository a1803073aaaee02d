"""Processes below a process, for tests that kill a playbook "with its whole process tree".

ansible-playbook's worker starts a new session, so ``os.killpg`` on the playbook's group does not reach the
module process; a test that means "the machine died" has to kill the descendants too.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state, parent pid, ...; utime and stime are 11 and 12);
    OSError when the process is gone."""
    with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
        return handle.read().rsplit(")", 1)[-1].split()


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children first), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(stat_fields(int(entry))[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and everything below it at once: nothing gets to clean up."""
    for target in [pid, *descendants(pid)]:
        try:
            os.kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass


def module_process(pid: int, module: str) -> int | None:
    """The process of the Ansible module `module` (its AnsiballZ payload) below ``pid``, if one runs."""
    marker = f"AnsiballZ_{module}".encode()
    for child in descendants(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if marker in command and not command.startswith(b"/bin/sh"):
            return child
    return None


def holds_open(pid: int, path: str | Path) -> bool:
    """Whether process ``pid`` has ``path`` open (read from /proc/<pid>/fd)."""
    wanted = os.path.realpath(path)
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") == wanted:
                return True
        except OSError:
            continue
    return False
