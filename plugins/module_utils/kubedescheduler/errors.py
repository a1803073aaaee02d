"""Errors of the KubeDescheduler and info tasks. ``details`` are returned beside ``msg`` (module_errors.py)."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError


class KdoError(FleetError):
    """The task cannot go on. ``details`` are returned beside ``msg`` (the findings, the last state seen...)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class SpecRejected(KdoError):
    """Validation found errors: nothing was written."""


class OperandNotReady(KdoError):
    """The write went through but the operator did not roll the descheduler out with it (or degraded)."""
