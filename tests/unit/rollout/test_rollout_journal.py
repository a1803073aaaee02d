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


# ---- cancels and an unreachable API server, around the first write and the rollback --------------------------------

class _Leases:
    """HeldLeases without a cluster: every take succeeds."""

    def take(self, name: str, params: dict, timeout: float, cancelled: Any) -> None:
        pass

    def release(self, names: list[str]) -> None:
        pass


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class _ScriptedChange:
    """A KubeDescheduler-like change whose steps the test scripts: `on_read` runs while the cluster is read before
    the first write; `restores` answers each restore attempt in turn (an exception is raised)."""

    namespace, record_key = "ns", "key.json"

    def __init__(self, on_read: Any = None, restores: Optional[list] = None, apply_error: Any = None) -> None:
        self.on_read, self.restores, self.apply_error = on_read, list(restores or []), apply_error
        self.calls: list[str] = []

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        if self.on_read:
            self.on_read()
        return {"interval": 3600}

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        self.calls.append("apply")
        if self.apply_error is not None:
            raise self.apply_error
        return {"changed": True}

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        self.calls.append("restore")
        if self.restores and isinstance(self.restores[0], BaseException):
            raise self.restores.pop(0)  # pylint: disable=raising-bad-type  # (it is an exception: checked above)
        return self.restores.pop(0) if self.restores else {"changed": True}

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        return []


class _Client:
    def close(self) -> None:
        pass


def _rollout(change: Any, cancellation: Cancellation, monkeypatch: pytest.MonkeyPatch, clock: _Clock,
             **options: Any) -> tuple[Rollout, list[str]]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.rollout import controller

    written: list[str] = []
    monkeypatch.setattr(controller, "journal", lambda *args, **kwargs: written.append(args[4]))
    monkeypatch.setattr(controller, "earlier_record", lambda *args: None)
    groups = decision_groups(["c1"], assigned={}, groups=[], mandatory_groups=["canary"],
                             inventory_groups={"canary": ["c1"]})
    rollout = Rollout(rollout_options({"gates": {"workloads": False}, "gate_interval": 1, "progress_deadline": 60,
                                       **options}),
                      groups, {"c1": Target("c1", {}, {"spec": {}})}, change, cancellation=cancellation,
                      connect=lambda params: _Client(), clock=clock, sleeper=clock.sleep)
    rollout.leases = _Leases()
    return rollout, written


def test_a_cancel_while_the_cluster_is_read_before_the_first_write_starts_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cancellation = Cancellation()
    change = _ScriptedChange(on_read=lambda: cancellation.cancel("cancelled: the module received SIGTERM"))
    rollout, written = _rollout(change, cancellation, monkeypatch, _Clock())
    result = rollout.run()
    assert written == [] and change.calls == []  # no record, no apply, nothing to roll back
    assert result["cancelled"] and result["clusters"]["c1"]["status"] == "not_started"
    assert result["clusters"]["c1"]["last_good"] is None


def test_a_rollback_tries_an_unreachable_api_server_again_until_it_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError

    refused = ClusterApiError(0, "MaxRetryError", "Connection refused", host="https://127.0.0.1:6443")
    clock = _Clock()
    change = _ScriptedChange(apply_error=refused, restores=[refused, refused, {"changed": True}])
    rollout, written = _rollout(change, Cancellation(), monkeypatch, clock)
    outcome = rollout.run()["clusters"]["c1"]
    assert change.calls == ["apply", "restore", "restore", "restore"] and clock.now == 2  # every gate_interval
    assert outcome["status"] == "rolled_back" and written == ["intended", "rolling-back", "rolling-back",
                                                              "rolling-back", "rolled-back"]


def test_a_rollback_still_unreachable_at_its_deadline_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError

    refused = ClusterApiError(0, "MaxRetryError", "Connection refused", host="https://127.0.0.1:6443")
    change = _ScriptedChange(apply_error=refused, restores=[refused] * 100)
    rollout, written = _rollout(change, Cancellation(), monkeypatch, _Clock(), progress_deadline=5)
    outcome = rollout.run()["clusters"]["c1"]
    assert outcome["status"] == "rollback_failed" and "Connection refused" in outcome["rollback"]["error"]
    assert written[-1] == "rolling-back" and change.calls.count("restore") == 6  # 0..5 s, then the deadline


def test_a_rollback_cancelled_before_it_finished_leaves_the_cluster_interrupted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import KdoError

    cancellation = Cancellation()

    def cancelled_then_not_rolled_out() -> dict[str, Any]:
        cancellation.cancel("cancelled: the module received SIGTERM")
        raise KdoError("the operator did not roll out generation 7 within 60s")

    change = _ScriptedChange(apply_error=KdoError("progress deadline"))
    change.restore = lambda target, last_good, timeout: cancelled_then_not_rolled_out()  # type: ignore[method-assign]
    rollout, written = _rollout(change, cancellation, monkeypatch, _Clock())
    result = rollout.run()
    assert result["cancelled"] and result["clusters"]["c1"]["status"] == "interrupted"
    assert written == ["intended", "rolling-back", "interrupted"]


def test_after_a_cancel_a_rollback_has_only_what_is_left_of_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    cancellation = Cancellation()
    timeouts: list[float] = []

    def apply_until_past_the_grace(target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        cancellation.cancel("cancelled: the module received SIGTERM")
        clock.now += 100  # the apply in flight ends 100 s after the cancel
        return {"changed": True}

    change = _ScriptedChange()
    change.apply = apply_until_past_the_grace  # type: ignore[method-assign]
    original = change.restore
    change.restore = lambda target, last_good, timeout: timeouts.append(timeout) or original(  # type: ignore
        target, last_good, timeout)
    rollout, written = _rollout(change, cancellation, monkeypatch, clock, interrupt_grace=120)
    assert rollout.run()["clusters"]["c1"]["status"] == "rolled_back"
    assert timeouts == [20]  # 120 s of grace from the cancel, not from the apply's end


class _NamedClient:
    def __init__(self, name: str) -> None:
        self.name, self.closed = name, False

    def close(self) -> None:
        self.closed = True


def test_missing_rights_on_any_reachable_cluster_fail_the_rollout_before_any_cluster_changes() -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.access import MissingRights
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterError

    groups = decision_groups(["c1", "p1", "p2"], assigned={}, groups=["prod"], mandatory_groups=["canary"],
                             inventory_groups={"canary": ["c1"], "prod": ["p1", "p2"]})
    targets = {name: Target(name, {"name": name}, {"spec": {}}) for name in ("c1", "p1", "p2")}
    clients: list[_NamedClient] = []

    def connect(params: dict) -> _NamedClient:
        if params["name"] == "p2":
            raise ClusterError("p2 is unreachable")  # checked when its group reaches it
        clients.append(_NamedClient(params["name"]))
        return clients[-1]

    def check_rights(client: _NamedClient) -> None:
        if client.name == "p1":
            raise MissingRights("lacks 1 right(s): update configmaps in namespace ns", ["update configmaps"])

    rollout = Rollout(rollout_options({}), groups, targets, _Untouchable(), connect=connect, check_rights=check_rights)
    with pytest.raises(MissingRights) as raised:
        rollout.run()
    assert str(raised.value).startswith("1 cluster(s) of the rollout lack rights, nothing was changed on any: p1: ")
    assert "update configmaps in namespace ns" in str(raised.value)
    assert [c.name for c in clients] == ["c1", "p1"] and all(c.closed for c in clients)
