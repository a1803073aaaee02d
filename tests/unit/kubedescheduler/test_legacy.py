"""The v1beta1 (OKD/OCP 4.4–4.8) KubeDescheduler translation to v1, with its report.

The inputs are the examples of the OpenShift documentation (modules/nodes-descheduler-configuring-strategies.adoc,
4.5/4.6) and of the operator's release-4.6 README; expected outputs are written out literally.
"""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.legacy import (
    LegacyTranslationError,
    translate_legacy_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)

# modules/nodes-descheduler-configuring-strategies.adoc (OpenShift 4.5/4.6 documentation)
DOCS_EXAMPLE = {
    "apiVersion": "operator.openshift.io/v1beta1",
    "kind": "KubeDescheduler",
    "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
    "spec": {
        "deschedulingIntervalSeconds": 3600,
        "strategies": [
            {"name": "LowNodeUtilization", "params": [
                {"name": "CPUThreshold", "value": "10"},
                {"name": "MemoryThreshold", "value": "20"},
                {"name": "PodsThreshold", "value": "30"},
                {"name": "MemoryTargetThreshold", "value": "40"},
                {"name": "CPUTargetThreshold", "value": "50"},
                {"name": "PodsTargetThreshold", "value": "60"},
                {"name": "NumberOfNodes", "value": "3"},
            ]},
            {"name": "RemoveDuplicates"},
            {"name": "RemovePodsHavingTooManyRestarts", "params": [
                {"name": "PodRestartThreshold", "value": "10"},
                {"name": "IncludingInitContainers", "value": "false"},
            ]},
        ],
    },
}


def sources(entries: list[dict]) -> list[str]:
    return [entry["source"] for entry in entries]


def entry(report: dict, outcome: str, source: str) -> dict:
    matches = [e for e in report[outcome] if e["source"] == source]
    assert len(matches) == 1, f"{source} not (once) in {outcome}: {sources(report[outcome])}"
    return matches[0]


def test_documentation_example_spec() -> None:
    report = translate_legacy_spec(DOCS_EXAMPLE)
    assert report["spec"] == {
        "managementState": "Managed",
        "deschedulingIntervalSeconds": 3600,
        "mode": "Automatic",
        "profiles": ["TopologyAndDuplicates", "LongLifecycle", "EvictPodsWithPVC"],
    }
    assert report["source_api_version"] == "operator.openshift.io/v1beta1"
    assert report["api_version"] == "operator.openshift.io/v1"


def test_documentation_example_report() -> None:
    report = translate_legacy_spec(DOCS_EXAMPLE)
    assert sources(report["maps"]) == [
        "spec.deschedulingIntervalSeconds",
        "spec.flags (no --dry-run)",
        "spec.strategies[0] (LowNodeUtilization)",  # LongLifecycle runs exactly LowNodeUtilization + restarts
        "spec.strategies[2] (RemovePodsHavingTooManyRestarts)",
        "spec.strategies",  # EvictPodsWithPVC keeps PVC pods evictable, as v0.19 did
    ]
    assert sources(report["changes_meaning"]) == [
        "spec.strategies[1] (RemoveDuplicates)",
        "spec.strategies[2] (RemovePodsHavingTooManyRestarts) params.IncludingInitContainers",
        *[f"spec.strategies[0] (LowNodeUtilization) params.{name}" for name in (
            "CPUThreshold", "MemoryThreshold", "PodsThreshold", "CPUTargetThreshold", "MemoryTargetThreshold",
            "PodsTargetThreshold")],
        "spec.strategies",  # protected namespaces
    ]
    assert sources(report["cannot_express"]) == [
        "spec.strategies[2] (RemovePodsHavingTooManyRestarts) params.PodRestartThreshold",
    ]
    assert sources(report["ignored"]) == ["spec.strategies[0] (LowNodeUtilization) params.NumberOfNodes"]
    assert report["summary"] == ("5 setting(s) map exactly, 9 change meaning, 1 cannot be expressed in v1, "
                                 "1 were ignored by the legacy operator too")


def test_documentation_example_notes_say_why() -> None:
    report = translate_legacy_spec(DOCS_EXAMPLE)
    restarts = entry(report, "cannot_express",
                     "spec.strategies[2] (RemovePodsHavingTooManyRestarts) params.PodRestartThreshold")
    assert restarts["value"] == "10"
    assert restarts["note"] == "v1 fixes the threshold at 100 restarts, so fewer pods are evicted than with 10"
    cpu = entry(report, "changes_meaning", "spec.strategies[0] (LowNodeUtilization) params.CPUThreshold")
    assert cpu["target"] == "spec.profileCustomizations.devLowNodeUtilizationThresholds"
    assert cpu["note"] == (
        "nearest v1 preset Medium: thresholds 20% and targetThresholds 50% for cpu, memory and pods (legacy "
        "thresholds {'cpu': 10, 'memory': 20, 'pods': 30}, targetThresholds {'cpu': 50, 'memory': 40, 'pods': 60}; "
        "resources left out counted as 100%)")
    duplicates = entry(report, "changes_meaning", "spec.strategies[1] (RemoveDuplicates)")
    assert "RemovePodsViolatingTopologySpreadConstraint" in duplicates["note"]
    lifecycle = entry(report, "maps", "spec.strategies[2] (RemovePodsHavingTooManyRestarts)")
    assert lifecycle["note"] == "profile LongLifecycle runs RemovePodsHavingTooManyRestarts"
    number_of_nodes = entry(report, "ignored", "spec.strategies[0] (LowNodeUtilization) params.NumberOfNodes")
    assert "never applied" in number_of_nodes["note"]


def test_documentation_example_translation_is_a_valid_v1_spec() -> None:
    report = translate_legacy_spec(DOCS_EXAMPLE)
    findings = validate_kubedescheduler_spec(report["spec"], namespaces=["default", "openshift-etcd"])
    assert [f for f in findings if f.severity == "error"] == []


# operator release-4.6 README (sample CR), with priority and namespace params on several strategies
README_46 = {
    "deschedulingIntervalSeconds": 1800,
    "flags": ["--dry-run", "--v=4"],
    "strategies": [
        {"name": "PodLifeTime", "params": [
            {"name": "MaxPodLifeTimeSeconds", "value": "86400"},
            {"name": "IncludeNamespaces", "value": "my-project,other"},
            {"name": "thresholdPriority", "value": 1000000000},
        ]},
        {"name": "RemovePodsHavingTooManyRestarts", "params": [
            {"name": "PodRestartThreshold", "value": "100"},
            {"name": "IncludingInitContainers", "value": "true"},
            {"name": "includeNamespaces", "value": "my-project"},
            {"name": "thresholdPriority", "value": "2000"},
        ]},
        {"name": "LowNodeUtilization", "params": [
            {"name": "CPUThreshold", "value": "10"}, {"name": "MemoryThreshold", "value": "10"},
            {"name": "PodsThreshold", "value": "10"}, {"name": "CPUTargetThreshold", "value": "30"},
            {"name": "MemoryTargetThreshold", "value": "30"}, {"name": "PodsTargetThreshold", "value": "30"},
            {"name": "nodes", "value": "3"},
        ]},
        {"name": "nodetaints"},
        {"name": "RemoveOrphans"},
    ],
}


def test_lifecycle_namespaces_priority_and_flags() -> None:
    report = translate_legacy_spec(README_46)
    assert report["spec"] == {
        "managementState": "Managed",
        "deschedulingIntervalSeconds": 1800,
        "logLevel": "Debug",
        "mode": "Predictive",
        "profiles": ["AffinityAndTaints", "LifecycleAndUtilization", "EvictPodsWithPVC"],
        "profileCustomizations": {
            "podLifetime": "24h0m0s",
            "devLowNodeUtilizationThresholds": "Low",
            "namespaces": {"included": ["my-project", "other"]},
            "thresholdPriority": 2000,
        },
    }


def test_lifecycle_report_outcomes() -> None:
    report = translate_legacy_spec(README_46)
    assert entry(report, "maps", "spec.flags[0]")["note"] == "Predictive: v1 adds --dry-run=true for Predictive only"
    assert entry(report, "maps", "spec.flags[1]")["target"] == "spec.logLevel"
    assert entry(report, "maps", "spec.strategies[0] (PodLifeTime) params.MaxPodLifeTimeSeconds")["note"] == (
        "same lifetime, as a duration (24h0m0s)")
    assert entry(report, "maps", "spec.strategies[1] (RemovePodsHavingTooManyRestarts) params.PodRestartThreshold")
    assert entry(report, "maps", "spec.strategies[1] (RemovePodsHavingTooManyRestarts) params.IncludingInitContainers")
    for name in ("CPUThreshold", "PodsTargetThreshold"):
        assert entry(report, "maps", f"spec.strategies[2] (LowNodeUtilization) params.{name}")["note"].startswith(
            "nearest v1 preset Low: thresholds 10% and targetThresholds 30%")
    # one namespace list for all profiles: the union, and it differs from each strategy's own list
    included = entry(report, "changes_meaning", "spec.strategies[0] (PodLifeTime) params.IncludeNamespaces")
    assert included["target"] == "spec.profileCustomizations.namespaces.included"
    assert "['my-project', 'other']" in included["note"]
    # one priority threshold: the lowest, which protects the most pods
    priority = entry(report, "changes_meaning", "spec.strategies[0] (PodLifeTime) params.thresholdPriority")
    assert priority["value"] == "1000000000"
    assert "2000" in priority["note"]
    assert entry(report, "cannot_express", "spec.strategies[2] (LowNodeUtilization) params.nodes")["value"] == "3"
    assert entry(report, "cannot_express", "spec.strategies[4] (RemoveOrphans)")["note"].startswith(
        "unknown strategy")
    taints = entry(report, "changes_meaning", "spec.strategies[3] (nodetaints)")
    assert taints["note"] == ("profile AffinityAndTaints runs RemovePodsViolatingNodeTaints; AffinityAndTaints also "
                              "runs RemovePodsViolatingInterPodAntiAffinity, RemovePodsViolatingNodeAffinity")


def test_all_affinity_strategies_map_exactly() -> None:
    report = translate_legacy_spec({"deschedulingIntervalSeconds": 60, "strategies": [
        {"name": "interpodantiaffinity"}, {"name": "nodeaffinity"}, {"name": "RemovePodsViolatingNodeTaints"}]})
    assert report["spec"]["profiles"] == ["AffinityAndTaints", "EvictPodsWithPVC"]
    assert sources(report["maps"])[2:5] == ["spec.strategies[0] (interpodantiaffinity)",
                                            "spec.strategies[1] (nodeaffinity)",
                                            "spec.strategies[2] (RemovePodsViolatingNodeTaints)"]


def test_excluded_namespaces_and_both_lists() -> None:
    report = translate_legacy_spec({"deschedulingIntervalSeconds": 60, "strategies": [
        {"name": "nodeaffinity", "params": [{"name": "ExcludeNamespaces", "value": "a, b"}]},
        {"name": "nodetaints", "params": [{"name": "IncludeNamespaces", "value": "c"}]},
    ]})
    assert report["spec"]["profileCustomizations"]["namespaces"] == {"included": ["c"]}
    lost = entry(report, "cannot_express", "spec.strategies[0] (nodeaffinity) params.ExcludeNamespaces")
    assert lost["value"] == "a,b"
    assert "included" in lost["note"]


def test_priority_class_names() -> None:
    report = translate_legacy_spec({"deschedulingIntervalSeconds": 60, "strategies": [
        {"name": "nodeaffinity", "params": [{"name": "ThresholdPriorityClassName", "value": "prod"}]},
        {"name": "nodetaints", "params": [{"name": "ThresholdPriorityClassName", "value": "dev"}]},
        {"name": "interpodantiaffinity", "params": [{"name": "ThresholdPriority", "value": "5"},
                                                    {"name": "ThresholdPriorityClassName", "value": "x"}]},
    ]})
    assert report["spec"]["profileCustomizations"] == {"thresholdPriorityClassName": "prod"}
    assert entry(report, "cannot_express", "spec.strategies[1] (nodetaints) params.ThresholdPriorityClassName")
    both = entry(report, "cannot_express", "spec.strategies[2] (interpodantiaffinity) params.ThresholdPriority")
    assert "refused" in both["note"]


def test_image_other_flags_and_missing_interval() -> None:
    report = translate_legacy_spec({
        "image": "quay.io/openshift/origin-descheduler:4.6",
        "flags": ["--evict-local-storage-pods", "--max-pods-to-evict-per-node=5", "--node-selector=a=b",
                  "--dry-run=false"],
        "strategies": [{"name": "PodLifeTime"}],
    })
    assert report["spec"] == {
        "managementState": "Managed",
        "mode": "Automatic",
        "evictionLimits": {"node": 5},
        "profiles": ["LifecycleAndUtilization", "EvictPodsWithLocalStorage", "EvictPodsWithPVC"],
    }
    assert sources(report["cannot_express"]) == [
        "spec.deschedulingIntervalSeconds", "spec.image", "spec.flags[2]"]
    assert entry(report, "changes_meaning", "spec.strategies[0] (PodLifeTime) params.MaxPodLifeTimeSeconds")[
        "note"].endswith("v1 evicts pods older than 24h")


def test_profiles_of_4_7_win_over_strategies() -> None:
    report = translate_legacy_spec({"deschedulingIntervalSeconds": 3600, "profiles": ["AffinityAndTaints"],
                                    "strategies": [{"name": "duplicates"}]})
    assert report["spec"]["profiles"] == ["AffinityAndTaints"]
    assert sources(report["ignored"]) == ["spec.strategies[0]"]


def test_config_name_of_4_4_is_reported() -> None:
    legacy = {"apiVersion": "operator.openshift.io/v1beta1", "kind": "KubeDescheduler",
              "metadata": {"name": "config"}, "spec": {"deschedulingIntervalSeconds": 1, "strategies": []}}
    report = translate_legacy_spec(legacy)
    assert entry(report, "changes_meaning", "metadata.name")["value"] == "config"


@pytest.mark.parametrize("bad", [["x"], {"apiVersion": "operator.openshift.io/v1", "spec": {}},
                                 {"kind": "KubeDescheduler", "spec": "x"}])
def test_not_a_legacy_spec(bad: object) -> None:
    with pytest.raises(LegacyTranslationError):
        translate_legacy_spec(bad)
