"""Trimaran TargetLoadPacking: the score curve of scheduler-plugins pkg/trimaran/targetloadpacking (packs nodes up to
the target utilization, then spreads), the CPU prediction of a pod, and the profile from a Secondary Scheduler
configuration."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    StaticCache,
    load_profiles,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.trimaran import (
    predicted_cpu,
    target_load_score,
)
from schedtest import cluster, node, pod, sched

TLP_CONFIG = {"kind": "KubeSchedulerConfiguration", "profiles": [{
    "schedulerName": "secondary-scheduler",
    "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}, {"name": "NodeResourcesFit"}],
                          "enabled": [{"name": "TargetLoadPacking"}]}},
    "pluginConfig": [{"name": "TargetLoadPacking", "args": {"targetUtilization": 70,
                                                            "defaultRequests": {"cpu": "2000m"},
                                                            "defaultRequestsMultiplier": "1"}}]}]}


@pytest.mark.parametrize("used,predicted,capacity,target,expected", [
    (0, 0, 4000, 40, 40),          # an idle node scores the target
    (1000, 0, 4000, 40, 78),       # 25% ≤ 40%: (100-40)*25/40 + 40 = 77.5 → 78 (Go rounds half away from zero)
    (1000, 600, 4000, 40, 100),    # exactly at the target: 100
    (1000, 1000, 4000, 40, 33),    # 50% > 40%: 40*(100-50)/60 = 33.3
    (3000, 1500, 4000, 40, 0),     # over 100%: MinNodeScore
    (2000, 800, 4000, 70, 100),    # 70% with target 70%: (100-70)*70/70 + 70 = 100
    (3000, 200, 4000, 70, 47),     # 80% > 70%: 70*(100-80)/30 = 46.7
])
def test_score_curve(used: int, predicted: int, capacity: int, target: int, expected: int) -> None:
    assert target_load_score(used, predicted, capacity, target) == expected


def test_pod_cpu_prediction_uses_limits_then_requests_times_multiplier_then_default() -> None:
    containers = [{"name": "a", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}},
                  {"name": "b", "resources": {"requests": {"cpu": "500m"}}},
                  {"name": "c", "resources": {}}]
    target = sched(pod(spec={"containers": containers}))
    assert predicted_cpu(target, 1000, 1.5) == 2000 + 750 + 1000


def test_secondary_scheduler_profile_packs_towards_the_target() -> None:
    nodes = [node(n, {"cpu": "10", "memory": "32Gi"}) for n in ("idle", "warm", "hot")]
    usage = {"idle": 0, "warm": 5000, "hot": 9000}
    profiles = load_profiles(TLP_CONFIG, {"node_cpu_usage": usage.get})
    profile = profiles["secondary-scheduler"]
    assert "TargetLoadPacking" in profile.describe()["scores"]
    decision = schedule(profile, sched(pod(requests=[{"cpu": "1", "memory": "1Gi"}],
                                           spec={"schedulerName": "secondary-scheduler"})),
                        cluster(nodes), StaticCache())
    # warm: (5000+1000)/10000 = 60% ≤ 70% → 30*60/70+70 = 95.7 → 96; idle: 10% → 74; hot: 100% → 0
    assert decision.tied == ["warm"]


def test_target_utilization_is_validated() -> None:
    bad = {"profiles": [{"pluginConfig": [{"name": "TargetLoadPacking", "args": {"targetUtilization": 120}}],
                         "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}}}]}
    with pytest.raises(PolicyError, match="targetUtilization"):
        load_profiles(bad)
