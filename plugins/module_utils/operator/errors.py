"""Errors of the operator lifecycle: each says what was found in the cluster and what to change."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError


class LifecycleError(FleetError):
    """The install or uninstall cannot go on. ``details`` are returned beside the message (channels available,
    the CSV's reason, the InstallPlan left unapproved...)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class WaitTimeout(LifecycleError):
    """A wait ran out of time; the message names what was awaited and the last state seen."""
