"""The desired KubeDescheduler spec from module options, and spec comparison as the API server stores it.

Three sources, in this order: ``spec`` (a whole v1 spec, camelCase) or ``legacy_spec`` (a v1beta1 spec translated to
v1), then the per-field options (snake_case), each of which replaces that top-level field. The result is the whole
spec: a field set by none of them is removed from the cluster's object (declarative), except the CRD defaults (mode
Predictive, logLevel and operatorLogLevel Normal), which the API server would put back anyway.

A spec the collection builds (from the per-field options or a translated ``legacy_spec``) gets ``managementState:
Managed`` unless ``management_state`` says otherwise: without it the operator degrades and scales the descheduler to 0.
A ``spec`` the user gives is taken as written; validation refuses it without managementState.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import KdoError
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.legacy import (
    translate_legacy_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    OPERATOR_OWNED_SPEC_FIELDS,
    SPEC_DEFAULTS,
)

# option -> spec field, in CRD order
TOP_LEVEL_OPTIONS = {
    "management_state": "managementState",
    "log_level": "logLevel",
    "operator_log_level": "operatorLogLevel",
    "descheduling_interval_seconds": "deschedulingIntervalSeconds",
    "profiles": "profiles",
    "mode": "mode",
    "eviction_limits": "evictionLimits",
    "profile_customizations": "profileCustomizations",
}
EVICTION_LIMIT_OPTIONS = {"total": "total", "node": "node"}
CUSTOMIZATION_OPTIONS = {
    "pod_lifetime": "podLifetime",
    "threshold_priority": "thresholdPriority",
    "threshold_priority_class_name": "thresholdPriorityClassName",
    "namespaces": "namespaces",
    "dev_low_node_utilization_thresholds": "devLowNodeUtilizationThresholds",
    "dev_enable_soft_tainter": "devEnableSoftTainter",
    "dev_enable_evictions_in_background": "devEnableEvictionsInBackground",
    "dev_high_node_utilization_thresholds": "devHighNodeUtilizationThresholds",
    "dev_actual_utilization_profile": "devActualUtilizationProfile",
    "dev_deviation_thresholds": "devDeviationThresholds",
    "dev_migration_cooldown": "devMigrationCooldown",
    "dev_max_migration_cooldown": "devMaxMigrationCooldown",
    "dev_migration_history_window": "devMigrationHistoryWindow",
}
NAMESPACE_OPTIONS = {"included": "included", "excluded": "excluded"}
MANAGED = "Managed"  # what the collection writes when it creates the spec itself


def spec_of(document: Any) -> Any:
    """The spec of a whole KubeDescheduler object (kind KubeDescheduler), else the document itself: the options
    that take a KubeDescheduler accept either."""
    if isinstance(document, Mapping) and document.get("kind") == "KubeDescheduler":
        return document.get("spec")
    return document


def _camel(options: Optional[Mapping[str, Any]], names: Mapping[str, str]) -> dict[str, Any]:
    """Set suboptions only (Ansible fills unset ones with None)."""
    return {names[key]: value for key, value in (options or {}).items() if value is not None and key in names}


def _customizations(options: Mapping[str, Any]) -> dict[str, Any]:
    customizations = _camel(options, CUSTOMIZATION_OPTIONS)
    if "namespaces" in customizations:
        customizations["namespaces"] = _camel(customizations["namespaces"], NAMESPACE_OPTIONS)
    return customizations


def _field_options(params: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for option, field in TOP_LEVEL_OPTIONS.items():
        value = params.get(option)
        if value is None:
            continue
        if option == "eviction_limits":
            value = _camel(value, EVICTION_LIMIT_OPTIONS)
        elif option == "profile_customizations":
            value = _customizations(value)
        fields[field] = value
    return fields


def _base_spec(params: Mapping[str, Any]) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    if params.get("spec") is not None and params.get("legacy_spec") is not None:
        raise KdoError("spec and legacy_spec are mutually exclusive: give the v1 spec, or the v1beta1 spec to "
                       "translate")
    if params.get("legacy_spec") is not None:
        try:
            translation = translate_legacy_spec(params["legacy_spec"])
        except ValueError as error:
            raise KdoError(f"legacy_spec: {error}") from error
        return copy.deepcopy(translation["spec"]), translation
    spec = params.get("spec")
    if spec is None:
        return {}, None
    if not isinstance(spec, dict):
        raise KdoError(f"spec must be a KubeDescheduler spec (a mapping), got {spec!r}")
    # accept a whole object too (as `oc get -o yaml` prints it)
    if isinstance(spec.get("spec"), dict) and ("kind" in spec or "apiVersion" in spec):
        spec = spec["spec"]
    return copy.deepcopy(spec), None


def desired_spec(params: Mapping[str, Any]) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    """The whole desired spec as the user wrote it (before CRD defaults), and the legacy translation if any."""
    spec, translation = _base_spec(params)
    if params.get("spec") is None:
        spec.setdefault("managementState", MANAGED)
    spec.update(_field_options(params))
    return spec, translation


def _without_nulls(value: Any) -> Any:
    # the API server prunes nulls of non-nullable fields, so null means "not set"
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def with_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec as the API server stores it: nulls pruned, CRD defaults filled in."""
    stored = _without_nulls(dict(spec))
    for field, default in SPEC_DEFAULTS.items():
        stored.setdefault(field, default)
    return stored


def comparable(spec: Optional[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """What decides idempotence: the stored form without the fields the operator writes itself."""
    if spec is None:
        return None
    return {key: value for key, value in with_defaults(spec).items() if key not in OPERATOR_OWNED_SPEC_FIELDS}


def spec_changes(before: Optional[Mapping[str, Any]], after: Optional[Mapping[str, Any]],
                 path: str = "spec") -> list[dict[str, Any]]:
    """Leaf-level differences: [{field, before, after}] (a list or a scalar is one leaf)."""
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        changes: list[dict[str, Any]] = []
        for key in list(before) + [k for k in after if k not in before]:
            changes += spec_changes(before.get(key), after.get(key), f"{path}.{key}")
        return changes
    if before == after:
        return []
    return [{"field": path, "before": before, "after": after}]


def describe_changes(changes: list[dict[str, Any]]) -> str:
    def show(value: Any) -> str:
        return "(unset)" if value is None else repr(value)

    return "; ".join(f"{c['field']}: {show(c['before'])} -> {show(c['after'])}" for c in changes)
