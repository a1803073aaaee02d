"""Tests for the KubeDescheduler -> DeschedulerPolicy translation (the spec validation: test_policy_validation.py).

Expected policies in fixtures/kubedescheduler/*.yaml are the operator's own rendered expectations
(openshift/cluster-kube-descheduler-operator@945dcaa pkg/operator/testdata/assets), with the inputs of the matching
TestManageConfigMap cases (pkg/operator/target_config_reconciler_test.go).
"""

from __future__ import annotations

import copy
import json

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import (
    compact_policy,
    render_policy,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    protected_namespaces,
)

from kubedescheduler.policy_helpers import (
    FIXTURES,
    KUBEVIRT,
    NAMESPACES,
    PROMETHEUS_URL,
    PROTECTED,
    errors,
    load_fixture,
    make_spec,
    only,
    plugin_args,
    profile_named,
    render,
    warnings,
)

# --- rendering: the operator's own expectations -------------------------------------------------------------------

OPERATOR_CASES = [
    ("lifecycleAndUtilizationPodLifeTimeCustomizationConfig.yaml", ["LifecycleAndUtilization"], {"podLifetime": "5m"}),
    ("lifecycleAndUtilizationEvictPvcPodsConfig.yaml", ["LifecycleAndUtilization", "EvictPodsWithPVC"], None),
    (
        "lifecycleAndUtilizationPodLifeTimeWithThresholdPriorityClassNameConfig.yaml",
        ["LifecycleAndUtilization"],
        {"thresholdPriorityClassName": "className"},
    ),
    (
        "lifecycleAndUtilizationPodLifeTimeWithThresholdPriorityConfig.yaml",
        ["LifecycleAndUtilization"],
        {"thresholdPriority": 1000},
    ),
    (
        "lowNodeUtilizationIncludedNamespace.yaml",
        ["LifecycleAndUtilization"],
        {"devLowNodeUtilizationThresholds": "Low", "namespaces": {"included": ["includedNamespace"]}},
    ),
    ("lowNodeUtilizationLowConfig.yaml", ["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Low"}),
    ("lowNodeUtilizationMediumConfig.yaml", ["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Medium"}),
    ("lowNodeUtilizationMediumConfig.yaml", ["LifecycleAndUtilization"], None),
    ("lowNodeUtilizationMediumConfig.yaml", ["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": ""}),
    ("lowNodeUtilizationHighConfig.yaml", ["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "High"}),
    ("relieveAndMigrateDefaults.yaml", KUBEVIRT, None),
    ("relieveAndMigrateDefaults.yaml", ["KubeVirtRelieveAndMigrate"], None),
    ("relieveAndMigrateLowConfig.yaml", KUBEVIRT, {"devLowNodeUtilizationThresholds": "Low"}),
    ("relieveAndMigrateMediumConfig.yaml", KUBEVIRT, {"devLowNodeUtilizationThresholds": "Medium"}),
    ("relieveAndMigrateHighConfig.yaml", KUBEVIRT, {"devLowNodeUtilizationThresholds": "High"}),
    (
        "relieveAndMigrateDeviationLowWithCombinedMetrics.yaml",
        KUBEVIRT,
        {"devDeviationThresholds": "Low", "devActualUtilizationProfile": "PrometheusCPUCombined"},
    ),
    ("relieveAndMigrateIncludedNamespace.yaml", KUBEVIRT, {"namespaces": {"included": ["includedNamespace"]}}),
    ("relieveAndMigrateDynamicThresholdsLow.yaml", KUBEVIRT, {"devDeviationThresholds": "Low"}),
    ("relieveAndMigrateDynamicThresholdsMedium.yaml", KUBEVIRT, {"devDeviationThresholds": "Medium"}),
    ("relieveAndMigrateDynamicThresholdsHigh.yaml", KUBEVIRT, {"devDeviationThresholds": "High"}),
    (
        "relieveAndMigrateMigrationCooldown.yaml",
        KUBEVIRT,
        {"devMigrationCooldown": "15m", "devMaxMigrationCooldown": "6h", "devMigrationHistoryWindow": "48h"},
    ),
    (
        "affinityAndTaintsWithNamespaces.yaml",
        ["AffinityAndTaints"],
        {"namespaces": {"included": ["includedNamespace"]}},
    ),
    ("longLifecycleWithNamespaces.yaml", ["LongLifecycle"], {"namespaces": {"included": ["includedNamespace"]}}),
    ("longLifecycleWithLocalStorage.yaml", ["LongLifecycle", "EvictPodsWithLocalStorage"], None),
    ("longLifecycleWithMetrics.yaml", ["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPUUsage"}),
    ("softTopologyAndDuplicates.yaml", ["SoftTopologyAndDuplicates"], None),
    ("topologyAndDuplicates.yaml", ["TopologyAndDuplicates"], None),
    (
        "highNodeUtilizationWithNamespaces.yaml",
        ["CompactAndScale"],
        {"namespaces": {"included": ["includedNamespace"]}},
    ),
    ("highNodeUtilizationMinimal.yaml", ["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Minimal"}),
    ("highNodeUtilization.yaml", ["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Modest"}),
    ("highNodeUtilization.yaml", ["CompactAndScale"], {"devHighNodeUtilizationThresholds": ""}),
    ("highNodeUtilization.yaml", ["CompactAndScale"], None),
    ("highNodeUtilizationModerate.yaml", ["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Moderate"}),
]


@pytest.mark.parametrize(("fixture", "profiles", "customizations"), OPERATOR_CASES)
def test_render_matches_operator_testdata(fixture: str, profiles: list[str], customizations: dict | None) -> None:
    assert render(make_spec(profiles, customizations)) == load_fixture(fixture)


def test_render_eviction_limits_match_operator_testdata() -> None:
    limits = {"total": 10, "node": 3}
    lifecycle = make_spec(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": ""}, evictionLimits=limits)
    assert render(lifecycle) == load_fixture("lowNodeUtilizationEvictionLimits.yaml")
    assert render(make_spec(KUBEVIRT, evictionLimits=limits)) == load_fixture("relieveAndMigrateEvictionLimits.yaml")


def test_every_fixture_is_covered() -> None:
    covered = {case[0] for case in OPERATOR_CASES} | {
        "lowNodeUtilizationEvictionLimits.yaml",
        "relieveAndMigrateEvictionLimits.yaml",
    }
    assert covered == {p.name for p in FIXTURES.glob("*.yaml")}


def test_render_keys_are_sorted_like_go_json() -> None:
    policy = render(make_spec(["LifecycleAndUtilization"], {"thresholdPriority": 5}))
    assert json.dumps(policy) == json.dumps(policy, sort_keys=True)


def test_render_accepts_bare_prometheus_host() -> None:
    spec = make_spec(["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPUUsage"})
    policy = render(spec, prometheus_url="prometheus-k8s-openshift-monitoring.apps.example.com")
    assert policy == load_fixture("longLifecycleWithMetrics.yaml")


def test_render_default_prometheus_url_is_a_placeholder() -> None:
    policy = render_policy(make_spec(["KubeVirtRelieveAndMigrate"]), namespaces=NAMESPACES)
    assert policy["metricsProviders"][0]["prometheus"]["url"].endswith(".invalid")


# --- rendering: per profile ---------------------------------------------------------------------------------------


def test_affinity_and_taints_defaults() -> None:
    profile = render(make_spec(["AffinityAndTaints"]))["profiles"][0]
    assert profile["name"] == "AffinityAndTaints"
    assert [c["name"] for c in profile["pluginConfig"]] == [
        "RemovePodsViolatingInterPodAntiAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
        "DefaultEvictor",
    ]
    assert profile["plugins"]["deschedule"]["enabled"] == [
        "RemovePodsViolatingInterPodAntiAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
    ]
    assert profile["plugins"]["balance"] == {"disabled": None, "enabled": None}
    for config in profile["pluginConfig"][:3]:
        assert config["args"]["namespaces"] == {"exclude": PROTECTED}
    assert plugin_args(profile, "RemovePodsViolatingNodeAffinity")["nodeAffinityType"] == [
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert plugin_args(profile, "DefaultEvictor") == {"ignorePvcPods": True, "podProtections": {}}


def test_lifecycle_and_utilization_defaults() -> None:
    assert render(make_spec(["LifecycleAndUtilization"])) == load_fixture("lowNodeUtilizationMediumConfig.yaml")


def test_long_lifecycle_is_lifecycle_without_pod_lifetime() -> None:
    long_profile = render(make_spec(["LongLifecycle"]))["profiles"][0]
    full = render(make_spec(["LifecycleAndUtilization"]))["profiles"][0]
    assert long_profile["pluginConfig"] == full["pluginConfig"][1:]
    assert long_profile["plugins"]["deschedule"]["enabled"] == ["RemovePodsHavingTooManyRestarts"]


def test_long_lifecycle_ignores_pod_lifetime_with_warning() -> None:
    spec = make_spec(["LongLifecycle"], {"podLifetime": "1h"})
    assert "PodLifeTime" not in json.dumps(render(spec))
    finding = only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.podLifetime", "warning")
    assert "no effect" in finding.message and "LifecycleAndUtilization" in finding.fix


def test_compact_and_scale_defaults() -> None:
    profile = render(make_spec(["CompactAndScale"]))["profiles"][0]
    assert plugin_args(profile, "HighNodeUtilization") == {
        "evictableNamespaces": {"exclude": PROTECTED},
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
    }
    assert profile["plugins"]["balance"]["enabled"] == ["HighNodeUtilization"]


@pytest.mark.parametrize("name", ["KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"])
def test_kubevirt_profile_policy_level_settings(name: str) -> None:
    policy = render(make_spec([name]))
    assert policy["nodeSelector"] == "kubevirt.io/schedulable=true"
    assert policy["maxNoOfPodsToEvictTotal"] == 5
    assert policy["maxNoOfPodsToEvictPerNode"] == 2
    assert policy["metricsProviders"] == [{"prometheus": {"url": PROMETHEUS_URL}, "source": "Prometheus"}]
    profile = policy["profiles"][0]
    assert profile["name"] == "KubeVirtRelieveAndMigrate"
    assert profile["plugins"]["filter"]["enabled"] == ["DefaultEvictor", "KubevirtMigrationAware"]
    assert profile["plugins"]["preevictionfilter"]["enabled"] == ["KubevirtMigrationAware"]
    assert plugin_args(profile, "KubevirtMigrationAware") == {}


def test_kubevirt_default_evictor_is_hard_coded_but_takes_priority_threshold() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate", "EvictPodsWithPVC"], {"thresholdPriority": 100})
    evictor = plugin_args(render(spec)["profiles"][0], "DefaultEvictor")
    assert evictor == {
        "evictLocalStoragePods": True,
        "noEvictionPolicy": "Mandatory",
        "podProtections": {},
        "priorityThreshold": {"name": "", "value": 100},
    }
    finding = only(validate_kubedescheduler_spec(spec), "spec.profiles", "warning")
    assert "change nothing" in finding.message and finding.value == ["EvictPodsWithPVC"]


def test_kubevirt_empty_low_threshold_keeps_deviation_mode_with_medium_numbers() -> None:
    args = plugin_args(
        render(make_spec(KUBEVIRT, {"devLowNodeUtilizationThresholds": ""}))["profiles"][0], "LowNodeUtilization"
    )
    assert args["useDeviationThresholds"] is True
    assert args["thresholds"] == {"MetricResource": 20}
    assert args["targetThresholds"] == {"MetricResource": 50}


@pytest.mark.parametrize(
    ("preset", "low", "high"),
    [("AsymmetricLow", 0, 10), ("AsymmetricMedium", 0, 20), ("AsymmetricHigh", 0, 30)],
)
def test_kubevirt_asymmetric_deviation_presets(preset: str, low: int, high: int) -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate"], {"devDeviationThresholds": preset})
    args = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")
    assert (args["thresholds"], args["targetThresholds"]) == ({"MetricResource": low}, {"MetricResource": high})
    assert args["useDeviationThresholds"] is True


def test_kubevirt_utilization_profile_override() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate"], {"devActualUtilizationProfile": "PrometheusCPUUsage"})
    args = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")
    assert args["metricsUtilization"] == {"prometheus": {"query": "instance:node_cpu:rate:sum"}, "source": "Prometheus"}


def test_kubevirt_migration_durations_use_go_formatting() -> None:
    spec = make_spec(
        ["KubeVirtRelieveAndMigrate"], {"devMigrationCooldown": "90s", "devMigrationHistoryWindow": "1.5h"}
    )
    args = plugin_args(render(spec)["profiles"][0], "KubevirtMigrationAware")
    assert args == {"migrationCooldown": "1m30s", "migrationHistoryWindow": "1h30m0s"}


# --- rendering: customizations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [("5m", 300), ("1h30m", 5400), ("48h", 172800), ("90s", 90), ("1.5s", 1), ("0s", 0), ("500ms", 0)],
)
def test_pod_lifetime_to_seconds(duration: str, seconds: int) -> None:
    profile = render(make_spec(["LifecycleAndUtilization"], {"podLifetime": duration}))["profiles"][0]
    assert plugin_args(profile, "PodLifeTime")["maxPodLifeTimeSeconds"] == seconds


@pytest.mark.parametrize(
    ("profile", "query"),
    [
        ("PrometheusCPUUsage", "instance:node_cpu:rate:sum"),
        ("PrometheusCPUPSIPressure", "rate(node_pressure_cpu_waiting_seconds_total[1m])"),
        ("PrometheusMemoryPSIPressure", "rate(node_pressure_memory_waiting_seconds_total[1m])"),
        ("PrometheusIOPSIPressure", "rate(node_pressure_io_waiting_seconds_total[1m])"),
        ("PrometheusCPUCombined", "descheduler:combined_utilization_and_pressure:avg1m"),
        (
            "PrometheusCPUMemoryCombinedProfile",
            "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m",
        ),
        ("query:avg(up)", "avg(up)"),
    ],
)
def test_actual_utilization_profiles(profile: str, query: str) -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"devActualUtilizationProfile": profile})
    policy = render(spec)
    args = plugin_args(policy["profiles"][0], "LowNodeUtilization")
    assert args["metricsUtilization"]["prometheus"]["query"] == query
    assert args["thresholds"] == {"MetricResource": 20}
    assert args["targetThresholds"] == {"MetricResource": 50}
    assert policy["metricsProviders"][0]["source"] == "Prometheus"


def test_psi_by_utilization_query_is_verbatim() -> None:
    spec = make_spec(["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPUPSIPressureByUtilization"})
    query = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")["metricsUtilization"]["prometheus"]["query"]
    assert query == (
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and "
        '(1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m]))) > 0.7 or '
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0"
    )


def test_metrics_with_low_threshold_preset() -> None:
    spec = make_spec(
        ["LifecycleAndUtilization"],
        {"devActualUtilizationProfile": "PrometheusCPUUsage", "devLowNodeUtilizationThresholds": "High"},
    )
    args = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")
    assert (args["thresholds"], args["targetThresholds"]) == ({"MetricResource": 40}, {"MetricResource": 70})


def test_lifecycle_ignores_deviation_thresholds() -> None:
    spec = make_spec(
        ["LifecycleAndUtilization"], {"devDeviationThresholds": "High", "devLowNodeUtilizationThresholds": "Low"}
    )
    args = plugin_args(render(spec)["profiles"][0], "LowNodeUtilization")
    assert "useDeviationThresholds" not in args
    assert args["thresholds"] == {"cpu": 10, "memory": 10, "pods": 10}
    assert only(validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devDeviationThresholds", "warning")


def test_excluded_namespaces_extend_protected_list_everywhere() -> None:
    spec = make_spec(
        ["AffinityAndTaints", "LifecycleAndUtilization"], {"namespaces": {"excluded": ["team-a", "team-b"]}}
    )
    policy = render(spec)
    expected = PROTECTED + ["team-a", "team-b"]
    for profile in policy["profiles"]:
        for config in profile["pluginConfig"]:
            if config["name"] == "LowNodeUtilization":
                assert config["args"]["evictableNamespaces"] == {"exclude": expected}
            elif config["name"] != "DefaultEvictor":
                assert config["args"]["namespaces"] == {"exclude": expected}
    compact = render(make_spec(["CompactAndScale"], {"namespaces": {"excluded": ["team-a"]}}))
    assert plugin_args(compact["profiles"][0], "HighNodeUtilization")["evictableNamespaces"] == {
        "exclude": PROTECTED + ["team-a"]
    }


def test_combination_affinity_pvc_and_excluded_namespaces() -> None:
    spec = make_spec(["AffinityAndTaints", "EvictPodsWithPVC"], {"namespaces": {"excluded": ["batch"]}})
    policy = render(spec)
    assert [p["name"] for p in policy["profiles"]] == ["AffinityAndTaints"]
    profile = policy["profiles"][0]
    assert plugin_args(profile, "DefaultEvictor") == {"podProtections": {}}
    assert plugin_args(profile, "RemovePodsViolatingNodeTaints") == {"namespaces": {"exclude": PROTECTED + ["batch"]}}
    assert errors(validate_kubedescheduler_spec(spec, namespaces=NAMESPACES)) == []


def test_both_modifier_profiles_change_every_default_evictor() -> None:
    spec = make_spec(["EvictPodsWithLocalStorage", "TopologyAndDuplicates", "EvictPodsWithPVC", "AffinityAndTaints"])
    policy = render(spec)
    assert [p["name"] for p in policy["profiles"]] == ["TopologyAndDuplicates", "AffinityAndTaints"]
    for profile in policy["profiles"]:
        assert plugin_args(profile, "DefaultEvictor") == {"evictLocalStoragePods": True, "podProtections": {}}


def test_profile_order_follows_spec_and_deprecated_names_are_renamed() -> None:
    spec = make_spec(["SoftTopologyAndDuplicates", "DevPreviewLongLifecycle", "AffinityAndTaints"])
    assert [p["name"] for p in render(spec)["profiles"]] == [
        "SoftTopologyAndDuplicates",
        "LongLifecycle",
        "AffinityAndTaints",
    ]


def test_priority_class_name_threshold() -> None:
    spec = make_spec(["TopologyAndDuplicates"], {"thresholdPriorityClassName": "high"})
    evictor = plugin_args(render(spec)["profiles"][0], "DefaultEvictor")
    assert evictor["priorityThreshold"] == {"name": "high", "value": None}


def test_priority_threshold_zero_is_set() -> None:
    evictor = plugin_args(
        render(make_spec(["CompactAndScale"], {"thresholdPriority": 0}))["profiles"][0], "DefaultEvictor"
    )
    assert evictor["priorityThreshold"] == {"name": "", "value": 0}


def test_eviction_limits_node_applies_to_every_low_node_utilization() -> None:
    spec = make_spec(["AffinityAndTaints", "LifecycleAndUtilization"], evictionLimits={"node": 4})
    policy = render(spec)
    assert policy["maxNoOfPodsToEvictPerNode"] == 4
    assert "maxNoOfPodsToEvictTotal" not in policy
    assert plugin_args(profile_named(policy, "LifecycleAndUtilization"), "LowNodeUtilization")["evictionLimits"] == {
        "node": 4
    }
    assert "evictionLimits" not in json.dumps(profile_named(policy, "AffinityAndTaints"))


def test_eviction_limits_total_only() -> None:
    policy = render(make_spec(["AffinityAndTaints"], evictionLimits={"total": 7}))
    assert policy["maxNoOfPodsToEvictTotal"] == 7
    assert "maxNoOfPodsToEvictPerNode" not in policy


def test_kubevirt_node_selector_is_global() -> None:
    spec = make_spec(["KubeVirtRelieveAndMigrate", "AffinityAndTaints"])
    policy = render(spec)
    assert policy["nodeSelector"] == "kubevirt.io/schedulable=true"
    assert [p["name"] for p in policy["profiles"]] == ["KubeVirtRelieveAndMigrate", "AffinityAndTaints"]
    finding = only(validate_kubedescheduler_spec(spec), "spec.profiles", "warning")
    assert "nodeSelector" in finding.message and "AffinityAndTaints" in finding.message


def test_unused_utilization_profile_still_adds_metrics_provider() -> None:
    spec = make_spec(["AffinityAndTaints"], {"devActualUtilizationProfile": "NoSuchProfile"})
    policy = render(spec)
    assert policy["metricsProviders"] == [{"prometheus": {"url": PROMETHEUS_URL}, "source": "Prometheus"}]
    finding = only(
        validate_kubedescheduler_spec(spec), "spec.profileCustomizations.devActualUtilizationProfile", "warning"
    )
    assert "not used" in finding.message and "prometheus-k8s route" in finding.message


def test_only_modifier_profiles_render_no_profiles() -> None:
    spec = make_spec(["EvictPodsWithPVC"])
    assert render(spec) == {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy"}
    finding = only(validate_kubedescheduler_spec(spec), "spec.profiles", "warning")
    assert "nothing is ever evicted" in finding.message


def test_protected_namespaces_without_facts_are_the_static_three() -> None:
    policy = render_policy(make_spec(["TopologyAndDuplicates"]))
    assert plugin_args(policy["profiles"][0], "RemoveDuplicates")["namespaces"] == {
        "exclude": ["kube-system", "hypershift", "openshift"]
    }


def test_negative_eviction_limits_wrap_like_go() -> None:
    spec = make_spec(["LifecycleAndUtilization"], evictionLimits={"total": -1, "node": 0})
    policy = render(spec)
    assert policy["maxNoOfPodsToEvictTotal"] == 2**64 - 1
    assert policy["maxNoOfPodsToEvictPerNode"] == 0
    found = {f.field: f for f in warnings(validate_kubedescheduler_spec(spec))}
    assert "no limit" in found["spec.evictionLimits.total"].message
    assert "blocks every eviction" in found["spec.evictionLimits.node"].message


def test_compact_policy_drops_noise_only() -> None:
    policy = render(make_spec(["KubeVirtRelieveAndMigrate"], {"thresholdPriorityClassName": "x"}))
    compact = compact_policy(policy)
    profile = compact["profiles"][0]
    assert set(profile["plugins"]) == {"balance", "filter", "preevictionfilter"}
    assert profile["plugins"]["filter"] == {"enabled": ["DefaultEvictor", "KubevirtMigrationAware"]}
    assert plugin_args(profile, "DefaultEvictor") == {
        "evictLocalStoragePods": True,
        "noEvictionPolicy": "Mandatory",
        "priorityThreshold": {"name": "x"},
    }
    assert plugin_args(profile, "KubevirtMigrationAware") == {}
    assert policy["profiles"][0]["plugins"]["sort"] == {"disabled": None, "enabled": None}  # input untouched


def test_render_does_not_mutate_spec() -> None:
    spec = make_spec(["LifecycleAndUtilization"], {"namespaces": {"excluded": ["a"]}}, evictionLimits={"node": 1})
    before = copy.deepcopy(spec)
    render(spec)
    assert spec == before


# --- protected namespaces -----------------------------------------------------------------------------------------


def test_protected_namespaces_order() -> None:
    assert protected_namespaces(
        ["openshift-b", "default", "openshift", "openshift-a", "kube-public", "openshift-a"]
    ) == [
        "kube-system",
        "hypershift",
        "openshift",
        "openshift-a",
        "openshift-b",
    ]
