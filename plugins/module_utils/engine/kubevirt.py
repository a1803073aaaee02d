"""KubeVirt in the plan: which evictions are VMs that will live-migrate, and the soft tainter's intended taints.

An evicted ``virt-launcher`` pod is not deleted: KubeVirt's eviction webhook answers 429 and live-migrates the VM, so
the plan marks those evictions. With the KubeVirt profile the operator also runs a soft tainter that classifies nodes
with the same Prometheus query and thresholds as LowNodeUtilization and puts PreferNoSchedule taints on them
(operator pkg/softtainter): under-utilized nodes get none, appropriately utilized ones ``.../appropriate`` (unless no
node is under-utilized: then they count as under-utilized), over-utilized ones both. The plan reports them; nothing
is applied, and the soft tainter itself only taints in Automatic mode.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import matches, parse_selector_string
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    METRIC_RESOURCE as METRIC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    UsageUnavailable,
    actual_for,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.lownodeutilization import (
    compute_thresholds,
)

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


def annotate(plan: dict, snapshot: Any, evicted: Mapping[int, dict], operator_mode: Optional[str]) -> None:
    """Mark VM evictions (``evicted``: the cycle's eviction entries by pod index), count them in the summary, and
    add the soft tainter's intended taints."""
    vms = 0
    for index, entry in evicted.items():
        name = vm_name(snapshot.pods[index])
        if name is not None:
            entry["vm"] = {"name": name, "action": "live-migrate"}
            vms += 1
    plan["summary"]["vms_to_migrate"] = vms
    taints = soft_taints(plan, snapshot, operator_mode)
    if taints is not None:
        plan["soft_taints"] = taints


def soft_taints(plan: dict, snapshot: Any, mode: Optional[str]) -> Optional[dict]:
    """The taints the soft tainter would want per node (pkg/softtainter syncSoftTaints).

    It reads the KubeVirt profile's LowNodeUtilization args from the rendered policy and classifies, with the same
    query and thresholds, every node matching the policy's nodeSelector (ready or not: it lists nodes itself).
    """
    found = _kubevirt_lnu_args(plan.get("policy") or {})
    if found is None:
        return None
    profile, args = found
    query = ((args.get("metricsUtilization") or {}).get("prometheus") or {}).get("query") or ""
    selector = parse_selector_string((plan.get("policy") or {}).get("nodeSelector") or "", "policy.nodeSelector")
    nodes = [n for n in snapshot.sorted_nodes() if matches(selector, n.labels)]
    result: dict[str, Any] = {
        "profile": profile,
        "applied_by_operator": mode == "Automatic",
        "note": "intended by the operator's soft tainter (not applied by this plan); it taints only in Automatic "
                "mode and removes the taints from nodes no longer classified so",
    }
    try:
        percents = actual_for(snapshot).prometheus_usage(query, [n.name for n in nodes])
    except UsageUnavailable as exc:
        result.update(nodes={}, error=f"the soft tainter cannot classify the nodes either: {exc}")
        return result
    result["nodes"] = _wanted_taints(nodes, percents, args)
    return result


def _wanted_taints(nodes: list, percents: Mapping[str, int], args: Mapping[str, Any]) -> dict[str, list[dict]]:
    low = {str(k): float(v) for k, v in (args.get("thresholds") or {}).items()}
    high = {str(k): float(v) for k, v in (args.get("targetThresholds") or {}).items()}
    infos = [nu.NodeInfo(n, {METRIC: percents[n.name]}, {METRIC: 100}, {METRIC: float(percents[n.name])})
             for n in nodes]
    limits = compute_thresholds(infos, low, high, bool(args.get("useDeviationThresholds")))
    classes = {}
    for info in infos:
        if not info.node.unschedulable and all(info.pct[r] <= limits.low[r] for r in limits.low):
            classes[info.node.name] = "underutilized"
        elif any(info.pct[r] > limits.high[r] for r in limits.high):
            classes[info.node.name] = "overutilized"
        else:
            classes[info.node.name] = "appropriate"
    no_low = "underutilized" not in classes.values()  # then appropriate nodes count as under-utilized
    wanted_by_class = {"overutilized": [APPROPRIATE_TAINT, OVERUTILIZED_TAINT],
                       "appropriate": [] if no_low else [APPROPRIATE_TAINT], "underutilized": []}
    return {name: [{"key": k, "value": "true", "effect": "PreferNoSchedule"} for k in wanted_by_class[node_class]]
            for name, node_class in sorted(classes.items())}


def _kubevirt_lnu_args(policy: Mapping[str, Any]) -> Optional[tuple[str, Mapping[str, Any]]]:
    """(profile, LowNodeUtilization args) of the KubeVirt profile when it reads a Prometheus query."""
    for profile in policy.get("profiles") or []:
        if profile.get("name") not in KUBEVIRT_PROFILE_NAMES:
            continue
        for config in profile.get("pluginConfig") or []:
            args = config.get("args") or {}
            if config.get("name") == "LowNodeUtilization" and (args.get("metricsUtilization") or {}).get(
                    "source") == "Prometheus":
                return str(profile["name"]), args
    return None
