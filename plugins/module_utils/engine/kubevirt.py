"""KubeVirt in the plan: which evictions are VMs that will live-migrate, and the soft tainter's intended taints.

An evicted ``virt-launcher`` pod is not deleted: KubeVirt's eviction webhook answers 429 and live-migrates the VM, so
the plan marks those evictions. With the KubeVirt profile the operator also runs a soft tainter that classifies nodes
with the same Prometheus query and thresholds as LowNodeUtilization and puts PreferNoSchedule taints on them
(operator pkg/softtainter): under-utilized nodes get none, appropriately utilized ones ``.../appropriate`` (unless no
node is under-utilized: then they count as under-utilized), over-utilized ones both. The plan reports them; nothing
is applied, and the soft tainter itself only taints in Automatic mode.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Mapping, Optional

VIRT_LAUNCHER = ("kubevirt.io", "virt-launcher")
VM_NAME_LABEL = "vm.kubevirt.io/name"
DOMAIN_ANNOTATION = "kubevirt.io/domain"
KUBEVIRT_PROFILE_NAMES = ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate")
OVERUTILIZED_TAINT = "nodeutilization.descheduler.openshift.io/overutilized"
APPROPRIATE_TAINT = "nodeutilization.descheduler.openshift.io/appropriate"


def vm_name(pod: Any) -> Optional[str]:
    """The VMI a virt-launcher pod runs (its owner, else its labels/annotation); None for any other pod."""
    if pod.labels.get(VIRT_LAUNCHER[0]) != VIRT_LAUNCHER[1]:
        return None
    for owner in pod.owners:
        if owner.kind == "VirtualMachineInstance":
            return owner.name
    return pod.labels.get(VM_NAME_LABEL) or pod.annotations.get(DOMAIN_ANNOTATION) or pod.name


def annotate(plan: dict, snapshot: Any, policy: Optional[Mapping[str, Any]], policy_kind: str) -> None:
    """Mark VM evictions, count them in the summary, and add the soft tainter's intended taints."""
    vms = 0
    for entry in plan["evictions"]:
        pod = _find_pod(snapshot.pods, entry["namespace"], entry["name"])
        name = vm_name(pod) if pod is not None else None
        if name is not None:
            entry["vm"] = {"name": name, "action": "live-migrate"}
            vms += 1
    plan["summary"]["vms_to_migrate"] = vms
    mode = (policy or {}).get("mode") if policy_kind == "KubeDescheduler" else None
    taints = soft_taints(plan, mode)
    if taints is not None:
        plan["soft_taints"] = taints


def _find_pod(pods: list, namespace: str, name: str) -> Any:
    """snapshot.pods is sorted by (namespace, name): a binary search, not an index of 150,000 pods per plan."""
    index = bisect_left(pods, (namespace, name), key=lambda p: (p.namespace, p.name))
    if index < len(pods) and pods[index].namespace == namespace and pods[index].name == name:
        return pods[index]
    return None


def soft_taints(plan: dict, mode: Optional[str]) -> Optional[dict]:
    """The taints the soft tainter would want per node, from the KubeVirt profile's LowNodeUtilization classes."""
    key = _kubevirt_plugin_key(plan)
    if key is None:
        return None
    classes = {n["name"]: n["classes"][key] for n in plan["utilization"]["nodes"] if key in n.get("classes", {})}
    if not classes:
        return None  # the plugin failed (e.g. no Prometheus answer): so would the soft tainter
    no_low = "underutilized" not in classes.values()
    nodes = {}
    for name, node_class in sorted(classes.items()):
        if node_class == "overutilized":
            wanted = [APPROPRIATE_TAINT, OVERUTILIZED_TAINT]
        elif node_class == "appropriate" and not no_low:
            wanted = [APPROPRIATE_TAINT]
        else:
            wanted = []
        nodes[name] = [{"key": k, "value": "true", "effect": "PreferNoSchedule"} for k in wanted]
    return {
        "profile": key.split("/")[0],
        "applied_by_operator": mode == "Automatic",
        "note": "intended by the operator's soft tainter (not applied by this plan); it taints only in Automatic "
                "mode and removes the taints from nodes no longer classified so",
        "nodes": nodes,
    }


def _kubevirt_plugin_key(plan: dict) -> Optional[str]:
    readings = (plan.get("actual_utilization") or {}).get("plugins") or {}
    for key, reading in readings.items():
        profile = key.split("/")[0]
        if profile in KUBEVIRT_PROFILE_NAMES and reading.get("mode") == "Prometheus":
            return key
    return None
