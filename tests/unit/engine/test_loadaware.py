"""Volcano's LoadAware: its own tests (validation_test.go, defaults_test.go, nodeutilization_test.go in
volcano-sh/descheduler pkg/framework/plugins/loadaware) and scenarios through compute_plan with recorded usage."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import attach
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import loadaware
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from builders import build_node, build_pod, policy, set_creation, set_rs_owner

NOW = "2026-11-22T12:00:00Z"
NOW_TS = 1_795_348_800
GI = 2**30
EXTENDED = "example.com/foo"
PROMETHEUS = {"type": "prometheus", "address": "http://prometheus.monitoring:9090"}


def la_args(thresholds: dict, targets: dict, **extra: Any) -> dict:
    return {"thresholds": thresholds, "targetThresholds": targets, **extra}


def la_policy(args: dict, *more: tuple[str, str, dict], evictor_args: Optional[dict] = None) -> dict:
    return policy(*more, ("LoadAware", "balance", args), evictor_args=evictor_args)


def validate(args: dict) -> None:
    loadaware.validate(args, "LoadAware")


# --- validation_test.go: TestValidateLoadAwarePluginConfig ---

@pytest.mark.parametrize("low, high, message", [
    ({"cpu": 20, "memory": 120}, {"cpu": 80, "memory": 80}, "thresholds config is not valid: memory threshold not "
                                                            "in [0, 100] range"),
    ({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80, "pods": 80}, "different resources"),
    ({"cpu": 20, "memory": 20}, {"cpu": 80, "pods": 80}, "different resources"),
    ({"cpu": 90, "memory": 20}, {"cpu": 80, "memory": 80}, "thresholds' cpu percentage is greater than "
                                                           "targetThresholds'"),
    ({"cpu": 20, "memory": 20, EXTENDED: 20}, {"cpu": 80, "memory": 80}, "different resources"),
    ({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80, EXTENDED: 80}, "different resources"),
    ({"cpu": 20, "memory": 20, EXTENDED: 20}, {"cpu": 80, "memory": 80, "example.com/bar": 80},
     "different resources"),
    ({"cpu": 20, "memory": 20, EXTENDED: 90}, {"cpu": 80, "memory": 80, EXTENDED: 80},
     f"thresholds' {EXTENDED} percentage is greater than targetThresholds'"),
])
def test_invalid_thresholds_are_refused_with_volcanos_message(low: dict, high: dict, message: str):
    with pytest.raises(PolicyError, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
        validate(la_args(low, high))
    assert caught.value.field.startswith("LoadAware.")


@pytest.mark.parametrize("low, high", [
    ({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80}),
    ({"cpu": 20, "memory": 20, EXTENDED: 20}, {"cpu": 80, "memory": 80, EXTENDED: 80}),
    ({"cpu": 80, "memory": 80}, {"cpu": 80, "memory": 80}),  # equal is allowed
])
def test_valid_thresholds_pass(low: dict, high: dict):
    validate(la_args(low, high))


def test_deviation_thresholds_may_have_low_above_target():
    validate(la_args({"cpu": 30}, {"cpu": 10}, useDeviationThresholds=True))


def test_inclusion_namespaces_are_refused():
    with pytest.raises(PolicyError, match="only Exclude namespaces can be set, inclusion is not supported") as caught:
        validate(la_args({"cpu": 20}, {"cpu": 80}, evictableNamespaces={"include": ["a"]}))
    assert caught.value.field == "LoadAware.evictableNamespaces.include"


def test_empty_thresholds_are_refused():
    with pytest.raises(PolicyError, match="no resource threshold is configured"):
        validate(la_args({}, {"cpu": 80}))


def test_unknown_field_is_refused():
    with pytest.raises(PolicyError, match="unknown field") as caught:
        validate(la_args({"cpu": 20}, {"cpu": 80}, metric={"type": "prometheus"}))
    assert caught.value.field == "LoadAware.metric"


# --- defaults_test.go: duration defaults to 2m, the rest stays as given ---

def test_defaults_set_duration_only():
    assert loadaware.set_defaults({}) == {"duration": "2m"}
    assert loadaware.set_defaults({"duration": "5m", "nodeFit": True}) == {"duration": "5m", "nodeFit": True}


# --- nodeutilization_test.go: TestSortNodesByUsage (memory Value + cpu MilliValue + pods) ---

def _load(name: str, cpu_milli: int, memory: int, pods: int) -> loadaware.NodeLoad:
    node = Node(build_node(name, 1930, 3287692 * 1024, 29))
    usage = {"cpu": Decimal(cpu_milli) / 1000, "memory": Decimal(memory), "pods": Decimal(pods)}
    return loadaware.NodeLoad(node, usage, [], {})


def test_sort_nodes_by_usage():
    loads = [_load("node1", 1730, 3038982964, 25), _load("node2", 1220, 3038982964, 11),
             _load("node3", 1530, 5038982964, 20)]
    descending = sorted(loads, key=lambda load: -load.sort_key())
    ascending = sorted(loads, key=lambda load: load.sort_key())
    assert [load.node.name for load in descending] == ["node3", "node1", "node2"]
    assert [load.node.name for load in ascending] == ["node2", "node1", "node3"]


# --- scenarios with recorded Prometheus answers ---

def answer(value: float, instance: str) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": instance}, "value": [NOW_TS, repr(value)]}]}}


def node(name: str, **labels: str) -> dict:
    """4 cores, 8Gi, 110 pods."""
    return build_node(name, 4000, 8 * GI, 110, lambda n: n["metadata"]["labels"].update(labels))


def rs_pod(name: str, node_name: str, cpu: int = 100, rs: str = "rs") -> dict:
    pod = build_pod(name, cpu, 0, node_name, lambda p: set_rs_owner(p, f"{rs}-{name}", f"uid-{rs}-{name}"))
    set_creation(pod, "2026-11-22T11:00:00Z")
    return pod


def prometheus_answers(nodes: dict[str, tuple[float, float]], pods: dict[str, tuple[float, int]]) -> dict:
    results: dict[str, Any] = {}
    for name, (cpu, memory) in nodes.items():
        cpu_query, memory_query = loadaware.node_queries(name)
        results[cpu_query], results[memory_query] = answer(cpu, name), answer(memory, name)
    for name, (cores, memory_bytes) in pods.items():
        cpu_query, memory_query = loadaware.pod_queries(name)
        results[cpu_query], results[memory_query] = answer(cores, "kubelet"), answer(memory_bytes, "kubelet")
    return results


def hot_cluster() -> list[dict]:
    """n1 at 90% cpu with a 1.2-core, a 0.8-core and a 0.1-core pod; n2 idle; n3 in the middle."""
    return [node("n1"), node("n2"), node("n3"), rs_pod("big", "n1"), rs_pod("mid", "n1"), rs_pod("small", "n1"),
            rs_pod("other", "n3")]


HOT_NODES = {"n1": (0.9, 0.5), "n2": (0.1, 0.2), "n3": (0.5, 0.5)}
HOT_PODS = {"big": (1.2, GI), "mid": (0.8, GI), "small": (0.1, GI), "other": (0.5, GI)}
CCE_ARGS = la_args({"cpu": 30, "memory": 30}, {"cpu": 80, "memory": 85}, metrics=PROMETHEUS,
                   evictableNamespaces={"exclude": ["kube-system"]})


def plan_with(objects: list[dict], document: dict, results: Optional[dict], **kwargs: Any) -> dict:
    snapshot = Snapshot(objects)
    attach(snapshot, results, NOW_TS)
    return compute_plan(snapshot, document, NOW, **kwargs)


def test_the_biggest_cpu_user_leaves_the_hot_node_until_it_is_under_target():
    plan = plan_with(hot_cluster(), la_policy(CCE_ARGS), prometheus_answers(HOT_NODES, HOT_PODS))
    assert [e["name"] for e in plan["evictions"]] == ["big"]  # 3.6 cores - 1.2 = 2.4 ≤ 3.2 (80% of 4)
    assert plan["evictions"][0]["reason"].startswith("node n1 measured at cpu 3.6 cores > target 3.2 cores")
    classes = {n["name"]: n["classes"] for n in plan["utilization"]["nodes"]}
    assert classes == {"n1": {"test/LoadAware": "overutilized"}, "n2": {"test/LoadAware": "underutilized"},
                       "n3": {"test/LoadAware": "appropriate"}}
    reading = plan["actual_utilization"]["plugins"]["test/LoadAware"]
    assert reading["nodes"]["n1"]["cpu"] == 90.0
    assert reading["thresholds"]["high"] == {"cpu": 80.0, "memory": 85.0, "pods": 100.0}
    assert reading["mode"] == "Prometheus" and "node_cpu_seconds_total" in reading["query"]


def test_a_node_without_answers_counts_as_idle_and_is_named_in_a_warning():
    nodes = dict(HOT_NODES)
    del nodes["n2"]
    plan = plan_with(hot_cluster(), la_policy(CCE_ARGS), prometheus_answers(nodes, HOT_PODS))
    assert [e["name"] for e in plan["evictions"]] == ["big"]  # n2 looks idle (0%), as in Volcano
    warning = next(w for w in plan["warnings"] if "LoadAware: no usage data" in w)
    assert "n2 cpu" in warning and "n2 memory" in warning and "0% used" in warning


def test_pods_without_metrics_go_last_and_free_nothing():
    pods = {"mid": (0.8, GI)}  # big and small have no recorded answers
    plan = plan_with(hot_cluster(), la_policy(CCE_ARGS), prometheus_answers(HOT_NODES, pods))
    # mid first (0.8: 3.6 → 2.8 ≤ 3.2)
    assert [e["name"] for e in plan["evictions"]] == ["mid"]
    pods = {}
    plan = plan_with(hot_cluster(), la_policy(CCE_ARGS), prometheus_answers(HOT_NODES, pods))
    # nothing is measured, so nothing is freed: every evictable pod of n1 goes while the budget lasts
    assert sorted(e["name"] for e in plan["evictions"]) == ["big", "mid", "small"]


@pytest.mark.parametrize("metrics, message", [
    (None, "Metrics type is empty"),
    ({"type": "prometheus"}, "Metrics address is empty"),
    ({"type": "graphite", "address": "x"}, "Data cannot be collected from the graphite monitoring system"),
])
def test_a_metrics_block_volcano_cannot_use_makes_the_plugin_do_nothing_with_a_warning(metrics: Any, message: str):
    args = dict(CCE_ARGS, metrics=metrics) if metrics is not None else {k: v for k, v in CCE_ARGS.items()
                                                                        if k != "metrics"}
    plan = plan_with(hot_cluster(), la_policy(args), prometheus_answers(HOT_NODES, HOT_PODS))
    assert plan["evictions"] == []
    assert any(message in w and "LoadAware" in w for w in plan["warnings"])


def test_node_fit_keeps_a_pod_whose_only_room_is_on_an_over_target_node():
    """n2 is the only node with room for the 3-core pod's requests, but n2 is itself over its cpu target."""
    objects = [node("n1"), node("n2"), node("n3"), rs_pod("huge", "n1", cpu=3000), rs_pod("filler", "n3", cpu=3500)]
    nodes = {"n1": (0.95, 0.5), "n2": (0.9, 0.1), "n3": (0.05, 0.1)}
    pods = {"huge": (3.0, GI), "filler": (0.1, GI)}
    with_fit = dict(CCE_ARGS, nodeFit=True)
    plan = plan_with(objects, la_policy(with_fit), prometheus_answers(nodes, pods))
    assert plan["evictions"] == []
    assert any("LoadAware nodeFit" in reason for reason in plan["spared"]["by_reason"])
    plan = plan_with(objects, la_policy(CCE_ARGS), prometheus_answers(nodes, pods))
    assert [e["name"] for e in plan["evictions"]] == ["huge"]


def test_loadaware_is_added_to_the_profiles_pre_eviction_filters():
    loaded = load_policy(la_policy(CCE_ARGS), {})
    assert loaded.profiles[0].pre_eviction_filters == ["DefaultEvictor", "LoadAware"]


def test_cce_addon_configuration_plans_like_the_plain_policy():
    plain = la_policy(CCE_ARGS)
    inner = {k: v for k, v in plain.items() if k not in ("apiVersion", "kind")}
    addon = {"colocation_enable": "", "descheduler_enable": "true", "deschedulingInterval": "10m",
             "deschedulerPolicy": inner}
    results = prometheus_answers(HOT_NODES, HOT_PODS)
    cluster = hot_cluster()
    from_addon = plan_with(cluster, addon, results)
    from_plain = plan_with(cluster, plain, results)
    assert from_addon["evictions"] == from_plain["evictions"] and from_addon["evictions"]
    as_text = dict(addon, deschedulerPolicy=json.dumps(inner), descheduler_enable="false")
    from_text = plan_with(cluster, as_text, results)
    assert from_text["evictions"] == from_plain["evictions"]
    assert any("descheduler_enable" in w for w in from_text["warnings"])


def test_adaptor_mode_reads_custom_metrics_and_pod_metrics():
    def pod_metrics(name: str, cpu: str) -> dict:
        return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics", "timestamp": NOW,
                "metadata": {"namespace": "default", "name": name},
                "containers": [{"name": "c", "usage": {"cpu": cpu, "memory": "100Mi"}}]}
    objects = hot_cluster() + [pod_metrics("big", "1200m"), pod_metrics("mid", "800m"), pod_metrics("small", "100m")]
    custom = {
        "node_cpu_usage_avg": {"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"instance": n}, "value": [NOW_TS, str(v[0])]} for n, v in HOT_NODES.items()]}},
        "node_memory_usage_avg": {"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"instance": n}, "value": [NOW_TS, str(v[1])]} for n, v in HOT_NODES.items()]}},
    }
    args = dict(CCE_ARGS, metrics={"type": "prometheus_adaptor"})
    plan = plan_with(objects, la_policy(args), custom)
    assert [e["name"] for e in plan["evictions"]] == ["big"]


def test_equal_pods_on_a_hot_node_are_a_choice_the_samples_show():
    objects = [node("n1"), node("n2"), node("n3")] + [rs_pod(f"w{i}", "n1") for i in range(4)]
    pods = {f"w{i}": (0.5, GI) for i in range(4)}
    plan = plan_with(objects, la_policy(CCE_ARGS), prometheus_answers(HOT_NODES, pods), samples=40, seed=1)
    found = {e["name"]: e["frequency"] for e in plan["evictions"]}
    found.update({e["name"]: e["frequency"] for e in plan["sampling"]["other_possible_evictions"]})
    # 3.6 cores: one 0.5-core pod leaves 3.1 ≤ 3.2, so exactly one of the four equal pods goes each cycle
    assert sorted(found) == ["w0", "w1", "w2", "w3"]
    assert all(0 < f < 1 for f in found.values()) and sum(found.values()) == pytest.approx(1.0)


def test_deviation_thresholds_are_built_around_the_average_of_requests():
    """cpu requests average 25% (n1 requests all 4 cores, the other three nodes nothing): thresholds 15% and 35%."""
    objects = [node("n1"), node("n2"), node("n3"), node("n4"), rs_pod("a", "n1", cpu=2000),
               rs_pod("b", "n1", cpu=2000)]
    nodes = {"n1": (0.9, 0.3), "n2": (0.05, 0.1), "n3": (0.05, 0.1), "n4": (0.5, 0.3)}
    pods = {"a": (1.5, GI), "b": (1.5, GI)}
    args = la_args({"cpu": 10}, {"cpu": 10}, useDeviationThresholds=True, metrics=PROMETHEUS)
    plan = plan_with(objects, la_policy(args), prometheus_answers(nodes, pods))
    classes = {n["name"]: n["classes"].get("test/LoadAware") for n in plan["utilization"]["nodes"]}
    # average cpu requests 25%: low 15% (0.6 cores), high 35% (1.4 cores); memory and pods ignored (0)
    assert classes == {"n1": "overutilized", "n2": "underutilized", "n3": "underutilized", "n4": "overutilized"}
    assert len(plan["evictions"]) == 2  # 3.6 → 2.1 → 0.6 cores: both pods of n1 go while n1 stays above 1.4
    thresholds = plan["actual_utilization"]["plugins"]["test/LoadAware"]["thresholds"]
    assert thresholds["average"]["cpu"] == 25.0
    assert (thresholds["low"]["cpu"], thresholds["high"]["cpu"]) == (15.0, 35.0)
    assert thresholds["low"]["memory"] == thresholds["high"]["memory"] == 100.0  # 0 in deviation mode: ignored


def test_a_non_numeric_sample_counts_as_zero_and_the_warning_says_why():
    results = prometheus_answers(HOT_NODES, HOT_PODS)
    cpu_query, _memory_query = loadaware.node_queries("n2")
    results[cpu_query]["data"]["result"][0]["value"][1] = "not-a-number"
    plan = plan_with(hot_cluster(), la_policy(CCE_ARGS), results)
    warning = next(w for w in plan["warnings"] if "LoadAware: no usage data" in w)
    assert "n2 cpu" in warning and "non-numeric" in warning
    assert [e["name"] for e in plan["evictions"]] == ["big"]  # n2 at 0% cpu is still a destination
