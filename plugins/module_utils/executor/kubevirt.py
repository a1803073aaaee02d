"""KubeVirt: which pods are VMs, what evicting them would do, and when their live migration is over.

Evicting a virt-launcher pod does not delete it when the VM's effective eviction strategy asks for a live migration:
KubeVirt's webhook marks the VMI (``status.evacuationNodeName``) and answers 429 "Eviction triggered evacuation of
VMI ...". The migration controller then creates VirtualMachineInstanceMigrations until one succeeds (a failed one is
retried while the mark stays). The VM has left when the mark is cleared and ``status.nodeName`` is another node.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.eviction import (
    controller_ref,
    get_kubevirt_config,
)

LAUNCHER_LABEL = "kubevirt.io"
LAUNCHER_VALUE = "virt-launcher"
DOMAIN_ANNOTATION = "kubevirt.io/domain"
VMI_KIND = "VirtualMachineInstance"
# What each strategy does on eviction (KubeVirt's pod-eviction admitter)
LIVE_MIGRATE = "LiveMigrate"
LIVE_MIGRATE_IF_POSSIBLE = "LiveMigrateIfPossible"
EXTERNAL = "External"
NO_STRATEGY = "None"

MIGRATE = "migrate"
RESTART = "restart"
SKIP = "skip"


@dataclass(frozen=True)
class VmDecision:
    vmi: str
    strategy: str
    strategy_source: str  # vmi | cluster | default
    migratable: bool
    action: str  # migrate | restart (an ordinary eviction that stops the VM) | skip
    reason: Optional[str] = None

    def as_dict(self) -> dict:
        return {"vmi": self.vmi, "eviction_strategy": self.strategy, "strategy_source": self.strategy_source,
                "live_migratable": self.migratable, "action": self.action}


def vmi_name_of(pod: Mapping[str, Any]) -> Optional[str]:
    """The VMI a virt-launcher pod runs: its controller ownerReference, else the domain annotation."""
    metadata = pod.get("metadata") or {}
    if (metadata.get("labels") or {}).get(LAUNCHER_LABEL) != LAUNCHER_VALUE:
        return None
    owner = controller_ref(pod)
    if owner and owner.get("kind") == VMI_KIND and owner.get("name"):
        return owner["name"]
    return (metadata.get("annotations") or {}).get(DOMAIN_ANNOTATION) or None


def is_live_migratable(vmi: Mapping[str, Any]) -> bool:
    conditions = (vmi.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "LiveMigratable" and c.get("status") == "True" for c in conditions)


def effective_strategy(vmi: Mapping[str, Any], cluster: Optional[Mapping[str, Any]]) -> tuple[str, str]:
    """(strategy, where it came from): the VMI's own, else the KubeVirt CR's cluster-wide one, else None (KubeVirt's
    code default)."""
    own = (vmi.get("spec") or {}).get("evictionStrategy")
    if own:
        return str(own), "vmi"
    configured = (((cluster or {}).get("spec") or {}).get("configuration") or {}).get("evictionStrategy")
    if configured:
        return str(configured), "cluster"
    return NO_STRATEGY, "default"


def decide(vmi_name: str, vmi: Mapping[str, Any], cluster: Optional[Mapping[str, Any]],
           allow_restart: bool) -> VmDecision:
    strategy, source = effective_strategy(vmi, cluster)
    migratable = is_live_migratable(vmi)

    def decision(action: str, reason: Optional[str] = None) -> VmDecision:
        return VmDecision(vmi_name, strategy, source, migratable, action, reason)

    if strategy in (LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE) and migratable:
        return decision(MIGRATE)
    if strategy == LIVE_MIGRATE:
        return decision(SKIP, f"VM {vmi_name} is not live-migratable and its eviction strategy is LiveMigrate: "
                              "KubeVirt refuses the eviction")
    if strategy == EXTERNAL:
        return decision(SKIP, f"VM {vmi_name} has eviction strategy External: an external controller handles its "
                              "evacuation, not this run")
    why = ("not live-migratable (strategy LiveMigrateIfPossible)" if strategy == LIVE_MIGRATE_IF_POSSIBLE
           else f"no eviction strategy ({source})")
    if allow_restart:
        return decision(RESTART)
    return decision(SKIP, f"VM {vmi_name} would be restarted, not migrated: {why}; set allow_vm_restart to allow it")


def migration_state(vmi: Optional[Mapping[str, Any]], source_node: str) -> str:
    """gone | done | marked (in progress or retrying) | unmarked (not, or no longer, marked; still on the source)."""
    if vmi is None:
        return "gone"
    status = vmi.get("status") or {}
    if status.get("evacuationNodeName"):
        return "marked"
    node = status.get("nodeName")
    if node and node != source_node:
        return "done"
    return "unmarked"


def migration_attempts(migrations: list[dict], since: Optional[str] = None) -> dict:
    """Counts of the VMI's migration objects (created at or after ``since``, RFC 3339), by outcome."""
    relevant = [m for m in migrations if since is None or
                str((m.get("metadata") or {}).get("creationTimestamp") or "")[:19] >= since[:19]]
    phases = [str((m.get("status") or {}).get("phase") or "Pending") for m in relevant]
    return {"attempts": len(relevant), "failed": phases.count("Failed"), "succeeded": phases.count("Succeeded")}


class ClusterKubeVirt:
    """The KubeVirt CR, read once per run and only if a virt-launcher pod shows up."""

    def __init__(self, api_client: Any) -> None:
        self._api_client = api_client
        self._lock = threading.Lock()
        self._loaded = False
        self._config: Optional[dict] = None

    def config(self) -> Optional[dict]:
        with self._lock:
            if not self._loaded:
                self._config = get_kubevirt_config(self._api_client)
                self._loaded = True
            return self._config
