"""The Prometheus client against the HTTP stand-in (tests/integration/standins/prometheus.py): instant queries as a
form POST first, the same parameters as a GET when the server answers 405 or 501 (client_golang's DoGetFallback),
and a Prometheus that cannot answer asked once by LiveQueries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import prometheus as prom

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/controlplane as `controlplane` (certificates)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
from standins.prometheus import PrometheusStandIn  # noqa: E402

QUERY = 'container_memory_usage_bytes{pod="big",container="",name=""}'
AT = 1795348800.0


def values(body: dict) -> dict:
    return {s["metric"]["instance"]: s["value"][1] for s in body["data"]["result"]}


def test_an_instant_query_is_one_form_post_with_query_and_time():
    with PrometheusStandIn({QUERY: {"n1": 0.5}}, token="s3cret") as prometheus:
        body = prom.query_instant(prom.PrometheusConnection(prometheus.url, "s3cret"), QUERY, AT)
        sent = prometheus.requests
    assert values(body) == {"n1": "0.5"}
    assert [(r["method"], r["path"], r["query"]) for r in sent] == [
        ("POST", "/api/v1/query", {"query": QUERY, "time": "1795348800.000"})]
    assert sent[0]["authorization"] == "Bearer s3cret"


@pytest.mark.parametrize("refusal", [405, 501])
def test_a_refused_post_is_sent_again_as_get(refusal: int):
    with PrometheusStandIn({QUERY: {"n1": 0.25}}, refuse_post=refusal) as prometheus:
        body = prom.query_instant(prom.PrometheusConnection(prometheus.url), QUERY, AT)
        sent = prometheus.requests
    assert values(body) == {"n1": "0.25"}
    assert [r["method"] for r in sent] == ["POST", "GET"]
    assert sent[1]["query"] == {"query": QUERY, "time": "1795348800.000"}  # parsed from the URL this time


def test_an_unauthorised_post_is_not_retried_as_get_and_names_the_fix():
    with PrometheusStandIn({QUERY: {"n1": 0.5}}, token="s3cret") as prometheus:
        with pytest.raises(prom.PrometheusError) as caught:
            prom.query_instant(prom.PrometheusConnection(prometheus.url, "wrong"), QUERY, AT)
        sent = prometheus.requests
    assert [r["method"] for r in sent] == ["POST"]
    message = str(caught.value)
    assert "401 Unauthorized" in message and "prometheus_token" in message and QUERY in message


def test_live_queries_ask_an_unreachable_prometheus_once():
    with PrometheusStandIn({}) as prometheus:
        url = prometheus.url
    live = prom.LiveQueries(AT)  # the stand-in is stopped: nothing listens on its port any more
    with pytest.raises(prom.PrometheusError, match=f"cannot reach Prometheus at {url} for query 'a'"):
        live("a", url)
    with pytest.raises(prom.PrometheusError, match=f"cannot reach Prometheus at {url} for query 'a'"):
        live("b", url)  # the first failure, not another attempt (and another timeout)
    assert live.sent == ["a"]


def test_live_queries_go_to_the_given_url_instead_of_the_address():
    with PrometheusStandIn({QUERY: {"n1": 0.5}}) as prometheus:
        live = prom.LiveQueries(AT, url=prometheus.url)
        body = live(QUERY, "http://prometheus.monitoring.svc:9090")  # in-cluster: not reachable from here
        assert values(body) == {"n1": "0.5"}
        assert len(prometheus.requests) == 1


def test_live_queries_report_a_token_problem_for_every_query_without_sending():
    with PrometheusStandIn({QUERY: {"n1": 0.5}}) as prometheus:
        live = prom.LiveQueries(AT, problem="the Prometheus token Secret ns/s does not exist")
        with pytest.raises(prom.PrometheusError, match="token Secret ns/s does not exist"):
            live(QUERY, prometheus.url)
        assert prometheus.requests == []


def test_a_url_that_is_not_http_is_refused_before_sending():
    with pytest.raises(prom.PrometheusError, match="is not an http\\(s\\) URL"):
        prom.query_instant(prom.PrometheusConnection("prometheus:9090"), QUERY, AT)
