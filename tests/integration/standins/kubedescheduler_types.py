"""The KubeDescheduler CRD (operator.openshift.io/v1) as the 4.21+ operator ships it: defaults, enums, the
singleton-name rule and the profile CEL rules are enforced by the API server itself (manifests/
kube-descheduler-operator.crd.yaml; reference operator.md §1). Written out here, not taken from the collection, so
the API server is an independent judge of what the module sends. Also the two OpenShift config types the operator
reads (schedulers.config.openshift.io, routes.route.openshift.io), which a plain cluster lacks."""

from __future__ import annotations

from typing import Any

from .schema import CONDITIONS, array, boolean, crd, integer, obj, open_object, string

GROUP = "operator.openshift.io"
API_VERSION = f"{GROUP}/v1"
CRD_NAME = f"kubedeschedulers.{GROUP}"

PROFILES = ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization", "DevPreviewLongLifecycle",
            "LongLifecycle", "SoftTopologyAndDuplicates", "EvictPodsWithLocalStorage", "EvictPodsWithPVC",
            "CompactAndScale", "DevKubeVirtRelieveAndMigrate", "KubeVirtRelieveAndMigrate"]
EXCLUSIVE_PROFILES = [
    ("DevPreviewLongLifecycle", "LifecycleAndUtilization"), ("LongLifecycle", "LifecycleAndUtilization"),
    ("DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"), ("LongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"),
    ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"),
    ("DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"), ("LongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"), ("SoftTopologyAndDuplicates", "TopologyAndDuplicates"),
    ("CompactAndScale", "LifecycleAndUtilization"), ("CompactAndScale", "LongLifecycle"),
    ("CompactAndScale", "DevPreviewLongLifecycle"), ("CompactAndScale", "DevKubeVirtRelieveAndMigrate"),
    ("CompactAndScale", "KubeVirtRelieveAndMigrate"), ("CompactAndScale", "TopologyAndDuplicates"),
]
LOG_LEVEL = string("", "Normal", "Debug", "Trace", "TraceAll", default="Normal")
DURATION = {"type": "string", "format": "duration"}
INT32 = {"type": "integer", "format": "int32"}


def _profile_rules() -> list[dict[str, str]]:
    rules = [{"rule": "self.all(x, self.exists_one(y, x == y))", "message": "duplicate profiles are not allowed"}]
    rules += [{"rule": f"!('{a}' in self && '{b}' in self)",
               "message": f"cannot declare {a} and {b} profiles simultaneously, ignoring"}
              for a, b in EXCLUSIVE_PROFILES]
    return rules


SPEC = obj({
    "managementState": {"type": "string", "pattern": "^(Managed|Unmanaged|Force|Removed)$"},
    "logLevel": LOG_LEVEL,
    "operatorLogLevel": LOG_LEVEL,
    "observedConfig": {**open_object(), "nullable": True},
    "unsupportedConfigOverrides": {**open_object(), "nullable": True},
    "deschedulingIntervalSeconds": {**INT32, "minimum": 1},
    "mode": string("Automatic", "Predictive", default="Predictive"),
    "profiles": {**array(string(*PROFILES), max_items=11), "x-kubernetes-validations": _profile_rules()},
    "evictionLimits": obj({"total": {**INT32, "minimum": 0}, "node": {**INT32, "minimum": 0}}),
    "profileCustomizations": obj({
        "podLifetime": DURATION,
        "thresholdPriority": INT32,
        "thresholdPriorityClassName": string(),
        "namespaces": obj({"included": array(string()), "excluded": array(string())}),
        "devLowNodeUtilizationThresholds": string("Low", "Medium", "", "High"),
        "devEnableSoftTainter": boolean(),
        "devEnableEvictionsInBackground": boolean(),
        "devHighNodeUtilizationThresholds": string("Minimal", "Modest", "", "Moderate"),
        "devActualUtilizationProfile": string(),
        "devDeviationThresholds": string("Low", "Medium", "High", "AsymmetricLow", "AsymmetricMedium",
                                         "AsymmetricHigh", ""),
        "devMigrationCooldown": DURATION,
        "devMaxMigrationCooldown": DURATION,
        "devMigrationHistoryWindow": DURATION,
    }),
})
STATUS = obj({
    "conditions": CONDITIONS,
    "generations": array(obj({"group": string(), "hash": string(), "lastGeneration": integer(), "name": string(),
                              "namespace": string(), "resource": string()})),
    "observedGeneration": integer(),
    "readyReplicas": INT32,
    "version": string(),
})

KUBEDESCHEDULER_CRD: dict[str, Any] = crd(
    GROUP, "KubeDescheduler", "kubedeschedulers", "v1", SPEC, STATUS,
    validations=[{"rule": "self.metadata.name == 'cluster'",
                  "message": "kubedescheduler is a singleton, .metadata.name must be 'cluster'"}])

SCHEDULER_CRD = crd("config.openshift.io", "Scheduler", "schedulers", "v1",
                    obj({"profile": string("", "LowNodeUtilization", "HighNodeUtilization", "NoScoring"),
                         "policy": open_object(), "mastersSchedulable": boolean(),
                         "defaultNodeSelector": string()}),
                    open_object(), scope="Cluster")
ROUTE_CRD = crd("route.openshift.io", "Route", "routes", "v1",
                obj({"host": string(), "path": string(), "to": open_object(), "port": open_object(),
                     "tls": open_object()}),
                obj({"ingress": array(obj({"host": string(), "routerName": string(), "conditions": CONDITIONS}))}))
