"""The registry of scheduler plugins (upstream pkg/scheduler/framework/plugins/registry.go): one line per plugin.

A name a KubeSchedulerConfiguration enables and that is not registered here filters nothing and scores every node
alike in the preview (framework.NOT_MODELED says why). What a plugin implements: engine/scheduler/interface.py.
"""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler import trimaran
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.balancedallocation import (
    BalancedAllocation,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.imagelocality import ImageLocality
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.interface import (
    FILTER,
    SCORE,
    Registration,
    Registry,
    with_args,
    without_args,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.interpodaffinity import (
    InterPodAffinity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeaffinity import NodeAffinity
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodename import NodeName
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeports import NodePorts
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.noderesources import (
    NodeResourcesFit,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.nodeunschedulable import (
    NodeUnschedulable,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podtopologyspread import (
    PodTopologySpread,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.tainttoleration import (
    TaintToleration,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.volumebinding import VolumeBinding
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.volumezone import VolumeZone


def register_default_plugins(registry: Registry) -> None:
    registry.register(Registration(NodeUnschedulable.name, (FILTER,), without_args(NodeUnschedulable)))
    registry.register(Registration(NodeName.name, (FILTER,), without_args(NodeName)))
    registry.register(Registration(TaintToleration.name, (FILTER, SCORE), without_args(TaintToleration)))
    registry.register(Registration(NodeAffinity.name, (FILTER, SCORE), without_args(NodeAffinity)))
    registry.register(Registration(NodePorts.name, (FILTER,), without_args(NodePorts)))
    registry.register(Registration(NodeResourcesFit.name, (FILTER, SCORE), with_args(NodeResourcesFit)))
    registry.register(Registration(VolumeBinding.name, (FILTER,), without_args(VolumeBinding)))
    registry.register(Registration(VolumeZone.name, (FILTER,), without_args(VolumeZone)))
    registry.register(Registration(PodTopologySpread.name, (FILTER, SCORE), with_args(PodTopologySpread)))
    registry.register(Registration(InterPodAffinity.name, (FILTER, SCORE), with_args(InterPodAffinity)))
    registry.register(Registration(BalancedAllocation.name, (SCORE,), with_args(BalancedAllocation)))
    registry.register(Registration(ImageLocality.name, (SCORE,), without_args(ImageLocality)))
    registry.register(Registration(trimaran.NAME, (SCORE,), trimaran.new))


REGISTRY = Registry()
register_default_plugins(REGISTRY)
