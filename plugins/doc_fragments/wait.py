"""Documentation of the wait options (module_utils/cluster/args.py WAIT_ARG_SPEC), for the modules that install or
remove something the cluster then rolls out. Use it with ``extends_documentation_fragment: [descheduler.fleet.wait]``;
the module's description says what it waits for."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  wait:
    description:
      - Wait until what the task changed is in place - ready when installed or updated, gone when removed - as the
        module's description details. A state that cannot be reached (a failed CSV, a degraded operator) ends the
        wait with its reason.
      - Never in check mode, where nothing is written.
    type: bool
    default: true
  wait_timeout:
    description: Seconds each wait may last before the module fails with the last state it saw.
    type: int
    default: 600
  wait_sleep:
    description: Seconds between two checks while waiting.
    type: int
    default: 5
"""
