"""Errors of a rollout across clusters: bad options, before any cluster is touched."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError


class RolloutError(FleetError):
    """An option of the rollout is wrong (``field``, ``value``) or the rollout cannot start."""

    def __init__(self, message: str, field: str, value: Any, **details: Any) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.details = details
