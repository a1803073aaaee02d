"""The cluster facts the operator's rules depend on, read before any write, and the checks that need them.

``validate_kubedescheduler_spec`` (engine) takes namespaces, priority classes, nodes, the operator namespace's labels
and the scheduler profile. Two more facts decide "scale to 0 + Degraded" outcomes and are checked here: the
``openshift-monitoring/prometheus-k8s`` route (when Prometheus is needed) and, for the KubeVirt profiles, PSI, which
only the operator pod can see (a warning). A fact that cannot be read (403, API not served) skips its rule with a
warning rather than failing the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw, list_raw, request_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.prometheus import route_host
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    OPERATOR_NAMESPACE,
    OPERATOR_NAMESPACE_PATH,
    PROMETHEUS_ROUTE_PATH,
    SCHEDULER_PATH,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEGRADED_SCALE_TO_ZERO,
    ERROR,
    KUBEVIRT_PROFILES,
    NOT_APPLICABLE,
    WARNING,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_view import (
    OperatorView,
    late_namespaces_why,
    namespaces_created,
    operator_view,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
    _warning,
    needs_prometheus,
)

KUBEVIRT_SELECTOR = "kubevirt.io/schedulable=true"


@dataclass
class ClusterFacts:
    namespaces: Optional[list[str]] = None
    priority_class_names: Optional[list[str]] = None
    kubevirt_nodes: Optional[list[dict]] = None
    operator_namespace_labels: Optional[dict] = None
    operator_namespace_exists: bool = True
    scheduler_profile: Optional[str] = None
    prometheus_route: Optional[dict] = None
    route_api_served: bool = True
    operator: OperatorView = field(default_factory=OperatorView)
    notes: list[str] = field(default_factory=list)


def _names(items: list[dict]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


def _slim_node(node: dict) -> dict:
    """Name, labels and taints (the soft taints left on a node keep the operator's soft-tainter)."""
    metadata = node.get("metadata") or {}
    return {"metadata": {"name": metadata.get("name"), "labels": metadata.get("labels") or {}},
            "spec": {"taints": (node.get("spec") or {}).get("taints") or []}}


def _read(facts: ClusterFacts, what: str, rule: str, reader: Callable[[], Any]) -> Any:
    """Run one read; a 403 or an API the cluster does not serve skips ``rule`` with a note."""
    try:
        return reader()
    except ClusterApiError as error:
        if error.status in (403, 404):
            facts.notes.append(f"could not read {what} ({error.describe()}); the rule on {rule} was not checked")
            return None
        raise


def _scheduler_profile(api_client: Any) -> Optional[str]:
    scheduler = get_raw(api_client, SCHEDULER_PATH, kind="Scheduler")
    return ((scheduler or {}).get("spec") or {}).get("profile")


def _optional(api_client: Any, path: str, kind: str) -> tuple[Optional[dict], bool]:
    """(object or None, whether the API is served): tells a missing object from a missing API."""
    try:
        return request_raw(api_client, "GET", path, kind=kind), True
    except ClusterApiError as error:
        if error.status == 404:
            return None, bool(error.details.get("name"))
        raise


def _read_operator_namespace(api_client: Any, facts: ClusterFacts) -> None:
    """Labels of the operator namespace (None when unreadable); whether it exists (a write needs it)."""
    marker = len(facts.notes)
    namespace = _read(facts, f"namespace {OPERATOR_NAMESPACE}", "the monitoring label",
                      partial(get_raw, api_client, OPERATOR_NAMESPACE_PATH, kind="Namespace"))
    unreadable = len(facts.notes) > marker
    facts.operator_namespace_exists = namespace is not None or unreadable
    if namespace is not None:
        facts.operator_namespace_labels = (namespace.get("metadata") or {}).get("labels") or {}


def _list_names(api_client: Any, path: str, kind: str) -> list[str]:
    return _names(list_raw(api_client, path, kind=kind)[0])


def _kubevirt_nodes(api_client: Any) -> list[dict]:
    nodes = list_raw(api_client, "/api/v1/nodes", label_selector=KUBEVIRT_SELECTOR, kind="Node")[0]
    return [_slim_node(node) for node in nodes]


def gather_facts(api_client: Any) -> ClusterFacts:
    facts = ClusterFacts()
    created = _read(facts, "namespaces", "protected namespaces", partial(namespaces_created, api_client))
    if created is not None:
        facts.namespaces = list(created)
        facts.operator = operator_view(api_client, created)
    facts.priority_class_names = _read(
        facts, "priority classes", "thresholdPriorityClassName",
        partial(_list_names, api_client, "/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass"))
    facts.kubevirt_nodes = _read(facts, "nodes", "KubeVirt-schedulable nodes", partial(_kubevirt_nodes, api_client))
    _read_operator_namespace(api_client, facts)
    facts.scheduler_profile = _read(facts, "schedulers.config.openshift.io/cluster", "scheduler profiles",
                                    partial(_scheduler_profile, api_client))
    route = _read(facts, "route openshift-monitoring/prometheus-k8s", "the Prometheus route",
                  partial(_optional, api_client, PROMETHEUS_ROUTE_PATH, "Route"))
    facts.prometheus_route, facts.route_api_served = route if route is not None else (None, False)
    return facts


def _finding(severity: str, path: str, value: Any, why: str, fix: str, behaviour: str,
             operator_message: str) -> Finding:
    """Worded like the engine's findings: field=value: why. Fix: fix. Reported as: "..."."""
    shown = "null" if value is None else repr(value)
    message = f'{path}={shown}: {why}. Fix: {fix}. Reported as: "{operator_message}".'
    return Finding(severity, path, value, message, behaviour, operator_message, fix)


def _prometheus_findings(facts: ClusterFacts, needed: bool) -> list[Finding]:
    if not needed or not facts.route_api_served:
        return []
    path = "route/openshift-monitoring/prometheus-k8s"
    if facts.prometheus_route is None:
        return [_finding(ERROR, path, None,
                         "Prometheus metrics are needed (KubeVirt profile or devActualUtilizationProfile) but the "
                         "route does not exist; the operator scales the descheduler to 0 and sets "
                         "TargetConfigControllerDegraded",
                         "enable cluster monitoring (the prometheus-k8s route), or drop the KubeVirt profile and "
                         "devActualUtilizationProfile",
                         DEGRADED_SCALE_TO_ZERO, "unable to get openshift-monitoring/prometheus-k8s route")]
    if not route_host(facts.prometheus_route):
        return [_finding(ERROR, f"{path}.status.ingress", None,
                         "the route has no admitted host, so the operator cannot build the Prometheus URL; it scales "
                         "the descheduler to 0 and sets TargetConfigControllerDegraded",
                         "get the route admitted by the ingress controller",
                         DEGRADED_SCALE_TO_ZERO, "No ingress found in openshift-monitoring/prometheus-k8s route")]
    return []


def _psi_findings(spec: dict) -> list[Finding]:
    kubevirt = [p for p in spec.get("profiles") or [] if p in KUBEVIRT_PROFILES]
    if not kubevirt:
        return []
    return [_finding(WARNING, "spec.profiles", kubevirt[0],
                     "the operator also requires PSI (/proc/pressure in its own pod; kernel argument psi=1 on the "
                     "nodes), which cannot be checked from outside; without it the descheduler is scaled to 0 "
                     "(TargetConfigControllerDegraded)",
                     "enable PSI on the worker nodes", NOT_APPLICABLE,
                     f"profile {kubevirt[0]} can only be used when PSI metrics are enabled for the worker nodes")]


def _late_namespace_findings(facts: ClusterFacts) -> list[Finding]:
    """The openshift-* namespaces the running operator does not protect (created after it started)."""
    view = facts.operator
    if not view.late:
        return []
    return [_warning("namespaces", view.late, late_namespaces_why(view),
                     "restart the operator (delete its pod) to protect them now, or add them to "
                     "profileCustomizations.namespaces.excluded")]


def validate_against_cluster(spec: dict, facts: ClusterFacts, management_state_required: bool = True) -> list[Finding]:
    """Every rule of the reference, with the cluster's facts; errors and warnings. ``management_state_required``
    False: only for a restore of a spec the cluster had (validation.py)."""
    findings = validate_kubedescheduler_spec(
        spec,
        management_state_required=management_state_required,
        operator_namespaces=facts.operator.namespaces,
        namespaces=facts.namespaces,
        priority_class_names=facts.priority_class_names,
        nodes=facts.kubevirt_nodes,
        namespace_labels=facts.operator_namespace_labels,
        scheduler_profile=facts.scheduler_profile,
    )
    findings += _prometheus_findings(facts, needs_prometheus(spec))
    findings += _late_namespace_findings(facts)
    findings += _psi_findings(spec)
    return findings


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "severity": finding.severity,
        "field": finding.field,
        "value": finding.value,
        "message": finding.message,
        "operator_behaviour": finding.operator_behaviour,
        "operator_message": finding.operator_message,
        "fix": finding.fix,
    }
