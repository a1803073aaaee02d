"""Translate an OpenShift ``KubeDescheduler`` spec (operator.openshift.io/v1) into the DeschedulerPolicy that the
Kube Descheduler Operator writes to ConfigMap ``cluster`` (key ``policy.yaml``), and validate the spec the way the
API server (CRD schema + CEL) and the operator do.

Behaviour follows openshift/cluster-kube-descheduler-operator ``main`` at 945dcaa (CSV 5.4.0):
``pkg/operator/target_config_reconciler.go`` (the *Profile functions, manageConfigMap, setEvictionsLimits,
validateDeschedulerCR), ``pkg/apis/descheduler/v1/types_descheduler.go`` and the rendered expectations in
``pkg/operator/testdata/assets/*.yaml``. This is an independent re-implementation in pure Python (stdlib only).

``render_policy`` returns exactly what ``yaml.safe_load`` gives for the operator's ``policy.yaml``: Go's
``encoding/json`` + ghodss/yaml output, i.e. alphabetically sorted keys, ``podProtections: {}`` in DefaultEvictor,
``{enabled: null, disabled: null}`` for unused extension points and ``priorityThreshold: {name, value}`` with the
unused half empty/null. All of these decode to the upstream defaults; ``compact_policy`` strips them.

Not simulated by the planning engine: the ``KubevirtMigrationAware`` plugin (KubeVirt profiles, main/4.23 only).
It is rendered as the operator renders it (filter + preEvictionFilter, args from the dev*Migration* durations).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

# --- vocabulary --------------------------------------------------------------------------------------------------

ADMISSION_REJECTED = "admission-rejected"
DEGRADED_SCALE_TO_ZERO = "degraded-scale-to-0"
LOG_ONLY_IGNORED = "log-only-ignored"
# Two outcomes beyond the operator's own: it renders the policy, but the descheduler pod cannot run it, or Go's
# behaviour depends on the CPU architecture (so no faithful rendering exists).
OPERAND_FAILS = "operand-fails"
PLATFORM_DEPENDENT = "platform-dependent"
NOT_APPLICABLE = "n/a"

ERROR = "error"
WARNING = "warning"

POLICY_API_VERSION = "descheduler/v1alpha2"
POLICY_KIND = "DeschedulerPolicy"
DEFAULT_PROMETHEUS_URL = "https://prometheus-k8s-openshift-monitoring.apps.cluster.invalid"
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
MONITORING_LABEL = ("openshift.io/cluster-monitoring", "true")
KUBEVIRT_SCHEDULABLE_LABEL = ("kubevirt.io/schedulable", "true")
KUBEVIRT_NODE_SELECTOR = "kubevirt.io/schedulable=true"
STATIC_PROTECTED_NAMESPACES = ("kube-system", "hypershift", "openshift")
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

# CRD enum order (type DeschedulerProfile).
PROFILES = (
    "AffinityAndTaints",
    "TopologyAndDuplicates",
    "LifecycleAndUtilization",
    "DevPreviewLongLifecycle",
    "LongLifecycle",
    "SoftTopologyAndDuplicates",
    "EvictPodsWithLocalStorage",
    "EvictPodsWithPVC",
    "CompactAndScale",
    "DevKubeVirtRelieveAndMigrate",
    "KubeVirtRelieveAndMigrate",
)
DEPRECATED_PROFILES = {
    "DevPreviewLongLifecycle": "LongLifecycle",
    "DevKubeVirtRelieveAndMigrate": "KubeVirtRelieveAndMigrate",
}
MODIFIER_PROFILES = ("EvictPodsWithPVC", "EvictPodsWithLocalStorage")
KUBEVIRT_PROFILES = ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate")
LIFECYCLE_PROFILES = ("LifecycleAndUtilization", "LongLifecycle", "DevPreviewLongLifecycle")
LOW_NODE_UTILIZATION_PROFILES = LIFECYCLE_PROFILES + KUBEVIRT_PROFILES
MAX_PROFILES = 11

# The CEL rules on spec.profiles, in CRD order (each pair may not be declared together).
CONFLICTING_PROFILES = (
    ("DevPreviewLongLifecycle", "LifecycleAndUtilization"),
    ("LongLifecycle", "LifecycleAndUtilization"),
    ("DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("LongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"),
    ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"),
    ("DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("LongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"),
    ("SoftTopologyAndDuplicates", "TopologyAndDuplicates"),
    ("CompactAndScale", "LifecycleAndUtilization"),
    ("CompactAndScale", "LongLifecycle"),
    ("CompactAndScale", "DevPreviewLongLifecycle"),
    ("CompactAndScale", "DevKubeVirtRelieveAndMigrate"),
    ("CompactAndScale", "KubeVirtRelieveAndMigrate"),
    ("CompactAndScale", "TopologyAndDuplicates"),
)

# Presets: (thresholds, targetThresholds) in percent. "" is a legal enum value with the default meaning.
LOW_NODE_UTILIZATION_PRESETS = {"Low": (10, 30), "Medium": (20, 50), "": (20, 50), "High": (40, 70)}
DEVIATION_PRESETS = {
    "Low": (10, 10),
    "Medium": (20, 20),
    "High": (30, 30),
    "AsymmetricLow": (0, 10),
    "AsymmetricMedium": (0, 20),
    "AsymmetricHigh": (0, 30),
}
HIGH_NODE_UTILIZATION_PRESETS = {"Minimal": 10, "Modest": 20, "": 20, "Moderate": 30}

PROMETHEUS_QUERIES = {
    "PrometheusCPUUsage": "instance:node_cpu:rate:sum",
    "PrometheusCPUPSIPressure": "rate(node_pressure_cpu_waiting_seconds_total[1m])",
    "PrometheusCPUPSIPressureByUtilization": (
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and "
        '(1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m]))) > 0.7 or '
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0"
    ),
    "PrometheusMemoryPSIPressure": "rate(node_pressure_memory_waiting_seconds_total[1m])",
    "PrometheusIOPSIPressure": "rate(node_pressure_io_waiting_seconds_total[1m])",
    "PrometheusCPUCombined": "descheduler:combined_utilization_and_pressure:avg1m",
    "PrometheusCPUMemoryCombinedProfile": "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m",
}
RAW_QUERY_PREFIX = "query:"
KUBEVIRT_DEFAULT_UTILIZATION_PROFILE = "PrometheusCPUMemoryCombinedProfile"
KUBEVIRT_DEFAULT_EVICTIONS_TOTAL = 5
KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE = 2
DEFAULT_POD_LIFETIME_SECONDS = 86400
POD_RESTART_THRESHOLD = 100

LOG_LEVELS = ("", "Normal", "Debug", "Trace", "TraceAll")
MODES = ("Automatic", "Predictive")
MANAGEMENT_STATE_PATTERN = re.compile(r"^(Managed|Unmanaged|Force|Removed)$")
KUBEVIRT_MIGRATION_ARGS = (
    ("devMigrationCooldown", "migrationCooldown"),
    ("devMaxMigrationCooldown", "maxMigrationCooldown"),
    ("devMigrationHistoryWindow", "migrationHistoryWindow"),
)
EXTENSION_POINTS = ("balance", "deschedule", "filter", "preevictionfilter", "presort", "sort")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
UINT64_MODULUS = 2**64


# --- public types ------------------------------------------------------------------------------------------------


@dataclass
class Finding:
    """One validation result. ``message`` names the field, the value, why, and the fix."""

    severity: str  # "error" | "warning"
    field: str  # dotted path, e.g. "spec.profiles[2]"
    value: Any
    message: str
    operator_behaviour: str  # ADMISSION_REJECTED | DEGRADED_SCALE_TO_ZERO | LOG_ONLY_IGNORED | OPERAND_FAILS | ...
    operator_message: str = ""  # the text the API server / operator reports, to match against logs and conditions
    fix: str = ""  # the remedy alone (also part of message)


class KubeDeschedulerError(ValueError):
    """A spec the operator (or the API server) would not turn into a policy. Carries the first error's details."""

    def __init__(self, message: str, *, field: str, value: Any, fix: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.fix = fix
        self.findings = findings


# --- Go durations ------------------------------------------------------------------------------------------------

_NANOSECOND = 1
_SECOND = 1_000_000_000
_GO_DURATION_UNITS = {
    "ns": _NANOSECOND,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": _SECOND,
    "m": 60 * _SECOND,
    "h": 3600 * _SECOND,
}
_UINT63 = 1 << 63


def _is_ascii_digit(char: str) -> bool:
    return "0" <= char <= "9"


def _leading_int(text: str, original: str) -> tuple[int, str]:
    value, index = 0, 0
    while index < len(text) and _is_ascii_digit(text[index]):
        if value > _UINT63 // 10:
            raise ValueError(f'time: invalid duration "{original}"')
        value = value * 10 + int(text[index])
        if value > _UINT63:
            raise ValueError(f'time: invalid duration "{original}"')
        index += 1
    return value, text[index:]


def _leading_fraction(text: str) -> tuple[int, float, str]:
    # Like Go: digits beyond int64 precision are consumed but ignored.
    value, scale, index, overflow = 0, 1.0, 0, False
    while index < len(text) and _is_ascii_digit(text[index]):
        if not overflow:
            candidate = value * 10 + int(text[index])
            if value > (_UINT63 - 1) // 10 or candidate > _UINT63:
                overflow = True
            else:
                value, scale = candidate, scale * 10
        index += 1
    return value, scale, text[index:]


def parse_go_duration(text: str) -> int:
    """Nanoseconds for a Go ``time.ParseDuration`` string ("5m", "1h30m", "1.5h", "-90s"); ValueError worded as Go."""
    original, rest, negative = text, text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise ValueError(f'time: invalid duration "{original}"')
    total = 0
    while rest:
        if not (rest[0] == "." or _is_ascii_digit(rest[0])):
            raise ValueError(f'time: invalid duration "{original}"')
        length_before = len(rest)
        whole, rest = _leading_int(rest, original)
        has_whole = length_before != len(rest)
        fraction, scale, has_fraction = 0, 1.0, False
        if rest[:1] == ".":
            rest = rest[1:]
            length_before = len(rest)
            fraction, scale, rest = _leading_fraction(rest)
            has_fraction = length_before != len(rest)
        if not has_whole and not has_fraction:
            raise ValueError(f'time: invalid duration "{original}"')
        unit_length = 0
        while unit_length < len(rest) and not (rest[unit_length] == "." or _is_ascii_digit(rest[unit_length])):
            unit_length += 1
        if unit_length == 0:
            raise ValueError(f'time: missing unit in duration "{original}"')
        unit_name, rest = rest[:unit_length], rest[unit_length:]
        if unit_name not in _GO_DURATION_UNITS:
            raise ValueError(f'time: unknown unit "{unit_name}" in duration "{original}"')
        unit = _GO_DURATION_UNITS[unit_name]
        if whole > _UINT63 // unit:
            raise ValueError(f'time: invalid duration "{original}"')
        component = whole * unit
        if fraction > 0:
            component += int(float(fraction) * (float(unit) / scale))
            if component > _UINT63:
                raise ValueError(f'time: invalid duration "{original}"')
        total += component
        if total > _UINT63:
            raise ValueError(f'time: invalid duration "{original}"')
    if negative:
        return -total
    if total > _UINT63 - 1:
        raise ValueError(f'time: invalid duration "{original}"')
    return total


def _go_fraction(value: int, precision: int) -> tuple[str, int]:
    digits: list[str] = []
    printing = False
    for _position in range(precision):
        digit = value % 10
        printing = printing or digit != 0
        if printing:
            digits.append(str(digit))
        value //= 10
    return ("." + "".join(reversed(digits)) if printing else ""), value


def format_go_duration(nanoseconds: int) -> str:
    """Go's ``time.Duration.String()``: 15m -> "15m0s", 48h -> "48h0m0s", 1.5s -> "1.5s", 0 -> "0s"."""
    sign = "-" if nanoseconds < 0 else ""
    remaining = abs(nanoseconds)
    if remaining == 0:
        return "0s"
    if remaining < _SECOND:
        precision, unit = (0, "ns") if remaining < 1_000 else (3, "\u00b5s") if remaining < 1_000_000 else (6, "ms")
        fraction, whole = _go_fraction(remaining, precision)
        return f"{sign}{whole}{fraction}{unit}"
    fraction, seconds = _go_fraction(remaining, 9)
    text = f"{seconds % 60}{fraction}s"
    minutes = seconds // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        hours = minutes // 60
        if hours:
            text = f"{hours}h{text}"
    return sign + text


# The API server validates `format: duration` with kube-openapi's strfmt, which also accepts "1d", "2 weeks"...
_OPENAPI_DURATION_MATCHER = re.compile(r"((\d+)\s*([A-Za-z\u00b5]+))")
_OPENAPI_DURATION_UNITS = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)


def _is_openapi_duration(text: str) -> bool:
    try:
        parse_go_duration(text)
        return True
    except ValueError:
        pass
    for match in _OPENAPI_DURATION_MATCHER.finditer(text):
        unit = match.group(3).strip().lower()
        for variants in _OPENAPI_DURATION_UNITS:
            last = len(variants) - 1
            if any((i == last and unit.startswith(v)) or unit == v.lower() for i, v in enumerate(variants)):
                return True
    return False


# --- small helpers -----------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _go_list(items: list[str]) -> str:
    """Go's %v of a []string."""
    return "[" + " ".join(items) + "]"


def _finding(
    severity: str,
    path: str,
    value: Any,
    why: str,
    fix: str,
    behaviour: str,
    operator_message: str = "",
) -> Finding:
    message = f"{path}={_show(value)}: {why}. Fix: {fix}."
    if operator_message:
        message += f' Reported as: "{operator_message}".'
    return Finding(severity, path, value, message, behaviour, operator_message, fix)


def _error(path: str, value: Any, why: str, fix: str, behaviour: str, operator_message: str = "") -> Finding:
    return _finding(ERROR, path, value, why, fix, behaviour, operator_message)


def _warning(path: str, value: Any, why: str, fix: str) -> Finding:
    return _finding(WARNING, path, value, why, fix, NOT_APPLICABLE)


def _suggest(value: Any, choices: tuple[str, ...]) -> str:
    if isinstance(value, str):
        close = difflib.get_close_matches(value, choices, n=1)
        if close:
            return f'did you mean "{close[0]}"? Allowed: {", ".join(repr(c) for c in choices)}'
    return f"use one of {', '.join(repr(c) for c in choices)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _present(mapping: dict, key: str) -> bool:
    # The API server prunes null values of non-nullable fields, so null means "not set".
    return mapping.get(key) is not None


def _customizations(spec: dict) -> Optional[dict]:
    value = spec.get("profileCustomizations")
    return value if isinstance(value, dict) else None


def _namespace_lists(customizations: Optional[dict]) -> tuple[list[str], list[str]]:
    namespaces = (customizations or {}).get("namespaces")
    if not isinstance(namespaces, dict):
        return [], []

    def strings(key: str) -> list[str]:
        items = namespaces.get(key)
        return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []

    return strings("included"), strings("excluded")


def _valid_profiles(spec: dict) -> list[str]:
    profiles = spec.get("profiles")
    if not isinstance(profiles, list):
        return []
    return [p for p in profiles if isinstance(p, str) and p in PROFILES]


def _has_any(profiles: list[str], wanted: tuple[str, ...]) -> bool:
    return any(p in wanted for p in profiles)


def _needs_prometheus(profiles: list[str], customizations: Optional[dict]) -> bool:
    utilization_profile = (customizations or {}).get("devActualUtilizationProfile")
    return _has_any(profiles, KUBEVIRT_PROFILES) or (isinstance(utilization_profile, str) and utilization_profile != "")


def protected_namespaces(namespaces: list[str]) -> list[str]:
    """The operator's protected list: kube-system, hypershift, openshift, then every existing ``openshift-*``
    namespace in API list order (sorted by name). The operator computes it once, when its pod starts."""
    prefixed = sorted({ns for ns in namespaces if isinstance(ns, str) and ns.startswith("openshift-")})
    return list(STATIC_PROTECTED_NAMESPACES) + prefixed


# --- validation: API admission (schema + CEL) --------------------------------------------------------------------

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


def _check_unknown_fields(mapping: dict, path: str, known: tuple[str, ...]) -> list[Finding]:
    findings = []
    for key in mapping:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f'did you mean "{close[0]}"?' if close else f"known fields: {', '.join(known)}"
        findings.append(
            _warning(
                f"{path}.{key}",
                mapping[key],
                "not a field of KubeDescheduler v1; the CRD is structural, so the API server prunes it "
                "(oc/kubectl apply with strict field validation rejects it instead)",
                f"remove it ({hint})",
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
        parse_go_duration(value)
        return []
    except ValueError as go_error:
        if _is_openapi_duration(value):
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
                    f"does not match the CRD pattern {MANAGEMENT_STATE_PATTERN.pattern}",
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


# --- validation: operator runtime --------------------------------------------------------------------------------


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


def _check_namespace_rules(customizations: Optional[dict], namespaces: Optional[list[str]]) -> list[Finding]:
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
    protected = protected_namespaces(namespaces or [])
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
        return parse_go_duration(value)
    except ValueError:
        return None


def _runtime_findings(
    spec: dict,
    namespaces: Optional[list[str]],
    priority_class_names: Optional[list[str]],
    nodes: Optional[list[dict]],
    namespace_labels: Optional[dict],
    scheduler_profile: Optional[str],
) -> list[Finding]:
    customizations = _customizations(spec)
    profiles = _valid_profiles(spec)
    findings = _check_interval_set(spec)
    findings += _check_namespace_rules(customizations, namespaces)
    findings += _check_priority_threshold(customizations, priority_class_names)
    findings += _check_kubevirt_thresholds(profiles, customizations)
    findings += _check_utilization_profile(profiles, customizations)
    findings += _check_negative_pod_lifetime(profiles, customizations)
    findings += _check_kubevirt_nodes(profiles, nodes)
    findings += _check_monitoring_label(profiles, customizations, namespace_labels)
    findings += _check_scheduler_profile(profiles, scheduler_profile)
    return findings


# --- validation: legal but surprising ----------------------------------------------------------------------------


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
    if nanoseconds < _SECOND:
        return [
            _warning(
                path,
                value,
                "below one second it becomes maxPodLifeTimeSeconds 0: PodLifeTime evicts every pod it may evict",
                'use a realistic lifetime, e.g. "24h"',
            )
        ]
    if nanoseconds % _SECOND:
        return [
            _warning(
                path,
                value,
                f"the operator truncates it to whole seconds ({nanoseconds // _SECOND})",
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
                "the descheduler operator does not read managementState; the descheduler keeps running",
                'use "Managed"; delete the KubeDescheduler to stop the descheduler',
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


def _warning_findings(spec: dict) -> list[Finding]:
    customizations = _customizations(spec)
    profiles = _valid_profiles(spec)
    findings = _warn_deprecated_profiles(spec)
    findings += _warn_included_namespaces(profiles, customizations)
    findings += _warn_unused_customizations(profiles, customizations)
    findings += _warn_profile_combinations(profiles)
    findings += _warn_eviction_limits(spec)
    findings += _warn_pod_lifetime(profiles, customizations)
    findings += _warn_operator_spec_fields(spec)
    return findings


def validate_kubedescheduler_spec(
    spec: dict,
    *,
    namespaces: Optional[list[str]] = None,
    priority_class_names: Optional[list[str]] = None,
    nodes: Optional[list[dict]] = None,
    namespace_labels: Optional[dict] = None,
    scheduler_profile: Optional[str] = None,
) -> list[Finding]:
    """Validate a KubeDescheduler ``spec`` as the API server and the operator would.

    Errors are tagged with what happens on a cluster (``operator_behaviour``): rejected at admission (schema/CEL),
    operand scaled to 0 + Degraded, operator logs only (previous ConfigMap stays), or the descheduler pod fails.
    Warnings cover legal-but-surprising settings. A rule whose cluster fact is None is skipped:

    - ``namespaces``: names of existing namespaces (protected list = kube-system, hypershift, openshift, openshift-*);
    - ``priority_class_names``: existing PriorityClass names;
    - ``nodes``: Node objects (dicts with metadata.labels), for the KubeVirt-schedulable check;
    - ``namespace_labels``: labels of namespace openshift-kube-descheduler-operator (or {namespace: labels});
    - ``scheduler_profile``: spec.profile of schedulers.config.openshift.io/cluster.

    Not checkable here: /proc/pressure in the operator pod (PSI) and the prometheus-k8s route.
    """
    if not isinstance(spec, dict):
        return [_type_error("spec", spec, "an object")]
    findings = _admission_findings(spec)
    findings += _runtime_findings(spec, namespaces, priority_class_names, nodes, namespace_labels, scheduler_profile)
    findings += _warning_findings(spec)
    return findings


# --- rendering ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RenderInputs:
    """What every profile builder needs, resolved once as manageConfigMap does."""

    customizations: Optional[dict]
    included: list[str]
    excluded: list[str]  # protected + user-excluded, or [] when included is set
    protected: list[str]
    ignore_pvc_pods: bool
    evict_local_storage_pods: bool
    profiles: list[str]


def _render_inputs(spec: dict, namespaces: Optional[list[str]]) -> _RenderInputs:
    customizations = _customizations(spec)
    protected = protected_namespaces(namespaces or [])
    included, user_excluded = _namespace_lists(customizations)
    profiles = _valid_profiles(spec)
    return _RenderInputs(
        customizations=customizations,
        included=list(included),
        excluded=[] if included else protected + list(user_excluded),
        protected=protected,
        ignore_pvc_pods="EvictPodsWithPVC" not in profiles,
        evict_local_storage_pods="EvictPodsWithLocalStorage" in profiles,
        profiles=profiles,
    )


def _plugin_sets(**enabled: list[str]) -> dict:
    """All six extension points, as Go marshals them (nil slices become null)."""
    return {point: {"disabled": None, "enabled": enabled.get(point)} for point in EXTENSION_POINTS}


def _plugin_config(name: str, args: dict) -> dict:
    return {"args": args, "name": name}


def _namespace_filter(inputs: _RenderInputs) -> Optional[dict]:
    selection = {}
    if inputs.included:
        selection["include"] = list(inputs.included)
    if inputs.excluded:
        selection["exclude"] = list(inputs.excluded)
    return selection or None


def _with_namespaces(args: dict, inputs: _RenderInputs) -> dict:
    selection = _namespace_filter(inputs)
    if selection is not None:
        args["namespaces"] = selection
    return args


def _low_node_utilization_evictable(inputs: _RenderInputs) -> Optional[dict]:
    # LowNodeUtilization has no include support: with `included` it falls back to the protected list.
    if inputs.excluded:
        return {"exclude": list(inputs.excluded)}
    if inputs.included:
        return {"exclude": list(inputs.protected)}
    return None


def _priority_threshold(customizations: Optional[dict]) -> Optional[dict]:
    custom = customizations or {}
    value = custom.get("thresholdPriority")
    class_name = custom.get("thresholdPriorityClassName") or ""
    if value is None and class_name == "":
        return None
    return {"name": class_name, "value": value}


def _default_evictor(inputs: _RenderInputs) -> dict:
    args: dict = {"podProtections": {}}
    if inputs.ignore_pvc_pods:
        args["ignorePvcPods"] = True
    if inputs.evict_local_storage_pods:
        args["evictLocalStoragePods"] = True
    threshold = _priority_threshold(inputs.customizations)
    if threshold is not None:
        args["priorityThreshold"] = threshold
    return _plugin_config("DefaultEvictor", args)


def _profile(name: str, plugin_configs: list[dict], plugins: dict) -> dict:
    return {"name": name, "pluginConfig": plugin_configs, "plugins": plugins}


def _affinity_and_taints(inputs: _RenderInputs) -> dict:
    deschedule = [
        "RemovePodsViolatingInterPodAntiAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
    ]
    configs = [
        _plugin_config(deschedule[0], _with_namespaces({}, inputs)),
        _plugin_config(deschedule[1], _with_namespaces({}, inputs)),
        _plugin_config(
            deschedule[2],
            _with_namespaces({"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}, inputs),
        ),
        _default_evictor(inputs),
    ]
    return _profile("AffinityAndTaints", configs, _plugin_sets(deschedule=deschedule, filter=["DefaultEvictor"]))


def _topology_and_duplicates(inputs: _RenderInputs, soft: bool) -> dict:
    balance = ["RemovePodsViolatingTopologySpreadConstraint", "RemoveDuplicates"]
    constraints = ["DoNotSchedule", "ScheduleAnyway"] if soft else ["DoNotSchedule"]
    configs = [
        _plugin_config(balance[0], _with_namespaces({"constraints": constraints}, inputs)),
        _plugin_config(balance[1], _with_namespaces({}, inputs)),
        _default_evictor(inputs),
    ]
    name = "SoftTopologyAndDuplicates" if soft else "TopologyAndDuplicates"
    return _profile(name, configs, _plugin_sets(balance=balance, filter=["DefaultEvictor"]))


def _metrics_utilization(query: str) -> dict:
    prometheus = {"query": query} if query else {}
    return {"prometheus": prometheus, "source": "Prometheus"}


def _threshold_maps(resources: list[str], low: int, high: int) -> dict:
    return {"thresholds": {r: low for r in resources}, "targetThresholds": {r: high for r in resources}}


def _lifecycle_low_node_utilization(inputs: _RenderInputs) -> dict:
    custom = inputs.customizations or {}
    preset = custom.get("devLowNodeUtilizationThresholds")
    low, high = LOW_NODE_UTILIZATION_PRESETS[preset] if preset is not None else LOW_NODE_UTILIZATION_PRESETS[""]
    resources = ["cpu", "memory", "pods"]
    args: dict = {}
    utilization_profile = custom.get("devActualUtilizationProfile") or ""
    if utilization_profile:
        args["metricsUtilization"] = _metrics_utilization(_utilization_query(utilization_profile) or "")
        resources = ["MetricResource"]
    args.update(_threshold_maps(resources, low, high))
    evictable = _low_node_utilization_evictable(inputs)
    if evictable is not None:
        args["evictableNamespaces"] = evictable
    return _plugin_config("LowNodeUtilization", args)


def _pod_lifetime_seconds(customizations: Optional[dict]) -> int:
    nanoseconds = _duration_or_none((customizations or {}).get("podLifetime"))
    # Go: uint(Duration.Seconds()) truncates toward zero; negative values are refused by validation.
    return DEFAULT_POD_LIFETIME_SECONDS if nanoseconds is None else nanoseconds // _SECOND


def _lifecycle_and_utilization(inputs: _RenderInputs, with_pod_lifetime: bool) -> dict:
    restarts_args = {"includingInitContainers": True, "podRestartThreshold": POD_RESTART_THRESHOLD}
    configs = [
        _plugin_config("RemovePodsHavingTooManyRestarts", _with_namespaces(restarts_args, inputs)),
        _lifecycle_low_node_utilization(inputs),
        _default_evictor(inputs),
    ]
    deschedule = ["RemovePodsHavingTooManyRestarts"]
    if with_pod_lifetime:
        lifetime_args = {"maxPodLifeTimeSeconds": _pod_lifetime_seconds(inputs.customizations)}
        configs.insert(0, _plugin_config("PodLifeTime", _with_namespaces(lifetime_args, inputs)))
        deschedule.insert(0, "PodLifeTime")
    name = "LifecycleAndUtilization" if with_pod_lifetime else "LongLifecycle"
    plugins = _plugin_sets(deschedule=deschedule, balance=["LowNodeUtilization"], filter=["DefaultEvictor"])
    return _profile(name, configs, plugins)


def _compact_and_scale(inputs: _RenderInputs) -> dict:
    preset = (inputs.customizations or {}).get("devHighNodeUtilizationThresholds")
    threshold = HIGH_NODE_UTILIZATION_PRESETS[preset if preset is not None else ""]
    args: dict = {"thresholds": {"cpu": threshold, "memory": threshold, "pods": threshold}}
    # HighNodeUtilization has no include support, and with `included` the operator sets no filter at all.
    if inputs.excluded:
        args["evictableNamespaces"] = {"exclude": list(inputs.excluded)}
    configs = [_plugin_config("HighNodeUtilization", args), _default_evictor(inputs)]
    plugins = _plugin_sets(balance=["HighNodeUtilization"], filter=["DefaultEvictor"])
    return _profile("CompactAndScale", configs, plugins)


def _kubevirt_thresholds(customizations: Optional[dict]) -> tuple[bool, int, int]:
    """(useDeviationThresholds, low, high): deviation presets win, then static presets, else AsymmetricLow."""
    custom = customizations or {}
    deviation = custom.get("devDeviationThresholds")
    low_preset = custom.get("devLowNodeUtilizationThresholds")
    if deviation is not None:
        return (deviation != "", *DEVIATION_PRESETS[deviation])
    if low_preset is not None:
        # The operator quirk: "" keeps deviation mode on but takes the static Medium numbers (20/50).
        return (low_preset == "", *LOW_NODE_UTILIZATION_PRESETS[low_preset])
    return (True, *DEVIATION_PRESETS["AsymmetricLow"])


def _kubevirt_migration_aware_args(customizations: Optional[dict]) -> dict:
    custom = customizations or {}
    args = {}
    for spec_name, arg_name in KUBEVIRT_MIGRATION_ARGS:
        nanoseconds = _duration_or_none(custom.get(spec_name))
        if nanoseconds is not None:
            args[arg_name] = format_go_duration(nanoseconds)
    return args


def _kubevirt_relieve_and_migrate(inputs: _RenderInputs) -> dict:
    custom = inputs.customizations or {}
    use_deviation, low, high = _kubevirt_thresholds(inputs.customizations)
    utilization_profile = custom.get("devActualUtilizationProfile") or KUBEVIRT_DEFAULT_UTILIZATION_PROFILE
    args: dict = {
        "evictionLimits": {"node": KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE},
        "metricsUtilization": _metrics_utilization(_utilization_query(utilization_profile) or ""),
    }
    args.update(_threshold_maps(["MetricResource"], low, high))
    if use_deviation:
        args["useDeviationThresholds"] = True
    evictable = _low_node_utilization_evictable(inputs)
    if evictable is not None:
        args["evictableNamespaces"] = evictable
    evictor_args: dict = {"evictLocalStoragePods": True, "noEvictionPolicy": "Mandatory", "podProtections": {}}
    threshold = _priority_threshold(inputs.customizations)
    if threshold is not None:
        evictor_args["priorityThreshold"] = threshold
    configs = [
        _plugin_config("LowNodeUtilization", args),
        _plugin_config("DefaultEvictor", evictor_args),
        _plugin_config("KubevirtMigrationAware", _kubevirt_migration_aware_args(inputs.customizations)),
    ]
    plugins = _plugin_sets(
        balance=["LowNodeUtilization"],
        filter=["DefaultEvictor", "KubevirtMigrationAware"],
        preevictionfilter=["KubevirtMigrationAware"],
    )
    return _profile("KubeVirtRelieveAndMigrate", configs, plugins)


_PROFILE_BUILDERS: dict[str, Callable[[_RenderInputs], dict]] = {
    "AffinityAndTaints": _affinity_and_taints,
    "TopologyAndDuplicates": lambda inputs: _topology_and_duplicates(inputs, soft=False),
    "SoftTopologyAndDuplicates": lambda inputs: _topology_and_duplicates(inputs, soft=True),
    "LifecycleAndUtilization": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=True),
    "LongLifecycle": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=False),
    "DevPreviewLongLifecycle": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=False),
    "CompactAndScale": _compact_and_scale,
    "KubeVirtRelieveAndMigrate": _kubevirt_relieve_and_migrate,
    "DevKubeVirtRelieveAndMigrate": _kubevirt_relieve_and_migrate,
}


def _go_uint(value: int) -> int:
    """Go's uint(int32): negative values wrap around (64-bit)."""
    return value % UINT64_MODULUS


def _apply_eviction_limits(policy: dict, spec: dict, profiles: list[str]) -> None:
    if _has_any(profiles, KUBEVIRT_PROFILES):
        policy["maxNoOfPodsToEvictTotal"] = KUBEVIRT_DEFAULT_EVICTIONS_TOTAL
        policy["maxNoOfPodsToEvictPerNode"] = KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE
    limits = spec.get("evictionLimits")
    if not isinstance(limits, dict):
        return
    if _is_int(limits.get("total")):
        policy["maxNoOfPodsToEvictTotal"] = _go_uint(limits["total"])
    if _is_int(limits.get("node")):
        per_node = _go_uint(limits["node"])
        policy["maxNoOfPodsToEvictPerNode"] = per_node
        for profile in policy.get("profiles", []):
            for config in profile["pluginConfig"]:
                if config["name"] == "LowNodeUtilization":
                    config["args"]["evictionLimits"] = {"node": per_node}


def _prometheus_url(url: str) -> str:
    # The operator builds "https://" + route host; accept a bare host as well.
    return url if "://" in url else "https://" + url


def _sorted_keys(value: Any) -> Any:
    """Go's encoding/json sorts map keys; mirror it so yaml.safe_dump(sort_keys=False) matches the ConfigMap."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def _raise_for_errors(findings: list[Finding]) -> None:
    errors = tuple(f for f in findings if f.severity == ERROR)
    if not errors:
        return
    first = errors[0]
    message = first.message
    if len(errors) > 1:
        message += f" ({len(errors) - 1} more error(s): {'; '.join(e.field for e in errors[1:])})"
    raise KubeDeschedulerError(message, field=first.field, value=first.value, fix=first.fix, findings=errors)


def render_policy(
    spec: dict,
    *,
    namespaces: Optional[list[str]] = None,
    prometheus_url: str = DEFAULT_PROMETHEUS_URL,
) -> dict:
    """The DeschedulerPolicy (descheduler/v1alpha2) the operator writes to ConfigMap ``cluster`` key ``policy.yaml``.

    ``namespaces``: names of the namespaces that exist (when the operator pod started); the protected list is
    kube-system, hypershift, openshift + every ``openshift-*`` among them. ``prometheus_url``: ``https://`` + the
    host of route openshift-monitoring/prometheus-k8s (used only when Prometheus metrics are needed).

    Raises KubeDeschedulerError for every error that can be judged from the spec alone (admission rejections,
    operator refusals, a missing interval), never for warnings. Profiles keep the spec order; EvictPodsWithPVC and
    EvictPodsWithLocalStorage only change DefaultEvictor; deprecated names are emitted under their new names.
    The output equals yaml.safe_load of the operator's policy.yaml (see ``compact_policy`` for a leaner form).
    """
    _raise_for_errors(validate_kubedescheduler_spec(spec, namespaces=namespaces))
    inputs = _render_inputs(spec, namespaces)
    policy: dict = {"apiVersion": POLICY_API_VERSION, "kind": POLICY_KIND}
    if _needs_prometheus(inputs.profiles, inputs.customizations):
        policy["metricsProviders"] = [{"prometheus": {"url": _prometheus_url(prometheus_url)}, "source": "Prometheus"}]
    if _has_any(inputs.profiles, KUBEVIRT_PROFILES):
        policy["nodeSelector"] = KUBEVIRT_NODE_SELECTOR
    rendered = [_PROFILE_BUILDERS[name](inputs) for name in inputs.profiles if name in _PROFILE_BUILDERS]
    if rendered:  # `profiles` is omitempty in v1alpha2
        policy["profiles"] = rendered
    _apply_eviction_limits(policy, spec, inputs.profiles)
    return _sorted_keys(policy)


def compact_policy(policy: Any) -> Any:
    """A copy without the operator's no-op noise: null values, ``podProtections: {}`` and unused extension points.
    Decodes to the same upstream DeschedulerPolicy (``args: {}`` is kept because every pluginConfig needs args)."""
    if isinstance(policy, list):
        return [compact_policy(item) for item in policy]
    if not isinstance(policy, dict):
        return policy
    compacted = {}
    for key, value in policy.items():
        if value is None or (key == "podProtections" and value == {}):
            continue
        value = compact_policy(value)
        if key in EXTENSION_POINTS and value == {}:
            continue
        compacted[key] = value
    return compacted
