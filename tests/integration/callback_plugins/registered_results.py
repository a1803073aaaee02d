"""Test harness (playbook.run_tasks): saves what the tasks of a test playbook registered, without running a module.

run_tasks ends each playbook with a `set_fact` of the registered results as JSON, named RESULTS_TASK; this callback
writes that string to the file named by the DESCHEDULER_FLEET_TEST_RESULTS environment variable. It replaces an
`ansible.builtin.copy` task, which ran two modules (stat, then copy) in every test playbook.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ansible.plugins.callback import CallbackBase

RESULTS_TASK = "Save the registered results"
RESULTS_FACT = "descheduler_fleet_test_results"


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "registered_results"
    CALLBACK_NEEDS_ENABLED = True

    def v2_runner_on_ok(self, result: Any) -> None:
        if result.task_name != RESULTS_TASK:
            return
        returned = getattr(result, "result", None)  # ansible-core 2.19; 2.18 has only _result
        if not isinstance(returned, dict):
            returned = result._result
        saved = returned["ansible_facts"][RESULTS_FACT]
        if not isinstance(saved, str):  # ansible-core 2.18 turns a templated string that reads as a literal into one
            saved = json.dumps(saved)
        with open(os.environ["DESCHEDULER_FLEET_TEST_RESULTS"], "w", encoding="utf-8") as out:
            out.write(saved)
