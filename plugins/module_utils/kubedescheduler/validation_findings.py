"""Validation findings: what is wrong, where, what the operator does about it and the fix."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError, nearest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ERROR,
    KUBEVIRT_PROFILES,
    NOT_APPLICABLE,
    PROFILES,
    STATIC_PROTECTED_NAMESPACES,
    WARNING,
)


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


class KubeDeschedulerError(FleetError, ValueError):
    """A spec the operator (or the API server) would not turn into a policy. Carries the first error's details."""

    def __init__(self, message: str, *, field: str, value: Any, fix: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.fix = fix
        self.findings = findings


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
        close = nearest_name(value, choices)
        if close:
            return f'did you mean "{close}"? Allowed: {", ".join(repr(c) for c in choices)}'
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


def needs_prometheus(spec: dict) -> bool:
    """Whether the operator needs the Prometheus route for ``spec`` (a KubeVirt profile or an actual-utilization
    profile): it then renders metricsProviders with the route's URL."""
    return _needs_prometheus(_valid_profiles(spec), _customizations(spec))


def protected_namespaces(namespaces: list[str]) -> list[str]:
    """The operator's protected list: kube-system, hypershift, openshift, then every existing ``openshift-*``
    namespace in API list order (sorted by name). The operator computes it once, when its pod starts."""
    prefixed = sorted({ns for ns in namespaces if isinstance(ns, str) and ns.startswith("openshift-")})
    return list(STATIC_PROTECTED_NAMESPACES) + prefixed
