"""The one way the collection writes a local file: atomically, so a reader (a report viewer, a resumed run, the next
task) never sees half a file, and durably, so a crash right after the write does not leave an empty one."""

from __future__ import annotations

import contextlib
import os
import secrets


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temporary file in the same directory, fsync it, then os.replace it over ``path``; the
    temporary file is removed when anything fails. The directory is created when missing."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_if_changed(path: str, text: str, check_mode: bool = False) -> bool:
    """Write ``text`` unless ``path`` already holds it (a re-run reports no change); in check mode only say whether
    it would change."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    if not check_mode:
        write_atomically(path, text)
    return True
