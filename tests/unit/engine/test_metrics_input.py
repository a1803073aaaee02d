"""engine/metrics.py: recorded NodeMetrics/PodMetrics and Prometheus instant-query bodies → actual usage."""

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    ANY_QUERY,
    ActualUsage,
    MetricsError,
    UsageUnavailable,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time

NOW = parse_time("2026-11-22T12:00:00Z")
QUERY = "instance:node_cpu:rate:sum"


def node_metrics(name: str, cpu: str, memory: str, timestamp: str = "2026-11-22T11:59:30Z") -> dict:
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": name},
            "timestamp": timestamp, "window": "20s", "usage": {"cpu": cpu, "memory": memory}}


def pod_metrics(namespace: str, name: str, *containers: tuple) -> dict:
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": name, "namespace": namespace}, "timestamp": "2026-11-22T11:59:30Z",
            "containers": [{"name": c, "usage": usage} for c, usage in containers]}


def vector(*samples: tuple, at: float = NOW) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": node}, "value": [at, value]} for node, value in samples]}}


def test_node_usage_is_in_upstream_units():
    actual = ActualUsage.build([node_metrics("n1", "1500m", "2Gi"), node_metrics("n2", "123456789n", "1000Ki")])
    assert actual.kubernetes_metrics
    assert actual.node_usage("n1") == {"cpu": 1500, "memory": 2 * 1024**3}
    assert actual.node_usage("n2") == {"cpu": 124, "memory": 1024000}  # nano-cores round up to millis


def test_missing_node_metrics_gives_upstreams_message():
    actual = ActualUsage.build([node_metrics("n1", "1", "1Gi")])
    with pytest.raises(UsageUnavailable, match='unable to find node "n2" in the collected metrics'):
        actual.node_usage("n2")


def test_pod_usage_sums_containers_and_needs_every_resource():
    actual = ActualUsage.build([pod_metrics("ns", "p", ("a", {"cpu": "100m", "memory": "10Mi"}),
                                            ("b", {"cpu": "50m", "memory": "5Mi"})),
                                pod_metrics("ns", "q", ("a", {"cpu": "100m"}))])
    assert actual.pod_usage("ns", "p", ["cpu", "memory", "pods"]) == {"cpu": 150, "memory": 15 * 1024**2}
    with pytest.raises(UsageUnavailable, match='container "a" is missing "memory" resource'):
        actual.pod_usage("ns", "q", ["cpu", "memory"])
    with pytest.raises(UsageUnavailable, match='unable to get podmetrics for "ns"/"r"'):
        actual.pod_usage("ns", "r", ["cpu"])


def test_prometheus_usage_truncates_value_times_100():
    actual = ActualUsage.build(prometheus_results={QUERY: vector(("n1", "0.4299"), ("n2", "1"), ("n3", "0"))}, now=NOW)
    assert actual.prometheus_usage(QUERY, ["n1", "n2", "n3"]) == {"n1": 42, "n2": 100, "n3": 0}
    assert actual.warnings == []


def test_prometheus_node_missing_names_node_and_query():
    actual = ActualUsage.build(prometheus_results={ANY_QUERY: vector(("n1", "0.5"))})
    with pytest.raises(UsageUnavailable, match=f"unable to find metric entry for n2 \\(query '{QUERY}'"):
        actual.prometheus_usage(QUERY, ["n1", "n2"])


@pytest.mark.parametrize("value, message", [
    ("1.5", 'sample for "n1" has value 1.5 outside of <0; 1> interval'),
    ("-0.1", "outside of <0; 1> interval"),
    ("abc", "non-numeric value 'abc'"),
    ("NaN", "non-numeric value 'NaN'"),
])
def test_prometheus_bad_samples_fail_the_query(value, message):
    actual = ActualUsage.build(prometheus_results={QUERY: vector(("n1", value))})
    with pytest.raises(UsageUnavailable, match=message):
        actual.prometheus_usage(QUERY, ["n1"])


def test_prometheus_error_status_and_matrix_are_reported_as_upstream():
    error = {"status": "error", "errorType": "bad_data", "error": "parse error at char 4"}
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    actual = ActualUsage.build(prometheus_results={"q1": error, "q2": matrix})
    with pytest.raises(UsageUnavailable, match="unable to capture prometheus metrics: bad_data: parse error"):
        actual.prometheus_usage("q1", [])
    with pytest.raises(UsageUnavailable, match='expected query results to be of type "vector", got "matrix"'):
        actual.prometheus_usage("q2", [])


def test_no_answer_for_query_says_what_to_give():
    with pytest.raises(UsageUnavailable, match="give prometheus_result"):
        ActualUsage.build().prometheus_usage(QUERY, ["n1"])


def test_a_body_that_is_not_prometheus_is_refused_up_front():
    with pytest.raises(MetricsError, match="JSON body of a Prometheus /api/v1/query answer"):
        ActualUsage.build(prometheus_results={ANY_QUERY: [1, 2]})
    with pytest.raises(MetricsError, match=r"data.result\[0\]"):
        ActualUsage.build(prometheus_results={ANY_QUERY: {"status": "success",
                                                          "data": {"resultType": "vector", "result": [5]}}})


def test_stale_samples_are_warned_about():
    actual = ActualUsage.build([node_metrics("n1", "1", "1Gi", timestamp="2026-11-22T10:00:00Z")],
                               {QUERY: vector(("n1", "0.5"), at=NOW - 3600)}, now=NOW)
    assert any("NodeMetrics of 1 node(s) sampled more than 300s before now (oldest: n1, 7200s)" in w
               for w in actual.warnings)
    assert any(f"Prometheus answer for '{QUERY}' was evaluated 3600s before now" in w for w in actual.warnings)


# upstream usageclients_test.go TestPrometheusUsageClient: the same samples and the same errors
N1, N2, N3 = "ip-10-0-17-165.ec2.internal", "ip-10-0-51-101.ec2.internal", "ip-10-0-94-25.ec2.internal"


def test_prometheus_usage_client_valid_data():
    answer = vector((N2, "0.20381818181818104"), (N1, "0.4245454545454522"), (N3, "0.5695757575757561"))
    usage = ActualUsage.build(prometheus_results={QUERY: answer}).prometheus_usage(QUERY, [N1, N2, N3])
    assert usage == {N2: 20, N1: 42, N3: 56}


@pytest.mark.parametrize(("answer", "message"), [
    ({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": QUERY}, "value": [1728991761.711, "0.20381818181818104"]}]}},
     "the collected metrics sample is missing 'instance' key"),
    (vector((N2, "1.20381818181818104")),
     f'the collected metrics sample for "{N2}" has value 1.203818181818181 outside of <0; 1> interval'),
    ({"status": "success", "data": {"resultType": "scalar", "result": [1728991761.711, "0.20381818181818104"]}},
     'expected query results to be of type "vector", got "scalar" instead'),
], ids=["missing instance label", "value out of range", "not a vector"])
def test_prometheus_usage_client_errors(answer, message):
    with pytest.raises(UsageUnavailable) as error:
        ActualUsage.build(prometheus_results={QUERY: answer}).prometheus_usage(QUERY, [N1, N2, N3])
    assert str(error.value).startswith(message)


def test_several_node_samples_are_averaged_as_the_metrics_collector_does():
    # upstream TestActualUsageClient: n2 at 1400m, then 500m, then 900m → 1400, 1310, 1269
    samples = [node_metrics("n2", "1400m", "1714978816", "2026-11-22T11:59:40Z")]
    assert ActualUsage.build(samples).node_usage("n2")["cpu"] == 1400
    samples.append(node_metrics("n2", "500m", "1714978816", "2026-11-22T11:59:45Z"))
    assert ActualUsage.build(samples).node_usage("n2")["cpu"] == 1310
    samples.append(node_metrics("n2", "900m", "1714978816", "2026-11-22T11:59:50Z"))
    assert ActualUsage.build(list(reversed(samples))).node_usage("n2") == {"cpu": 1269, "memory": 1714978816}


def test_prometheus_answer_warnings_reach_the_plan():
    answer = {**vector(("n1", "0.5")), "warnings": ["PromQL info: metric might not be a counter"]}
    actual = ActualUsage.build(prometheus_results={QUERY: answer})
    assert actual.warnings == [f"Prometheus warning for '{QUERY}': PromQL info: metric might not be a counter"]
    assert actual.prometheus_usage(QUERY, ["n1"]) == {"n1": 50}
