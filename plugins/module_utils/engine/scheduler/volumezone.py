"""VolumeZone (filter): a bound volume's zone and region labels must match the node's.

Upstream (pkg/scheduler/framework/plugins/volumezone): PreFilter collects the zone/region labels of each bound
claim's PersistentVolume (a value may list several zones joined by "__"); a node without any zone or region label
passes (single-zone clusters), otherwise it must carry each collected label (a beta label is also matched by its GA
twin) with one of its values.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import (
    REGION_LABELS,
    ZONE_LABELS,
    Cluster,
    NodeInfo,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP, Unresolvable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.volumebinding import bound_volumes

NAME = "VolumeZone"
REASON = "node(s) had no available volume zone"
# the zone and region labels, GA then beta (upstream's topologyLabels), and the GA twin of each beta label
TOPOLOGY_LABELS = ZONE_LABELS + REGION_LABELS
GA_LABEL = {ZONE_LABELS[1]: ZONE_LABELS[0], REGION_LABELS[1]: REGION_LABELS[0]}
MULTI_ZONE_DELIMITER = "__"


def label_zones(value: str) -> Optional[frozenset[str]]:
    """volumehelpers.LabelZonesToSet: the zones of a label value; None when one is empty (upstream ignores the
    label then)."""
    zones = [zone.strip() for zone in value.split(MULTI_ZONE_DELIMITER)]
    return None if "" in zones else frozenset(zones)


class VolumeZone:
    name = NAME
    static = False

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        """(label key, allowed values) per zone/region label of each bound claim's volume; unbound claims are
        skipped as upstream skips those of delayed binding (their StorageClass is not in the snapshot)."""
        bound = bound_volumes(pod, cluster)
        if bound is SKIP or isinstance(bound, Unresolvable):
            return bound
        topologies = []
        for name, volume in bound:
            if volume is None:
                return Unresolvable(f'persistentvolume "{name}" not found')
            for key in TOPOLOGY_LABELS:
                zones = label_zones(volume.labels[key]) if key in volume.labels else None
                if zones is not None:
                    topologies.append((key, zones))
        return topologies or SKIP

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone labels: single-zone clusters
        for key, zones in state:
            value = labels.get(key)
            if value is None:
                value = labels.get(GA_LABEL.get(key, key))
            if value is None or value not in zones:
                return (REASON,)
        return None
