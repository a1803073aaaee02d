"""The root of every error a user can act on, and what a module reports for it.

Every package raises subclasses of ``FleetError`` for bad input, a cluster that refuses, or a wait that runs out;
anything else that escapes a module is a bug of ours (module_errors.py reports it as one). This file imports nothing
of the collection: it sits below every package.
"""

from __future__ import annotations

from typing import Any

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
