"""Names and paths of what the Kube Descheduler Operator reads and renders (reference operator.md §0, §1.4, §3)."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import resource_path
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import names as lifecycle_names

# Names shared with the operator lifecycle (install/uninstall) are defined once, in operator/names.py, and keep
# their names here.
OPERATOR_NAMESPACE = lifecycle_names.OPERATOR_NAMESPACE
KUBEDESCHEDULER_NAME = lifecycle_names.KUBEDESCHEDULER_NAME  # a singleton: the operator reads no other name
KUBEDESCHEDULER_API = lifecycle_names.KUBEDESCHEDULER_API
KUBEDESCHEDULER_CRD = lifecycle_names.KUBEDESCHEDULER_CRD
PACKAGE = lifecycle_names.PACKAGE
CSV_PREFIX = lifecycle_names.CSV_PREFIX
OLM_V1ALPHA1 = lifecycle_names.OLM_V1ALPHA1
KUBEDESCHEDULER_KIND = "KubeDescheduler"
KUBEDESCHEDULER_PLURAL = "kubedeschedulers"

OPERAND_NAME = "descheduler"  # Deployment, label app=descheduler
OPERAND_LABEL_SELECTOR = "app=descheduler"
OPERAND_CONTAINER = "openshift-descheduler"
SOFTTAINTER_NAME = "softtainter"  # the Deployment (operatorclient.SoftTainterOperandName)
SOFTTAINTER_APP_LABEL = "softtainer"  # sic: its pods' label app=softtainer, from the operator's asset
SOFTTAINTER_CONTAINER = "openshift-softtainer"  # sic: "softtainer", as the asset spells it
POLICY_CONFIGMAP = KUBEDESCHEDULER_NAME  # the ConfigMap is named after the CR
POLICY_KEY = "policy.yaml"
OPERATOR_LABEL_SELECTOR = "name=descheduler-operator"

# The operand pod template carries the CR generation it was rendered from (TargetConfigReconciler.sync).
GENERATION_ANNOTATION = "kubedeschedulers.operator.openshift.io/cluster"
CONFIGMAP_ANNOTATION = "configmaps/cluster"
DEGRADED_CONDITION = "TargetConfigControllerDegraded"

SCHEDULER_PATH = "/apis/config.openshift.io/v1/schedulers/cluster"
PROMETHEUS_ROUTE_PATH = "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/prometheus-k8s"

# CRD defaults the API server applies to an omitted field (manifests/kube-descheduler-operator.crd.yaml).
SPEC_DEFAULTS = {"mode": "Predictive", "logLevel": "Normal", "operatorLogLevel": "Normal"}
# Fields the operator writes into the spec itself: never compared, never overwritten.
OPERATOR_OWNED_SPEC_FIELDS = ("observedConfig",)

KUBEDESCHEDULER_PATH = resource_path(KUBEDESCHEDULER_API, KUBEDESCHEDULER_PLURAL, OPERATOR_NAMESPACE,
                                     KUBEDESCHEDULER_NAME)
KUBEDESCHEDULERS_PATH = resource_path(KUBEDESCHEDULER_API, KUBEDESCHEDULER_PLURAL, OPERATOR_NAMESPACE)
OPERAND_DEPLOYMENT_PATH = resource_path("apps/v1", "deployments", OPERATOR_NAMESPACE, OPERAND_NAME)
SOFTTAINTER_DEPLOYMENT_PATH = resource_path("apps/v1", "deployments", OPERATOR_NAMESPACE, SOFTTAINTER_NAME)
POLICY_CONFIGMAP_PATH = resource_path("v1", "configmaps", OPERATOR_NAMESPACE, POLICY_CONFIGMAP)
OPERATOR_NAMESPACE_PATH = resource_path("v1", "namespaces", name=OPERATOR_NAMESPACE)
PODS_PATH = resource_path("v1", "pods", OPERATOR_NAMESPACE)
