"""LowNodeUtilization from actual utilization, ported from upstream lownodeutilization_test.go (HEAD 7d2b28bf):
every TestLowNodeUtilization case's "... with metrics enabled" variant (NodeMetrics/PodMetrics through the metrics
collector) and TestLowNodeUtilizationWithPrometheusMetrics, plus the failure modes of usageclients.go.

The objects are the same as in test_lownodeutilization.py; the metrics are upstream's BuildNodeMetrics/BuildPodMetrics.
"""

from typing import Any, Optional

import pytest
import test_lownodeutilization as lnu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import attach
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from builders import build_node, build_pod, evicted_names, node_classes, policy, set_ds_owner, set_rs_owner

NAME = "LowNodeUtilization"
KEY = f"test/{NAME}"
QUERY = "instance:node_cpu:rate:sum"
KUBERNETES_METRICS = {"source": "KubernetesMetrics"}
PROMETHEUS = {"source": "Prometheus", "prometheus": {"query": QUERY}}
METRICS_PROVIDER = [{"source": "KubernetesMetrics"}]
PROMETHEUS_PROVIDER = [{"source": "Prometheus", "prometheus": {"url": "https://prometheus.example:9091"}}]


def node_metrics(name: str, millicpu: int, memory: int) -> dict:
    """upstream test.BuildNodeMetrics"""
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": name},
            "window": "20.01s", "usage": {"cpu": f"{millicpu}m", "memory": str(memory)}}


def pod_metrics(name: str, millicpu: int, memory: int) -> dict:
    """upstream test.BuildPodMetrics"""
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": name, "namespace": "default"}, "window": "20.01s",
            "containers": [{"name": "container-1", "usage": {"cpu": f"{millicpu}m", "memory": str(memory)}}]}


def usual_metrics(n1: int = 3201, n2: int = 401, n3: Optional[int] = 11, pods: int = 5, pod_cpu: int = 401) -> list:
    found = [node_metrics("n1", n1, 0), node_metrics("n2", n2, 0)]
    if n3 is not None:
        found.append(node_metrics("n3", n3, 0))
    return found + [pod_metrics(f"p{i}", pod_cpu, 0) for i in range(1, pods + 1)]


def run(objects: list[dict], args: dict, prometheus: Optional[dict] = None, **top_level: Any) -> dict:
    snapshot = Snapshot(objects)
    if prometheus is not None:
        attach(snapshot, {QUERY: prometheus})
    document = policy((NAME, "balance", args), evictor_args={"nodeFit": True}, **top_level)
    return compute_plan(snapshot, document, lnu.NOW)


def run_metrics(objects: list[dict], args: dict, metrics: Optional[dict] = None) -> dict:
    metrics = KUBERNETES_METRICS if metrics is None else metrics
    return run(objects, {**args, "metricsUtilization": metrics}, metricsProviders=METRICS_PROVIDER)


CPU_PODS = lnu.lnu_args(lnu.CPU_PODS_30, lnu.CPU_PODS_50)
FIVE = {"cpu": 5, "pods": 5}


# --- TestLowNodeUtilization "... with metrics enabled" -----------------------------------------------------------

def test_no_evictable_pods_with_metrics():
    pods = [build_pod(f"p{i}", 400, 0, "n1", set_ds_owner) for i in range(1, 5)] + [
        build_pod("p5", 400, 0, "n1", lnu.with_local_storage), build_pod("p6", 400, 0, "n1", lnu.bare_critical),
        lnu.p9_on_n2()]
    metrics = [node_metrics("n1", 2401, 1714978816), node_metrics("n2", 401, 1714978816),
               node_metrics("n3", 10, 1714978816)] + [pod_metrics(f"p{i}", 401, 0) for i in range(1, 6)]
    plan = run_metrics(lnu.three_nodes() + pods + metrics, CPU_PODS)
    assert evicted_names(plan) == []
    assert plan["errors"] == []


def test_without_priorities_with_metrics():
    pods = lnu.five_rs_pods() + lnu.protected_pods(critical=lnu.bare_critical) + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods + usual_metrics(), CPU_PODS)
    assert evicted_names(plan) == ["p1", "p2", "p3", "p4"]
    # classification reads the metrics: n1 at 3201m of 4000m is 80%, n2 at 401m is 10%
    assert plan["actual_utilization"]["plugins"][KEY]["nodes"]["n1"] == {"cpu": 80.03, "pods": 88.89}
    assert plan["actual_utilization"]["plugins"][KEY]["mode"] == "KubernetesMetrics"
    assert node_classes(plan, KEY) == {"n1": "overutilized", "n2": "underutilized", "n3": "appropriate"}


def test_excluding_namespaces_with_metrics():
    pods = [build_pod(f"p{i}", 400, 0, "n1", both_rs_in("namespace1" if i <= 2 else "namespace2"))
            for i in range(1, 6)] + lnu.protected_pods() + [lnu.p9_on_n2()]
    metrics = usual_metrics(pods=0) + [{**pod_metrics(f"p{i}", 401, 0), "metadata": {
        "name": f"p{i}", "namespace": "namespace1" if i <= 2 else "namespace2"}} for i in range(1, 6)]
    args = lnu.lnu_args(lnu.CPU_PODS_30, lnu.CPU_PODS_50,
                        evictableNamespaces={"exclude": ["namespace1", "namespace2"]})
    plan = run_metrics(lnu.three_nodes() + pods + metrics, args)
    assert evicted_names(plan) == []


def both_rs_in(namespace: str):
    return lnu.both(set_rs_owner, lnu.in_namespace(namespace))


def test_stop_when_cpu_capacity_is_depleted_with_metrics():
    pods = lnu.five_rs_pods() + lnu.protected_pods() + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods + usual_metrics(n3=0), CPU_PODS)
    assert len(plan["evictions"]) == 4


def test_with_extended_resource_with_metrics_fails_the_plugin():
    # the metrics API has no example.com/foo: upstream's sync fails, nothing is evicted
    nodes = [build_node(n, 4000, 3000, 9 if n == "n1" else 10, lnu.with_extended(8)) for n in ("n1", "n2", "n3")]
    pods = [build_pod(f"p{i}", 0, 0, "n1", lnu.both(set_rs_owner, lnu.with_extended(1))) for i in range(1, 6)]
    args = lnu.lnu_args({"pods": 30, lnu.EXTENDED: 30}, {"pods": 50, lnu.EXTENDED: 50})
    plan = run_metrics(nodes + pods + usual_metrics(), args)
    assert evicted_names(plan) == []
    assert [e["plugin"] for e in plan["errors"]] == [NAME]
    assert f'unable to find "{lnu.EXTENDED}" resource for collected "n1" node metric' in plan["errors"][0]["message"]


def test_different_evictions_for_requested_and_actual_resources():
    objects = lnu._west_east_nodes() + lnu._affinity_pods()
    metrics = usual_metrics(n3=None, pods=3, pod_cpu=801)
    assert len(lnu.run(objects, CPU_PODS)["evictions"]) == 3  # by requests: p9 requests nothing on n2
    # by metrics n2 already uses 401m: 2000m - 401m leaves room for two pods of 801m
    assert evicted_names(run_metrics(objects + metrics, CPU_PODS)) == ["p1", "p2"]


def test_deviation_thresholds_with_metrics():
    pods = lnu.five_rs_pods() + lnu.protected_pods() + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods + usual_metrics(),
                       lnu.lnu_args(FIVE, FIVE, useDeviationThresholds=True))
    assert len(plan["evictions"]) == 2
    thresholds = plan["actual_utilization"]["plugins"][KEY]["thresholds"]
    assert thresholds["average"]["cpu"] == pytest.approx((3201 + 401 + 11) / 120, abs=0.01)


def test_deviation_thresholds_and_overevicting_memory_with_metrics():
    nodes = lnu.three_nodes(n1_pods=10)
    pods = [build_pod(f"p{i}", 400, 375, "n1", set_rs_owner) for i in range(1, 6)]
    pods += lnu.protected_pods(memory=375) + [build_pod("p9", 400, 3000, "n2", set_rs_owner)]
    metrics = [node_metrics(n, 4000, 3000) for n in ("n1", "n2", "n3")]
    metrics += [pod_metrics(f"p{i}", 400, 375) for i in range(1, 9)] + [pod_metrics("p9", 400, 3000)]
    plan = run_metrics(nodes + pods + metrics, lnu.lnu_args(FIVE, FIVE, useDeviationThresholds=True))
    assert evicted_names(plan) == []


def test_node_eviction_limit_with_metrics():
    pods = lnu.five_rs_pods() + lnu.protected_pods(critical=lnu.bare_critical) + [lnu.p9_on_n2()]
    args = lnu.lnu_args(lnu.CPU_PODS_30, lnu.CPU_PODS_50, evictionLimits={"node": 2})
    assert evicted_names(run_metrics(lnu.three_nodes() + pods + usual_metrics(), args)) == ["p1", "p2"]


def test_deprecated_metrics_server_flag_reads_the_metrics_collector():
    pods = lnu.five_rs_pods() + lnu.protected_pods(critical=lnu.bare_critical) + [lnu.p9_on_n2()]
    objects = lnu.three_nodes() + pods + usual_metrics()
    plan = run(objects, {**CPU_PODS, "metricsUtilization": {"metricsServer": True}}, metricsCollector={"enabled": True})
    assert evicted_names(plan) == ["p1", "p2", "p3", "p4"]


# --- usageclients.go failure modes -------------------------------------------------------------------------------

def test_pod_without_pod_metrics_is_skipped():
    pods = lnu.five_rs_pods() + lnu.protected_pods(critical=lnu.bare_critical) + [lnu.p9_on_n2()]
    metrics = [m for m in usual_metrics() if m["metadata"]["name"] != "p1"]
    plan = run_metrics(lnu.three_nodes() + pods + metrics, CPU_PODS)
    assert evicted_names(plan) == ["p2", "p3", "p4", "p5"]
    reasons = [r for r in plan["spared"]["by_reason"] if "podmetrics" in r]
    assert reasons and 'unable to get podmetrics for "default"/"p1"' in reasons[0]


def test_node_without_node_metrics_fails_the_plugin():
    pods = lnu.five_rs_pods() + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods + usual_metrics(n3=None), CPU_PODS)
    assert evicted_names(plan) == []
    assert 'unable to find node "n3" in the collected metrics' in plan["errors"][0]["message"]


def test_kubernetes_metrics_without_provider_fails_as_upstream():
    pods = lnu.five_rs_pods() + [lnu.p9_on_n2()]
    plan = run(lnu.three_nodes() + pods + usual_metrics(), {**CPU_PODS, "metricsUtilization": KUBERNETES_METRICS})
    assert evicted_names(plan) == []
    assert "metrics client not initialized" in plan["errors"][0]["message"]
    assert "metricsProviders" in plan["errors"][0]["message"]


def test_kubernetes_metrics_not_recorded_says_how_to_record():
    pods = lnu.five_rs_pods() + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods, CPU_PODS)
    assert evicted_names(plan) == []
    assert "no NodeMetrics" in plan["errors"][0]["message"]


# --- TestLowNodeUtilizationWithPrometheusMetrics -----------------------------------------------------------------

def vector(n1: float, n2: float, n3: float) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": QUERY, "instance": node}, "value": [1732276800, str(value)]}
        for node, value in (("n1", n1), ("n2", n2), ("n3", n3))]}}


def prometheus_objects() -> list[dict]:
    nodes = [build_node("n1", 4000, 3000, 9), build_node("n2", 4000, 3000, 10), build_node("n3", 4000, 3000, 10)]
    pods = lnu.five_rs_pods() + lnu.protected_pods() + [lnu.p9_on_n2()]
    return nodes + pods


USUAL = (0.5695757575757561, 0.4245454545454522, 0.20381818181818104)
METRIC = "MetricResource"


def prom_args(low: int, high: int, **extra: Any) -> dict:
    return {"thresholds": {METRIC: low}, "targetThresholds": {METRIC: high}, "metricsUtilization": PROMETHEUS,
            **extra}


@pytest.mark.parametrize(("args", "samples", "expected"), [
    (prom_args(30, 50), USUAL, 1),
    (prom_args(30, 50, evictionLimits={"node": 3}), USUAL, 3),
    (prom_args(5, 5, evictionLimits={"node": 2}, useDeviationThresholds=True), USUAL, 2),
    (prom_args(10, 10, useDeviationThresholds=True), (1, 0.5, 0), 1),
], ids=["with query", "with more evictions", "with deviation", "with deviation thresholds"])
def test_prometheus_cases(args, samples, expected):
    plan = run(prometheus_objects(), args, prometheus=vector(*samples), metricsProviders=PROMETHEUS_PROVIDER)
    assert plan["errors"] == []
    assert len(plan["evictions"]) == expected
    assert {e["node"] for e in plan["evictions"]} == {"n1"}


def test_prometheus_percentages_are_truncated_value_times_100():
    plan = run(prometheus_objects(), prom_args(30, 50), prometheus=vector(*USUAL),
               metricsProviders=PROMETHEUS_PROVIDER)
    reading = plan["actual_utilization"]["plugins"][KEY]
    assert reading["query"] == QUERY
    assert reading["nodes"] == {"n1": {METRIC: 56.0}, "n2": {METRIC: 42.0}, "n3": {METRIC: 20.0}}
    assert plan["evictions"][0]["reason"] == "node n1 at MetricResource 56% > target 50%"


def test_prometheus_node_missing_from_answer_fails_the_plugin():
    answer = vector(*USUAL)
    answer["data"]["result"] = answer["data"]["result"][:2]
    plan = run(prometheus_objects(), prom_args(30, 50), prometheus=answer, metricsProviders=PROMETHEUS_PROVIDER)
    assert evicted_names(plan) == []
    assert "unable to find metric entry for n3" in plan["errors"][0]["message"]


def test_prometheus_sample_out_of_range_fails_the_plugin():
    plan = run(prometheus_objects(), prom_args(30, 50), prometheus=vector(1.7, 0.2, 0.1),
               metricsProviders=PROMETHEUS_PROVIDER)
    assert evicted_names(plan) == []
    assert 'sample for "n1" has value 1.7 outside of <0; 1> interval' in plan["errors"][0]["message"]


def test_prometheus_without_provider_fails_as_upstream():
    plan = run(prometheus_objects(), prom_args(30, 50), prometheus=vector(*USUAL))
    assert evicted_names(plan) == []
    assert "prometheus client not initialized" in plan["errors"][0]["message"]


def test_prometheus_thresholds_must_be_metric_resource_only():
    with pytest.raises(PolicyError) as error:
        run(prometheus_objects(), {**CPU_PODS, "metricsUtilization": PROMETHEUS},
            metricsProviders=PROMETHEUS_PROVIDER)
    assert error.value.field.endswith(".thresholds")
    assert "MetricResource" in str(error.value)


def test_high_node_utilization_has_no_metrics_upstream():
    args = {"thresholds": {"cpu": 20}, "metricsUtilization": KUBERNETES_METRICS}
    document = policy(("HighNodeUtilization", "balance", args))
    with pytest.raises(PolicyError) as error:
        compute_plan([], document, lnu.NOW)
    assert error.value.field.endswith("args.metricsUtilization")
    assert "reads requests only" in str(error.value)


@pytest.mark.parametrize(("args", "field", "message"), [
    ({**CPU_PODS, "metricsUtilization": {"source": "KubernetesMetrics", "metricsServer": True}},
     "metricsUtilization", 'not allowed to set both "KubernetesMetrics" source and metricsServer'),
    ({**CPU_PODS, "metricsUtilization": {"source": "KubernetesMetrics", "prometheus": {"query": QUERY}}},
     "metricsUtilization.prometheus", 'prometheus configuration is not allowed to set when source is set to'),
    (prom_args(30, 50, metricsUtilization={"source": "Prometheus", "prometheus": {}}),
     "metricsUtilization.prometheus.query", 'prometheus query is required when metrics source is set to "Prometheus"'),
    (lnu.lnu_args({"cpu": 60}, {"cpu": 50}), "thresholds.cpu",
     "thresholds' cpu percentage is greater than targetThresholds'"),
], ids=["both sources", "prometheus with KubernetesMetrics", "missing query", "low above high"])
def test_validation_messages_are_upstreams(args, field, message):
    with pytest.raises(PolicyError) as error:
        run([], args)
    assert error.value.field.endswith(f"args.{field}")
    assert message in str(error.value)


def test_actual_usage_after_the_evictions_is_reported():
    pods = lnu.five_rs_pods() + lnu.protected_pods(critical=lnu.bare_critical) + [lnu.p9_on_n2()]
    plan = run_metrics(lnu.three_nodes() + pods + usual_metrics(), CPU_PODS)
    after = plan["actual_utilization"]["plugins"][KEY]["after"]
    # n1: 3201m - 4 x 401m (their PodMetrics) = 1597m of 4000m; 8 pods - 4 = 4 of 9
    assert after["n1"] == {"cpu": 39.92, "pods": 44.44}
    assert after["n2"] == {"cpu": 10.03, "pods": 10.0}  # nothing leaves n2 (evicted pods are not placed)
    from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import render_markdown

    assert "| n1 | 80.0% → 39.9% | 88.9% → 44.4% |" in render_markdown(plan)
