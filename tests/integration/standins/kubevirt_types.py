"""The kubevirt.io/v1 types the collection reads (kubevirt/kubevirt staging/src/kubevirt.io/api/core/v1/types.go), as
CRDs a test API server can serve: VirtualMachineInstance, VirtualMachineInstanceMigration and the KubeVirt CR.

The schemas type what the evict module and the planner read and the stand-in writes (evictionStrategy, nodeName,
evacuationNodeName, migrationState, conditions, phase) and keep the rest open, as KubeVirt's own generated schemas
are far larger than a test needs. As in KubeVirt's install strategy, the VMI and its migration have no status
subresource: virt-controller and virt-handler write the whole object.
"""

from __future__ import annotations

from .schema import CONDITIONS, boolean, crd, obj, open_object, string

GROUP = "kubevirt.io"
API = f"{GROUP}/v1"
STRATEGIES = ("None", "LiveMigrate", "LiveMigrateIfPossible", "External")
MIGRATION_PHASES = ("", "Pending", "Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running",
                    "Succeeded", "Failed")

MIGRATION_STATE = obj({
    "migrationUid": string(), "sourceNode": string(), "targetNode": string(), "sourcePod": string(),
    "targetPod": string(), "startTimestamp": string(), "endTimestamp": string(), "completed": boolean(),
    "failed": boolean(), "failureReason": string(), "abortRequested": boolean(), "mode": string()},
    open_ended=True)

VMI_CRD = crd(
    GROUP, "VirtualMachineInstance", "virtualmachineinstances", "v1",
    spec=obj({"evictionStrategy": string(*STRATEGIES), "domain": open_object()}, open_ended=True),
    status=obj({"phase": string(), "nodeName": string(), "evacuationNodeName": string(),
                "conditions": CONDITIONS, "migrationState": MIGRATION_STATE}, open_ended=True),
    short_names=("vmi", "vmis"), status_subresource=False)

MIGRATION_CRD = crd(
    GROUP, "VirtualMachineInstanceMigration", "virtualmachineinstancemigrations", "v1",
    spec=obj({"vmiName": string(), "priority": string()}, required=("vmiName",)),
    status=obj({"phase": string(*MIGRATION_PHASES), "migrationState": MIGRATION_STATE,
                "conditions": CONDITIONS}, open_ended=True),
    short_names=("vmim", "vmims"), status_subresource=False)

KUBEVIRT_CRD = crd(
    GROUP, "KubeVirt", "kubevirts", "v1",
    spec=obj({"configuration": obj({"evictionStrategy": string(*STRATEGIES)}, open_ended=True)}, open_ended=True),
    status=obj({"phase": string()}, open_ended=True),
    short_names=("kv", "kvs"))

KUBEVIRT_CRDS = (VMI_CRD, MIGRATION_CRD, KUBEVIRT_CRD)
