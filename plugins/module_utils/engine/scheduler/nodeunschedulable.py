"""NodeUnschedulable (filter): a cordoned node takes only pods tolerating its unschedulable taint."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import tolerates_taint
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"
_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable:
    name = NAME
    static = True  # depends on the pod and the node's spec only: results can be cached per pod signature

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        return None

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        if not node.unschedulable:
            return None
        if any(tolerates_taint(t, _TAINT) for t in pod.model.tolerations):
            return None
        return (REASON,)
