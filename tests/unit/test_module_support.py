"""finish: how every module hands its result to Ansible."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import finish


class ExitingModule:
    """What finish calls of AnsibleModule: exit_json and fail_json end the process (SystemExit), warn records."""

    def __init__(self) -> None:
        self.exited: dict[str, Any] = {}
        self.collector_enabled: bool = True
        self.warnings: list[str] = []

    def warn(self, warning: str) -> None:
        self.warnings.append(warning)

    def exit_json(self, **result: Any) -> None:
        self._exit(result, 0)

    def fail_json(self, **result: Any) -> None:
        self._exit(result, 1)

    def _exit(self, result: dict[str, Any], code: int) -> None:
        self.exited = result
        self.collector_enabled = gc.isenabled()
        raise SystemExit(code)


@pytest.mark.parametrize("failed, code", [(False, 0), (True, 1)])
def test_the_result_is_handed_over_without_collections_and_the_collector_is_back_after(failed: bool,
                                                                                       code: int) -> None:
    """Ansible copies and encodes a large result (82,000 evictions: millions of objects): no collection walks the
    module's heap meanwhile, and the collector is on again for whatever runs after (a test process, say)."""
    module = ExitingModule()
    result = {"evictions": [{"name": "web-1"}], "warnings": ["careful"], "failed": failed, "msg": "m"}
    with pytest.raises(SystemExit) as ended:
        finish(module, result, warnings_key="plan_warnings")
    assert ended.value.code == code
    assert module.collector_enabled is False
    assert gc.isenabled()
    assert module.exited["evictions"] == [{"name": "web-1"}]
    assert module.exited["plan_warnings"] == ["careful"] and module.warnings == ["careful"]
    assert "failed" not in module.exited
