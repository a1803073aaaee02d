"""Policies the operator renders and the operand runs are planned, not refused (#47 item 2)."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import OPERAND_FAILS
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import compute_plan_for_kind
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)

from kubedescheduler.policy_helpers import errors, make_spec, only

NOW = "2026-06-30T12:00:00Z"


def node(name: str) -> dict:
    resources = {"cpu": "4000m", "memory": "8000000000", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def restarting_pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "shop", "name": name, "uid": f"uid-{name}",
                         "creationTimestamp": "2026-06-01T00:00:00Z",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                              "uid": "rs-uid", "controller": True}]},
            "spec": {"nodeName": "n1",
                     "containers": [{"name": "c", "image": "", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running", "containerStatuses": [{"restartCount": 150}]}}


def test_long_lifecycle_with_its_deprecated_name_runs_two_profiles_of_one_name() -> None:
    """The operator renders two profiles named LongLifecycle; upstream runs profiles by index and does not refuse
    duplicate names, so the plan runs both: the pod the first evicts is not evicted again by the second."""
    spec = make_spec(["LongLifecycle", "DevPreviewLongLifecycle"])
    objects = [node("n1"), node("n2"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
               restarting_pod("web-1")]
    plan = compute_plan_for_kind(objects, spec, NOW, policy_kind="KubeDescheduler")
    assert [p["name"] for p in plan["policy"]["profiles"]] == ["LongLifecycle", "LongLifecycle"]
    assert [(e["namespace"], e["name"], e["profile"], e["plugin"]) for e in plan["evictions"]] == [
        ("shop", "web-1", "LongLifecycle", "RemovePodsHavingTooManyRestarts")]


def test_a_cap_below_the_migration_cooldown_is_refused_as_the_operand_refuses_it() -> None:
    """The operator renders devMaxMigrationCooldown below devMigrationCooldown unchanged; the operand's
    KubevirtMigrationAware refuses it (ValidateKubevirtMigrationAwareArgs), so the descheduler pod fails."""
    spec = make_spec(["KubeVirtRelieveAndMigrate"], {"devMigrationCooldown": "15m", "devMaxMigrationCooldown": "10m"})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devMaxMigrationCooldown", "error")
    assert finding.operator_behaviour == OPERAND_FAILS
    assert finding.operator_message == "maxMigrationCooldown (10m) must be >= migrationCooldown (15m)"
    equal = make_spec(["KubeVirtRelieveAndMigrate"], {"devMigrationCooldown": "15m", "devMaxMigrationCooldown": "15m"})
    assert [f for f in errors(validate_kubedescheduler_spec(equal)) if "Cooldown" in f.field] == []
