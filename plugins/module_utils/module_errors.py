"""Turning the errors of module_utils into one clear ``fail_json`` (no traceback for bad input)."""

from __future__ import annotations

import traceback
from typing import Any, Callable, TypeVar

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError, PolicyError

T = TypeVar("T")


def _user_errors() -> tuple[type, ...]:
    errors: list[type] = [EngineError]
    from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import PlanRequestError

    errors.append(PlanRequestError)
    try:
        from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterError

        errors.append(ClusterError)
    except ImportError:  # pragma: no cover - the cluster layer is part of the collection
        pass
    return tuple(errors)


def run_and_report(module: Any, function: Callable[..., T], *args: Any) -> T:
    """Call ``function``; on a user-facing error, fail the module with the message (and the field when known)."""
    try:
        return function(*args)
    except _user_errors() as exc:
        details: dict[str, Any] = {}
        if isinstance(exc, PolicyError):
            details = {"field": exc.field, "value": exc.value}
        describe = getattr(exc, "describe", None)
        message = describe() if callable(describe) else str(exc)
        module.fail_json(msg=message, **details)
    except Exception as exc:  # a bug of ours: say so, with the traceback for the report
        module.fail_json(msg=f"internal error in descheduler.fleet ({type(exc).__name__}: {exc}); please report it",
                         exception=traceback.format_exc())
    raise AssertionError("unreachable")  # fail_json exits
