"""Errors of the KubeDescheduler and info tasks, and how a module reports them."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report

T = TypeVar("T")


class KdoError(Exception):
    """The task cannot go on. ``details`` are returned beside ``msg`` (the findings, the last state seen...)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class SpecRejected(KdoError):
    """Validation found errors: nothing was written."""


class OperandNotReady(KdoError):
    """The write went through but the operator did not roll the descheduler out with it (or degraded)."""


def run_kdo_task(module: Any, function: Callable[..., T], *args: Any) -> T:
    """Like ``run_and_report``, and a ``KdoError`` fails the module with its details (errors, warnings...)."""

    def call() -> T:
        try:
            return function(*args)
        except KdoError as error:
            module.fail_json(msg=error.message, **error.details)
            raise AssertionError("unreachable") from error  # fail_json exits

    return run_and_report(module, call)
