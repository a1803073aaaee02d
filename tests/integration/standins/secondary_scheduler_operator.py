"""The Secondary Scheduler Operator (openshift/secondary-scheduler-operator) as a stand-in: its OLM package and
bundle, its `SecondaryScheduler` CRD, and the part of its TargetConfigReconciler that runs the scheduler.

    olm = Olm(api_client, packages=[secondary_scheduler_package()]).install()   # OLM serves the package
    operator = SecondarySchedulerOperator(api_client).start()                   # reconciles SecondaryScheduler

What the reconciler does with SecondaryScheduler `cluster` in its namespace (pkg/operator/
target_config_reconciler.go; reference peers.md §4.4), each pass:
- nothing while the ConfigMap named by `spec.schedulerConfig` is missing (the real sync fails with "could not get
  configuration configmap" and retries);
- else ServiceAccount `secondary-scheduler` and Deployment `secondary-scheduler`, both owned by the CR (garbage
  collection removes them with it): one replica of `spec.schedulerImage` with `--config=/etc/kubernetes/config.yaml`
  and `-v=N` from `spec.logLevel`, the user's ConfigMap mounted at /etc/kubernetes, and pod template annotations with
  the CR's generation and the ConfigMap's resourceVersion, so a changed configuration rolls the scheduler out again.
Running the Deployment's pod is the cluster's job (kube-controller-manager and the kubelet stand-in). Not modelled:
RBAC bindings, Service, ServiceMonitor, NetworkPolicy, the HighlyAvailable topology, status generations.
"""

from __future__ import annotations

from typing import Any

from .loop import StandIn
from .olm_types import Bundle, CatalogPackage
from .rest import path
from .schema import CONDITIONS, array, crd, integer, obj, open_object, string

GROUP = "operator.openshift.io"
API_VERSION = f"{GROUP}/v1"
NAMESPACE = "openshift-secondary-scheduler-operator"
PACKAGE = "openshift-secondary-scheduler-operator"
CR_NAME = "cluster"
OPERAND = "secondary-scheduler"
VERBOSITY = {"Normal": 2, "Debug": 4, "Trace": 6, "TraceAll": 8}
GENERATION_ANNOTATION = f"secondaryschedulers.{GROUP}/cluster"

# manifests/secondary-scheduler-operator.crd.yaml and pkg/apis/secondaryscheduler/v1/types.go: OperatorSpec's
# fields (both log levels default to Normal) plus the scheduler's own.
LOG_LEVEL = string("", "Normal", "Debug", "Trace", "TraceAll", default="Normal")
SECONDARY_SCHEDULER_CRD: dict[str, Any] = crd(
    GROUP, "SecondaryScheduler", "secondaryschedulers", "v1",
    spec=obj({"managementState": string("Managed", "Unmanaged", "Force", "Removed"),
              "logLevel": LOG_LEVEL, "operatorLogLevel": LOG_LEVEL,
              "schedulerConfig": string(), "schedulerImage": string(),
              "topology": obj({"mode": string("SingleReplica", "HighlyAvailable"),
                               "highlyAvailableTopology": obj({"maxReplicas": integer(minimum=1),
                                                               "nodeSelector": open_object(),
                                                               "tolerations": array(open_object())})}),
              "observedConfig": open_object(), "unsupportedConfigOverrides": open_object()}),
    status=obj({"observedGeneration": integer(), "conditions": CONDITIONS, "version": string(),
                "readyReplicas": integer(), "generations": array(open_object())}))

# bundle.Dockerfile and manifests/*.clusterserviceversion.yaml (the operator's Deployment and ServiceAccount).
SECONDARY_SCHEDULER_BUNDLE = Bundle(
    csv_prefix="secondaryscheduleroperator.v", display_name="Secondary Scheduler Operator for Red Hat OpenShift",
    suggested_namespace=NAMESPACE, owned_crd=SECONDARY_SCHEDULER_CRD,
    deployment="secondary-scheduler-operator", service_account="secondary-scheduler-operator",
    image="registry.redhat.io/openshift-secondary-scheduler-operator/secondary-scheduler-rhel9-operator",
    env=(("OPERAND_IMAGE_VERSION", "{version}"),))


def secondary_scheduler_package(versions: tuple[str, ...] = ("1.3.1", "1.4.0")) -> CatalogPackage:
    """The package as a Red Hat catalog lists it: channel `stable`, oldest version first."""
    return CatalogPackage(PACKAGE, "stable", {"stable": list(versions)}, bundle=SECONDARY_SCHEDULER_BUNDLE)


def operand(cr: dict[str, Any], config_map: dict[str, Any]) -> dict[str, Any]:
    """Deployment `secondary-scheduler` as manageDeployment renders it from the CR and its ConfigMap."""
    spec, metadata = cr.get("spec") or {}, cr["metadata"]
    labels = {"app": OPERAND}
    annotations = {GENERATION_ANNOTATION: str(metadata.get("generation", 1)),
                   f"configmaps/{spec['schedulerConfig']}": config_map["metadata"]["resourceVersion"]}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": OPERAND, "namespace": metadata["namespace"], "labels": labels,
                     "ownerReferences": [owner_reference(cr)]},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels, "annotations": annotations},
            "spec": {
                "serviceAccountName": OPERAND,
                "volumes": [{"name": "etckubernetes", "configMap": {"name": spec["schedulerConfig"]}}],
                "containers": [{
                    "name": OPERAND, "image": spec.get("schedulerImage", ""),
                    "args": ["--config=/etc/kubernetes/config.yaml",
                             f"-v={VERBOSITY.get(spec.get('logLevel') or 'Normal', 2)}"],
                    "volumeMounts": [{"name": "etckubernetes", "mountPath": "/etc/kubernetes"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                  "limits": {"cpu": "100m", "memory": "500Mi"}},
                }],
            }}},
    }


def owner_reference(cr: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "SecondaryScheduler", "name": cr["metadata"]["name"],
            "uid": cr["metadata"]["uid"]}


class SecondarySchedulerOperator(StandIn):
    name = "secondary-scheduler-operator-stand-in"
    watches = (path(API_VERSION, "secondaryschedulers", NAMESPACE), path("v1", "configmaps", NAMESPACE),
               path("apps/v1", "deployments", NAMESPACE))
    idle_interval = 5.0

    def reconcile(self) -> None:
        cr = self.rest.get(path(API_VERSION, "secondaryschedulers", NAMESPACE, CR_NAME))
        if cr is None or cr["metadata"].get("deletionTimestamp"):
            return
        spec = cr.get("spec") or {}
        if spec.get("managementState", "Managed") != "Managed" or not spec.get("schedulerConfig"):
            return
        config_map = self.rest.get(path("v1", "configmaps", NAMESPACE, spec["schedulerConfig"]))
        if config_map is None:
            return  # "could not get configuration configmap": the real operator retries, runs nothing
        self.rest.create_if_absent(path("v1", "serviceaccounts", NAMESPACE), {
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": OPERAND, "namespace": NAMESPACE, "ownerReferences": [owner_reference(cr)]}})
        desired = operand(cr, config_map)
        url = path("apps/v1", "deployments", NAMESPACE, OPERAND)
        current = self.rest.get(url)  # one read a pass: it exists on every pass but the first
        if current is None:
            self.rest.create_if_absent(path("apps/v1", "deployments", NAMESPACE), desired)
        elif _rendered(current) != _rendered(desired):
            # ApplyDeployment: the template is replaced, so the Deployment controller rolls out new pods.
            self.rest.change(url, lambda d: d["spec"].update(template=desired["spec"]["template"]))


def _rendered(deployment: dict[str, Any]) -> tuple[Any, ...]:
    """What the reconciler sets in the pod template (the API server adds defaults around it)."""
    template = deployment["spec"]["template"]
    container = template["spec"]["containers"][0]
    return (container.get("image"), container.get("args"), template["metadata"].get("annotations"),
            [volume.get("configMap", {}).get("name") for volume in template["spec"].get("volumes") or []])
