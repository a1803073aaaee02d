"""The one reporting wrapper of the modules: a ``FleetError`` becomes a clear ``fail_json`` (no traceback for bad
input), anything else is reported as a bug of ours with its traceback."""

from __future__ import annotations

import traceback
from typing import Any, Callable, TypeVar

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError

T = TypeVar("T")


def run_and_report(module: Any, function: Callable[..., T], *args: Any) -> T:
    """Call ``function``; on a user-facing error, fail the module with the message, and the field, value and details
    the error carries."""
    try:
        return function(*args)
    except FleetError as error:
        module.fail_json(msg=error.user_message(), **error.user_details())
    except Exception as exc:  # a bug of ours: say so, with the traceback for the report
        module.fail_json(msg=f"internal error in descheduler.fleet ({type(exc).__name__}: {exc}); please report it",
                         exception=traceback.format_exc())
    raise AssertionError("unreachable")  # fail_json exits
