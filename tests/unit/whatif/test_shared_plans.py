"""The whatif module's candidates share work (engine/shared_cycle.py: requests before the cycle, evictors, the cycle
states where candidates agree up to a plugin), and each candidate's plan is still byte for byte the plan a separate
run computes: here every candidate's plan from run_whatif's path is compared, as JSON, with a fresh plan of the
same policy on a fresh read of the same generated cluster."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan, moment_of
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.shared_cycle import SharedCycles
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot, load_snapshot_file
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import (
    placement_request,
    plan_policy,
    read_input,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan_metrics import MetricsReads
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.whatif import plan_candidates, read_candidates

NOW = "2026-11-22T12:00:00Z"
OPENSHIFT = {"profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"],
             "deschedulingIntervalSeconds": 3600, "mode": "Predictive"}


def generator() -> Any:
    path = Path(__file__).resolve().parents[3] / "examples" / "generate_cluster.py"
    spec = importlib.util.spec_from_file_location("generate_cluster", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_cluster"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def policy(*plugins: tuple[str, str, dict], evictor: dict | None = None, **top: Any) -> dict:
    """A one-profile DeschedulerPolicy of (plugin, extension point, args), in that order."""
    enabled: dict[str, list[str]] = {}
    for name, point, _args in plugins:
        enabled.setdefault(point, []).append(name)
    config = [{"name": name, "args": args} for name, _point, args in plugins]
    if evictor is not None:
        config.append({"name": "DefaultEvictor", "args": evictor})
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", **top,
            "profiles": [{"name": "candidate", "pluginConfig": config,
                          "plugins": {point: {"enabled": names} for point, names in enabled.items()}}]}


def low(low_percent: int, high_percent: int) -> tuple[str, str, dict]:
    resources = ("cpu", "memory", "pods")
    return ("LowNodeUtilization", "balance", {"thresholds": dict.fromkeys(resources, low_percent),
                                              "targetThresholds": dict.fromkeys(resources, high_percent)})


LIFETIME = ("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400})
DUPLICATES = ("RemoveDuplicates", "balance", {})
SPREAD = ("RemovePodsViolatingTopologySpreadConstraint", "balance",
          {"constraints": ["DoNotSchedule", "ScheduleAnyway"]})
HIGH = ("HighNodeUtilization", "balance", {"thresholds": {"cpu": 40, "memory": 40, "pods": 40}})
MEASURED = ("LowNodeUtilization", "balance", {"thresholds": {"cpu": 20, "memory": 20},
                                              "targetThresholds": {"cpu": 50, "memory": 50},
                                              "metricsUtilization": {"source": "KubernetesMetrics"}})
METRICS_PROVIDERS = [{"source": "KubernetesMetrics"}]

CANDIDATES = [
    {"name": "low-20-50", "policy": policy(low(20, 50))},
    {"name": "low-30-60", "policy": policy(low(30, 60))},
    {"name": "high", "policy": policy(HIGH)},
    {"name": "lifecycle-a", "policy": policy(LIFETIME, DUPLICATES, SPREAD, low(20, 50))},
    {"name": "lifecycle-b", "policy": policy(LIFETIME, DUPLICATES, SPREAD, low(35, 70))},
    {"name": "lifecycle-c", "policy": policy(LIFETIME, DUPLICATES, SPREAD, HIGH)},
    # same plugins, another evictor: nothing past the head is the same
    {"name": "lifecycle-nodefit", "policy": policy(LIFETIME, DUPLICATES, SPREAD, low(20, 50),
                                                   evictor={"nodeFit": True})},
    {"name": "lifecycle-older", "policy": policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 604800}),
                                                 DUPLICATES, SPREAD, low(20, 50))},
    # another limit: the same plugins, another cycle
    {"name": "lifecycle-limited", "policy": policy(LIFETIME, DUPLICATES, SPREAD, low(20, 50),
                                                   maxNoOfPodsToEvictPerNode=2)},
    # the minReplicas check reads the pods per owner the earlier steps left
    {"name": "replicas-a", "policy": policy(LIFETIME, DUPLICATES, evictor={"minReplicas": 2})},
    {"name": "replicas-b", "policy": policy(LIFETIME, low(20, 50), evictor={"minReplicas": 2})},
    {"name": "lifecycle-limited-b", "policy": policy(LIFETIME, DUPLICATES, SPREAD, low(35, 70),
                                                     maxNoOfPodsToEvictPerNode=2)},
    # LowNodeUtilization on measured usage: what a plugin reads of the metrics is never shared
    {"name": "measured-duplicates", "policy": policy(MEASURED, DUPLICATES, metricsProviders=METRICS_PROVIDERS)},
    {"name": "measured-spread", "policy": policy(MEASURED, SPREAD, metricsProviders=METRICS_PROVIDERS)},
    {"name": "low-20-50-again", "policy": policy(low(20, 50))},  # the whole cycle is another's
    {"name": "openshift-low", "kubedescheduler": OPENSHIFT},
    {"name": "openshift-high", "kubedescheduler": {**OPENSHIFT, "profileCustomizations": {
        "devLowNodeUtilizationThresholds": "High"}}},
    {"name": "openshift-high-48h", "kubedescheduler": {**OPENSHIFT, "profileCustomizations": {
        "devLowNodeUtilizationThresholds": "High", "podLifetime": "48h"}}},
]


def profile(name: str, *plugins: tuple[str, str, dict], evictor: dict | None = None) -> dict:
    return policy(*plugins, evictor=evictor)["profiles"][0] | {"name": name}


AFFINITY = ("RemovePodsViolatingNodeAffinity", "deschedule",
            {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]})
TAINTS = ("RemovePodsViolatingNodeTaints", "deschedule", {})
ANTI_AFFINITY = ("RemovePodsViolatingInterPodAntiAffinity", "deschedule", {})
RESTARTS = ("RemovePodsHavingTooManyRestarts", "deschedule", {"podRestartThreshold": 100})
FAILED = ("RemoveFailedPods", "deschedule", {})
# Different plugin mixes over one or two profiles (the whatif benchmark's heterogeneous set in small): plugins shared
# between candidates in another position, under another profile name or after other plugins
HETEROGENEOUS = [
    {"name": "cluster", "kubedescheduler": OPENSHIFT},
    {"name": "lifecycle", "policy": policy(LIFETIME, RESTARTS, FAILED)},
    {"name": "affinity", "policy": policy(AFFINITY, TAINTS, ANTI_AFFINITY)},
    {"name": "balance", "policy": policy(DUPLICATES, SPREAD, low(20, 50))},
    {"name": "two-profiles", "policy": {**policy(), "profiles": [profile("lifecycle", LIFETIME),
                                                                 profile("balance", low(20, 50))]}},
    {"name": "two-profiles-renamed", "policy": {**policy(), "profiles": [profile("first", LIFETIME),
                                                                         profile("second", low(20, 50))]}},
    {"name": "all", "policy": policy(AFFINITY, TAINTS, ANTI_AFFINITY, LIFETIME, RESTARTS, DUPLICATES, SPREAD,
                                     low(25, 55))},
    {"name": "all-nodefit", "policy": policy(AFFINITY, TAINTS, ANTI_AFFINITY, LIFETIME, RESTARTS, DUPLICATES, SPREAD,
                                             low(25, 55), evictor={"nodeFit": True})},
    {"name": "limited", "policy": policy(LIFETIME, FAILED, DUPLICATES, maxNoOfPodsToEvictPerNode=3)},
    {"name": "compact", "policy": policy(LIFETIME, HIGH)},
    {"name": "restarts-taints", "policy": {**policy(), "profiles": [profile("restarts", RESTARTS),
                                                                    profile("taints", TAINTS, ANTI_AFFINITY)]}},
    {"name": "duplicates", "policy": policy(DUPLICATES)},
]


def recorded_metrics(objects: list[dict]) -> list[dict]:
    """NodeMetrics and PodMetrics for the generated cluster: each pod uses some of what it requests."""
    metrics = []
    for number, obj in enumerate(objects):
        meta = obj["metadata"]
        if obj["kind"] == "Node":
            usage = {"cpu": f"{(number * 733) % 7000 + 200}m", "memory": f"{(number * 977) % 20000 + 500}Mi"}
            metrics.append({"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "timestamp": NOW,
                            "window": "30s", "metadata": {"name": meta["name"]}, "usage": usage})
        elif obj["kind"] == "Pod" and obj["spec"].get("nodeName"):
            usage = {"cpu": f"{(number * 37) % 300 + 1}m", "memory": f"{(number * 53) % 500 + 1}Mi"}
            metrics.append({"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics", "timestamp": NOW,
                            "window": "30s", "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                            "containers": [{"name": "c", "usage": usage}]})
    return metrics


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    objects = generator().build_cluster(40, 14, seed=7, now=NOW)
    path = tmp_path_factory.mktemp("whatif") / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects + recorded_metrics(objects)}))
    return str(path)


@pytest.mark.parametrize("listed, samples, placement", [(CANDIDATES, 1, False), (CANDIDATES, 3, True),
                                                        (HETEROGENEOUS, 1, False), (HETEROGENEOUS, 3, True)],
                         ids=["thresholds", "thresholds-sampled-placed", "heterogeneous",
                              "heterogeneous-sampled-placed"])
def test_each_candidate_plan_is_the_plan_of_a_separate_run(snapshot_file: str, listed: list[dict], samples: int,
                                                           placement: bool) -> None:
    params = {"snapshot": snapshot_file, "now": NOW, "samples": samples, "seed": 4, "placement": placement}
    candidates = read_candidates(listed)
    request = placement_request(params)
    snapshot, _warnings, _source, _identity, api_client = read_input(params, request)
    shared_plans = plan_candidates(snapshot, candidates, NOW, params, request, api_client)
    assert list(shared_plans) == [c["name"] for c in candidates]
    evictions = set()
    for candidate in candidates:
        fresh_request = placement_request(params)
        fresh, *_rest = read_input(params, fresh_request)
        alone = plan_policy(fresh, candidate["policy"], candidate["kind"], NOW, params, fresh_request, None)
        assert json.dumps(shared_plans[candidate["name"]], sort_keys=True) == json.dumps(alone, sort_keys=True), \
            candidate["name"]
        evictions.add(alone["summary"]["total"])
    assert len(evictions) > 5  # the candidates plan different cycles, not one plan many times


@pytest.mark.parametrize("names, skipped", [
    (["lifecycle-a", "lifecycle-b", "lifecycle-c"], 3 + 3),  # the second and third skip PodLifeTime to the spread
    (["lifecycle-a", "lifecycle-nodefit"], 0),  # another evictor
    (["lifecycle-limited", "lifecycle-limited-b"], 3),
    (["low-20-50", "low-20-50-again"], 1),
    (["measured-duplicates", "measured-spread"], 0),  # LowNodeUtilization read the metrics
])
def test_cycles_share_the_steps_their_policies_agree_on(snapshot_file: str, names: list[str], skipped: int) -> None:
    snapshot = Snapshot(load_snapshot_file(snapshot_file))
    documents = [next(c["policy"] for c in CANDIDATES if c["name"] == name) for name in names]
    shared = SharedCycles(snapshot, moment_of(NOW))
    shared.expect(load_policy(document, snapshot.priority_classes) for document in documents)
    for document in documents:
        compute_plan(snapshot, document, NOW, shared=shared)
    assert shared.skipped_steps == skipped


def test_live_metrics_are_read_once_for_every_candidate() -> None:
    reads = MetricsReads()
    listed: list[int] = []
    sent: list[list[str]] = []

    def read_metrics_api() -> tuple[list[dict], None]:
        listed.append(1)
        return [{"kind": "NodeMetrics"}], None

    def query(queries: list[str]) -> tuple[dict, None]:
        sent.append(queries)
        return {q: {"status": "success"} for q in queries}, None

    here = {"metricsProviders": [{"source": "Prometheus", "prometheus": {"url": "https://prometheus.example"}}]}
    elsewhere = {"metricsProviders": [{"source": "Prometheus", "prometheus": {"url": "https://other.example"}}]}
    assert reads.metrics_api(read_metrics_api) == reads.metrics_api(read_metrics_api) and listed == [1]
    assert reads.prometheus(["a", "b"], here, query) == ({"a": {"status": "success"}, "b": {"status": "success"}}, None)
    assert reads.prometheus(["b", "c"], here, query)[0] == {"b": {"status": "success"}, "c": {"status": "success"}}
    reads.prometheus(["a"], elsewhere, query)  # another Prometheus is asked on its own
    assert sent == [["a", "b"], ["c"], ["a"]]


def test_an_unreachable_prometheus_is_asked_once() -> None:
    reads = MetricsReads()
    sent: list[list[str]] = []

    def query(queries: list[str]) -> tuple[dict, str]:
        sent.append(queries)
        return {}, "connection refused"

    assert reads.prometheus(["a"], {}, query) == ({}, "connection refused")
    assert reads.prometheus(["a", "b"], {}, query) == ({}, "connection refused")
    assert sent == [["a"]]
