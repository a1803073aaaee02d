"""The rollout's transaction options and journal states (rollout/options.py, rollout/record.py), and a cancel seen
before the first cluster: nothing starts, the result says so."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import Cancellation
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Rollout, Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.groups import decision_groups
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import rollout_options
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.record import unfinished


def test_transaction_options_default_to_failing_at_once_and_rolling_back_on_a_cancel() -> None:
    options = rollout_options({})
    assert (options.lock_timeout, options.on_interrupted, options.interrupt_rollback, options.interrupt_grace) == (
        0, "fail", True, 120)
    assert rollout_options({"lock_timeout": "2m", "interrupt_grace": 30}).lock_timeout == 120


@pytest.mark.parametrize(("field", "value"), [("on_interrupted", "retry"), ("lock_timeout", -1),
                                              ("interrupt_grace", "soon")])
def test_a_bad_transaction_option_names_field_and_value(field: str, value: Any) -> None:
    with pytest.raises(RolloutError) as raised:
        rollout_options({field: value})
    assert raised.value.field == field and raised.value.value == value
    assert field in str(raised.value)


@pytest.mark.parametrize(("state", "open_"), [("verified", False), ("rolled-back", False), ("intended", True),
                                              ("applied", True), ("soaking", True), ("rolling-back", True),
                                              ("interrupted", True), ("before-change", True)])
def test_only_verified_and_rolled_back_are_settled(state: str, open_: bool) -> None:
    assert unfinished({"state": state, "present": True, "spec": {}}) is open_
    assert unfinished(None) is False


class _Untouchable:
    namespace, record_key = "ns", "key.json"

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        raise AssertionError("a cancelled rollout reads no cluster")

    apply = restore = operand_breaches = current


def test_a_rollout_cancelled_before_its_first_cluster_starts_none_and_says_why() -> None:
    cancellation = Cancellation()
    cancellation.cancel("cancelled: the module received SIGTERM")
    groups = decision_groups(["c1", "p1"], assigned={}, groups=["prod"], mandatory_groups=["canary"],
                             inventory_groups={"canary": ["c1"], "prod": ["p1"]})
    targets = {name: Target(name, {}, {"spec": {}}) for name in ("c1", "p1")}
    result = Rollout(rollout_options({}), groups, targets, _Untouchable(), cancellation=cancellation,
                     connect=lambda params: pytest.fail("no connection after a cancel")).run()
    assert result["cancelled"] and result["halted"]
    assert result["halt_reason"] == "cancelled: the module received SIGTERM"
    assert {name: c["status"] for name, c in result["clusters"].items()} == {"c1": "not_started", "p1": "not_started"}
    assert [g["status"] for g in result["groups"]] == ["interrupted", "not_started"]
    assert "0 interrupted" in result["msg"]
