"""The rollout's pure parts: options, decision groups, the gates' arithmetic, and the group/failure/halt logic of the
controller (in check mode, where it writes and soaks nothing, with a Change that records what it was asked)."""

from __future__ import annotations

import threading
from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import KdoError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Rollout, Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.gates import (
    peak_evictions_per_minute,
    workload_breaches,
    workload_shortfalls,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.groups import decision_groups
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import (
    Budget,
    parse_budget,
    parse_seconds,
    rollout_options,
)


# ---- options ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "total", "expected"), [(3, 10, 3), ("3", 10, 3), ("25%", 10, 2), ("0%", 10, 0),
                                                          ("100%", 7, 7)])
def test_budgets(value: Any, total: int, expected: int) -> None:
    assert parse_budget(value, "max_failures").of(total) == expected


def test_concurrency_is_at_least_one() -> None:
    assert Budget(percent=10).of(3, at_least_one=True) == 1


@pytest.mark.parametrize("value", ["ten", "-1", "150%", True, None, "5.5"])
def test_bad_budget_names_field_and_value(value: Any) -> None:
    with pytest.raises(RolloutError) as raised:
        parse_budget(value, "max_concurrency")
    assert raised.value.field == "max_concurrency" and raised.value.value == value
    assert "max_concurrency" in str(raised.value)


def test_durations() -> None:
    assert parse_seconds("1m30s", "min_success_time") == 90
    assert parse_seconds(5, "min_success_time") == 5
    with pytest.raises(RolloutError, match="progress_deadline: '5 minutes' is not a duration"):
        parse_seconds("5 minutes", "progress_deadline")
    with pytest.raises(RolloutError, match="gate_interval: 0 must be more than 0"):
        rollout_options({"gate_interval": 0})


def test_defaults_when_unset() -> None:
    options = rollout_options({"max_failures": None, "gates": {"workload_tolerance": None}})
    assert options.max_failures == Budget(count=0) and options.min_success_time == 60
    assert options.gates.workload_tolerance == 0 and options.gates.operand


# ---- decision groups ----------------------------------------------------------------------------------------------

def test_mandatory_first_then_named_then_assigned_then_rest() -> None:
    clusters = ["a", "b", "c", "d", "e", "f", "g"]
    groups = decision_groups(clusters, assigned={"f": "zz-late", "b": "wave-2"}, groups=["wave-1", "wave-2"],
                             mandatory_groups=["canary"],
                             inventory_groups={"canary": ["c"], "wave-1": ["a", "b", "d"], "wave-2": ["e"],
                                               "zz-late": []},
                             clusters_per_group=Budget(count=1))
    assert [(g.name, g.clusters, g.mandatory) for g in groups] == [
        ("canary", ("c",), True), ("wave-1", ("a", "d"), False), ("wave-2", ("b", "e"), False),
        ("zz-late", ("f",), False), ("rest", ("g",), False)]


def test_empty_groups_left_out_and_rest_chunked() -> None:
    groups = decision_groups(["a", "b", "c"], assigned={}, mandatory_groups=["canary"],
                             inventory_groups={"canary": []}, clusters_per_group=Budget(percent=50))
    assert [(g.name, g.clusters) for g in groups] == [("rest-1", ("a",)), ("rest-2", ("b",)), ("rest-3", ("c",))]


@pytest.mark.parametrize(("options", "field", "value", "hint"), [
    ({"mandatory_groups": ["canaryz"]}, "mandatory_groups", "canaryz", "did you mean 'canary'?"),
    ({"groups": ["wave-l"]}, "groups", "wave-l", "did you mean 'wave-1'?"),
    ({"groups": ["wave-1"], "inventory_groups": {"canary": ["c"], "wave-1": ["a", "bb"]}},
     "inventory_groups.wave-1", "bb", "did you mean 'b'?"),
    ({"mandatory_groups": ["canary"], "assigned": {"c": "canaryz"}}, "clusters[2].group", "canaryz",
     "did you mean 'canary'?"),
])
def test_a_name_that_refers_to_nothing_is_refused(options: dict, field: str, value: str, hint: str) -> None:
    arguments = {"assigned": {}, "inventory_groups": {"canary": ["c"], "wave-1": ["a", "b"]}, **options}
    with pytest.raises(RolloutError) as caught:
        decision_groups(["a", "b", "c"], **arguments)
    assert (caught.value.field, caught.value.value) == (field, value)
    assert str(caught.value).startswith(f"{field}: {value!r}") and hint in str(caught.value)


def test_a_group_only_host_variables_name_exists() -> None:
    groups = decision_groups(["a", "b"], assigned={"b": "late"}, mandatory_groups=["late"])
    assert [(g.name, g.clusters, g.mandatory) for g in groups] == [("late", ("b",), True), ("rest", ("a",), False)]


# ---- gates --------------------------------------------------------------------------------------------------------

def _pdb(name: str, desired: int, current: int) -> dict:
    return {"kind": "PodDisruptionBudget", "metadata": {"namespace": "shop", "name": name},
            "status": {"observedGeneration": 1, "desiredHealthy": desired, "currentHealthy": current}}


def _deployment(name: str, replicas: Optional[int], ready: int) -> dict:
    return {"kind": "Deployment", "metadata": {"namespace": "shop", "name": name},
            "spec": {} if replicas is None else {"replicas": replicas}, "status": {"readyReplicas": ready}}


def test_workload_shortfalls_and_breaches_against_the_baseline() -> None:
    before = workload_shortfalls([_pdb("web", 3, 3)], [_deployment("web", 4, 4), _deployment("old", 2, 0)])
    assert before == {"PodDisruptionBudget shop/web": 0, "Deployment shop/web": 0, "Deployment shop/old": 2}
    workloads = [_deployment("web", 4, 3), _deployment("old", 2, 0), _deployment("new", None, 0)]
    now = workload_shortfalls([_pdb("web", 3, 2)], workloads)
    assert workload_breaches(before, now, tolerance=0) == [
        "Deployment shop/new lacks 1 pod(s) (before the change 0, tolerance 0)",
        "Deployment shop/web lacks 1 pod(s) (before the change 0, tolerance 0)",
        "PodDisruptionBudget shop/web lacks 1 pod(s) (before the change 0, tolerance 0)"]
    assert workload_breaches(before, now, tolerance=1) == []


def _eviction(time: str, pod: str, dry_run: bool = False) -> str:
    message = "Evicted pod in dry run mode" if dry_run else "Evicted pod"
    return (f'I1126 {time}.000001       1 evictions.go:607] "{message}" pod="shop/{pod}" reason="" '
            f'strategy="PodLifeTime" node="w1" profile="LifecycleAndUtilization"')


def test_peak_evictions_per_minute_counts_real_evictions_in_any_60_seconds() -> None:
    lines = [_eviction("10:00:10", "a"), _eviction("10:00:50", "b"), _eviction("10:01:05", "c"),
             _eviction("10:01:09", "d"), _eviction("10:03:00", "e"), _eviction("10:00:55", "x", dry_run=True),
             "not a klog line"]
    assert peak_evictions_per_minute(lines) == (4, "1126 10:00:10.000001")
    assert peak_evictions_per_minute([]) == (0, None)


# ---- the controller's groups, budgets and halts (check mode) ------------------------------------------------------

class RecordingChange:
    """Applies nothing: says which clusters it was asked to change, fails the ones in ``failing``, and tracks how
    many changes ran at once."""

    namespace, record_key = "ns", "key"

    def __init__(self, failing: tuple[str, ...] = (), pause: Optional[threading.Barrier] = None) -> None:
        self.failing, self.pause = failing, pause
        self.applied: list[str] = []
        self.running = self.most_running = 0
        self.lock = threading.Lock()

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        return {"mode": "Predictive"}

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        with self.lock:
            self.applied.append(target.name)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if self.pause is not None:
                self.pause.wait(timeout=30)
            if target.name in self.failing:
                raise KdoError(f"{target.name} refused the spec")
            return {"changed": True, "changes": [{"field": "spec.mode"}], "msg": "would update"}
        finally:
            with self.lock:
                self.running -= 1

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        raise AssertionError("no rollback in check mode")

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        raise AssertionError("no gate in check mode")


class _NotFound:
    status, reason, data = 404, "Not Found", b""


class _Client:
    """A cluster with nothing the rollout reads besides what the Change reads (no Lease, no record)."""

    def call_api(self, *args: Any, **kwargs: Any) -> _NotFound:
        return _NotFound()

    def close(self) -> None:
        pass


def _rollout(names: list[str], groups: dict[str, list[str]], change: RecordingChange, **options: Any) -> dict:
    ordered = decision_groups(names, assigned={}, groups=[g for g in groups if g != "canary"],
                              mandatory_groups=["canary"] if "canary" in groups else [], inventory_groups=groups)
    targets = {name: Target(name, {}, {"spec": {}}, options.pop(f"blocked_{name}", None)) for name in names}
    return Rollout(rollout_options(options), ordered, targets, change, check_mode=True,
                   connect=lambda params: _Client()).run()


def test_a_failed_canary_halts_before_any_other_group() -> None:
    change = RecordingChange(failing=("c1",))
    result = _rollout(["c1", "p1", "p2"], {"canary": ["c1"], "prod": ["p1", "p2"]}, change, max_failures="100%")
    assert change.applied == ["c1"]
    assert result["halted"] and result["halt_reason"].startswith("group canary: 1 cluster(s) failed (c1)")
    assert [g["status"] for g in result["groups"]] == ["failed", "not_started"]
    assert result["clusters"]["p1"]["status"] == "not_started"


def test_max_failures_per_group_and_total() -> None:
    names = ["a", "b", "c", "d", "e", "f"]
    groups = {"one": ["a", "b"], "two": ["c", "d"], "three": ["e", "f"]}
    within = _rollout(names, groups, RecordingChange(failing=("a",)), max_failures=1, max_failures_total=2,
                      max_concurrency=1)
    assert not within["halted"] and within["summary"]["failed"] == 1 and within["summary"]["changed"] == 5
    change = RecordingChange(failing=("a", "c"))
    over_total = _rollout(names, groups, change, max_failures=1, max_failures_total=1, max_concurrency=1)
    assert over_total["halted"] and "over the fleet's max failures (1)" in over_total["halt_reason"]
    assert change.applied == ["a", "b", "c"]  # d is not started once the budget is spent
    assert over_total["clusters"]["d"]["status"] == "not_started"


def test_a_blocked_cluster_counts_as_a_failure_and_is_not_touched() -> None:
    change = RecordingChange()
    result = _rollout(["a", "b"], {"one": ["a", "b"]}, change, blocked_a="preflight failed")
    assert change.applied == ["b"] and result["halted"]
    assert result["clusters"]["a"]["error"] == "preflight failed"


def test_max_concurrency_bounds_the_changes_at_once() -> None:
    change = RecordingChange(pause=threading.Barrier(2))
    result = _rollout(["a", "b", "c", "d"], {"one": ["a", "b", "c", "d"]}, change, max_concurrency="50%")
    assert not result["halted"] and change.most_running == 2 and sorted(change.applied) == ["a", "b", "c", "d"]
