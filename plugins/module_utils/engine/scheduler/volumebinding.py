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


def bound_volumes(pod: SchedPod, cluster: Cluster) -> Any:
    """The pod's claims as the volume PreFilters see them: SKIP without claims (or without volumes in the snapshot),
    Unresolvable when one is missing or being deleted (podHasPVCs), else per bound claim, in volume order, its
    volume's name and PersistentVolume (None: it does not exist). Unbound claims are left out."""
    names = pod.model.pvc_claims
    storage = getattr(cluster, "storage", None)
    if not names or storage is None:
        return SKIP
    bound = []
    for name in names:
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            return Unresolvable(f'persistentvolumeclaim "{name}" not found')
        if claim.deleting:
            return Unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
        if claim.volume_name:
            bound.append((claim.volume_name, storage.volumes.get(claim.volume_name)))
    return bound


class VolumeBinding:
    name = NAME
    static = False
    note = NOTE

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        """The node terms of each bound claim's volume that has node affinity, or MISSING when a volume does not
        exist (every node fails then)."""
        bound = bound_volumes(pod, cluster)
        if bound is SKIP or isinstance(bound, Unresolvable):
            return bound
        if any(volume is None for _name, volume in bound):
            return MISSING
        pinned = [[t for t in volume.node_terms if t is not None] for _name, volume in bound
                  if volume.node_terms is not None]
        return pinned or SKIP

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        if state is MISSING:
            return (REASON_VOLUME_MISSING,)
        for terms in state:
            # volume.CheckNodeAffinity matches the terms against the node's labels only (no node name)
            if not any(node_term_matches(term, node.labels, "") for term in terms):
                return (REASON_NODE_CONFLICT,)
        return None
