"""NodePorts (filter): a host port (protocol, port) can be claimed once per host IP; 0.0.0.0 claims every IP."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
WILDCARD = "0.0.0.0"


def conflicts(wanted: tuple[str, str, int], used: tuple[str, str, int]) -> bool:
    ip, protocol, port = wanted
    used_ip, used_protocol, used_port = used
    if port != used_port or protocol != used_protocol:
        return False
    return ip == used_ip or WILDCARD in (ip, used_ip)


class NodePorts:
    name = NAME
    static = False

    def pre_filter(self, pod: SchedPod, cluster: Cluster) -> Any:
        return pod.host_ports or SKIP

    def filter(self, pod: SchedPod, state: Any, node: NodeInfo) -> Optional[tuple[str, ...]]:
        for wanted in state:
            if any(conflicts(wanted, used) for used in node.ports):
                return (REASON,)
        return None
