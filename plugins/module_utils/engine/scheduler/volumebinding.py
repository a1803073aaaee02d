"""VolumeBinding (filter): a pod's bound claims pin it to the nodes their PersistentVolumes' node affinity allows.

Upstream (pkg/scheduler/framework/plugins/volumebinding): PreFilter rejects the pod outright when a claim is missing
or being deleted; Filter checks each bound claim's volume in order: a volume that does not exist fails every node,
otherwise its required node affinity must match the node's labels. Unbound claims (delayed binding, dynamic
provisioning) need StorageClasses and capacities the snapshot lacks: they are not checked (a profile note says so).
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import node_term_matches
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP, Unresolvable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "VolumeBinding"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_VOLUME_MISSING = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NOTE = "unbound claims (delayed binding, dynamic provisioning) are not checked: StorageClasses are not in the snapshot"
MISSING = "missing"  # the state when a bound claim's volume does not exist


def checked_claims(pod: SchedPod, cluster: Cluster) -> Any:
    """The pod's claims as the volume PreFilters see them: SKIP without claims (or without volumes in the
    snapshot), Unresolvable when one is missing or being deleted (podHasPVCs), else the claims in volume order."""
    names = pod.model.pvc_claims
    storage = getattr(cluster, "storage", None)
    if not names or storage is None:
        return SKIP
    claims = []
    for name in names:
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            return Unresolvable(f'persistentvolumeclaim "{name}" not found')
        if claim.deleting:
            return Unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
        claims.append(claim)
    return claims


class VolumeBinding:
    name = NAME
    static = False
    note = NOTE

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        """The node terms of each bound claim's volume (None: any node), or MISSING for the first missing volume."""
        claims = checked_claims(pod, cluster)
        if claims is SKIP or isinstance(claims, Unresolvable):
            return claims
        volumes = cluster.storage.volumes  # type: ignore[attr-defined]
        pinned = []
        for claim in claims:
            if not claim.volume_name:
                continue
            volume = volumes.get(claim.volume_name)
            if volume is None:
                return MISSING
            if volume.node_terms is not None:
                pinned.append([t for t in volume.node_terms if t is not None])
        return pinned or SKIP

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        if state is MISSING:
            return (REASON_VOLUME_MISSING,)
        for terms in state:
            # volume.CheckNodeAffinity matches the terms against the node's labels only (no node name)
            if not any(node_term_matches(term, node.labels, "") for term in terms):
                return (REASON_NODE_CONFLICT,)
        return None
