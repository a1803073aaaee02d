"""Every rule of the reference's rejection table (operator.md §1.5) is caught by descheduler.fleet.kubedescheduler
before any write, with a message naming the field, the value, why and the fix; warnings are shown, not fatal.

Each group of rules runs in one ansible-playbook (`ignore_errors` per task) against an API server (the `kube` fixture)
running the operator stand-in and prepared with the facts the rules depend on; afterwards the stored KubeDescheduler
and its ConfigMap must be exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    CONFLICTING_PROFILES,
    PROFILES,
)
from kubernetes.client.exceptions import ApiException
from operator_support import (
    BASE_SPEC,
    assert_succeeded,
    get_kd,
    get_object,
    kd_task,
    node,
    operator_for,
    run_ok,
    serve_openshift_config,
)
from playbook import run_tasks
from standins.rest import Rest, path


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    yield from operator_for(kube)


# name -> (spec, [substrings the failure message must contain])
SPEC_ONLY_RULES: dict[str, tuple[dict, list[str]]] = {
    "duplicate profiles": ({**BASE_SPEC, "profiles": ["AffinityAndTaints", "AffinityAndTaints"]},
                           ["spec.profiles", '"duplicate profiles are not allowed"', "Fix: list each profile once"]),
    "unknown profile": ({**BASE_SPEC, "profiles": ["LifeCycleAndUtilization"]},
                        ["spec.profiles[0]=\"LifeCycleAndUtilization\"", 'did you mean "LifecycleAndUtilization"?',
                         "Unsupported value"]),
    "mode enum": ({**BASE_SPEC, "mode": "Automatc"},
                  ['spec.mode="Automatc"', 'did you mean "Automatic"?']),
    "misspelt fields (field_validation Strict)": (
        {**BASE_SPEC, "profileCustomisations": {"podLifetime": "1h"}, "modee": "Automatic"},
        ['spec.profileCustomisations={"podLifetime": "1h"}: not a field of KubeDescheduler v1',
         'did you mean "profileCustomizations"?', 'spec.modee="Automatic"', 'did you mean "mode"?',
         "Rejected because field_validation is Strict"]),
    "log level enum": ({**BASE_SPEC, "logLevel": "Verbose"}, ['spec.logLevel="Verbose"', "Unsupported value"]),
    "interval below 1": ({**BASE_SPEC, "deschedulingIntervalSeconds": 0},
                         ["spec.deschedulingIntervalSeconds=0", "greater than or equal to 1",
                          "Fix: set spec.deschedulingIntervalSeconds to 1 or more"]),
    "interval missing": ({"managementState": "Managed", "mode": "Predictive", "profiles": ["AffinityAndTaints"]},
                         ["spec.deschedulingIntervalSeconds=null",
                          '"descheduler should have an interval set and it should be greater than 0"']),
    "too many profiles": ({**BASE_SPEC, "profiles": list(PROFILES) + ["AffinityAndTaints"]},
                          ["Too many: 12: must have at most 11 items"]),
    "no profile": ({**BASE_SPEC, "profiles": []}, ['"descheduler should have at least 1 profile enabled"']),
    "both namespace lists": (
        {**BASE_SPEC, "profileCustomizations": {"namespaces": {"included": ["shop"], "excluded": ["batch"]}}},
        ["spec.profileCustomizations.namespaces=", '"It is forbidden to combine both included and excluded namespaces"',
         "Fix: keep either included or excluded"]),
    "protected namespace included": (
        {**BASE_SPEC, "profileCustomizations": {"namespaces": {"included": ["openshift-kube-descheduler-operator"]}}},
        ['spec.profileCustomizations.namespaces.included[0]="openshift-kube-descheduler-operator"',
         "Protected namespace openshift-kube-descheduler-operator included. It is forbidden to include any of the "
         "protected namespaces from [kube-system hypershift openshift openshift-kube-descheduler-operator]",
         "Fix: remove 'openshift-kube-descheduler-operator'"]),
    "both priority fields": (
        {**BASE_SPEC, "profileCustomizations": {"thresholdPriority": 1000, "thresholdPriorityClassName": "high"}},
        ["spec.profileCustomizations.thresholdPriority=",
         "It is invalid to set both .spec.profileCustomizations.thresholdPriority and",
         "Fix: keep only one of thresholdPriority and thresholdPriorityClassName"]),
    "unknown priority class": (
        {**BASE_SPEC, "profileCustomizations": {"thresholdPriorityClassName": "does-not-exist"}},
        ['spec.profileCustomizations.thresholdPriorityClassName="does-not-exist"', "no PriorityClass has this name",
         "Fix: create the PriorityClass or name an existing one"]),
    "unknown utilization profile": (
        {**BASE_SPEC, "profiles": ["LifecycleAndUtilization"],
         "profileCustomizations": {"devActualUtilizationProfile": "PrometheusCPUUsag"}},
        ['spec.profileCustomizations.devActualUtilizationProfile="PrometheusCPUUsag"',
         '"unknown prometheus profile: PrometheusCPUUsag"', 'did you mean "PrometheusCPUUsage"?']),
    "kubevirt profile without kubevirt nodes": (
        {**BASE_SPEC, "profiles": ["KubeVirtRelieveAndMigrate"]},
        ['spec.profiles="KubeVirtRelieveAndMigrate"', "no node is labelled kubevirt.io/schedulable=true",
         '"profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed"',
         "Fix: deploy OpenShift Virtualization (KubeVirt) first"]),
    "duration the operator cannot parse": (
        {**BASE_SPEC, "profiles": ["LifecycleAndUtilization"], "profileCustomizations": {"podLifetime": "2d"}},
        ['spec.profileCustomizations.podLifetime="2d"', "Go time.ParseDuration", 'time: unknown unit "d"']),
    "not a duration": (
        {**BASE_SPEC, "profiles": ["LifecycleAndUtilization"], "profileCustomizations": {"podLifetime": "soon"}},
        ['spec.profileCustomizations.podLifetime="soon"', "must be of type duration"]),
}


def run_rules(kube: Any, tmp_path: Path, rules: dict[str, tuple[dict, list[str]]]) -> dict[str, Any]:
    """Create a valid KubeDescheduler, then try every bad spec; return the results by rule name."""
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
    before = (get_kd(kube), get_object(kube, "configmaps", "cluster"))
    registers = {name: f"rule_{index}" for index, name in enumerate(rules)}
    tasks = [{**kd_task(kube, registers[name], spec=spec), "ignore_errors": True}
             for name, (spec, _expected) in rules.items()]
    process, results = run_tasks(tmp_path, tasks)
    assert process.returncode == 0, process.stdout[-4000:]
    after = (get_kd(kube), get_object(kube, "configmaps", "cluster"))
    assert after == before, "a rejected spec changed the KubeDescheduler or its ConfigMap"
    return {name: results[register] for name, register in registers.items()}


def assert_rejected(name: str, result: dict[str, Any], expected: list[str]) -> None:
    assert result["failed"] is True, f"{name}: not rejected: {result.get('msg')}"
    assert result["msg"].startswith("KubeDescheduler openshift-kube-descheduler-operator/cluster not changed: the "
                                    "spec has"), result["msg"]
    for text in expected:
        assert text in result["msg"], f"{name}: {text!r} not in {result['msg']!r}"
    assert result["validation_errors"], name
    assert all(error["fix"] for error in result["validation_errors"]), name


def test_rules_judged_from_the_spec_and_the_cluster(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    kube.load([node("worker-1"), node("worker-2"),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}])
    results = run_rules(kube, tmp_path, SPEC_ONLY_RULES)
    for name, (_spec, expected) in SPEC_ONLY_RULES.items():
        assert_rejected(name, results[name], expected)


def test_every_profile_conflict_is_named(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    rules = {"all profiles": ({**BASE_SPEC, "profiles": list(PROFILES)}, [])}
    result = run_rules(kube, tmp_path, rules)["all profiles"]
    assert result["failed"] is True
    for first, second in CONFLICTING_PROFILES:
        assert f'"cannot declare {first} and {second} profiles simultaneously"' in result["msg"]
        assert f"Fix: keep only one of {first} and {second}" in result["msg"]
    # CompactAndScale with SoftTopologyAndDuplicates is legal
    assert "cannot declare CompactAndScale and SoftTopologyAndDuplicates" not in result["msg"]


def test_missing_monitoring_label(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    serve_openshift_config(kube)
    with kube.api_client() as client:
        Rest(client).merge_patch(path("v1", "namespaces", name="openshift-kube-descheduler-operator"),
                                 {"metadata": {"labels": {"openshift.io/cluster-monitoring": None}}})
    rules = {"no monitoring label": (
        {**BASE_SPEC, "profiles": ["LifecycleAndUtilization"],
         "profileCustomizations": {"devActualUtilizationProfile": "PrometheusCPUUsage"}},
        ["namespace/openshift-kube-descheduler-operator.metadata.labels=null",
         '"namespace openshift-kube-descheduler-operator is not labeled with openshift.io/cluster-monitoring=true"',
         "Fix: oc label namespace openshift-kube-descheduler-operator openshift.io/cluster-monitoring=true"])}
    result = run_rules(kube, tmp_path, rules)
    assert_rejected("no monitoring label", result["no monitoring label"], rules["no monitoring label"][1])


def test_kubevirt_thresholds_and_missing_route(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    kube.load([node("virt-1", kubevirt=True), node("virt-2", kubevirt=True)])
    rules = {
        "static and deviation thresholds": (
            {**BASE_SPEC, "profiles": ["KubeVirtRelieveAndMigrate"],
             "profileCustomizations": {"devLowNodeUtilizationThresholds": "Low", "devDeviationThresholds": "Low"}},
            ["spec.profileCustomizations.devDeviationThresholds=",
             '"only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds customizations can be '
             'configured simultaneously"',
             "Fix: remove one of devLowNodeUtilizationThresholds and devDeviationThresholds"]),
        "no prometheus route": (
            {**BASE_SPEC, "profiles": ["KubeVirtRelieveAndMigrate"]},
            ["route/openshift-monitoring/prometheus-k8s=null", "scales the descheduler to 0",
             '"unable to get openshift-monitoring/prometheus-k8s route"', "Fix: enable cluster monitoring"]),
    }
    serve_openshift_config(kube, route=False)
    results = run_rules(kube, tmp_path, rules)
    for name, (_spec, expected) in rules.items():
        assert_rejected(name, results[name], expected)


@pytest.mark.parametrize(("scheduler_profile", "profile", "message"), [
    ("HighNodeUtilization", "LifecycleAndUtilization",
     '"enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization may cause an eviction/scheduling '
     'hot loop"'),
    ("LowNodeUtilization", "CompactAndScale",
     '"enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization may cause an eviction/scheduling hot '
     'loop"'),
])
def test_scheduler_profile_hot_loops(kube: Any, operator_standin: Any, tmp_path: Path, scheduler_profile: str,
                                     profile: str,
                                     message: str) -> None:
    serve_openshift_config(kube, scheduler_profile=scheduler_profile)
    rules = {"hot loop": ({**BASE_SPEC, "profiles": [profile]},
                          [f'spec.profiles="{profile}"', message, "Fix: "])}
    result = run_rules(kube, tmp_path, rules)
    assert_rejected("hot loop", result["hot loop"], rules["hot loop"][1])


def test_singleton_name_is_enforced_by_the_api(kube: Any, operator_standin: Any) -> None:
    """The module has no name option (always `cluster`); the API server rejects any other name (CEL, 4.21+)."""
    with kube.api_client() as client, pytest.raises(ApiException) as raised:
        Rest(client).create(path("operator.openshift.io/v1", "kubedeschedulers", "openshift-kube-descheduler-operator"),
                            {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                             "metadata": {"name": "other", "namespace": "openshift-kube-descheduler-operator"},
                             "spec": BASE_SPEC})
    assert raised.value.status == 422
    assert "kubedescheduler is a singleton, .metadata.name must be 'cluster'" in raised.value.body


def test_warnings_are_shown_and_not_fatal(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    kube.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}])
    spec = {**BASE_SPEC, "profiles": ["AffinityAndTaints", "DevPreviewLongLifecycle"],
            "profileCustomizations": {"namespaces": {"included": ["shop"]}}}
    compact = {**BASE_SPEC, "profiles": ["CompactAndScale"],
               "profileCustomizations": {"namespaces": {"included": ["shop"]}}}
    process, results = run_tasks(tmp_path, [kd_task(kube, "warned", spec=spec),
                                            kd_task(kube, "compact", spec=compact)])
    assert_succeeded(process)
    messages = [w["message"] for w in results["warned"]["validation_warnings"]]
    assert any('spec.profiles[1]="DevPreviewLongLifecycle": deprecated' in m and 'use "LongLifecycle"' in m
               for m in messages), messages
    assert any("LowNodeUtilization (DevPreviewLongLifecycle) cannot filter by included namespaces" in m
               for m in messages), messages
    compact_messages = [w["message"] for w in results["compact"]["validation_warnings"]]
    assert any("gives HighNodeUtilization (CompactAndScale) no namespace filter at all" in m
               for m in compact_messages), compact_messages
    shown = " ".join((process.stdout + process.stderr).split())  # ansible-core 2.18 wraps long warnings
    assert "[WARNING]: spec.profiles[1]=\"DevPreviewLongLifecycle\": deprecated" in shown
    stored = get_kd(kube)
    assert stored is not None and stored["spec"]["profiles"] == ["CompactAndScale"]


def test_unknown_fields_pass_on_with_a_warning_only_when_asked(
        kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    spec = {**BASE_SPEC, "devNewOperatorField": True}
    process, results = run_tasks(tmp_path, [kd_task(kube, "warned", spec=spec, field_validation="Warn")])
    assert_succeeded(process)
    messages = [w["message"] for w in results["warned"]["validation_warnings"]]
    assert any(m.startswith("spec.devNewOperatorField=true: not a field of KubeDescheduler v1") for m in messages)
    assert "devNewOperatorField" not in get_kd(kube)["spec"], "the API server pruned it"


def test_fail_on_warnings(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    rules = {"deprecated": ({**BASE_SPEC, "profiles": ["DevPreviewLongLifecycle"]},
                            ["1 warning(s) and fail_on_warnings is set", 'use "LongLifecycle"'])}
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
    before = get_kd(kube)
    task = {**kd_task(kube, "strict", spec=rules["deprecated"][0], fail_on_warnings=True), "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["strict"]["failed"] is True
    for text in rules["deprecated"][1]:
        assert text in results["strict"]["msg"]
    assert get_kd(kube) == before
