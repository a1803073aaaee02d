"""Volcano's LoadAware with queries sent live (ActualUsage.live_query, set by the plan module): the exact queries
Volcano's descheduler sends (volcano-sh/descheduler pkg/framework/plugins/loadaware/metrics/
metrics_client_prometheus.go), to its metrics.address, and the same plan as with the answers recorded.

``live_query`` here answers from a table of Prometheus bodies, as a Prometheus holding those samples would; the HTTP
side (POST, GET fallback, errors) is tested in tests/unit/cluster/test_prometheus_client.py and
tests/integration/test_plan_loadaware_live.py.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import UsageUnavailable, attach
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import loadaware
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from test_loadaware import (
    CCE_ARGS,
    HOT_NODES,
    HOT_PODS,
    NOW,
    NOW_TS,
    PROMETHEUS,
    hot_cluster,
    la_args,
    la_policy,
    plan_with,
    prometheus_answers,
)

# Volcano's format strings filled in for node n1 and pod big with the default duration (2m), written out so a
# change to node_queries/pod_queries cannot pass unnoticed
N1_CPU = ('avg_over_time((1 - (avg by (instance) (irate(node_cpu_seconds_total{mode="idle",instance="n1"}[30s])) '
          '* 1))[2m:30s])')
N1_MEMORY = ('avg_over_time(((1-node_memory_MemAvailable_bytes{instance="n1"}/node_memory_MemTotal_bytes'
             '{instance="n1"}))[2m:30s])')
BIG_CPU = ('avg_over_time((( (irate(container_cpu_usage_seconds_total{pod="big",container="",name="" }[30s])) '
           '* 1))[2m:30s])')
BIG_MEMORY = 'container_memory_usage_bytes{pod="big",container="",name=""}'


class TablePrometheus:
    """What a Prometheus holding these answers returns; an unknown query gets an empty vector, as Prometheus."""

    def __init__(self, answers: dict[str, Any], failure: Optional[str] = None) -> None:
        self.answers = answers
        self.failure = failure
        self.sent: list[tuple[str, str]] = []

    def __call__(self, query: str, address: str) -> Any:
        self.sent.append((query, address))
        if self.failure:
            raise UsageUnavailable(self.failure)
        return self.answers.get(query, {"status": "success", "data": {"resultType": "vector", "result": []}})


def live_plan(objects: list[dict], document: dict, prometheus: TablePrometheus,
              recorded: Optional[dict] = None) -> dict:
    snapshot = Snapshot(objects)
    attach(snapshot, recorded, NOW_TS).live_query = prometheus
    return compute_plan(snapshot, document, NOW)


def comparable(plan: dict) -> dict:
    """The plan without pod uids (the builders number every pod they make, so two built clusters differ there)."""
    kept = {key: plan[key] for key in ("utilization", "actual_utilization", "errors", "warnings")}
    kept["evictions"] = [{k: v for k, v in entry.items() if k != "uid"} for entry in plan["evictions"]]
    return kept


def test_live_plan_sends_volcanos_queries_to_metrics_address_and_equals_the_recorded_plan():
    answers = prometheus_answers(HOT_NODES, HOT_PODS)
    prometheus = TablePrometheus(answers)
    live = live_plan(hot_cluster(), la_policy(CCE_ARGS), prometheus)
    recorded = plan_with(hot_cluster(), la_policy(CCE_ARGS), answers)
    assert [e["name"] for e in live["evictions"]] == ["big"]
    assert comparable(live) == comparable(recorded)
    queries = [query for query, _address in prometheus.sent]
    assert {address for _query, address in prometheus.sent} == {PROMETHEUS["address"]}
    assert {N1_CPU, N1_MEMORY, BIG_CPU, BIG_MEMORY} <= set(queries)
    expected = {q for name in ("n1", "n2", "n3") for q in loadaware.node_queries(name)}
    expected |= {q for name in ("big", "mid", "small", "other") for q in loadaware.pod_queries(name)}
    assert set(queries) == expected  # every node and every pod on them, nothing else
    assert len(queries) == len(expected)  # each query once, even though samples re-read them


def test_the_duration_arg_is_the_subquery_window_of_every_query():
    prometheus = TablePrometheus({})
    live_plan(hot_cluster(), la_policy({**CCE_ARGS, "duration": "5m"}), prometheus)
    queries = [query for query, _address in prometheus.sent]
    assert N1_CPU.replace("[2m:30s]", "[5m:30s]") in queries
    assert all("[5m:30s]" in q for q in queries if "container_memory_usage_bytes" not in q)


def test_recorded_answers_are_not_sent_again():
    answers = prometheus_answers(HOT_NODES, HOT_PODS)
    nodes_only = {q: body for q, body in answers.items() if "node_" in q}
    prometheus = TablePrometheus(answers)
    live = live_plan(hot_cluster(), la_policy(CCE_ARGS), prometheus, recorded=nodes_only)
    assert {q for q, _a in prometheus.sent} == set(answers) - set(nodes_only)  # the pod queries only
    assert [e["name"] for e in live["evictions"]] == ["big"]


def test_a_node_missing_from_the_live_answers_counts_as_idle_and_is_named():
    answers = prometheus_answers({k: v for k, v in HOT_NODES.items() if k != "n2"}, HOT_PODS)
    plan = live_plan(hot_cluster(), la_policy(CCE_ARGS), TablePrometheus(answers))
    assert [e["name"] for e in plan["evictions"]] == ["big"]  # n2 at 0% is still a destination, as in Volcano
    warning = next(w for w in plan["warnings"] if "LoadAware: no usage data" in w)
    cpu_query, _memory_query = loadaware.node_queries("n2")
    assert "n2 cpu" in warning and "n2 memory" in warning and f"empty answer to {cpu_query}" in warning
    assert plan["actual_utilization"]["plugins"]["test/LoadAware"]["nodes"]["n2"]["cpu"] == 0.0


def test_an_unreachable_prometheus_is_one_warning_naming_it_and_every_node_reads_zero():
    failure = ("cannot reach Prometheus at http://prometheus.monitoring:9090 for query 'q': connection refused "
               "(check prometheus_url and that it is reachable from here)")
    plan = live_plan(hot_cluster(), la_policy(CCE_ARGS), TablePrometheus({}, failure))
    assert plan["evictions"] == [] and plan["errors"] == []  # all nodes at 0%: all underutilized, nothing to do
    warnings = [w for w in plan["warnings"] if "LoadAware: no usage data" in w]
    assert len(warnings) == 1 and warnings[0].count(failure) == 1
    assert "n1 cpu, n1 memory, n2 cpu, n2 memory, n3 cpu and 1 more" in warnings[0]
    n1 = plan["actual_utilization"]["plugins"]["test/LoadAware"]["nodes"]["n1"]
    assert (n1["cpu"], n1["memory"]) == (0.0, 0.0)  # Volcano's zero, not the 90% the samples would say


def test_no_query_is_sent_without_an_address_as_volcano_builds_no_client():
    prometheus = TablePrometheus({})
    args = la_args({"cpu": 30, "memory": 30}, {"cpu": 80, "memory": 85}, metrics={"type": "prometheus"})
    plan = live_plan(hot_cluster(), la_policy(args), prometheus)
    assert prometheus.sent == []
    assert any("Metrics address is empty" in w for w in plan["warnings"])


def test_prometheus_addresses_lists_loadaware_prometheus_addresses_once():
    other = {"type": "prometheus", "address": "http://other:9090"}
    document = la_policy(CCE_ARGS)
    document["profiles"].append({**la_policy(la_args({"cpu": 1}, {"cpu": 2}, metrics=other))["profiles"][0],
                                 "name": "second"})
    document["profiles"].append({**la_policy(CCE_ARGS)["profiles"][0], "name": "third"})
    adaptor = la_policy(la_args({"cpu": 1}, {"cpu": 2}, metrics={"type": "prometheus_adaptor"}))
    assert loadaware.prometheus_addresses(document) == [PROMETHEUS["address"], "http://other:9090"]
    assert loadaware.prometheus_addresses(adaptor) == []


def test_prometheus_sources_pair_each_address_with_its_duration():
    document = la_policy(CCE_ARGS)
    document["profiles"].append({**la_policy({**CCE_ARGS, "duration": "5m"})["profiles"][0], "name": "slow"})
    assert loadaware.prometheus_sources(document) == [(PROMETHEUS["address"], "2m"), (PROMETHEUS["address"], "5m")]
    assert loadaware.prometheus_addresses(document) == [PROMETHEUS["address"]]


def test_cycle_queries_are_the_queries_a_cycle_sends():
    prometheus = TablePrometheus({})
    live_plan(hot_cluster(), la_policy(CCE_ARGS), prometheus)
    sent = {query for query, _address in prometheus.sent}
    assert set(loadaware.cycle_queries(["n1", "n2", "n3"], ["big", "mid", "small", "other"])) == sent
