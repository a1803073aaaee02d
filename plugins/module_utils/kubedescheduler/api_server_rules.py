"""KubeDescheduler rules of the API server: what it rejects at admission (the CRD schema and its CEL rules)."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import (
    go_duration_ns,
    is_openapi_duration,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import nearest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ADMISSION_REJECTED,
    CONFLICTING_PROFILES,
    DEGRADED_SCALE_TO_ZERO,
    DEVIATION_PRESETS,
    HIGH_NODE_UTILIZATION_PRESETS,
    INT32_MAX,
    INT32_MIN,
    LOG_LEVELS,
    LOG_ONLY_IGNORED,
    LOW_NODE_UTILIZATION_PRESETS,
    MANAGEMENT_STATE_PATTERN,
    MAX_PROFILES,
    MODES,
    PROFILES,
    PRUNED_BY_API_SERVER,
    WARNING,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
    _customizations,
    _error,
    _finding,
    _is_int,
    _present,
    _suggest,
)

_SPEC_FIELDS = (
    "managementState",
    "logLevel",
    "operatorLogLevel",
    "observedConfig",
    "unsupportedConfigOverrides",
    "deschedulingIntervalSeconds",
    "profiles",
    "mode",
    "evictionLimits",
    "profileCustomizations",
)
_EVICTION_LIMIT_FIELDS = ("total", "node")
_NAMESPACE_FIELDS = ("included", "excluded")
_DURATION_FIELDS = ("podLifetime", "devMigrationCooldown", "devMaxMigrationCooldown", "devMigrationHistoryWindow")
_CUSTOMIZATION_ENUMS = {
    "devLowNodeUtilizationThresholds": tuple(LOW_NODE_UTILIZATION_PRESETS),
    "devHighNodeUtilizationThresholds": tuple(HIGH_NODE_UTILIZATION_PRESETS),
    "devDeviationThresholds": tuple(DEVIATION_PRESETS) + ("",),
}
_CUSTOMIZATION_FIELDS = (
    ("podLifetime", "duration"),
    ("thresholdPriority", "int32"),
    ("thresholdPriorityClassName", "string"),
    ("namespaces", "object"),
    ("devLowNodeUtilizationThresholds", "enum"),
    ("devEnableSoftTainter", "boolean"),
    ("devEnableEvictionsInBackground", "boolean"),
    ("devHighNodeUtilizationThresholds", "enum"),
    ("devActualUtilizationProfile", "string"),
    ("devDeviationThresholds", "enum"),
    ("devMigrationCooldown", "duration"),
    ("devMaxMigrationCooldown", "duration"),
    ("devMigrationHistoryWindow", "duration"),
)


def _type_error(path: str, value: Any, expected: str) -> Finding:
    return _error(
        path,
        value,
        f"the CRD declares {path} as {expected}, so the API server rejects this value",
        f"set {path} to {expected}",
        ADMISSION_REJECTED,
        f"{path} in body must be of type {expected.split(' ')[-1]}",
    )


# Why an unknown field is reported (its finding's operator_behaviour is PRUNED_BY_API_SERVER).
UNKNOWN_FIELD_WHY = "not a field of KubeDescheduler v1"


def _check_unknown_fields(mapping: dict, path: str, known: tuple[str, ...]) -> list[Finding]:
    findings = []
    for key in mapping:
        if key in known:
            continue
        close = nearest_name(key, known)
        hint = f'did you mean "{close}"?' if close else f"known fields: {', '.join(known)}"
        findings.append(
            _finding(
                WARNING,
                f"{path}.{key}",
                mapping[key],
                f"{UNKNOWN_FIELD_WHY}; the CRD is structural, so the API server prunes it "
                "(oc/kubectl apply with strict field validation rejects it instead)",
                f"remove it ({hint})",
                PRUNED_BY_API_SERVER,
            )
        )
    return findings


def _check_int32(path: str, value: Any, minimum: Optional[int] = None) -> list[Finding]:
    if not _is_int(value):
        return [_type_error(path, value, "an integer")]
    if not INT32_MIN <= value <= INT32_MAX:
        return [
            _error(
                path,
                value,
                "the CRD format is int32",
                f"use a value between {INT32_MIN} and {INT32_MAX}",
                ADMISSION_REJECTED,
            )
        ]
    if minimum is not None and value < minimum:
        return [
            _error(
                path,
                value,
                f"the CRD requires a minimum of {minimum}",
                f"set {path} to {minimum} or more",
                ADMISSION_REJECTED,
                f"{path} in body should be greater than or equal to {minimum}",
            )
        ]
    return []


def _check_enum(path: str, value: Any, allowed: tuple[str, ...]) -> list[Finding]:
    if not isinstance(value, str):
        return [_type_error(path, value, "a string")]
    if value not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        return [
            _error(
                path,
                value,
                "not one of the values the CRD enum allows",
                _suggest(value, allowed),
                ADMISSION_REJECTED,
                f'{path}: Unsupported value: "{value}": supported values: {supported}',
            )
        ]
    return []


def _check_duration(path: str, value: Any) -> list[Finding]:
    if not isinstance(value, str):
        return [_type_error(path, value, "a duration string")]
    try:
        go_duration_ns(value)
        return []
    except ValueError as go_error:
        if is_openapi_duration(value):
            return [
                _error(
                    path,
                    value,
                    "the API server's duration format accepts it, but the operator decodes it with Go "
                    f"time.ParseDuration, fails ({go_error}) and cannot read the KubeDescheduler at all",
                    'use Go duration syntax with units ns, us, ms, s, m, h, e.g. "5m", "1h30m", "48h"',
                    LOG_ONLY_IGNORED,
                    str(go_error),
                )
            ]
        return [
            _error(
                path,
                value,
                f"not a duration ({go_error})",
                'use Go duration syntax with units ns, us, ms, s, m, h, e.g. "5m", "1h30m", "48h"',
                ADMISSION_REJECTED,
                f'{path} in body must be of type duration: "{value}"',
            )
        ]


def _check_string_list(path: str, value: Any) -> list[Finding]:
    if not isinstance(value, list):
        return [_type_error(path, value, "an array")]
    return [_type_error(f"{path}[{i}]", item, "a string") for i, item in enumerate(value) if not isinstance(item, str)]


def _check_scalar_spec_fields(spec: dict) -> list[Finding]:
    findings: list[Finding] = []
    if _present(spec, "deschedulingIntervalSeconds"):
        findings += _check_int32("spec.deschedulingIntervalSeconds", spec["deschedulingIntervalSeconds"], minimum=1)
    if _present(spec, "mode"):
        findings += _check_enum("spec.mode", spec["mode"], MODES)
    for level_field in ("logLevel", "operatorLogLevel"):
        if _present(spec, level_field):
            findings += _check_enum(f"spec.{level_field}", spec[level_field], LOG_LEVELS)
    if _present(spec, "managementState"):
        state = spec["managementState"]
        if not isinstance(state, str):
            findings.append(_type_error("spec.managementState", state, "a string"))
        elif not MANAGEMENT_STATE_PATTERN.match(state):
            findings.append(
                _error(
                    "spec.managementState",
                    state,
                    f"does not match the CRD pattern {MANAGEMENT_STATE_PATTERN.pattern}; an object holding it anyway "
                    "makes the operator degrade and scale the descheduler to 0",
                    'use "Managed"',
                    ADMISSION_REJECTED,
                )
            )
    for object_field in ("observedConfig", "unsupportedConfigOverrides", "evictionLimits", "profileCustomizations"):
        if _present(spec, object_field) and not isinstance(spec[object_field], dict):
            findings.append(_type_error(f"spec.{object_field}", spec[object_field], "an object"))
    return findings


def _check_profile_items(profiles: list) -> list[Finding]:
    findings: list[Finding] = []
    if len(profiles) > MAX_PROFILES:
        findings.append(
            _error(
                "spec.profiles",
                profiles,
                f"the CRD allows at most {MAX_PROFILES} items",
                "list each profile once",
                ADMISSION_REJECTED,
                f"spec.profiles: Too many: {len(profiles)}: must have at most {MAX_PROFILES} items",
            )
        )
    for index, profile in enumerate(profiles):
        findings += _check_enum(f"spec.profiles[{index}]", profile, PROFILES)
    return findings


def _check_profile_cel_rules(profiles: list) -> list[Finding]:
    findings: list[Finding] = []
    hashable = [p for p in profiles if isinstance(p, str)]
    duplicates = sorted({p for p in hashable if hashable.count(p) > 1})
    if duplicates:
        findings.append(
            _error(
                "spec.profiles",
                duplicates,
                "a profile is listed more than once (CEL rule on spec.profiles)",
                "list each profile once",
                ADMISSION_REJECTED,
                "duplicate profiles are not allowed",
            )
        )
    for first, second in CONFLICTING_PROFILES:
        if first in hashable and second in hashable:
            text = f"cannot declare {first} and {second} profiles simultaneously"
            findings.append(
                _error(
                    "spec.profiles",
                    [first, second],
                    f"{first} and {second} are mutually exclusive (CEL rule on spec.profiles)",
                    f"keep only one of {first} and {second}",
                    ADMISSION_REJECTED,
                    text,
                )
            )
    return findings


def _check_profiles_field(spec: dict) -> list[Finding]:
    profiles = spec.get("profiles")
    if profiles is None:
        # The Go struct has no omitempty: the operator's own schema re-check sees "profiles: null".
        return [
            _error(
                "spec.profiles",
                None,
                "no profiles are set; the operator re-validates the CR, fails, scales the descheduler to 0 and "
                "sets TargetConfigControllerDegraded",
                'set spec.profiles to at least one profile, e.g. ["AffinityAndTaints"]',
                DEGRADED_SCALE_TO_ZERO,
                'descheduler validation failed: validation errors: spec.profiles in body must be of type array: "null"',
            )
        ]
    if not isinstance(profiles, list):
        return [_type_error("spec.profiles", profiles, "an array")]
    findings = _check_profile_items(profiles) + _check_profile_cel_rules(profiles)
    if not profiles:
        findings.append(
            _error(
                "spec.profiles",
                profiles,
                "an empty list is accepted by the API, but the operator refuses to render a policy; it only logs "
                "the error and keeps the previous ConfigMap and Deployment",
                'set spec.profiles to at least one profile, e.g. ["AffinityAndTaints"]',
                LOG_ONLY_IGNORED,
                "descheduler should have at least 1 profile enabled",
            )
        )
    return findings


def _check_eviction_limits_types(spec: dict) -> list[Finding]:
    limits = spec.get("evictionLimits")
    if not isinstance(limits, dict):
        return []
    findings = _check_unknown_fields(limits, "spec.evictionLimits", _EVICTION_LIMIT_FIELDS)
    for key in _EVICTION_LIMIT_FIELDS:
        if _present(limits, key):
            findings += _check_int32(f"spec.evictionLimits.{key}", limits[key])
    return findings


def _check_customization_types(customizations: dict) -> list[Finding]:
    base = "spec.profileCustomizations"
    findings = _check_unknown_fields(customizations, base, tuple(name for name, _kind in _CUSTOMIZATION_FIELDS))
    for name, kind in _CUSTOMIZATION_FIELDS:
        if not _present(customizations, name):
            continue
        value, path = customizations[name], f"{base}.{name}"
        if kind == "duration":
            findings += _check_duration(path, value)
        elif kind == "int32":
            findings += _check_int32(path, value)
        elif kind == "enum":
            findings += _check_enum(path, value, _CUSTOMIZATION_ENUMS[name])
        elif kind == "string" and not isinstance(value, str):
            findings.append(_type_error(path, value, "a string"))
        elif kind == "boolean" and not isinstance(value, bool):
            findings.append(_type_error(path, value, "a boolean"))
        elif kind == "object":
            findings += _check_namespaces_types(value, path)
    return findings


def _check_namespaces_types(value: Any, path: str) -> list[Finding]:
    if not isinstance(value, dict):
        return [_type_error(path, value, "an object")]
    findings = _check_unknown_fields(value, path, _NAMESPACE_FIELDS)
    for key in _NAMESPACE_FIELDS:
        if _present(value, key):
            findings += _check_string_list(f"{path}.{key}", value[key])
    return findings


def _admission_findings(spec: dict) -> list[Finding]:
    findings = _check_unknown_fields(spec, "spec", _SPEC_FIELDS)
    findings += _check_scalar_spec_fields(spec)
    findings += _check_profiles_field(spec)
    findings += _check_eviction_limits_types(spec)
    customizations = _customizations(spec)
    if customizations is not None:
        findings += _check_customization_types(customizations)
    return findings
