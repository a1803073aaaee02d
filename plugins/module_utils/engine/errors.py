"""Errors raised by the planning engine. Each names the field, the value and what is allowed."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError


class EngineError(FleetError, ValueError):
    """Base class: a problem with the input (policy or snapshot), never a bug report."""


class PolicyError(EngineError):
    """An invalid DeschedulerPolicy: ``field`` is a dotted path into the policy document."""

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field}: invalid value {value!r}: {allowed}")


class SnapshotError(EngineError):
    """An invalid snapshot (file or object list)."""
