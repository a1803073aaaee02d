"""KubeDescheduler validation: the admission, operator-runtime and advisory checks together."""

from __future__ import annotations

from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.admission import (
    _admission_findings,
    _type_error,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.advisories import (
    _warn_deprecated_profiles,
    _warn_eviction_limits,
    _warn_included_namespaces,
    _warn_operator_spec_fields,
    _warn_pod_lifetime,
    _warn_profile_combinations,
    _warn_unused_customizations,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.findings import (
    Finding,
    KubeDeschedulerError,
    _customizations,
    _valid_profiles,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.runtime_rules import (
    _runtime_findings,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.vocabulary import (
    ERROR,
)


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


def _raise_for_errors(findings: list[Finding]) -> None:
    errors = tuple(f for f in findings if f.severity == ERROR)
    if not errors:
        return
    first = errors[0]
    message = first.message
    if len(errors) > 1:
        message += f" ({len(errors) - 1} more error(s): {'; '.join(e.field for e in errors[1:])})"
    raise KubeDeschedulerError(message, field=first.field, value=first.value, fix=first.fix, findings=errors)
