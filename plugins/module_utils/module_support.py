"""What every module's ``main()`` does around its runner: merge the shared option groups into one argument spec, and
hand the runner's result to Ansible (its warnings shown, a failure it reports failed, the rest returned)."""

from __future__ import annotations

from typing import Any, NoReturn, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused


def argument_spec(*groups: dict[str, dict], **options: dict) -> dict[str, dict]:
    """The shared option ``groups`` (module_utils/cluster/args.py) and the module's own ``options``, as one spec.

    An option declared twice is a programming error: a module would silently replace a shared option's type or
    default, and its documentation (the group's doc fragment) would no longer describe it.
    """
    merged: dict[str, dict] = {}
    for group in (*groups, options):
        twice = sorted(set(merged) & set(group))
        if twice:
            raise ValueError(f"option(s) declared twice in the argument spec: {', '.join(twice)}")
        merged.update(group)
    return merged


def finish(module: Any, result: dict[str, Any], warnings_key: Optional[str] = None) -> NoReturn:
    """Show the result's ``warnings``, fail when it says ``failed`` (with its ``msg``), else exit with it.

    Ansible moves a result's ``warnings`` into its own warning channel; with ``warnings_key`` they are also kept in the
    result under that name, so a registered result still holds them.
    """
    warnings = result.pop("warnings", [])
    if warnings_key:
        result[warnings_key] = warnings
    for warning in warnings:
        module.warn(warning)
    # Ansible copies the whole result to scrub it (no_log) and then encodes it: a large plan's are millions of new
    # acyclic objects, and the collections they would trigger walk everything the module still holds
    with gc_paused():
        if result.pop("failed", False):
            module.fail_json(**result)
        module.exit_json(**result)
    raise AssertionError("unreachable")  # exit_json exits
