"""The names the Secondary Scheduler Operator and OLM use (reference peers.md §4.4;
openshift/secondary-scheduler-operator manifests and pkg/operator: OperatorNamespace, OperandName)."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import OlmPackage

NAMESPACE = "openshift-secondary-scheduler-operator"  # hard-coded in the operator
PACKAGE = "openshift-secondary-scheduler-operator"
CSV_PREFIX = "secondaryscheduleroperator."
CRD = "secondaryschedulers.operator.openshift.io"
CR_NAME = "cluster"  # the only SecondaryScheduler the operator reconciles
OPERAND_DEPLOYMENT = "secondary-scheduler"
# The operator copies the user's configuration into its own ConfigMap named like the operand: ours must differ.
OPERAND_CONFIGMAP = "secondary-scheduler"
CONFIG_KEY = "config.yaml"
DEFAULT_CONFIGMAP = "secondary-scheduler-config"
DEFAULT_SCHEDULER_NAME = "secondary-scheduler"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"

SSO_OLM = OlmPackage(PACKAGE, NAMESPACE, CSV_PREFIX, CRD, "Secondary Scheduler Operator")
