"""descheduler.fleet.kubedescheduler through real ansible-playbook runs: lifecycle, idempotence, check and diff mode.

Policies are checked against literal documents in the operator's format (pkg/operator/testdata/assets), never against
the operator stand-in's own rendering.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from operator_support import (
    BASE_SPEC,
    assert_succeeded,
    get_kd,
    get_object,
    kd_task,
    operator_for,
    run_ok,
)
from playbook import run_tasks


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    yield from operator_for(kube)


# The protected list of the emulated operator: kube-system, hypershift, openshift + the openshift-* namespaces that
# existed when it started (only its own).
PROTECTED = ["kube-system", "hypershift", "openshift", "openshift-kube-descheduler-operator"]
UNUSED = {"disabled": None, "enabled": None}


def affinity_and_taints_policy(exclude: list[str]) -> dict[str, Any]:
    namespaces = {"namespaces": {"exclude": exclude}}
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [{
            "name": "AffinityAndTaints",
            "pluginConfig": [
                {"args": namespaces, "name": "RemovePodsViolatingInterPodAntiAffinity"},
                {"args": namespaces, "name": "RemovePodsViolatingNodeTaints"},
                {"args": {**namespaces, "nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]},
                 "name": "RemovePodsViolatingNodeAffinity"},
                {"args": {"ignorePvcPods": True, "podProtections": {}}, "name": "DefaultEvictor"},
            ],
            "plugins": {
                "balance": UNUSED,
                "deschedule": {"disabled": None, "enabled": ["RemovePodsViolatingInterPodAntiAffinity",
                                                             "RemovePodsViolatingNodeTaints",
                                                             "RemovePodsViolatingNodeAffinity"]},
                "filter": {"disabled": None, "enabled": ["DefaultEvictor"]},
                "preevictionfilter": UNUSED, "presort": UNUSED, "sort": UNUSED,
            },
        }],
    }


def operand_args(kube: Any) -> list[str]:
    deployment = get_object(kube, "deployments", "descheduler", api_version="apps/v1")
    assert deployment is not None
    return deployment["spec"]["template"]["spec"]["containers"][0]["args"]


def test_create_change_switch_mode_delete(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    spec_options = {"mode": "Predictive", "descheduling_interval_seconds": 3600, "profiles": ["AffinityAndTaints"],
                    "profile_customizations": {"namespaces": {"excluded": ["batch"]}}}
    tasks = [
        kd_task(kube, "created", **spec_options),
        kd_task(kube, "again", **spec_options),
        kd_task(kube, "changed", **{**spec_options, "descheduling_interval_seconds": 1800,
                                    "eviction_limits": {"total": 10}}),
        kd_task(kube, "automatic", **{**spec_options, "descheduling_interval_seconds": 1800,
                                      "eviction_limits": {"total": 10}, "mode": "Automatic"}),
    ]
    process, results = run_tasks(tmp_path, tasks)
    assert_succeeded(process)

    created = results["created"]
    assert created["changed"] is True
    assert created["msg"] == "created KubeDescheduler openshift-kube-descheduler-operator/cluster"
    assert created["spec"] == {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                               "profiles": ["AffinityAndTaints"], "logLevel": "Normal", "operatorLogLevel": "Normal",
                               "profileCustomizations": {"namespaces": {"excluded": ["batch"]}}}
    assert created["operand"]["rolled_out"] is True
    assert created["operand"]["rendered_generation"] == str(created["kubedescheduler"]["metadata"]["generation"])
    policy = created["policy"]
    exclude = policy["profiles"][0]["pluginConfig"][0]["args"]["namespaces"]["exclude"]
    assert exclude[:3] == ["kube-system", "hypershift", "openshift"] and exclude[-1] == "batch"

    assert results["again"]["changed"] is False
    assert results["again"]["msg"] == ("KubeDescheduler openshift-kube-descheduler-operator/cluster already has "
                                       "this spec")

    changed = results["changed"]
    assert changed["changed"] is True
    assert changed["changes"] == [
        {"field": "spec.deschedulingIntervalSeconds", "before": 3600, "after": 1800},
        {"field": "spec.evictionLimits", "before": None, "after": {"total": 10}},
    ]
    assert changed["policy"]["maxNoOfPodsToEvictTotal"] == 10

    automatic = results["automatic"]
    assert automatic["changes"] == [{"field": "spec.mode", "before": "Predictive", "after": "Automatic"}]
    assert "--dry-run=true" not in operand_args(kube)
    assert "--descheduling-interval=1800s" in operand_args(kube)
    stored = get_kd(kube)
    assert stored is not None and stored["spec"]["mode"] == "Automatic"

    process, results = run_tasks(tmp_path, [kd_task(kube, "deleted", state="absent"),
                                            kd_task(kube, "gone", state="absent")])
    assert_succeeded(process)
    assert results["deleted"]["changed"] is True
    assert results["gone"]["changed"] is False
    assert get_kd(kube) is None
    assert get_object(kube, "configmaps", "cluster") is None
    assert get_object(kube, "deployments", "descheduler", api_version="apps/v1") is None


def test_predictive_operand_runs_with_dry_run(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    process, results = run_tasks(tmp_path, [kd_task(kube, "kd", spec=BASE_SPEC, log_level="Debug")])
    assert_succeeded(process)
    args = operand_args(kube)
    assert "--dry-run=true" in args
    assert "--descheduling-interval=3600s" in args
    assert "-v=4" in args


def test_check_mode_changes_nothing_and_says_what_would_change(kube: Any, operator_standin: Any,
                                                               tmp_path: Path) -> None:
    process, results = run_tasks(tmp_path, [kd_task(kube, "would_create", spec=BASE_SPEC)], check=True)
    assert_succeeded(process)
    assert results["would_create"]["changed"] is True
    assert results["would_create"]["msg"] == "would create KubeDescheduler openshift-kube-descheduler-operator/cluster"
    assert get_kd(kube) is None

    run_ok(tmp_path, [kd_task(kube, "kd", spec=BASE_SPEC)])
    before = get_kd(kube)
    assert before is not None
    process, results = run_tasks(tmp_path, [
        kd_task(kube, "would_update", spec={**BASE_SPEC, "mode": "Automatic"}),
        kd_task(kube, "would_delete", state="absent"),
    ], check=True)
    assert_succeeded(process)
    assert results["would_update"]["changed"] is True
    assert results["would_update"]["msg"] == ("would update KubeDescheduler openshift-kube-descheduler-operator/"
                                              "cluster: spec.mode: 'Predictive' -> 'Automatic'")
    assert results["would_delete"]["msg"].startswith("would delete KubeDescheduler")
    after = get_kd(kube)
    assert after is not None
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["spec"]["mode"] == "Predictive"


def test_diff_mode_shows_the_spec_change(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    run_ok(tmp_path, [kd_task(kube, "kd", spec=BASE_SPEC)])
    task = {**kd_task(kube, "diffed", spec={**BASE_SPEC, "profiles": ["AffinityAndTaints", "TopologyAndDuplicates"]}),
            "diff": True}
    process, results = run_tasks(tmp_path, [task])
    assert_succeeded(process)
    diff = results["diffed"]["diff"]
    assert diff["before"]["spec"]["profiles"] == ["AffinityAndTaints"]
    assert diff["after"]["spec"]["profiles"] == ["AffinityAndTaints", "TopologyAndDuplicates"]
    assert "--- before: KubeDescheduler openshift-kube-descheduler-operator/cluster" in process.stdout
    assert '+            "TopologyAndDuplicates"' in process.stdout
    process, results = run_tasks(tmp_path, [kd_task(kube, "plain", spec=BASE_SPEC)])
    assert_succeeded(process)
    assert "diff" not in results["plain"]


def test_whole_object_as_spec_and_field_options_override(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    whole = {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
             "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
             "spec": {**BASE_SPEC, "managementState": "Managed"}}
    process, results = run_tasks(tmp_path, [kd_task(kube, "kd", spec=whole, descheduling_interval_seconds=600)])
    assert_succeeded(process)
    stored = get_kd(kube)
    assert stored is not None
    assert stored["spec"]["deschedulingIntervalSeconds"] == 600
    assert stored["spec"]["managementState"] == "Managed"


def test_management_state_is_managed_unless_told_and_required_in_a_given_spec(kube: Any, operator_standin: Any,
                                                                              tmp_path: Path) -> None:
    """The real operator degrades and scales the descheduler to 0 without spec.managementState (operator-observed.md):
    a spec given without it is refused before any write; one the module builds is Managed; Unmanaged warns."""
    without = {key: value for key, value in BASE_SPEC.items() if key != "managementState"}
    process, results = run_tasks(tmp_path, [{**kd_task(kube, "refused", spec=without), "ignore_errors": True}])
    refused = results["refused"]
    assert refused["failed"] is True
    assert refused["msg"].startswith("KubeDescheduler openshift-kube-descheduler-operator/cluster not changed: the "
                                     "spec has 1 error(s). (1) spec.managementState=null: not set; the API server "
                                     "admits the object, but the operator then sets TargetConfigControllerDegraded "
                                     "and ConfigObservationDegraded and scales the descheduler to 0 replicas"), \
        refused["msg"]
    assert 'Fix: set spec.managementState to "Managed"' in refused["msg"]
    assert refused["validation_errors"][0]["operator_message"] == (
        "spec.managementState in body should match '^(Managed|Unmanaged|Force|Removed)$'")
    assert get_kd(kube) is None

    options = {"descheduling_interval_seconds": 3600, "profiles": ["AffinityAndTaints"], "mode": "Predictive"}
    results = run_ok(tmp_path, [kd_task(kube, "built", **options),
                                kd_task(kube, "unmanaged", **options, management_state="Unmanaged")])
    assert results["built"]["spec"]["managementState"] == "Managed"
    assert results["built"]["operand"]["replicas"] == 1
    warning = next(w for w in results["unmanaged"]["validation_warnings"] if w["field"] == "spec.managementState")
    assert "Unmanaged neither stops nor removes the descheduler" in warning["message"]
    assert results["unmanaged"]["changes"] == [
        {"field": "spec.managementState", "before": "Managed", "after": "Unmanaged"}]
    stored = get_kd(kube)
    assert stored is not None and stored["spec"]["managementState"] == "Unmanaged"
