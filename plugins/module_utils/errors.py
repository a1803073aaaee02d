"""The root of every error a user can act on, and what a module reports for it.

Every package raises subclasses of ``FleetError`` for bad input, a cluster that refuses, or a wait that runs out;
anything else that escapes a module is a bug of ours (module_errors.py reports it as one). This file imports nothing
of the collection: it sits below every package.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Optional

# fail_json's own keys: an error's details never overwrite them.
_RESERVED_KEYS = frozenset({"msg", "failed", "changed", "exception"})


class FleetError(Exception):
    """An error the user can fix. Subclasses may carry ``field`` and ``value`` (where the input is wrong and what was
    found there) and ``details`` (what else the user needs: the findings, the last state seen...)."""

    def user_message(self) -> str:
        """The sentence shown as ``msg``."""
        return str(self)

    def user_details(self) -> dict[str, Any]:
        """Returned beside ``msg``: ``field``/``value`` when known, then ``details``."""
        details: dict[str, Any] = {}
        for name in ("field", "value"):
            if hasattr(self, name):
                details[name] = getattr(self, name)
        details.update(getattr(self, "details", None) or {})
        return {key: value for key, value in details.items() if key not in _RESERVED_KEYS}


def nearest_name(value: object, existing: Iterable[str], cutoff: float = 0.6) -> Optional[str]:
    """The existing name nearest to a misspelt one, if any is near enough (``cutoff``: difflib's ratio): the one
    spelling matcher behind every "did you mean"."""
    close = difflib.get_close_matches(str(value), sorted({str(name) for name in existing}), n=1, cutoff=cutoff)
    return close[0] if close else None


def closest_name(value: object, existing: Iterable[str]) -> str:
    """The sentence pointing a name that refers to nothing at the nearest existing one (or listing them), for every
    message that refuses an unknown name."""
    names = sorted({str(name) for name in existing})
    if not names:
        return "none exists"
    close = nearest_name(value, names)
    listed = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return (f"did you mean {close!r}? " if close else "") + f"existing: {listed}"
