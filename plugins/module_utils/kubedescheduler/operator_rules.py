"""KubeDescheduler rules of the running operator: what it refuses (scale to 0 + Degraded) or only logs."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import go_duration_ns
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEGRADED_SCALE_TO_ZERO,
    KUBEVIRT_NODE_SELECTOR,
    KUBEVIRT_PROFILES,
    KUBEVIRT_SCHEDULABLE_LABEL,
    LIFECYCLE_PROFILES,
    LOG_ONLY_IGNORED,
    LOW_NODE_UTILIZATION_PROFILES,
    MANAGEMENT_STATE_PATTERN,
    MONITORING_LABEL,
    OPERAND_FAILS,
    OPERATOR_NAMESPACE,
    PLATFORM_DEPENDENT,
    PROMETHEUS_QUERIES,
    RAW_QUERY_PREFIX,
    SYSTEM_CRITICAL_PRIORITY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
    _customizations,
    _error,
    _go_list,
    _has_any,
    _is_int,
    _namespace_lists,
    _needs_prometheus,
    _present,
    _suggest,
    _valid_profiles,
    _warning,
    protected_namespaces,
)


def _check_interval_set(spec: dict) -> list[Finding]:
    if _present(spec, "deschedulingIntervalSeconds"):
        return []
    return [
        _error(
            "spec.deschedulingIntervalSeconds",
            None,
            "not set; the operator scales the descheduler to 0 replicas and sets TargetConfigControllerDegraded",
            "set spec.deschedulingIntervalSeconds to the seconds between descheduling cycles, e.g. 3600",
            DEGRADED_SCALE_TO_ZERO,
            "descheduler should have an interval set and it should be greater than 0",
        )
    ]


def check_management_state_set(spec: dict) -> list[Finding]:
    """The API server admits a spec without managementState (no default, not required), but the operator re-validates
    the object against OperatorSpec, degrades and scales the descheduler to 0 (operator-observed.md #1)."""
    if _present(spec, "managementState"):
        return []
    return [
        _error(
            "spec.managementState",
            None,
            "not set; the API server admits the object, but the operator then sets TargetConfigControllerDegraded and "
            "ConfigObservationDegraded and scales the descheduler to 0 replicas: nothing is descheduled",
            'set spec.managementState to "Managed"',
            DEGRADED_SCALE_TO_ZERO,
            f"spec.managementState in body should match '{MANAGEMENT_STATE_PATTERN.pattern}'",
        )
    ]


def _check_namespace_rules(customizations: Optional[dict], namespaces: Optional[list[str]],
                           operator_namespaces: Optional[list[str]] = None) -> list[Finding]:
    """``operator_namespaces``: what the running operator built its protected list from (None: ``namespaces``)."""
    included, excluded = _namespace_lists(customizations)
    path = "spec.profileCustomizations.namespaces"
    findings: list[Finding] = []
    if included and excluded:
        findings.append(
            _error(
                path,
                {"included": included, "excluded": excluded},
                "included and excluded are both set; the operator refuses to render and only logs the error",
                "keep either included or excluded (protected namespaces are always excluded anyway)",
                LOG_ONLY_IGNORED,
                "It is forbidden to combine both included and excluded namespaces",
            )
        )
    protected = protected_namespaces(namespaces or [] if operator_namespaces is None else operator_namespaces)
    for index, name in enumerate(included):
        if name in protected:
            findings.append(
                _error(
                    f"{path}.included[{index}]",
                    name,
                    "a protected namespace cannot be included; the operator refuses to render and only logs the error",
                    f"remove {name!r} from {path}.included",
                    LOG_ONLY_IGNORED,
                    f"Protected namespace {name} included. It is forbidden to include any of the protected "
                    f"namespaces from {_go_list(protected)}",
                )
            )
        elif operator_namespaces is not None and name.startswith("openshift-"):
            findings.append(
                _warning(
                    f"{path}.included[{index}]",
                    name,
                    "created after the operator started, so the running operator does not protect it and accepts it; "
                    "once the operator restarts it is protected and this spec is refused (log-only)",
                    f"keep it only while the operator runs, or remove {name!r} from {path}.included",
                )
            )
        elif namespaces is None and name.startswith("openshift-"):
            findings.append(
                _warning(
                    f"{path}.included[{index}]",
                    name,
                    "every openshift-* namespace that exists when the operator starts is protected; including it is "
                    "then rejected (log-only)",
                    f"remove {name!r} from {path}.included unless the namespace does not exist yet",
                )
            )
        elif namespaces is not None and name not in namespaces:
            findings.append(
                _warning(
                    f"{path}.included[{index}]",
                    name,
                    "the namespace does not exist, so the profiles find no pods to evict there",
                    "check the name or create the namespace",
                )
            )
    return findings


def _check_priority_threshold(
    customizations: Optional[dict], priority_class_names: Optional[list[str]]
) -> list[Finding]:
    custom = customizations or {}
    base = "spec.profileCustomizations"
    value = custom.get("thresholdPriority")
    class_name = custom.get("thresholdPriorityClassName")
    has_value = _is_int(value)
    has_class = isinstance(class_name, str) and class_name != ""
    findings: list[Finding] = []
    if has_value and has_class:
        findings.append(
            _error(
                f"{base}.thresholdPriority",
                {"thresholdPriority": value, "thresholdPriorityClassName": class_name},
                "thresholdPriority and thresholdPriorityClassName are both set; the operator refuses to render and "
                "only logs the error",
                "keep only one of thresholdPriority and thresholdPriorityClassName",
                LOG_ONLY_IGNORED,
                "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
                ".spec.profileCustomizations.ThresholdPriorityClassName fields",
            )
        )
    if has_value and value > SYSTEM_CRITICAL_PRIORITY:
        findings.append(
            _error(
                f"{base}.thresholdPriority",
                value,
                "the operator renders it, but the descheduler's DefaultEvictor refuses a threshold above the "
                "system-critical priority and the descheduler fails to start",
                f"use a value of at most {SYSTEM_CRITICAL_PRIORITY}",
                OPERAND_FAILS,
                f"priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}",
            )
        )
    if has_class and priority_class_names is not None and class_name not in priority_class_names:
        findings.append(
            _error(
                f"{base}.thresholdPriorityClassName",
                class_name,
                "no PriorityClass has this name; the operator renders it, but the descheduler's DefaultEvictor cannot "
                "resolve it and the descheduler fails to start",
                "create the PriorityClass or name an existing one (oc get priorityclasses)",
                OPERAND_FAILS,
                "unable to get priority value from the priority class",
            )
        )
    return findings


def _check_kubevirt_thresholds(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    custom = customizations or {}
    kubevirt = [p for p in profiles if p in KUBEVIRT_PROFILES]
    if not kubevirt:
        return []
    low = custom.get("devLowNodeUtilizationThresholds")
    deviation = custom.get("devDeviationThresholds")
    base = "spec.profileCustomizations"
    if low is not None and deviation is not None:
        return [
            _error(
                f"{base}.devDeviationThresholds",
                {"devLowNodeUtilizationThresholds": low, "devDeviationThresholds": deviation},
                f"profile {kubevirt[0]} takes either static (devLowNodeUtilizationThresholds) or deviation "
                "(devDeviationThresholds) thresholds; the operator refuses to render and only logs the error",
                "remove one of devLowNodeUtilizationThresholds and devDeviationThresholds",
                LOG_ONLY_IGNORED,
                "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds customizations can be "
                "configured simultaneously",
            )
        ]
    if deviation == "":
        return [
            _error(
                f"{base}.devDeviationThresholds",
                deviation,
                f'the CRD accepts "", but with profile {kubevirt[0]} the operator treats it as an unknown preset, '
                "refuses to render and only logs the error",
                'remove the field (default AsymmetricLow) or use "Low", "Medium", "High", "AsymmetricLow", '
                '"AsymmetricMedium" or "AsymmetricHigh"',
                LOG_ONLY_IGNORED,
                "unknown Descheduler DeviationThresholds threshold , only 'Low', 'Medium' and 'High' are supported",
            )
        ]
    return []


def _check_migration_cooldowns(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    """The operator renders the cooldowns unchanged; the operand's KubevirtMigrationAware refuses a cap below the
    cooldown (ValidateKubevirtMigrationAwareArgs), so the descheduler pod fails at start."""
    custom = customizations or {}
    if not any(p in KUBEVIRT_PROFILES for p in profiles):
        return []
    cooldown = _duration_or_none(custom.get("devMigrationCooldown"))
    cap = _duration_or_none(custom.get("devMaxMigrationCooldown"))
    if cooldown is None or cap is None or not 0 < cap < cooldown:
        return []
    return [
        _error(
            "spec.profileCustomizations.devMaxMigrationCooldown",
            custom["devMaxMigrationCooldown"],
            f"below devMigrationCooldown ({custom['devMigrationCooldown']}); the operator renders it, but the "
            "descheduler's KubevirtMigrationAware plugin refuses the policy and the descheduler pod fails",
            "set devMaxMigrationCooldown to devMigrationCooldown or more (it caps the backed-off cooldown)",
            OPERAND_FAILS,
            f"maxMigrationCooldown ({custom['devMaxMigrationCooldown']}) must be >= migrationCooldown "
            f"({custom['devMigrationCooldown']})",
        )
    ]


def _utilization_query(utilization_profile: str) -> Optional[str]:
    """The PromQL the operator uses for a devActualUtilizationProfile value; None when it is unknown."""
    if utilization_profile in PROMETHEUS_QUERIES:
        return PROMETHEUS_QUERIES[utilization_profile]
    if utilization_profile.startswith(RAW_QUERY_PREFIX):
        return utilization_profile[len(RAW_QUERY_PREFIX) :]
    return None


def _check_utilization_profile(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    utilization_profile = (customizations or {}).get("devActualUtilizationProfile")
    if not isinstance(utilization_profile, str) or utilization_profile == "":
        return []
    path = "spec.profileCustomizations.devActualUtilizationProfile"
    consumers = [p for p in profiles if p in LOW_NODE_UTILIZATION_PROFILES]
    query = _utilization_query(utilization_profile)
    allowed = tuple(PROMETHEUS_QUERIES) + ("query:<PromQL>",)
    if query is None and consumers:
        return [
            _error(
                path,
                utilization_profile,
                f"unknown utilization profile (used by {consumers[0]}); the operator refuses to render and only logs "
                "the error",
                _suggest(utilization_profile, allowed),
                LOG_ONLY_IGNORED,
                f"unknown prometheus profile: {utilization_profile}",
            )
        ]
    if query == "" and consumers:
        return [
            _error(
                path,
                utilization_profile,
                "an empty raw query is rendered, but the descheduler rejects LowNodeUtilization without a query and "
                "fails to start",
                'put the PromQL after "query:" or use a named profile such as "PrometheusCPUUsage"',
                OPERAND_FAILS,
                'prometheus query is required when metrics source is set to "Prometheus"',
            )
        ]
    if not consumers:
        return [
            _warning(
                path,
                utilization_profile,
                "no enabled profile runs LowNodeUtilization, so the value is not used (not even checked), yet the "
                "operator still adds metricsProviders and requires the prometheus-k8s route and the "
                f"{MONITORING_LABEL[0]}={MONITORING_LABEL[1]} namespace label",
                "remove it, or enable LifecycleAndUtilization, LongLifecycle or KubeVirtRelieveAndMigrate",
            )
        ]
    return []


def _node_labels(node: dict) -> dict:
    metadata = node.get("metadata") if isinstance(node, dict) else None
    labels = metadata.get("labels") if isinstance(metadata, dict) else (node or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _check_kubevirt_nodes(profiles: list[str], nodes: Optional[list[dict]]) -> list[Finding]:
    kubevirt = [p for p in profiles if p in KUBEVIRT_PROFILES]
    if not kubevirt or nodes is None:
        return []
    key, expected = KUBEVIRT_SCHEDULABLE_LABEL
    schedulable = [n for n in nodes if _node_labels(n).get(key) == expected]
    if not schedulable:
        return [
            _error(
                "spec.profiles",
                kubevirt[0],
                f"no node is labelled {key}={expected}; the operator scales the descheduler to 0 and sets "
                "TargetConfigControllerDegraded",
                f"deploy OpenShift Virtualization (KubeVirt) first, or remove {kubevirt[0]}",
                DEGRADED_SCALE_TO_ZERO,
                f"profile {kubevirt[0]} can only be used when KubeVirt is properly deployed",
            )
        ]
    if len(schedulable) < 2:
        return [
            _warning(
                "spec.profiles",
                kubevirt[0],
                f"the policy's nodeSelector {KUBEVIRT_NODE_SELECTOR} matches only one node, and the descheduler "
                "skips every cycle with fewer than 2 nodes",
                f"label at least two nodes {key}={expected}",
            )
        ]
    return []


def _operator_namespace_labels(namespace_labels: dict) -> dict:
    # Accept either the operator namespace's labels or a {namespace: labels} map.
    nested = namespace_labels.get(OPERATOR_NAMESPACE)
    return nested if isinstance(nested, dict) else namespace_labels


def _check_monitoring_label(
    profiles: list[str], customizations: Optional[dict], namespace_labels: Optional[dict]
) -> list[Finding]:
    if namespace_labels is None or not _needs_prometheus(profiles, customizations):
        return []
    key, expected = MONITORING_LABEL
    labels = _operator_namespace_labels(namespace_labels)
    if labels.get(key) == expected:
        return []
    return [
        _error(
            f"namespace/{OPERATOR_NAMESPACE}.metadata.labels",
            labels.get(key),
            "Prometheus metrics are needed (KubeVirt profile or devActualUtilizationProfile), but the operator "
            "namespace lacks the cluster-monitoring label; the operator refuses to render and only logs the error",
            f"oc label namespace {OPERATOR_NAMESPACE} {key}={expected}",
            LOG_ONLY_IGNORED,
            f"namespace {OPERATOR_NAMESPACE} is not labeled with {key}={expected}",
        )
    ]


def _check_scheduler_profile(profiles: list[str], scheduler_profile: Optional[str]) -> list[Finding]:
    if scheduler_profile is None:
        return []
    if scheduler_profile == "HighNodeUtilization" and _has_any(profiles, LIFECYCLE_PROFILES):
        clashing = next(p for p in profiles if p in LIFECYCLE_PROFILES)
        return [
            _error(
                "spec.profiles",
                clashing,
                "the cluster scheduler profile is HighNodeUtilization (packs nodes) while this profile spreads them "
                "(LowNodeUtilization); the operator scales the descheduler to 0 and sets "
                "TargetConfigControllerDegraded",
                "use CompactAndScale instead, or change schedulers.config.openshift.io/cluster spec.profile",
                DEGRADED_SCALE_TO_ZERO,
                "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization may cause an "
                "eviction/scheduling hot loop",
            )
        ]
    if scheduler_profile == "LowNodeUtilization" and "CompactAndScale" in profiles:
        return [
            _error(
                "spec.profiles",
                "CompactAndScale",
                "the cluster scheduler profile is LowNodeUtilization (spreads pods) while CompactAndScale packs them; "
                "the operator scales the descheduler to 0 and sets TargetConfigControllerDegraded",
                "set schedulers.config.openshift.io/cluster spec.profile to HighNodeUtilization, "
                "or drop CompactAndScale",
                DEGRADED_SCALE_TO_ZERO,
                "enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization may cause an "
                "eviction/scheduling hot loop",
            )
        ]
    return []


def _check_negative_pod_lifetime(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    value = (customizations or {}).get("podLifetime")
    nanoseconds = _duration_or_none(value)
    if nanoseconds is None or nanoseconds >= 0 or "LifecycleAndUtilization" not in profiles:
        return []
    return [
        _error(
            "spec.profileCustomizations.podLifetime",
            value,
            "a negative lifetime is accepted by the API, but Go converts it to maxPodLifeTimeSeconds differently per "
            "CPU architecture (a huge value on amd64: never evicts; 0 on arm64: evicts every pod)",
            'use a positive duration, e.g. "24h"',
            PLATFORM_DEPENDENT,
        )
    ]


def _duration_or_none(value: Any) -> Optional[int]:
    if not isinstance(value, str):
        return None
    try:
        return go_duration_ns(value)
    except ValueError:
        return None


def _runtime_findings(
    spec: dict,
    namespaces: Optional[list[str]],
    priority_class_names: Optional[list[str]],
    nodes: Optional[list[dict]],
    namespace_labels: Optional[dict],
    scheduler_profile: Optional[str],
    operator_namespaces: Optional[list[str]] = None,
) -> list[Finding]:
    customizations = _customizations(spec)
    profiles = _valid_profiles(spec)
    findings = _check_interval_set(spec)
    findings += _check_namespace_rules(customizations, namespaces, operator_namespaces)
    findings += _check_priority_threshold(customizations, priority_class_names)
    findings += _check_kubevirt_thresholds(profiles, customizations)
    findings += _check_migration_cooldowns(profiles, customizations)
    findings += _check_utilization_profile(profiles, customizations)
    findings += _check_negative_pod_lifetime(profiles, customizations)
    findings += _check_kubevirt_nodes(profiles, nodes)
    findings += _check_monitoring_label(profiles, customizations, namespace_labels)
    findings += _check_scheduler_profile(profiles, scheduler_profile)
    return findings
