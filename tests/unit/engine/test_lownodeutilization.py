"""LowNodeUtilization, ported from upstream pkg/framework/plugins/nodeutilization/{lownodeutilization,nodeutilization,
validation,defaults}_test.go (HEAD 7d2b28bf), plus checks of the spec §6.1 details the upstream tests don't pin down.

Upstream builds the plugin with DefaultEvictorArgs{NodeFit: true}; every case here does the same through the policy.
The metrics-server and Prometheus variants are in test_lownodeutilization_metrics.py.
"""

from typing import Any, Callable, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from builders import (
    add_taint,
    build_node,
    build_pod,
    evicted_names,
    make_best_effort,
    node_classes,
    policy,
    set_ds_owner,
    set_host_path_empty_dir,
    set_labels,
    set_mirror_annotations,
    set_node_extended_resource,
    set_node_selector,
    set_normal_owner,
    set_pod_extended_request,
    set_priority,
    set_required_node_affinity,
    set_rs_owner,
    set_unschedulable,
)

NOW = "2026-11-22T12:00:00Z"
NAME = "LowNodeUtilization"
KEY = f"test/{NAME}"
EXTENDED = "example.com/foo"
LOW_PRIORITY, HIGH_PRIORITY = 0, 10000
SYSTEM_CRITICAL = 2_000_000_000
CPU_PODS_30 = {"cpu": 30, "pods": 30}
CPU_PODS_50 = {"cpu": 50, "pods": 50}


def lnu_args(thresholds: dict, targets: dict, **extra: Any) -> dict:
    return {"thresholds": thresholds, "targetThresholds": targets, **extra}


def run(objects: list[dict], args: dict, evictor_args: Optional[dict] = None, **top_level: Any) -> dict:
    evictor = {"nodeFit": True} if evictor_args is None else evictor_args
    return compute_plan(objects, policy((NAME, "balance", args), evictor_args=evictor, **top_level), NOW)


def both(*steps: Callable[[dict], Any]) -> Callable[[dict], None]:
    def apply(obj: dict) -> None:
        for step in steps:
            step(obj)
    return apply


def in_namespace(namespace: str) -> Callable[[dict], None]:
    def apply(pod: dict) -> None:
        pod["metadata"]["namespace"] = namespace
    return apply


def with_priority(priority: int) -> Callable[[dict], None]:
    return lambda pod: set_priority(pod, priority)


def with_extended(quantity: int) -> Callable[[dict], None]:
    return lambda obj: (set_pod_extended_request if obj["kind"] == "Pod" else set_node_extended_resource)(
        obj, EXTENDED, quantity)


# upstream's three "these won't be evicted" pods: local storage + mirror, and a critical pod in kube-system
with_local_storage = both(set_normal_owner, set_host_path_empty_dir, set_mirror_annotations)
with_critical = both(set_normal_owner, in_namespace("kube-system"), with_priority(SYSTEM_CRITICAL))
bare_critical = both(in_namespace("kube-system"), with_priority(SYSTEM_CRITICAL))


def three_nodes(n1_pods: int = 9) -> list[dict]:
    return [
        build_node("n1", 4000, 3000, n1_pods),
        build_node("n2", 4000, 3000, 10),
        build_node("n3", 4000, 3000, 10, set_unschedulable),
    ]


def protected_pods(cpu: int = 400, memory: int = 0, critical: Callable = with_critical) -> list[dict]:
    return [
        build_pod("p6", cpu, memory, "n1", set_ds_owner),
        build_pod("p7", cpu, memory, "n1", with_local_storage),
        build_pod("p8", cpu, memory, "n1", critical),
    ]


def five_rs_pods(apply: Callable[[dict], Any] = set_rs_owner) -> list[dict]:
    return [build_pod(f"p{i}", 400, 0, "n1", apply) for i in range(1, 6)]


def p9_on_n2(cpu: int = 400) -> dict:
    return build_pod("p9", cpu, 0, "n2", set_rs_owner)


# --- TestLowNodeUtilization --------------------------------------------------------------------------------------


def test_no_evictable_pods():
    pods = [build_pod(f"p{i}", 400, 0, "n1", set_ds_owner) for i in range(1, 5)] + [
        build_pod("p5", 400, 0, "n1", with_local_storage),
        build_pod("p6", 400, 0, "n1", bare_critical),
        p9_on_n2(),
    ]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == []
    assert node_classes(plan, KEY) == {"n1": "overutilized", "n2": "underutilized", "n3": "appropriate"}


def test_without_priorities():
    pods = five_rs_pods() + protected_pods(critical=bare_critical) + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    # n2 can take 4 pods before its pods capacity (int(0.5*10) - 1) runs out
    assert evicted_names(plan) == ["p1", "p2", "p3", "p4"]
    assert plan["evictions"][0]["reason"] == "node n1 at cpu 80% > target 50%, pods 88.9% > target 50%"


def test_without_priorities_excluding_namespaces():
    pods = five_rs_pods(both(set_normal_owner, in_namespace("namespace1"))) + protected_pods(
        critical=bare_critical) + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50,
                                              evictableNamespaces={"exclude": ["namespace1"]}))
    assert evicted_names(plan) == []
    assert plan["spared"]["by_reason"]["namespace excluded by evictableNamespaces"]["count"] == 5


def _include_default_pods() -> list[dict]:
    # p3..p5 have no owner (upstream TODO), so the evictor protects them as bare pods
    return [
        build_pod("p1", 400, 0, "n1", set_rs_owner),
        build_pod("p2", 400, 0, "n1", set_rs_owner),
        build_pod("p3", 400, 0, "n1", in_namespace("namespace3")),
        build_pod("p4", 400, 0, "n1", in_namespace("namespace4")),
        build_pod("p5", 400, 0, "n1", in_namespace("namespace5")),
        *protected_pods(),
        p9_on_n2(),
    ]


def test_without_priorities_include_only_default_namespace():
    # Upstream's test builds the plugin directly, skipping validation; the plugin ignores Include, so only the
    # bare pods in namespace3..5 are spared. Loaded through a policy, evictableNamespaces.include is rejected.
    plan = run(three_nodes() + _include_default_pods(), lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == ["p1", "p2"]
    with pytest.raises(PolicyError) as error:
        run(three_nodes() + _include_default_pods(),
            lnu_args(CPU_PODS_30, CPU_PODS_50, evictableNamespaces={"include": ["default"]}))
    assert "evictableNamespaces.include" in error.value.field


def test_without_priorities_stop_when_cpu_capacity_is_depleted():
    pods = five_rs_pods() + protected_pods() + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert len(plan["evictions"]) == 4


def test_with_priorities():
    pods = [build_pod(f"p{i}", 400, 0, "n1", both(set_rs_owner, with_priority(HIGH_PRIORITY))) for i in range(1, 5)]
    pods += [
        build_pod("p5", 400, 0, "n1", both(set_rs_owner, with_priority(LOW_PRIORITY))),
        build_pod("p6", 400, 0, "n1", both(set_ds_owner, with_priority(HIGH_PRIORITY))),
        build_pod("p7", 400, 0, "n1", both(with_local_storage, with_priority(LOW_PRIORITY))),
        build_pod("p8", 400, 0, "n1", with_critical),
        p9_on_n2(),
    ]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    # the low-priority pod goes first (§4.4), then equal-priority pods in the base order
    assert evicted_names(plan) == ["p5", "p1", "p2", "p3"]


def test_without_priorities_evicting_best_effort_pods_only():
    best_effort = both(set_rs_owner, make_best_effort)
    pods = [
        build_pod("p1", 400, 0, "n1", best_effort),
        build_pod("p2", 400, 0, "n1", best_effort),
        build_pod("p3", 400, 0, "n1", set_rs_owner),
        build_pod("p4", 400, 0, "n1", best_effort),
        build_pod("p5", 400, 0, "n1", best_effort),
        *protected_pods(),
        p9_on_n2(),
    ]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == ["p1", "p2", "p4", "p5"]


def test_with_extended_resource():
    nodes = [
        build_node("n1", 4000, 3000, 9, with_extended(8)),
        build_node("n2", 4000, 3000, 10, with_extended(8)),
        build_node("n3", 4000, 3000, 10, set_unschedulable),
    ]
    pods = [build_pod(f"p{i}", 0, 0, "n1", both(set_rs_owner, with_extended(1))) for i in range(1, 6)]
    pods += [
        build_pod("p6", 0, 0, "n1", both(set_normal_owner, with_extended(1))),
        build_pod("p7", 0, 0, "n1", both(with_local_storage, with_extended(1))),
        build_pod("p8", 0, 0, "n1", both(with_critical, with_extended(1))),
        build_pod("p9", 0, 0, "n2", both(set_rs_owner, with_extended(1))),
    ]
    ext = {"pods": 30, EXTENDED: 30}
    plan = run(nodes + pods, lnu_args(ext, {"pods": 50, EXTENDED: 50}))
    # 4 pods could go by the pods count, but n2 only has int(0.5*8) - 1 = 3 of the extended resource left
    assert len(plan["evictions"]) == 3


def test_with_extended_resource_in_some_of_nodes():
    nodes = [
        build_node("n1", 4000, 3000, 9, with_extended(8)),
        build_node("n2", 4000, 3000, 10),
        build_node("n3", 4000, 3000, 10, set_unschedulable),
    ]
    pods = [build_pod("p1", 0, 0, "n1", both(set_rs_owner, with_extended(1))),
            build_pod("p9", 0, 0, "n2", set_rs_owner)]
    plan = run(nodes + pods, lnu_args({"pods": 30, EXTENDED: 30}, {"pods": 50, EXTENDED: 50}))
    assert evicted_names(plan) == []


def test_with_extended_resource_in_some_of_nodes_with_deviation():
    nodes = [
        build_node("n1", 4000, 3000, 10, with_extended(8)),
        build_node("n2", 4000, 3000, 10, with_extended(8)),
        build_node("n3", 4000, 3000, 10, set_unschedulable),
    ]
    pods = [
        build_pod("p1", 0, 0, "n1", both(set_rs_owner, with_extended(1))),
        build_pod("p2", 0, 0, "n2", both(set_rs_owner, with_extended(7))),
        build_pod("p3", 0, 0, "n2", set_rs_owner),
        build_pod("p8", 0, 0, "n3", set_rs_owner),
        build_pod("p9", 0, 0, "n3", set_rs_owner),
    ]
    deviation = {"pods": 5, EXTENDED: 10}
    plan = run(nodes + pods, lnu_args(deviation, deviation, useDeviationThresholds=True))
    assert len(plan["evictions"]) == 1
    # n3 lacks the extended resource, so its average is over n1 and n2 only: 50% ± 10
    assert node_classes(plan, KEY) == {"n1": "underutilized", "n2": "overutilized", "n3": "appropriate"}


def test_without_priorities_but_only_other_node_is_unschedulable():
    nodes = [build_node("n1", 4000, 3000, 9), build_node("n2", 4000, 3000, 10, set_unschedulable)]
    pods = five_rs_pods() + protected_pods()
    plan = run(nodes + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == []
    assert node_classes(plan, KEY) == {"n1": "overutilized", "n2": "appropriate"}


def _west_east_nodes() -> list[dict]:
    def east(node: dict) -> None:
        set_labels(node, datacenter="east")

    return [build_node("n1", 4000, 3000, 9), build_node("n2", 4000, 3000, 10, east)]


def test_without_priorities_other_node_does_not_match_node_selector_of_p4_p5():
    west = both(set_normal_owner, lambda p: set_node_selector(p, datacenter="west"))
    pods = [build_pod(f"p{i}", 400, 0, "n1", set_rs_owner) for i in range(1, 4)]
    pods += [build_pod("p4", 400, 0, "n1", west), build_pod("p5", 400, 0, "n1", west), *protected_pods()]
    plan = run(_west_east_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == ["p1", "p2", "p3"]
    spared = plan["spared"]["by_reason"]["does not fit any other node (nodeFit)"]
    assert spared["examples"] == ["default/p4", "default/p5"]


def _affinity_pods() -> list[dict]:
    west = both(set_normal_owner, lambda p: set_required_node_affinity(p, "datacenter", "In", ["west"]))
    pods = [build_pod(f"p{i}", 400, 0, "n1", set_rs_owner) for i in range(1, 4)]
    return pods + [build_pod("p4", 400, 0, "n1", west), build_pod("p5", 400, 0, "n1", west), *protected_pods(),
                   build_pod("p9", 0, 0, "n2", set_rs_owner)]


def test_without_priorities_other_node_does_not_match_node_affinity_of_p4_p5():
    plan = run(_west_east_nodes() + _affinity_pods(), lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert evicted_names(plan) == ["p1", "p2", "p3"]


def test_without_priorities_different_evictions_for_requested_and_actual_resources():
    # the same objects as above; the metrics variant (2 evictions) is in test_lownodeutilization_metrics.py
    plan = run(_west_east_nodes() + _affinity_pods(), lnu_args(CPU_PODS_30, CPU_PODS_50))
    assert len(plan["evictions"]) == 3


def test_deviation_thresholds():
    pods = five_rs_pods() + protected_pods() + [p9_on_n2()]
    five = {"cpu": 5, "pods": 5}
    plan = run(three_nodes() + pods, lnu_args(five, five, useDeviationThresholds=True))
    # averages: cpu 30%, pods 33%; n2 can take int(0.3796*10) - 1 = 2 pods
    assert len(plan["evictions"]) == 2
    assert plan["evictions"][0]["reason"].startswith("node n1 at cpu 80% > target 35% (average 30% + 5)")


def test_deviation_thresholds_and_overevicting_memory():
    nodes = three_nodes(n1_pods=10)
    pods = [build_pod(f"p{i}", 400, 375, "n1", set_rs_owner) for i in range(1, 6)]
    pods += protected_pods(memory=375) + [build_pod("p9", 400, 3000, "n2", set_rs_owner)]
    five = {"cpu": 5, "pods": 5}
    plan = run(nodes + pods, lnu_args(five, five, useDeviationThresholds=True))
    # n2's memory is full and memory has no threshold (full capacity): nothing is available to move into
    assert evicted_names(plan) == []


def test_without_priorities_with_node_eviction_limit():
    pods = five_rs_pods() + protected_pods(critical=bare_critical) + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50, evictionLimits={"node": 2}))
    assert evicted_names(plan) == ["p1", "p2"]
    assert plan["spared"]["by_reason"]["plugin evictionLimits.node reached"]["examples"] == ["default/p3"]


def test_empty_metrics_utilization_errors_every_run():
    # upstream: a non-nil metricsUtilization without a source fails Balance with "metrics source is empty"
    pods = five_rs_pods() + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50, metricsUtilization={}))
    assert evicted_names(plan) == []
    assert "metrics source is empty" in plan["errors"][0]["message"]


def test_unknown_metrics_source_errors_every_run():
    # upstream validation lets any source through; Balance then fails with "unrecognized metrics source"
    pods = five_rs_pods() + [p9_on_n2()]
    plan = run(three_nodes() + pods, lnu_args(CPU_PODS_30, CPU_PODS_50, metricsUtilization={"source": "Foo"}))
    assert evicted_names(plan) == []
    assert "unrecognized metrics source" in plan["errors"][0]["message"]


# --- TestLowNodeUtilizationWithTaints ----------------------------------------------------------------------------
# Upstream's harness sets maxNoOfPodsToEvictPerNode to the expected count, and never uses the case's
# maxPodsToEvictPerNode/maxPodsToEvictTotal fields; we reproduce the harness, and add the total-limit reading.

N3_TAINTED = both(lambda n: add_taint(n, "key", "value", "NoSchedule"))


def _taint_nodes(tainted: bool) -> list[dict]:
    n1 = build_node("n1", 2000, 3000, 10)
    if not tainted:
        return [n1, build_node("n2", 1000, 3000, 10), build_node("n3", 1000, 3000, 10)]
    return [n1, build_node("n3", 1000, 3000, 10, N3_TAINTED)]


def _tolerating_pod() -> dict:
    def tolerate(pod: dict) -> None:
        set_rs_owner(pod)
        pod["spec"]["tolerations"] = [{"key": "key", "value": "value"}]
    return build_pod("tolerate_pod", 200, 0, "n1", tolerate)


def _n1_pods(count: int) -> list[dict]:
    return [build_pod(f"pod_{i}_n1", 200, 0, "n1", set_rs_owner) for i in range(1, count + 1)]


TAINT_ARGS = lnu_args({"pods": 20}, {"pods": 70})


def test_taints_no_taints():
    pods = _n1_pods(8) + [build_pod("pod_9_n2", 200, 0, "n2", set_rs_owner)]
    plan = run(_taint_nodes(False) + pods, TAINT_ARGS, maxNoOfPodsToEvictPerNode=1)
    assert len(plan["evictions"]) == 1


def test_taints_no_pod_tolerates_node_taint():
    pods = _n1_pods(8) + [build_pod("pod_9_n3", 200, 0, "n3", set_rs_owner)]
    plan = run(_taint_nodes(True) + pods, TAINT_ARGS, maxNoOfPodsToEvictPerNode=0)
    assert evicted_names(plan) == []
    # with no per-node limit, the taint gate alone keeps every pod
    plan = run(_taint_nodes(True) + pods, TAINT_ARGS)
    assert evicted_names(plan) == []
    assert plan["spared"]["by_reason"]["no destination node whose taints it tolerates"]["count"] == 8


def test_taints_pod_which_tolerates_node_taint():
    pods = _n1_pods(7) + [_tolerating_pod(), build_pod("pod_9_n3", 200, 0, "n3", set_rs_owner)]
    plan = run(_taint_nodes(True) + pods, TAINT_ARGS, maxNoOfPodsToEvictPerNode=1)
    assert evicted_names(plan) == ["tolerate_pod"]


@pytest.mark.parametrize("limits", [{"maxNoOfPodsToEvictPerNode": 0},
                                    {"maxNoOfPodsToEvictPerNode": 1, "maxNoOfPodsToEvictTotal": 0}])
def test_taints_pod_which_tolerates_node_taint_with_zero_limit(limits):
    pods = _n1_pods(7) + [_tolerating_pod(), build_pod("pod_9_n3", 200, 0, "n3", set_rs_owner)]
    plan = run(_taint_nodes(True) + pods, TAINT_ARGS, **limits)
    assert evicted_names(plan) == []


# --- nodeutilization_test.go -------------------------------------------------------------------------------------


def _info(name: str, usage: dict[str, int]) -> nu.NodeInfo:
    node = Node({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1930m", "pods": "29"}}})
    return nu.NodeInfo(node, usage, {}, {})


@pytest.mark.parametrize("usages", [
    {"node1": {"cpu": 1730, "memory": 3038982964, "pods": 25}, "node2": {"cpu": 1220, "memory": 3038982964, "pods": 11},
     "node3": {"cpu": 1530, "memory": 5038982964, "pods": 20}},
    {"node1": {"memory": 3038982964}, "node2": {"memory": 2038982964}, "node3": {"memory": 5038982964}},
], ids=["cpu memory pods", "memory"])
def test_sort_nodes_by_usage(usages):
    infos = [_info(name, usage) for name, usage in usages.items()]
    assert [i.node.name for i in nu.sort_by_usage(infos, ascending=False)] == ["node3", "node1", "node2"]
    assert [i.node.name for i in nu.sort_by_usage(infos, ascending=True)] == ["node2", "node1", "node3"]


@pytest.mark.parametrize(("usage", "capacity", "expected"), [
    ({"cpu": 100}, {"cpu": 1000}, {"cpu": 10}),
    ({"cpu": 100}, {"cpu": 0}, {"cpu": 0}),
    ({"does-not-exist": 100}, {"cpu": 100, "memory": 100}, {}),
    ({"does-not-exist": 100, "cpu": 200}, {"cpu": 1000, "memory": 1000}, {"cpu": 20}),
], ids=["10 percent", "zeroed out capacity", "non existing usage", "existing and non existing usage"])
def test_resource_usage_to_resource_threshold(usage, capacity, expected):
    # the nil-usage/nil-capacity cases have no Python counterpart (a missing key covers them)
    assert nu.percentages(usage, capacity) == expected


def test_classification_using_deviation_thresholds():
    # usages 10/48/52/50/90% around an average of 50%: ±5 makes node1 under and node5 over
    nodes = [build_node(f"node{i}", 1000, 1000, 100) for i in range(1, 6)]
    pods = [build_pod(f"p{i}", amount, amount, f"node{i}", set_rs_owner)
            for i, amount in enumerate((100, 480, 520, 500, 900), start=1)]
    five = {"cpu": 5, "memory": 5}
    plan = run(nodes + pods, lnu_args(five, five, useDeviationThresholds=True), evictor_args={})
    assert node_classes(plan, KEY) == {"node1": "underutilized", "node2": "appropriate", "node3": "appropriate",
                                       "node4": "appropriate", "node5": "overutilized"}


def test_normalize_and_classify_happy_path():
    # Upstream's generic classifier test uses an all-resources "over" rule, under which node4 (cpu 10%, memory
    # 90%) matches nothing; the plugin's over rule is any-resource (spec §6.1 step 5), so node4 is over here.
    nodes = [build_node(f"node{i}", 100000, 100, 100) for i in range(1, 5)]
    usages = {"node1": (10, 10), "node2": (90, 90), "node3": (50, 50), "node4": (10, 90)}
    pods = [build_pod(f"p-{name}", cpu * 1000, memory, name, set_rs_owner) for name, (cpu, memory) in usages.items()]
    plan = run(nodes + pods, lnu_args({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80}), evictor_args={})
    assert node_classes(plan, KEY) == {"node1": "underutilized", "node2": "overutilized", "node3": "appropriate",
                                       "node4": "overutilized"}


# --- validation_test.go / defaults_test.go -----------------------------------------------------------------------

EXT20 = {"cpu": 20, "memory": 20, EXTENDED: 20}
EXT80 = {"cpu": 80, "memory": 80, EXTENDED: 80}


@pytest.mark.parametrize(("args", "field"), [
    (lnu_args({"cpu": 20, "memory": 120}, {"cpu": 80, "memory": 80}), "thresholds.memory"),
    (lnu_args({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80, "pods": 80}), "targetThresholds"),
    (lnu_args({"cpu": 20, "memory": 20}, {"cpu": 80, "pods": 80}), "targetThresholds"),
    (lnu_args({"cpu": 90, "memory": 20}, {"cpu": 80, "memory": 80}), "thresholds.cpu"),
    (lnu_args(EXT20, {"cpu": 80, "memory": 80}), "targetThresholds"),
    (lnu_args({"cpu": 20, "memory": 20}, EXT80), "targetThresholds"),
    (lnu_args(EXT20, {"cpu": 80, "memory": 80, "example.com/bar": 80}), "targetThresholds"),
    (lnu_args({"cpu": 20, "memory": 20, EXTENDED: 90}, {"cpu": 80, "memory": 80, EXTENDED: 20}),
     f"thresholds.{EXTENDED}"),
    (lnu_args(EXT20, EXT80, metricsUtilization={"metricsServer": True, "source": "KubernetesMetrics"}),
     "metricsUtilization"),
    (lnu_args(EXT20, EXT80, metricsUtilization={"source": "Prometheus"}), "metricsUtilization.prometheus.query"),
    (lnu_args(EXT20, EXT80, metricsUtilization={"source": "KubernetesMetrics", "prometheus": {}}),
     "metricsUtilization.prometheus"),
    # beyond upstream's table: the other checks of ValidateLowNodeUtilizationArgs and strict decoding
    (lnu_args({}, {}), "thresholds"),
    (lnu_args({"cpu": -1}, {"cpu": 80}), "thresholds.cpu"),
    (lnu_args({"cpu": 20}, {"cpu": 101}), "targetThresholds.cpu"),
    (lnu_args({"cpu": 20}, {"cpu": 80}, evictableNamespaces={"include": ["a"]}), "evictableNamespaces.include"),
    (lnu_args({"cpu": 20}, {"cpu": 80}, evictionLimits={"node": -1}), "evictionLimits.node"),
    (lnu_args({"cpu": 20}, {"cpu": 80}, bogus=1), "bogus"),
], ids=[
    "passing invalid thresholds", "different num of resources", "different resources",
    "thresholds cpu greater than targetThresholds", "only thresholds configured extended resource",
    "only targetThresholds configured extended resource", "different extended resources",
    "extended resource threshold greater than target", "both kubernetes metrics source and metricsserver",
    "missing prometheus query", "prometheus set when source set to kubernetes metrics",
    "empty thresholds", "negative threshold", "target above 100", "include namespaces", "negative node limit",
    "unknown field",
])
def test_validation_errors(args, field):
    with pytest.raises(PolicyError) as error:
        run([], args)
    assert error.value.field.startswith("policy.profiles[0].pluginConfig[1].args.")
    assert error.value.field.endswith(field)


@pytest.mark.parametrize("args", [
    lnu_args({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80}),
    lnu_args(EXT20, EXT80),
    # deviation mode lifts the thresholds ≤ targetThresholds rule
    lnu_args({"cpu": 90}, {"cpu": 5}, useDeviationThresholds=True),
    # numberOfNodes is a plain int upstream: a negative value is accepted and acts like 0
    lnu_args({"cpu": 20}, {"cpu": 80}, numberOfNodes=-1),
], ids=["valid", "valid with extended resource", "deviation allows low > high", "negative numberOfNodes"])
def test_validation_accepts(args):
    plan = run([], args)
    assert plan["errors"] == []


def test_defaults_leave_args_unchanged():
    # upstream's case uses memory 120, which its defaults test never validates; a policy load would reject it
    args = lnu_args({"cpu": 20, "memory": 20}, {"cpu": 80, "memory": 80}, useDeviationThresholds=True,
                    numberOfNodes=10)
    plan = compute_plan([], policy((NAME, "balance", dict(args)), evictor_args={}), NOW)
    config = plan["policy"]["profiles"][0]["pluginConfig"]
    assert [c["args"] for c in config if c["name"] == NAME] == [args]


# --- spec §6.1 details beyond the upstream tests ---------------------------------------------------------------


def _two_nodes_one_over(n1_pods: int, cpu: int, n2_cpu: int = 0) -> list[dict]:
    nodes = [build_node("n1", 1000, 10**9, 100), build_node("n2", 1000, 10**9, 100)]
    pods = [build_pod(f"a{i}", cpu, 0, "n1", set_rs_owner) for i in range(n1_pods)]
    if n2_cpu:
        pods.append(build_pod("b", n2_cpu, 0, "n2", set_rs_owner))
    return nodes + pods


def test_equality_counts_as_under_but_not_as_over():
    # n2 at exactly 20% is under; n1 at exactly 50% is not over, so nothing moves
    plan = run(_two_nodes_one_over(5, 100, n2_cpu=200), lnu_args({"cpu": 20}, {"cpu": 50}))
    assert node_classes(plan, KEY) == {"n1": "appropriate", "n2": "underutilized"}
    # one milli-cpu more on n1 makes it over
    plan = run(_two_nodes_one_over(5, 100, n2_cpu=200) + [build_pod("x", 1, 0, "n1", set_rs_owner)],
               lnu_args({"cpu": 20}, {"cpu": 50}))
    assert node_classes(plan, KEY)["n1"] == "overutilized"


def test_absolute_cap_truncates_float_math():
    # int((29*0.01)*100) == 28: the target cap of n1 is 28 pods, so 31 pods shed 3
    nodes = [build_node("n1", 100000, 10**9, 100), build_node("n2", 100000, 10**9, 100)]
    pods = [build_pod(f"a{i:02d}", 0, 0, "n1", set_rs_owner) for i in range(31)]
    plan = run(nodes + pods, lnu_args({"pods": 10}, {"pods": 29}))
    assert len(plan["evictions"]) == 3
    assert nu.absolute_cap({"pods": 29.0}, {"pods": 100}, ["pods"]) == {"pods": 28}


def test_number_of_nodes_early_exit():
    objects = _two_nodes_one_over(8, 100)
    assert len(run(objects, lnu_args({"cpu": 20}, {"cpu": 50}))["evictions"]) == 3
    assert run(objects, lnu_args({"cpu": 20}, {"cpu": 50}, numberOfNodes=1))["evictions"] == []


def test_unschedulable_node_can_be_over_but_never_under():
    nodes = [build_node("n1", 1000, 10**9, 100, set_unschedulable), build_node("n2", 1000, 10**9, 100),
             build_node("n3", 1000, 10**9, 100, set_unschedulable)]
    pods = [build_pod(f"a{i}", 100, 0, "n1", set_rs_owner) for i in range(8)]
    plan = run(nodes + pods, lnu_args({"cpu": 20}, {"cpu": 50}))
    assert node_classes(plan, KEY) == {"n1": "overutilized", "n2": "underutilized", "n3": "appropriate"}
    assert len(plan["evictions"]) == 3


def test_high_nodes_sorted_by_raw_usage_sum_memory_dominates():
    # n1 has more cpu%, n3 more memory bytes: n3 is drained first and uses up n2's room
    nodes = [build_node("n1", 1000, 10**9, 100), build_node("n2", 1000, 10**9, 100),
             build_node("n3", 1000, 4 * 10**9, 100)]
    pods = [build_pod(f"a{i}", 150, 1, "n1", set_rs_owner) for i in range(6)]
    pods += [build_pod(f"c{i}", 100, 5 * 10**8, "n3", set_rs_owner) for i in range(6)]
    plan = run(nodes + pods, lnu_args({"cpu": 20}, {"cpu": 50}))
    assert [e["node"] for e in plan["evictions"]][0] == "n3"
    assert node_classes(plan, KEY) == {"n1": "overutilized", "n2": "underutilized", "n3": "overutilized"}


def test_taint_gate_counts_tolerations_against_taints():
    # one wildcard toleration can't pass a node with two taints: upstream skips nodes with more taints
    nodes = [build_node("n1", 1000, 10**9, 100),
             build_node("n2", 1000, 10**9, 100, both(lambda n: add_taint(n, "a"), lambda n: add_taint(n, "b")))]

    def wildcard(pod: dict) -> None:
        set_rs_owner(pod)
        pod["spec"]["tolerations"] = [{"operator": "Exists"}]

    def two(pod: dict) -> None:
        set_rs_owner(pod)
        pod["spec"]["tolerations"] = [{"operator": "Exists"}, {"key": "unrelated", "operator": "Exists"}]

    pods = [build_pod("a-wild", 400, 0, "n1", wildcard), build_pod("b-two", 400, 0, "n1", two)]
    plan = run(nodes + pods, lnu_args({"cpu": 20}, {"cpu": 50}), evictor_args={})
    assert evicted_names(plan) == ["b-two"]


def test_prefer_no_schedule_taints_count_in_the_gate():
    nodes = [build_node("n1", 1000, 10**9, 100),
             build_node("n2", 1000, 10**9, 100, lambda n: add_taint(n, "soft", "", "PreferNoSchedule"))]
    pods = [build_pod(f"a{i}", 200, 0, "n1", set_rs_owner) for i in range(4)]
    plan = run(nodes + pods, lnu_args({"cpu": 20}, {"cpu": 50}), evictor_args={})
    assert evicted_names(plan) == []


def _two_over_nodes() -> list[dict]:
    nodes = [build_node(name, 1000, 10**9, 100) for name in ("n1", "n2", "n3")]
    pods = [build_pod(f"a{i}", 100, 0, "n1", set_rs_owner) for i in range(8)]
    pods += [build_pod(f"b{i}", 100, 0, "n2", set_rs_owner) for i in range(7)]
    return nodes + pods


def test_policy_node_limit_moves_on_to_the_next_node_and_total_limit_ends_the_plugin():
    args = lnu_args({"cpu": 20}, {"cpu": 50})
    assert [e["node"] for e in run(_two_over_nodes(), args)["evictions"]] == ["n1"] * 3 + ["n2"] * 2
    assert evicted_names(run(_two_over_nodes(), args, maxNoOfPodsToEvictPerNode=1)) == ["a0", "b0"]
    assert evicted_names(run(_two_over_nodes(), args, maxNoOfPodsToEvictTotal=2)) == ["a0", "a1"]


def test_namespace_limit_skips_only_that_pod():
    nodes = [build_node("n1", 1000, 10**9, 100), build_node("n2", 1000, 10**9, 100)]
    pods = [build_pod(f"a{i}", 100, 0, "n1", set_rs_owner, namespace="a") for i in range(4)]
    pods += [build_pod(f"b{i}", 100, 0, "n1", set_rs_owner, namespace="b") for i in range(4)]
    plan = run(nodes + pods, lnu_args({"cpu": 20}, {"cpu": 50}), maxNoOfPodsToEvictPerNamespace=1)
    assert evicted_names(plan) == ["a0", "b0"]


def test_sees_the_evictions_of_earlier_plugins_in_the_cycle():
    # deschedule plugins run first; the pods they evict no longer count toward n1's usage
    def restarted(pod: dict) -> None:
        set_rs_owner(pod)
        pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": 500}]

    nodes = [build_node("n1", 1000, 10**9, 100), build_node("n2", 1000, 10**9, 100)]
    pods = [build_pod(f"a{i}", 100, 0, "n1", set_rs_owner) for i in range(6)]
    pods += [build_pod(f"r{i}", 100, 0, "n1", restarted) for i in range(2)]
    document = policy(("RemovePodsHavingTooManyRestarts", "deschedule", {"podRestartThreshold": 100}),
                      (NAME, "balance", lnu_args({"cpu": 20}, {"cpu": 50})), evictor_args={})
    plan = compute_plan(nodes + pods, document, NOW)
    # 800m before, 600m after the restarts plugin: LowNodeUtilization then moves one pod, not three
    assert evicted_names(plan) == ["r0", "r1", "a0"]
    assert plan["evictions"][2]["reason"] == "node n1 at cpu 60% > target 50%"
