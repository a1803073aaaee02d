"""NodeName (filter): a pod that names its node fits only there. Replacement pods carry no nodeName."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME
    static = True

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        return None

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        return None  # a replacement pod is created without spec.nodeName
