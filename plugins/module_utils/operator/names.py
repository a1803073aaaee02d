"""The names the Kube Descheduler Operator, OLM and the upstream descheduler chart use (reference operator.md §0, §3).

Kept in one place because install, uninstall and the tests must agree on every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- the operator as OLM installs it -------------------------------------------------------------------------------
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"  # hard-coded in the operator (const OperatorNamespace)
PACKAGE = "cluster-kube-descheduler-operator"
SUBSCRIPTION_NAME = PACKAGE
OPERATOR_GROUP_NAME = OPERATOR_NAMESPACE
CSV_PREFIX = "clusterkubedescheduleroperator."
OPERATOR_DEPLOYMENT = "descheduler-operator"
MONITORING_LABEL = "openshift.io/cluster-monitoring"
# OLM's component label: "operators.coreos.com/" + "<package>.<namespace>" cut to 63 characters (a label name's limit;
# decorators.Operator.ComponentLabelKey), which this package and namespace exceed
OLM_OWNER_LABEL = "operators.coreos.com/" + f"{PACKAGE}.{OPERATOR_NAMESPACE}"[:63]

# --- what the operator renders -------------------------------------------------------------------------------------
KUBEDESCHEDULER_CRD = "kubedeschedulers.operator.openshift.io"
KUBEDESCHEDULER_NAME = "cluster"
OPERAND_DEPLOYMENTS = ("descheduler", "softtainter")
OPERAND_CLUSTER_ROLES = ("openshift-descheduler-operand", "openshift-descheduler-softtainter")
OPERAND_CLUSTER_ROLE_BINDINGS = (
    "openshift-descheduler-operand",
    "cluster-monitoring-view-cr",
    "openshift-descheduler-softtainter",
    "openshift-descheduler-softtainter-monitoring",
)
SOFTTAINTER_ADMISSION_POLICY = "openshift-descheduler-softtainter-vap"
SOFTTAINTER_ADMISSION_POLICY_BINDING = "openshift-descheduler-softtainter-vap-binding"
SOFT_TAINT_PREFIX = "nodeutilization.descheduler.openshift.io/"

# --- API versions ----------------------------------------------------------------------------------------------------
OLM_V1ALPHA1 = "operators.coreos.com/v1alpha1"
OLM_V1 = "operators.coreos.com/v1"
PACKAGES_V1 = "packages.operators.coreos.com/v1"
KUBEDESCHEDULER_API = "operator.openshift.io/v1"
CRD_API = "apiextensions.k8s.io/v1"
RBAC_API = "rbac.authorization.k8s.io/v1"
ADMISSION_API = "admissionregistration.k8s.io/v1"

# --- the upstream descheduler (kubernetes-sigs/descheduler Helm chart 0.36) ---------------------------------------
UPSTREAM_IMAGE = "registry.k8s.io/descheduler/descheduler"
UPSTREAM_VERSION = "v0.36.0"
UPSTREAM_NAME = "descheduler"
UPSTREAM_NAMESPACE = "kube-system"
UPSTREAM_POLICY_KEY = "policy.yaml"
UPSTREAM_POLICY_DIR = "/policy-dir"
MANAGED_BY = "descheduler.fleet"
# On every object a rollout's change creates: which change made it (its run id), so a rollback takes back only that
CHANGE_LABEL = "descheduler.fleet/change-id"

# --- the Volcano descheduler (volcano-sh/descheduler installer/volcano-descheduler-development.yaml) ----------------
VOLCANO_IMAGE = "docker.io/volcanosh/vc-descheduler"
VOLCANO_VERSION = "v0.1.0"
VOLCANO_NAME = "volcano-descheduler"
VOLCANO_NAMESPACE = "volcano-system"


# --- an operator installed through OLM, as the install and uninstall steps see it ------------------------------------

@dataclass(frozen=True)
class OlmPackage:
    """The names OLM uses for one operator package; the Kube Descheduler Operator's by default, others (the
    Secondary Scheduler Operator) reuse the same install steps with their own."""

    package: str
    namespace: str
    csv_prefix: str
    crd: str  # the CRD the CSV owns: the install is done once it is established
    display_name: str
    namespace_labels: dict[str, str] = field(default_factory=dict)

    @property
    def subscription_name(self) -> str:
        return self.package

    @property
    def operator_group_name(self) -> str:
        return self.namespace


DESCHEDULER_OLM = OlmPackage(PACKAGE, OPERATOR_NAMESPACE, CSV_PREFIX, KUBEDESCHEDULER_CRD, "Kube Descheduler Operator",
                             {MONITORING_LABEL: "true"})
