"""Tests for the KubeDescheduler spec validation: what admission, the operator and the operand reject or ignore."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ADMISSION_REJECTED,
    CONFLICTING_PROFILES,
    DEGRADED_SCALE_TO_ZERO,
    LOG_ONLY_IGNORED,
    NOT_APPLICABLE,
    OPERAND_FAILS,
    PLATFORM_DEPENDENT,
    PROFILES,
    PRUNED_BY_API_SERVER,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import (
    render_policy,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    KubeDeschedulerError,
)

from kubedescheduler.policy_helpers import (
    KUBEVIRT,
    KUBEVIRT_NODES,
    NAMESPACES,
    PROTECTED,
    assert_names_field_and_fix,
    errors,
    make_spec,
    only,
    plugin_args,
    render,
    warnings,
)

# --- validation: API admission ------------------------------------------------------------------------------------


def test_valid_spec_has_no_findings() -> None:
    spec = make_spec(["AffinityAndTaints", "LifecycleAndUtilization"], {"podLifetime": "48h"}, mode="Automatic")
    assert validate_kubedescheduler_spec(spec, namespaces=NAMESPACES, scheduler_profile="LowNodeUtilization") == []


def test_spec_must_be_a_mapping() -> None:
    [finding] = validate_kubedescheduler_spec(["AffinityAndTaints"])  # type: ignore[arg-type]
    assert finding.operator_behaviour == ADMISSION_REJECTED and finding.field == "spec"
    with pytest.raises(KubeDeschedulerError):
        render_policy("nope")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "why"),
    [(0, "minimum of 1"), (-5, "minimum of 1"), ("3600", "an integer"), (True, "an integer"), (2**31, "int32")],
)
def test_interval_admission(value: object, why: str) -> None:
    spec = make_spec(["AffinityAndTaints"], deschedulingIntervalSeconds=value)
    finding = only(validate_kubedescheduler_spec(spec), "spec.deschedulingIntervalSeconds", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert why in finding.message
    assert_names_field_and_fix(finding)


def test_interval_missing_scales_to_zero() -> None:
    spec = make_spec(["AffinityAndTaints"])
    del spec["deschedulingIntervalSeconds"]
    finding = only(validate_kubedescheduler_spec(spec), "spec.deschedulingIntervalSeconds", "error")
    assert finding.operator_behaviour == DEGRADED_SCALE_TO_ZERO
    assert finding.operator_message == "descheduler should have an interval set and it should be greater than 0"
    assert "3600" in finding.fix
    with pytest.raises(KubeDeschedulerError) as raised:
        render(spec)
    assert raised.value.field == "spec.deschedulingIntervalSeconds"


def test_profiles_missing_fails_operator_revalidation() -> None:
    finding = only(validate_kubedescheduler_spec(make_spec()), "spec.profiles", "error")
    assert finding.operator_behaviour == DEGRADED_SCALE_TO_ZERO
    assert finding.operator_message.startswith("descheduler validation failed")
    assert_names_field_and_fix(finding)


def test_profiles_empty_is_log_only() -> None:
    finding = only(validate_kubedescheduler_spec(make_spec([])), "spec.profiles", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == "descheduler should have at least 1 profile enabled"
    with pytest.raises(KubeDeschedulerError, match="at least 1 profile"):
        render(make_spec([]))


def test_profiles_must_be_a_list() -> None:
    finding = only(validate_kubedescheduler_spec(make_spec("AffinityAndTaints")), "spec.profiles", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED and "an array" in finding.message


def test_unknown_profile_suggests_the_closest() -> None:
    findings = validate_kubedescheduler_spec(make_spec(["AffinityAndTaints", "AffinityAndTaint"]))
    finding = only(findings, "spec.profiles[1]", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert 'did you mean "AffinityAndTaints"' in finding.fix
    assert finding.operator_message.startswith('spec.profiles[1]: Unsupported value: "AffinityAndTaint"')
    with pytest.raises(KubeDeschedulerError) as raised:
        render(make_spec(["AffinityAndTaint"]))
    assert raised.value.field == "spec.profiles[0]" and raised.value.value == "AffinityAndTaint"


def test_duplicate_profiles() -> None:
    finding = only(
        validate_kubedescheduler_spec(make_spec(["AffinityAndTaints", "AffinityAndTaints"])), "spec.profiles", "error"
    )
    assert finding.operator_message == "duplicate profiles are not allowed"
    assert finding.value == ["AffinityAndTaints"]
    assert_names_field_and_fix(finding)


def test_too_many_profiles() -> None:
    findings = validate_kubedescheduler_spec(make_spec(list(PROFILES) + ["AffinityAndTaints"]))
    assert any("at most 11" in f.message for f in errors(findings))


@pytest.mark.parametrize(("first", "second"), CONFLICTING_PROFILES)
def test_conflicting_profiles(first: str, second: str) -> None:
    findings = validate_kubedescheduler_spec(make_spec([second, first]))
    finding = only(findings, "spec.profiles", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert finding.operator_message == f"cannot declare {first} and {second} profiles simultaneously"
    assert first in finding.fix and second in finding.fix
    with pytest.raises(KubeDeschedulerError, match="simultaneously"):
        render(make_spec([first, second]))


def test_compact_and_scale_with_soft_topology_is_allowed() -> None:
    spec = make_spec(["CompactAndScale", "SoftTopologyAndDuplicates"])
    assert errors(validate_kubedescheduler_spec(spec)) == []
    assert [p["name"] for p in render(spec)["profiles"]] == ["CompactAndScale", "SoftTopologyAndDuplicates"]


@pytest.mark.parametrize(
    ("field_name", "value"),
    [("mode", "Auto"), ("mode", ""), ("logLevel", "Verbose"), ("operatorLogLevel", "debug"), ("managementState", "On")],
)
def test_operator_spec_enums(field_name: str, value: str) -> None:
    spec = make_spec(["AffinityAndTaints"], **{field_name: value})
    finding = only(validate_kubedescheduler_spec(spec), f"spec.{field_name}", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert_names_field_and_fix(finding)


@pytest.mark.parametrize(
    ("customization", "value"),
    [
        ("devLowNodeUtilizationThresholds", "Highest"),
        ("devHighNodeUtilizationThresholds", "Maximal"),
        ("devDeviationThresholds", "Asymmetric"),
        ("thresholdPriority", "1000"),
        ("thresholdPriorityClassName", 5),
        ("devEnableEvictionsInBackground", "yes"),
        ("podLifetime", 300),
        ("namespaces", ["a"]),
    ],
)
def test_customization_types_and_enums(customization: str, value: object) -> None:
    spec = make_spec(["LifecycleAndUtilization"], {customization: value})
    finding = only(validate_kubedescheduler_spec(spec), f"spec.profileCustomizations.{customization}", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert_names_field_and_fix(finding)


def test_namespace_list_items_must_be_strings() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"excluded": ["a", 3]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces.excluded[1]", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED


def test_eviction_limits_types() -> None:
    spec = make_spec(["AffinityAndTaints"], evictionLimits={"total": "10"})
    finding = only(validate_kubedescheduler_spec(spec), "spec.evictionLimits.total", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED


@pytest.mark.parametrize("value", ["abc", "5", "m5"])
def test_pod_lifetime_bad_syntax_is_rejected_at_admission(value: str) -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"podLifetime": value})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.podLifetime", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED
    assert '"5m"' in finding.fix
    with pytest.raises(KubeDeschedulerError) as raised:
        render(spec)
    assert raised.value.field == "spec.profileCustomizations.podLifetime"


@pytest.mark.parametrize("value", ["1d", "2 weeks", "5 min"])
def test_pod_lifetime_accepted_by_api_but_not_by_go(value: str) -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"podLifetime": value})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.podLifetime", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert "time.ParseDuration" in finding.message


def test_migration_duration_syntax() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate"], {"devMigrationCooldown": "soon"})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devMigrationCooldown", "error")
    assert finding.operator_behaviour == ADMISSION_REJECTED


def test_unknown_fields_are_warned_as_pruned() -> None:
    spec = make_spec(["AffinityAndTaints"], {"podLifeTime": "5m", "namespaces": {"include": ["a"]}}, profile="x")
    findings = warnings(validate_kubedescheduler_spec(spec))
    by_field = {f.field: f for f in findings}
    assert 'did you mean "profiles"' in by_field["spec.profile"].fix
    assert 'did you mean "podLifetime"' in by_field["spec.profileCustomizations.podLifeTime"].fix
    assert 'did you mean "included"' in by_field["spec.profileCustomizations.namespaces.include"].fix
    assert all("prunes" in f.message for f in by_field.values())
    # Pruned fields change nothing in the rendering.
    assert render(spec) == render(make_spec(["AffinityAndTaints"], {"namespaces": {}}))


def test_null_values_mean_unset() -> None:
    spec = make_spec(["AffinityAndTaints"], {"thresholdPriority": None, "namespaces": None}, evictionLimits=None)
    assert errors(validate_kubedescheduler_spec(spec)) == []
    assert render(spec) == render(make_spec(["AffinityAndTaints"]))


# --- validation: operator runtime ---------------------------------------------------------------------------------


def test_included_and_excluded_together() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["a"], "excluded": ["b"]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == "It is forbidden to combine both included and excluded namespaces"
    with pytest.raises(KubeDeschedulerError) as raised:
        render(spec)
    assert raised.value.field == "spec.profileCustomizations.namespaces"
    assert "either included or excluded" in raised.value.fix


def test_included_static_protected_namespace_without_facts() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["apps", "kube-system"]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces.included[1]", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == (
        "Protected namespace kube-system included. It is forbidden to include any of the protected namespaces "
        "from [kube-system hypershift openshift]"
    )
    assert "remove 'kube-system'" in finding.fix


def test_included_openshift_namespace_with_facts() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["openshift-kube-scheduler"]}})
    finding = only(
        validate_kubedescheduler_spec(spec, namespaces=NAMESPACES),
        "spec.profileCustomizations.namespaces.included[0]",
        "error",
    )
    assert "[kube-system hypershift openshift openshift-kube-descheduler-operator openshift-kube-scheduler]" in (
        finding.operator_message
    )
    with pytest.raises(KubeDeschedulerError):
        render(spec)


def test_included_openshift_namespace_without_facts_is_a_warning() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["openshift-foo"]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces.included[0]", "warning")
    assert "protected" in finding.message
    assert render_policy(spec)["profiles"][0]["pluginConfig"][0]["args"] == {
        "namespaces": {"include": ["openshift-foo"]}
    }


def test_included_namespace_that_does_not_exist() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["ghost"]}})
    finding = only(
        validate_kubedescheduler_spec(spec, namespaces=NAMESPACES), "spec.profileCustomizations.namespaces", "warning"
    )
    assert "does not exist" in finding.message


def test_both_priority_thresholds() -> None:
    spec = make_spec(
        ["LifecycleAndUtilization"], {"thresholdPriority": 1000, "thresholdPriorityClassName": "className"}
    )
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.thresholdPriority", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == (
        "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
        ".spec.profileCustomizations.ThresholdPriorityClassName fields"
    )
    assert_names_field_and_fix(finding)
    with pytest.raises(KubeDeschedulerError) as raised:
        render(spec)
    assert raised.value.field == "spec.profileCustomizations.thresholdPriority"
    assert raised.value.value == {"thresholdPriority": 1000, "thresholdPriorityClassName": "className"}
    assert raised.value.fix == "keep only one of thresholdPriority and thresholdPriorityClassName"


def test_priority_threshold_above_system_critical_fails_the_operand() -> None:
    spec = make_spec(["AffinityAndTaints"], {"thresholdPriority": 2_000_000_001})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.thresholdPriority", "error")
    assert finding.operator_behaviour == OPERAND_FAILS


def test_priority_class_must_exist_when_known() -> None:
    spec = make_spec(["AffinityAndTaints"], {"thresholdPriorityClassName": "gold"})
    assert validate_kubedescheduler_spec(spec, priority_class_names=["gold"]) == []
    assert validate_kubedescheduler_spec(spec) == []
    finding = only(
        validate_kubedescheduler_spec(spec, priority_class_names=["silver"]),
        "spec.profileCustomizations.thresholdPriorityClassName",
        "error",
    )
    assert finding.operator_behaviour == OPERAND_FAILS
    assert "oc get priorityclasses" in finding.fix


def test_kubevirt_static_and_deviation_thresholds_together() -> None:
    spec = make_spec(KUBEVIRT, {"devDeviationThresholds": "Low", "devLowNodeUtilizationThresholds": "Low"})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devDeviationThresholds", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == (
        "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds customizations can be configured "
        "simultaneously"
    )
    with pytest.raises(KubeDeschedulerError, match="simultaneously"):
        render(spec)


def test_kubevirt_empty_deviation_threshold_is_unknown_to_the_operator() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate"], {"devDeviationThresholds": ""})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devDeviationThresholds", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message.startswith("unknown Descheduler DeviationThresholds threshold , only")
    with pytest.raises(KubeDeschedulerError):
        render(spec)


def test_lifecycle_accepts_both_threshold_kinds() -> None:
    spec = make_spec(["LongLifecycle"], {"devDeviationThresholds": "", "devLowNodeUtilizationThresholds": "Low"})
    assert errors(validate_kubedescheduler_spec(spec)) == []


def test_unknown_prometheus_profile_with_a_consumer() -> None:
    spec = make_spec(["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPU"})
    finding = only(
        validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devActualUtilizationProfile", "error"
    )
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == "unknown prometheus profile: PrometheusCPU"
    assert "did you mean" in finding.fix
    with pytest.raises(KubeDeschedulerError, match="unknown prometheus profile"):
        render(spec)


def test_empty_raw_query_fails_the_operand() -> None:
    spec = make_spec(["LongLifecycle"], {"devActualUtilizationProfile": "query:"})
    finding = only(
        validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devActualUtilizationProfile", "error"
    )
    assert finding.operator_behaviour == OPERAND_FAILS


def test_kubevirt_needs_kubevirt_nodes() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate"])
    assert validate_kubedescheduler_spec(spec, nodes=KUBEVIRT_NODES) == []
    plain = [{"metadata": {"name": "n1", "labels": {}}}, {"metadata": {"name": "n2"}}]
    finding = only(validate_kubedescheduler_spec(spec, nodes=plain), "spec.profiles", "error")
    assert finding.operator_behaviour == DEGRADED_SCALE_TO_ZERO
    assert (
        finding.operator_message
        == "profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed"
    )
    one = only(validate_kubedescheduler_spec(spec, nodes=KUBEVIRT_NODES[:1]), "spec.profiles", "warning")
    assert "fewer than 2 nodes" in one.message


def test_monitoring_label_needed_for_prometheus() -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"devActualUtilizationProfile": "PrometheusCPUUsage"})
    good = {"openshift.io/cluster-monitoring": "true"}
    assert validate_kubedescheduler_spec(spec, namespace_labels=good) == []
    assert validate_kubedescheduler_spec(spec, namespace_labels={"openshift-kube-descheduler-operator": good}) == []
    finding = only(validate_kubedescheduler_spec(spec, namespace_labels={}), "namespace/", "error")
    assert finding.operator_behaviour == LOG_ONLY_IGNORED
    assert finding.operator_message == (
        "namespace openshift-kube-descheduler-operator is not labeled with openshift.io/cluster-monitoring=true"
    )
    assert finding.fix == "oc label namespace openshift-kube-descheduler-operator openshift.io/cluster-monitoring=true"
    assert validate_kubedescheduler_spec(make_spec(["AffinityAndTaints"]), namespace_labels={}) == []


@pytest.mark.parametrize("profile", ["LifecycleAndUtilization", "LongLifecycle", "DevPreviewLongLifecycle"])
def test_scheduler_high_node_utilization_clashes_with_low_node_utilization(profile: str) -> None:
    findings = validate_kubedescheduler_spec(make_spec([profile]), scheduler_profile="HighNodeUtilization")
    finding = only(findings, "spec.profiles", "error")
    assert finding.operator_behaviour == DEGRADED_SCALE_TO_ZERO
    assert "hot loop" in finding.operator_message and "CompactAndScale" in finding.fix


def test_scheduler_low_node_utilization_clashes_with_compact_and_scale() -> None:
    spec = make_spec(["CompactAndScale"])
    finding = only(
        validate_kubedescheduler_spec(spec, scheduler_profile="LowNodeUtilization"), "spec.profiles", "error"
    )
    assert finding.operator_message.startswith("enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization")
    assert validate_kubedescheduler_spec(spec, scheduler_profile="HighNodeUtilization") == []
    assert validate_kubedescheduler_spec(make_spec(["LongLifecycle"]), scheduler_profile="") == []


def test_negative_pod_lifetime_is_platform_dependent() -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"podLifetime": "-5m"})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.podLifetime", "error")
    assert finding.operator_behaviour == PLATFORM_DEPENDENT
    with pytest.raises(KubeDeschedulerError):
        render(spec)


def test_error_carries_all_errors() -> None:
    spec = make_spec(
        ["LifecycleAndUtilization"],
        {
            "thresholdPriority": 1,
            "thresholdPriorityClassName": "a",
            "namespaces": {"included": ["a"], "excluded": ["b"]},
        },
    )
    with pytest.raises(KubeDeschedulerError) as raised:
        render(spec)
    assert len(raised.value.findings) == 2
    assert "1 more error(s)" in str(raised.value)
    assert isinstance(raised.value, ValueError)


# --- validation: legal but surprising -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [("DevPreviewLongLifecycle", "LongLifecycle"), ("DevKubeVirtRelieveAndMigrate", "KubeVirtRelieveAndMigrate")],
)
def test_deprecated_profile_names(old: str, new: str) -> None:
    finding = only(validate_kubedescheduler_spec(make_spec([old])), "spec.profiles[0]", "warning")
    assert finding.operator_behaviour == NOT_APPLICABLE
    assert finding.fix == f'use "{new}"'


@pytest.mark.parametrize("profile", ["LifecycleAndUtilization", "LongLifecycle", "KubeVirtRelieveAndMigrate"])
def test_low_node_utilization_ignores_included(profile: str) -> None:
    spec = make_spec([profile], {"namespaces": {"included": ["apps"]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces.included", "warning")
    assert "LowNodeUtilization" in finding.message
    args = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")
    assert args["evictableNamespaces"] == {"exclude": PROTECTED}


def test_compact_and_scale_with_included_has_no_namespace_filter() -> None:
    spec = make_spec(["CompactAndScale"], {"namespaces": {"included": ["apps"]}})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.namespaces.included", "warning")
    assert "no namespace filter" in finding.message and "excluded" in finding.fix
    assert "evictableNamespaces" not in plugin_args(render(spec)["profiles"][0], "HighNodeUtilization")


@pytest.mark.parametrize(
    ("profiles", "customization", "value"),
    [
        (["AffinityAndTaints"], "devLowNodeUtilizationThresholds", "Low"),
        (["LifecycleAndUtilization"], "devHighNodeUtilizationThresholds", "Minimal"),
        (["LongLifecycle"], "devDeviationThresholds", "Low"),
        (["LifecycleAndUtilization"], "devMigrationCooldown", "5m"),
        (["CompactAndScale"], "podLifetime", "5m"),
    ],
)
def test_customization_without_a_consumer(profiles: list[str], customization: str, value: str) -> None:
    spec = make_spec(profiles, {customization: value})
    finding = only(validate_kubedescheduler_spec(spec), f"spec.profileCustomizations.{customization}", "warning")
    assert "no effect" in finding.message
    assert errors(validate_kubedescheduler_spec(spec)) == []


def test_soft_tainter_flag_is_deprecated() -> None:
    spec = make_spec(["AffinityAndTaints"], {"devEnableSoftTainter": True})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devEnableSoftTainter", "warning")
    assert "ignored" in finding.message


@pytest.mark.parametrize(
    ("value", "text"), [("500ms", "evicts every pod"), ("0s", "evicts every pod"), ("90.5s", "(90)")]
)
def test_pod_lifetime_surprises(value: str, text: str) -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"podLifetime": value})
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.podLifetime", "warning")
    assert text in finding.message


def test_mode_default_and_management_state() -> None:
    spec = make_spec(["AffinityAndTaints"], managementState="Removed")
    del spec["mode"]
    found = {f.field: f for f in warnings(validate_kubedescheduler_spec(spec))}
    assert "Predictive" in found["spec.mode"].message
    assert "neither stops nor removes the descheduler" in found["spec.managementState"].message


def test_missing_management_state_degrades_the_operator() -> None:
    spec = make_spec(["AffinityAndTaints"])
    del spec["managementState"]
    finding = only(validate_kubedescheduler_spec(spec), "spec.managementState", "error")
    assert finding.operator_behaviour == DEGRADED_SCALE_TO_ZERO
    assert finding.operator_message == ("spec.managementState in body should match "
                                        "'^(Managed|Unmanaged|Force|Removed)$'")
    assert "scales the descheduler to 0" in finding.message and 'Fix: set spec.managementState to "Managed"' in (
        finding.message)
    # the rendering does not depend on it: a plan's preview of such a spec is the policy it asks for
    assert errors(validate_kubedescheduler_spec(spec, management_state_required=False)) == []
    assert [p["name"] for p in render(spec)["profiles"]] == ["AffinityAndTaints"]


def test_operator_owned_fields_are_warned() -> None:
    spec = make_spec(["AffinityAndTaints"], unsupportedConfigOverrides={"a": 1})
    assert only(validate_kubedescheduler_spec(spec), "spec.unsupportedConfigOverrides", "warning")


def test_every_warning_is_not_applicable_and_actionable() -> None:
    spec = make_spec(
        ["DevPreviewLongLifecycle", "EvictPodsWithPVC"],
        {"namespaces": {"included": ["apps"]}, "podLifetime": "1h", "devEnableSoftTainter": False},
        evictionLimits={"total": 0},
        bogus=True,
    )
    found = warnings(validate_kubedescheduler_spec(spec))
    assert len(found) >= 5
    for finding in found:
        # an unknown field is pruned by the API server; every other warning has no effect on the cluster
        expected = PRUNED_BY_API_SERVER if finding.field == "spec.bogus" else NOT_APPLICABLE
        assert finding.operator_behaviour == expected, finding
        assert_names_field_and_fix(finding)
    assert any(finding.field == "spec.bogus" for finding in found)


def test_field_validation_makes_unknown_fields_errors_warnings_or_nothing() -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
        apply_field_validation,
    )

    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"include": ["a"]}}, modee="Automatic",
                     logLevel="Verbose")
    findings = validate_kubedescheduler_spec(spec)
    strict = apply_field_validation(findings, "Strict")
    unknown = {f.field: f for f in strict if "not a field of KubeDescheduler v1" in f.message}
    assert set(unknown) == {"spec.modee", "spec.profileCustomizations.namespaces.include"}
    assert all(f.severity == "error" and "field_validation is Strict" in f.message for f in unknown.values())
    assert 'did you mean "mode"' in unknown["spec.modee"].fix
    warned = apply_field_validation(findings, "Warn")
    assert [f.severity for f in warned if f.field == "spec.modee"] == ["warning"]
    ignored = apply_field_validation(findings, "Ignore")
    assert not [f for f in ignored if f.field in unknown]
    # the other findings (an invalid logLevel) are the same whatever the choice
    assert [f for f in strict if f.field == "spec.logLevel"] == [f for f in ignored if f.field == "spec.logLevel"]
    with pytest.raises(ValueError, match="field_validation must be one of Strict, Warn, Ignore"):
        apply_field_validation(findings, "strict")
