"""The kubedescheduler module's spec building, comparison and roll-out judgement (module_utils/kubedescheduler)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler import rollout
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import KdoError, OperandNotReady
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.spec import (
    comparable,
    describe_changes,
    desired_spec,
    spec_changes,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.info import mode_from_args

ALL_CUSTOMIZATIONS = {
    "pod_lifetime": "48h", "threshold_priority": 1000, "threshold_priority_class_name": None,
    "namespaces": {"included": None, "excluded": ["batch"]},
    "dev_low_node_utilization_thresholds": "High", "dev_high_node_utilization_thresholds": "Minimal",
    "dev_deviation_thresholds": "AsymmetricLow", "dev_actual_utilization_profile": "PrometheusCPUUsage",
    "dev_enable_evictions_in_background": True, "dev_enable_soft_tainter": False,
    "dev_migration_cooldown": "15m", "dev_max_migration_cooldown": "1h", "dev_migration_history_window": "2h",
}


def test_every_option_maps_to_its_spec_field() -> None:
    spec, translation = desired_spec({
        "mode": "Automatic", "descheduling_interval_seconds": 60, "profiles": ["AffinityAndTaints"],
        "eviction_limits": {"total": 5, "node": None}, "log_level": "Debug", "operator_log_level": "Trace",
        "management_state": "Managed", "profile_customizations": ALL_CUSTOMIZATIONS,
    })
    assert translation is None
    assert spec == {
        "managementState": "Managed", "logLevel": "Debug", "operatorLogLevel": "Trace",
        "deschedulingIntervalSeconds": 60, "profiles": ["AffinityAndTaints"], "mode": "Automatic",
        "evictionLimits": {"total": 5},
        "profileCustomizations": {
            "podLifetime": "48h", "thresholdPriority": 1000, "namespaces": {"excluded": ["batch"]},
            "devLowNodeUtilizationThresholds": "High", "devEnableSoftTainter": False,
            "devEnableEvictionsInBackground": True, "devHighNodeUtilizationThresholds": "Minimal",
            "devActualUtilizationProfile": "PrometheusCPUUsage", "devDeviationThresholds": "AsymmetricLow",
            "devMigrationCooldown": "15m", "devMaxMigrationCooldown": "1h", "devMigrationHistoryWindow": "2h",
        },
    }


def test_field_options_replace_fields_of_spec_and_legacy_spec() -> None:
    spec = desired_spec({"spec": {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                                  "profileCustomizations": {"podLifetime": "1h"}},
                         "profile_customizations": {"threshold_priority": 5}})[0]
    assert spec == {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                    "profileCustomizations": {"thresholdPriority": 5}}
    spec, translation = desired_spec({"legacy_spec": {"deschedulingIntervalSeconds": 60,
                                                      "strategies": [{"name": "duplicates"}]},
                                      "mode": "Predictive"})
    assert spec["mode"] == "Predictive"
    assert translation is not None and translation["spec"]["mode"] == "Automatic"


def test_spec_and_legacy_spec_are_exclusive() -> None:
    with pytest.raises(KdoError, match="mutually exclusive"):
        desired_spec({"spec": {}, "legacy_spec": {}})
    with pytest.raises(KdoError, match="legacy_spec: legacy_spec has apiVersion"):
        desired_spec({"legacy_spec": {"apiVersion": "operator.openshift.io/v1", "spec": {}}})


def test_comparison_applies_crd_defaults_and_ignores_operator_fields() -> None:
    stored = {"mode": "Predictive", "logLevel": "Normal", "operatorLogLevel": "Normal", "profiles": ["A"],
              "observedConfig": {"servingInfo": {"minTLSVersion": "VersionTLS12"}}}
    assert comparable({"profiles": ["A"], "evictionLimits": None}) == comparable(stored)
    assert comparable(None) is None


def test_changes_are_leaves() -> None:
    before = {"mode": "Predictive", "profileCustomizations": {"podLifetime": "1h", "namespaces": {"excluded": ["a"]}}}
    after = {"mode": "Automatic", "profileCustomizations": {"namespaces": {"excluded": ["a", "b"]}},
             "evictionLimits": {"total": 1}}
    changes = spec_changes(before, after)
    assert changes == [
        {"field": "spec.mode", "before": "Predictive", "after": "Automatic"},
        {"field": "spec.profileCustomizations.podLifetime", "before": "1h", "after": None},
        {"field": "spec.profileCustomizations.namespaces.excluded", "before": ["a"], "after": ["a", "b"]},
        {"field": "spec.evictionLimits", "before": None, "after": {"total": 1}},
    ]
    assert describe_changes(changes[:2]) == ("spec.mode: 'Predictive' -> 'Automatic'; "
                                             "spec.profileCustomizations.podLifetime: '1h' -> (unset)")


@pytest.mark.parametrize(("args", "mode"), [
    (["--dry-run=true"], "predictive"), (["--dry-run"], "predictive"), (["--dry-run=false"], "automatic"),
    (["--policy-config-file=/policy-dir/policy.yaml", "-v=2"], "automatic"),
])
def test_mode_from_operand_args(args: list[str], mode: str) -> None:
    assert mode_from_args(args) == mode


def deployment(generation: str, *, replicas: int = 1, ready: int = 1) -> dict[str, Any]:
    return {"metadata": {"generation": 2},
            "spec": {"replicas": replicas, "template": {"metadata": {"annotations": {
                "kubedeschedulers.operator.openshift.io/cluster": generation}}}},
            "status": {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
                       "readyReplicas": ready, "availableReplicas": ready}}


def degraded(reason: str) -> dict[str, Any]:
    return {"status": {"conditions": [{"type": "TargetConfigControllerDegraded", "status": "True",
                                       "reason": reason}]}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def run_wait(monkeypatch: pytest.MonkeyPatch, states: list[rollout.OperandState], timeout: float = 10) -> Any:
    sequence = iter(states)
    last = states[-1]
    monkeypatch.setattr(rollout, "read_operand_state", lambda api_client: next(sequence, last))
    monkeypatch.setattr(rollout, "operator_log_errors", lambda api_client: [])
    clock = FakeClock()
    return rollout.wait_for_rollout(None, 3, timeout=timeout, sleep=1, clock=clock, sleeper=clock.sleep), clock


def test_wait_until_the_new_generation_rolled_out(monkeypatch: pytest.MonkeyPatch) -> None:
    states = [rollout.OperandState({}, deployment("2")), rollout.OperandState({}, deployment("3", ready=0)),
              rollout.OperandState({}, deployment("3"))]
    state, clock = run_wait(monkeypatch, states)
    assert state.applied(3) and clock.now == 2


def test_a_stale_degraded_condition_is_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    states = [rollout.OperandState(degraded("old"), deployment("2", replicas=0)),
              rollout.OperandState({}, deployment("3"))]
    state = run_wait(monkeypatch, states)[0]
    assert state.applied(3)


def test_degraded_twice_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    states = [rollout.OperandState(degraded("profile X can only be used when KubeVirt is properly deployed"),
                                   deployment("2", replicas=0))]
    with pytest.raises(OperandNotReady, match="TargetConfigControllerDegraded says 'profile X can only be used"):
        run_wait(monkeypatch, states, timeout=100)


def test_never_applied_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OperandNotReady, match="did not roll out generation 3 .* within 4s .*still runs generation 2"):
        run_wait(monkeypatch, [rollout.OperandState({}, deployment("2"))], timeout=4)


def test_a_descheduler_scaled_to_0_is_not_rolled_out() -> None:
    scaled_down = deployment("3", replicas=0, ready=0)
    assert not rollout.operand_rolled_out(scaled_down)
    assert rollout.operand_rolled_out(deployment("3"))


def test_an_operand_past_its_progress_deadline_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    stalled = deployment("3", ready=0)
    stalled["status"]["conditions"] = [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                                        "message": 'ReplicaSet "descheduler-7c" has timed out progressing.'}]
    with pytest.raises(OperandNotReady, match="descheduler exceeded its progress deadline: ReplicaSet"):
        run_wait(monkeypatch, [rollout.OperandState({}, stalled)], timeout=100)


def test_a_spec_the_collection_builds_is_managed_unless_told_otherwise() -> None:
    options = {"mode": "Predictive", "descheduling_interval_seconds": 3600, "profiles": ["AffinityAndTaints"]}
    assert desired_spec(options)[0]["managementState"] == "Managed"
    assert desired_spec({**options, "management_state": "Unmanaged"})[0]["managementState"] == "Unmanaged"
    legacy = desired_spec({"legacy_spec": {"deschedulingIntervalSeconds": 60, "strategies": [{"name": "duplicates"}]}})
    assert legacy[0]["managementState"] == "Managed"
    kept = desired_spec({"legacy_spec": {"deschedulingIntervalSeconds": 60, "managementState": "Removed"}})
    assert kept[0]["managementState"] == "Removed"


def test_a_spec_the_user_gives_is_taken_as_written() -> None:
    spec = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600, "profiles": ["AffinityAndTaints"]}
    assert "managementState" not in desired_spec({"spec": spec})[0]
    assert desired_spec({"spec": spec, "management_state": "Managed"})[0]["managementState"] == "Managed"
