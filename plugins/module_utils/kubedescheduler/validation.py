"""KubeDescheduler validation: the API server's rules, the operator's rules and the warning rules together."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.api_server_rules import (
    _admission_findings,
    _type_error,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ADMISSION_REJECTED,
    ERROR,
    PRUNED_BY_API_SERVER,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_rules import (
    _runtime_findings,
    check_management_state_set,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
    KubeDeschedulerError,
    _customizations,
    _valid_profiles,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.warning_rules import (
    _warn_deprecated_profiles,
    _warn_eviction_limits,
    _warn_included_namespaces,
    _warn_operator_spec_fields,
    _warn_pod_lifetime,
    _warn_profile_combinations,
    _warn_unused_customizations,
)

# How fields KubeDescheduler v1 does not have are treated, named as the API server's fieldValidation: Strict rejects
# them (a misspelt field must not silently fall back to its default), Warn passes them on (the API server prunes
# them) with a warning, Ignore passes them on silently.
FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")


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
    management_state_required: bool = True,
    operator_namespaces: Optional[list[str]] = None,
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

    ``operator_namespaces``: what the running operator built its protected list from, when it differs from
    ``namespaces`` (it fixes the list when it starts; kubedescheduler/operator_view.py).
    ``management_state_required``: a missing managementState is an error (the operator degrades and scales the
    descheduler to 0); False where only the rendering matters (a plan's preview renders the same policy either way).

    Not checkable here: /proc/pressure in the operator pod (PSI) and the prometheus-k8s route.
    """
    if not isinstance(spec, dict):
        return [_type_error("spec", spec, "an object")]
    findings = _admission_findings(spec)
    if management_state_required:
        findings += check_management_state_set(spec)
    findings += _runtime_findings(spec, namespaces, priority_class_names, nodes, namespace_labels, scheduler_profile,
                                  operator_namespaces)
    findings += _warning_findings(spec)
    return findings


def _raise_for_errors(findings: list[Finding]) -> None:
    errors = tuple(f for f in findings if f.severity == ERROR)
    if not errors:
        return
    first = errors[0]
    message = first.message
    if len(errors) > 1:
        message += f" ({len(errors) - 1} more error(s): {'; '.join(e.field for e in errors[1:])})"
    raise KubeDeschedulerError(message, field=first.field, value=first.value, fix=first.fix, findings=errors)


def is_unknown_field(finding: Finding) -> bool:
    return finding.operator_behaviour == PRUNED_BY_API_SERVER


def unknown_field_findings(spec: Any) -> list[Finding]:
    """Only the fields KubeDescheduler v1 does not have (spec, evictionLimits, profileCustomizations...), without the
    other checks: what field_validation decides on before anything else is done."""
    if not isinstance(spec, dict):
        return []
    return [finding for finding in _admission_findings(spec) if is_unknown_field(finding)]


def apply_field_validation(findings: list[Finding], field_validation: str) -> list[Finding]:
    """``findings`` with those of unknown fields made errors (Strict), kept as warnings (Warn) or dropped (Ignore)."""
    if field_validation not in FIELD_VALIDATIONS:
        raise ValueError(f"field_validation must be one of {', '.join(FIELD_VALIDATIONS)}, got {field_validation!r}")
    kept = []
    for finding in findings:
        if not is_unknown_field(finding) or field_validation == "Warn":
            kept.append(finding)
        elif field_validation == "Strict":
            kept.append(replace(finding, severity=ERROR, operator_behaviour=ADMISSION_REJECTED,
                                message=finding.message + " Rejected because field_validation is Strict (set it to "
                                "Warn to pass fields this collection does not know to the API server)."))
    return kept
