"""KubeDescheduler settings that are legal but probably not meant: reported as warnings."""

from __future__ import annotations

from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import SECOND
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.api_server_rules import (
    _EVICTION_LIMIT_FIELDS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEPRECATED_PROFILES,
    INT32_MAX,
    INT32_MIN,
    KUBEVIRT_NODE_SELECTOR,
    KUBEVIRT_PROFILES,
    LOW_NODE_UTILIZATION_PROFILES,
    MODIFIER_PROFILES,
    UINT64_MODULUS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_rules import (
    _duration_or_none,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
    _has_any,
    _is_int,
    _namespace_lists,
    _present,
    _warning,
)


def _warn_deprecated_profiles(spec: dict) -> list[Finding]:
    profiles = spec.get("profiles")
    if not isinstance(profiles, list):
        return []
    return [
        _warning(
            f"spec.profiles[{index}]",
            name,
            f"deprecated; the operator renders it as {DEPRECATED_PROFILES[name]} and may drop the old name",
            f'use "{DEPRECATED_PROFILES[name]}"',
        )
        for index, name in enumerate(profiles)
        if isinstance(name, str) and name in DEPRECATED_PROFILES
    ]


def _warn_included_namespaces(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    included, excluded = _namespace_lists(customizations)
    if not included or excluded:
        return []
    path = "spec.profileCustomizations.namespaces.included"
    findings = []
    low = [p for p in profiles if p in LOW_NODE_UTILIZATION_PROFILES]
    if low:
        findings.append(
            _warning(
                path,
                included,
                f"LowNodeUtilization ({low[0]}) cannot filter by included namespaces; it still evicts from every "
                "namespace except the protected ones",
                "use namespaces.excluded if LowNodeUtilization must skip namespaces",
            )
        )
    if "CompactAndScale" in profiles:
        findings.append(
            _warning(
                path,
                included,
                "with included namespaces the operator gives HighNodeUtilization (CompactAndScale) no namespace "
                "filter at all, so it may evict pods from every namespace, protected openshift-* ones included",
                "use namespaces.excluded with CompactAndScale",
            )
        )
    return findings


# customization -> (profiles that use it, what to enable)
_CUSTOMIZATION_CONSUMERS: dict[str, tuple[tuple[str, ...], str]] = {
    "podLifetime": (("LifecycleAndUtilization",), "LifecycleAndUtilization (LongLifecycle has no PodLifeTime)"),
    "devLowNodeUtilizationThresholds": (
        LOW_NODE_UTILIZATION_PROFILES,
        "LifecycleAndUtilization, LongLifecycle or KubeVirtRelieveAndMigrate",
    ),
    "devHighNodeUtilizationThresholds": (("CompactAndScale",), "CompactAndScale"),
    "devDeviationThresholds": (KUBEVIRT_PROFILES, "KubeVirtRelieveAndMigrate (the only profile that reads it)"),
    "devMigrationCooldown": (KUBEVIRT_PROFILES, "KubeVirtRelieveAndMigrate"),
    "devMaxMigrationCooldown": (KUBEVIRT_PROFILES, "KubeVirtRelieveAndMigrate"),
    "devMigrationHistoryWindow": (KUBEVIRT_PROFILES, "KubeVirtRelieveAndMigrate"),
}


def _warn_unused_customizations(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    custom = customizations or {}
    findings = []
    for name, (consumers, enable) in _CUSTOMIZATION_CONSUMERS.items():
        if _present(custom, name) and not _has_any(profiles, consumers):
            findings.append(
                _warning(
                    f"spec.profileCustomizations.{name}",
                    custom[name],
                    "no enabled profile uses this customization, so it has no effect",
                    f"remove it or enable {enable}",
                )
            )
    if _present(custom, "devEnableSoftTainter"):
        findings.append(
            _warning(
                "spec.profileCustomizations.devEnableSoftTainter",
                custom["devEnableSoftTainter"],
                "deprecated and ignored since 4.19; the soft-tainter runs automatically with KubeVirtRelieveAndMigrate",
                "remove it",
            )
        )
    return findings


def _warn_profile_combinations(profiles: list[str]) -> list[Finding]:
    findings = []
    effective = [p for p in profiles if p not in MODIFIER_PROFILES]
    modifiers = [p for p in profiles if p in MODIFIER_PROFILES]
    if profiles and not effective:
        findings.append(
            _warning(
                "spec.profiles",
                profiles,
                "EvictPodsWithPVC and EvictPodsWithLocalStorage only modify other profiles; alone they render a "
                "policy without profiles, so nothing is ever evicted",
                "add a profile such as AffinityAndTaints or LifecycleAndUtilization",
            )
        )
    elif modifiers and effective and all(p in KUBEVIRT_PROFILES for p in effective):
        findings.append(
            _warning(
                "spec.profiles",
                modifiers,
                "KubeVirtRelieveAndMigrate hard-codes its DefaultEvictor (PVC and local-storage pods are already "
                "evictable), so these profiles change nothing",
                f"remove {', '.join(modifiers)}",
            )
        )
    kubevirt = [p for p in effective if p in KUBEVIRT_PROFILES]
    others = [p for p in effective if p not in KUBEVIRT_PROFILES]
    if kubevirt and others:
        findings.append(
            _warning(
                "spec.profiles",
                profiles,
                f"{kubevirt[0]} sets the policy-wide nodeSelector {KUBEVIRT_NODE_SELECTOR}, so {', '.join(others)} "
                "also only see KubeVirt-schedulable nodes",
                "accept it, or run the other profiles without the KubeVirt profile",
            )
        )
    return findings


def _warn_eviction_limits(spec: dict) -> list[Finding]:
    limits = spec.get("evictionLimits")
    if not isinstance(limits, dict):
        return []
    findings = []
    for key in _EVICTION_LIMIT_FIELDS:
        value = limits.get(key)
        if not _is_int(value) or not INT32_MIN <= value <= INT32_MAX:
            continue
        path = f"spec.evictionLimits.{key}"
        if value == 0:
            findings.append(
                _warning(path, value, "a limit of 0 blocks every eviction", "remove the limit or set it to 1 or more")
            )
        elif value < 0:
            findings.append(
                _warning(
                    path,
                    value,
                    f"the operator converts it to an unsigned integer ({value % UINT64_MODULUS}), i.e. no limit",
                    "remove the limit or set a positive value",
                )
            )
    return findings


def _warn_pod_lifetime(profiles: list[str], customizations: Optional[dict]) -> list[Finding]:
    value = (customizations or {}).get("podLifetime")
    nanoseconds = _duration_or_none(value)
    if nanoseconds is None or nanoseconds < 0 or "LifecycleAndUtilization" not in profiles:
        return []
    path = "spec.profileCustomizations.podLifetime"
    if nanoseconds < SECOND:
        return [
            _warning(
                path,
                value,
                "below one second it becomes maxPodLifeTimeSeconds 0: PodLifeTime evicts every pod it may evict",
                'use a realistic lifetime, e.g. "24h"',
            )
        ]
    if nanoseconds % SECOND:
        return [
            _warning(
                path,
                value,
                f"the operator truncates it to whole seconds ({nanoseconds // SECOND})",
                "use whole seconds",
            )
        ]
    return []


def _warn_operator_spec_fields(spec: dict) -> list[Finding]:
    findings = []
    state = spec.get("managementState")
    if state in ("Unmanaged", "Removed"):
        findings.append(
            _warning(
                "spec.managementState",
                state,
                f"{state} neither stops nor removes the descheduler: the operator's target-config controller does "
                "not read managementState (read from its code), so it keeps rendering this spec and running the "
                "descheduler",
                'use "Managed"; to stop descheduling delete the KubeDescheduler (state: absent)',
            )
        )
    for name in ("observedConfig", "unsupportedConfigOverrides"):
        if spec.get(name):
            findings.append(
                _warning(
                    f"spec.{name}",
                    spec[name],
                    "managed by the operator / unsupported; the descheduler policy ignores it",
                    "remove it",
                )
            )
    if not _present(spec, "mode"):
        findings.append(
            _warning(
                "spec.mode",
                None,
                "defaults to Predictive: the descheduler only simulates evictions (--dry-run) and evicts nothing",
                'set mode: "Automatic" to evict, or "Predictive" explicitly to silence this warning',
            )
        )
    return findings
