"""Volcano's LoadAware reads a Prometheus answer as Volcano's PrometheusMetricsClient does
(volcano-sh/descheduler pkg/framework/plugins/loadaware/metrics/metrics_client_prometheus.go, NodeMetricsAvg and
PodsMetricsAvg): the first row of prometheus/common model.Vector.String(), split at "=>", its first field, so the
FIRST sample's value whatever its labels. The upstream descheduler's plugins keep their own rule (every sample
labelled ``instance``, engine/metrics.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import (
    ActualUsage,
    UsageUnavailable,
    attach,
    parse_prometheus_answer,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import loadaware
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware_metrics import (
    VolcanoPanic,
    first_row_value,
    go_format_float,
    go_metric_string,
    node_fraction,
    pod_quantity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from builders import build_node, build_pod, policy, set_creation, set_rs_owner

NOW = "2026-11-22T12:00:00Z"
NOW_TS = 1_795_348_800
GI = 2**30
ARGS = {"thresholds": {"cpu": 30, "memory": 30}, "targetThresholds": {"cpu": 80, "memory": 85},
        "evictableNamespaces": {"exclude": ["kube-system"]},
        "metrics": {"type": "prometheus", "address": "http://prometheus.monitoring:9090"}}
# n1 is hot on cpu (90% of 4 cores = 3.6 > target 3.2) with three pods, n2 idle, n3 in the middle
NODES = {"n1": (0.9, 0.5), "n2": (0.1, 0.2), "n3": (0.5, 0.5)}
PODS = {"big": ("n1", 1.2), "mid": ("n1", 0.8), "small": ("n1", 0.1), "other": ("n3", 0.5)}


def body(*samples: tuple[dict, Any]) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": labels, "value": [NOW_TS, value]} for labels, value in samples]}}


def samples_of(*samples: tuple[dict, Any]) -> list:
    return parse_prometheus_answer(body(*samples)).samples


def cluster() -> list[dict]:
    objects = [build_node(name, 4000, 8 * GI, 110) for name in NODES]
    for name, (node, _cores) in PODS.items():
        pod = build_pod(name, 100, 0, node, lambda p, name=name: set_rs_owner(p, f"rs-{name}", f"uid-rs-{name}"))
        set_creation(pod, "2026-11-22T11:00:00Z")
        objects.append(pod)
    return objects


def answers(pod_labels: Any, pod_samples: Optional[dict[str, list[float]]] = None) -> dict:
    """Every query of the cycle answered; pod answers carry pod_labels(name) (node answers their instance)."""
    results: dict[str, Any] = {}
    for name, (cpu, memory) in NODES.items():
        cpu_query, memory_query = loadaware.node_queries(name)
        results[cpu_query] = body(({"instance": name}, str(cpu)))
        results[memory_query] = body(({"instance": name}, str(memory)))
    for name, (_node, cores) in PODS.items():
        cpu_query, memory_query = loadaware.pod_queries(name)
        values = (pod_samples or {}).get(name, [cores])
        results[cpu_query] = body(*[(pod_labels(name), repr(v)) for v in values])
        results[memory_query] = body((pod_labels(name), str(GI)))
    return results


def plan_with(results: dict, args: Optional[dict] = None) -> dict:
    snapshot = Snapshot(cluster())
    attach(snapshot, results, NOW_TS)
    return compute_plan(snapshot, policy(("LoadAware", "balance", args or ARGS)), NOW)


def evicted(plan: dict) -> list[str]:
    return [e["name"] for e in plan["evictions"]]


# --- the reading itself ---

def test_the_first_sample_is_read_whatever_its_labels():
    assert first_row_value(samples_of(({}, "0.25"))) == "0.25"
    assert first_row_value(samples_of(({"pod": "big", "namespace": "a"}, "0.25"), ({"instance": "n1"}, "7"))) == "0.25"
    assert first_row_value(samples_of()) is None  # res.String() == "": "no data found"


def test_a_label_holding_the_arrow_moves_volcanos_split_into_the_labels():
    """strings.Split(row, "=>")[1] is the text after the FIRST "=>", which here is inside a label value."""
    text = first_row_value(samples_of(({"note": "a=>b c"}, "0.25")))
    assert text == 'b'
    assert node_fraction(text) == (0.0, "Volcano cannot convert 'b' to a float and reads 0")
    with pytest.raises(VolcanoPanic, match="resource.MustParse"):
        pod_quantity(text, "pod default/big cpu")


@pytest.mark.parametrize("labels, expected", [
    ({}, "{}"),
    ({"__name__": "up"}, "up"),
    ({"instance": "n1", "__name__": "up", "job": "node"}, 'up{instance="n1", job="node"}'),
    ({"pod": 'say "hi"'}, '{pod="say \\"hi\\""}'),
])
def test_metric_strings_are_prometheus_commons(labels: dict, expected: str):
    assert go_metric_string(labels) == expected


@pytest.mark.parametrize("number, text", [
    (2.0, "2"), (0.1, "0.1"), (1e20, "100000000000000000000"), (1e-7, "0.0000001"), (-0.0, "-0"),
    (0.30000000000000004, "0.30000000000000004"), (float("nan"), "NaN"), (float("inf"), "+Inf"),
    (float("-inf"), "-Inf"),
])
def test_values_are_formatted_as_strconv_formatfloat_f_minus_one(number: float, text: str):
    assert go_format_float(number) == text


def test_pod_values_are_quantities_rounded_up_to_nano_units():
    """resource.MustParse keeps nano precision, rounding a finer value up: two pods differing beyond it tie."""
    assert pod_quantity("0.1234567891", "x") == Decimal("0.123456790")
    assert pod_quantity("0.1234567899", "x") == pod_quantity("0.12345679", "x")
    assert pod_quantity("1073741824", "x") == Decimal(GI)


@pytest.mark.parametrize("text", ["NaN", "+Inf", "-Inf"])
def test_a_pod_value_mustparse_refuses_is_a_panic(text: str):
    with pytest.raises(VolcanoPanic, match="panics"):
        pod_quantity(text, "pod default/big cpu")


def test_the_upstream_descheduler_keeps_its_instance_rule_on_the_same_answer():
    query = "some_query"
    actual = ActualUsage.build((), {query: body(({"pod": "big"}, "0.5"))}, NOW_TS)
    with pytest.raises(UsageUnavailable, match="missing 'instance' key"):
        actual.prometheus_values(query)
    assert [s.value for s in actual.prometheus_samples(query)] == [0.5]


def test_an_answer_that_failed_gives_no_samples_and_says_why():
    query = "q"
    failed = {"status": "error", "errorType": "bad_data", "error": "parse error"}
    actual = ActualUsage.build((), {query: failed, "m": {"status": "success", "data": {"resultType": "matrix",
                                                                                       "result": []}}}, NOW_TS)
    with pytest.raises(UsageUnavailable, match="bad_data: parse error"):
        actual.prometheus_samples(query)
    with pytest.raises(UsageUnavailable, match='type "vector"'):
        actual.prometheus_samples("m")


# --- through the plan ---

def test_pod_answers_without_an_instance_label_are_read_like_labelled_ones():
    """The issue's case: without the fix, every pod of the hot node read as using nothing and all three went."""
    labelled = plan_with(answers(lambda name: {"instance": "kubelet-n1", "pod": name}))
    bare = plan_with(answers(lambda name: {"pod": name, "namespace": "default"}))
    empty = plan_with(answers(lambda name: {}))
    assert evicted(labelled) == evicted(bare) == evicted(empty) == ["big"]  # 3.6 - 1.2 = 2.4 ≤ 3.2 cores
    assert bare["errors"] == [] and not [w for w in bare["warnings"] if "no usage data" in w]


def test_of_several_samples_the_first_is_read_not_the_last_of_an_instance():
    """big's answer has two series with the same labels: Volcano reads 0.1 (the first), so mid (0.8) is the
    biggest user and one eviction brings n1 to 2.8 cores ≤ 3.2."""
    plan = plan_with(answers(lambda name: {"instance": "kubelet-n1", "pod": name}, {"big": [0.1, 1.2]}))
    assert evicted(plan) == ["mid"]


def test_node_answers_without_an_instance_label_are_read():
    results = answers(lambda name: {"pod": name})
    for name, (cpu, memory) in NODES.items():
        cpu_query, memory_query = loadaware.node_queries(name)
        results[cpu_query], results[memory_query] = body(({}, str(cpu))), body(({"job": "node"}, str(memory)))
    plan = plan_with(results)
    assert evicted(plan) == ["big"]
    assert plan["actual_utilization"]["plugins"]["test/LoadAware"]["nodes"]["n1"]["cpu"] == 90.0


def test_a_nan_pod_value_stops_the_cycle_as_volcanos_panic_would():
    plan = plan_with(answers(lambda name: {"pod": name}, {"small": [float("nan")]}))
    assert plan["evictions"] == []
    assert [e["plugin"] for e in plan["errors"]] == ["LoadAware"]
    assert "panics on the value 'NaN'" in plan["errors"][0]["message"]
    assert "small" in plan["errors"][0]["message"]


def test_an_empty_or_failed_pod_answer_leaves_that_resource_unmeasured():
    """PodsMetricsAvg: "no data found" → continue; the pod keeps an entry without cpu, sorts after measured pods
    and frees no cpu."""
    results = answers(lambda name: {"pod": name})
    results[loadaware.pod_queries("big")[0]] = body()
    results[loadaware.pod_queries("mid")[0]] = {"status": "error", "errorType": "timeout", "error": "too slow"}
    plan = plan_with(results)
    # the only pod with cpu measured goes first (3.6 - 0.1 > 3.2); the unmeasured ones free nothing and follow
    assert evicted(plan)[0] == "small" and sorted(evicted(plan)) == ["big", "mid", "small"]
