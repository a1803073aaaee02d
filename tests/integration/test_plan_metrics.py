"""The plan module with actual utilization: recorded Prometheus answers (prometheus_result), a live stand-in
Prometheus (/api/v1/query with a bearer token), and NodeMetrics/PodMetrics from the metrics API.

Live tests run on the `kube` cluster (the real control plane by default):
- the metrics API is served by standins/metrics_server.py: metrics.k8s.io/v1beta1 `nodes` and `pods` as two CRDs
  whose objects have the NodeMetrics/PodMetrics shape. Not metrics-server behind the aggregator: the aggregator
  proxies to a Service's endpoints, which may not be a loopback address, and the CI machine's other addresses are
  unknown. Limits (see the stand-in): stored-object metadata, writes accepted, usage as loaded;
- the pods are owned by a ReplicaSet that exists (a real garbage collector deletes pods whose owner does not), with
  replicas 0 and a selector the pods do not match, and the reference is not a controller reference: the ReplicaSet
  controller neither adopts, releases nor replaces them, and the descheduler sees owned (evictable) pods;
- everything lives in namespace `metrics-live`, which the control plane's per-test cleanup removes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playbook import REPO, run_tasks

sys.path.insert(0, str(REPO / "tests" / "integration"))
from standins.metrics_server import MetricsServer  # noqa: E402
from standins.prometheus import PrometheusStandIn  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
NOW_TS = 1795348800.0
QUERY = "instance:node_cpu:rate:sum"
SAMPLES = {"n1": 0.5695757575757561, "n2": 0.4245454545454522, "n3": 0.20381818181818104}
NAMESPACE = "metrics-live"


def node(name: str, pods: int = 10) -> dict:
    resources = {"cpu": "4", "memory": "3000", "pods": str(pods)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"capacity": resources, "allocatable": resources,
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, node_name: str, cpu: str = "400m", owner_uid: str = "rs-uid") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                              "uid": owner_uid}]},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                                            "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Running"}}


def cluster_objects(owner_uid: str = "rs-uid") -> list[dict]:
    return [node("n1", 9), node("n2"), node("n3")] + [pod(f"p{i}", "n1", owner_uid=owner_uid) for i in range(1, 6)] \
        + [pod("p9", "n2", owner_uid=owner_uid)]


def owner_replicaset() -> dict:
    """Exists so the pods' owner does; manages none of them (replicas 0, a selector they do not match)."""
    labels = {"app": "metrics-live-owner"}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": NAMESPACE},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}}}


def load_cluster(kube: Any) -> None:
    """The nodes and the pods, owned by a ReplicaSet that exists."""
    kube.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    owner = kube.create(owner_replicaset())
    kube.load(cluster_objects(owner["metadata"]["uid"]))


def prometheus_policy(url: str = "https://prometheus.example:9091", **lnu: Any) -> dict:
    args = {"thresholds": {"MetricResource": 30}, "targetThresholds": {"MetricResource": 50},
            "metricsUtilization": {"source": "Prometheus", "prometheus": {"query": QUERY}}, **lnu}
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
            "metricsProviders": [{"source": "Prometheus", "prometheus": {"url": url}}],
            "profiles": [{"name": "load", "pluginConfig": [{"name": "LowNodeUtilization", "args": args}],
                          "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


def metrics_policy() -> dict:
    args = {"thresholds": {"cpu": 30, "pods": 30}, "targetThresholds": {"cpu": 50, "pods": 50},
            "metricsUtilization": {"source": "KubernetesMetrics"}}
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
            "metricsProviders": [{"source": "KubernetesMetrics"}],
            "profiles": [{"name": "load", "pluginConfig": [{"name": "LowNodeUtilization", "args": args}],
                          "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


def answer(samples: dict[str, Any]) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": name, "job": "node-exporter"}, "value": [NOW_TS, str(value)]}
        for name, value in samples.items()]}}


def plan_task(**options: Any) -> dict:
    return {"name": "Plan", "descheduler.fleet.plan": {"now": NOW, **options}, "register": "plan",
            "ignore_errors": True}


def write_snapshot(tmp_path: Path, objects: list[dict]) -> str:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return str(path)


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


# --- recorded answers (no cluster needed) ------------------------------------------------------------------------

def test_recorded_prometheus_result_plans_offline(tmp_path: Path) -> None:
    answer_file = tmp_path / "answer.json"
    answer_file.write_text(json.dumps({QUERY: answer(SAMPLES)}))
    snapshot = write_snapshot(tmp_path, cluster_objects())
    by_body = plan_task(snapshot=snapshot, policy=prometheus_policy(evictionLimits={"node": 3}),
                        prometheus_result=answer(SAMPLES))
    by_file = {**plan_task(snapshot=snapshot, policy=prometheus_policy(evictionLimits={"node": 3}),
                           prometheus_result=str(answer_file)), "register": "from_file"}
    process, results = run_tasks(tmp_path, [by_body, by_file])
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert plan["errors"] == []
    # upstream's "with more evictions" case: node limit 3 on the only overutilized node
    assert [e["name"] for e in plan["evictions"]] == ["p1", "p2", "p3"]
    reading = plan["actual_utilization"]["plugins"]["load/LowNodeUtilization"]
    assert reading["nodes"]["n1"] == {"MetricResource": 56.0}
    assert results["from_file"]["evictions"] == plan["evictions"]


def test_prometheus_result_missing_a_node_is_a_plugin_error_naming_it(tmp_path: Path) -> None:
    partial = {k: v for k, v in SAMPLES.items() if k != "n3"}
    process, results = run_tasks(tmp_path, [plan_task(snapshot=write_snapshot(tmp_path, cluster_objects()),
                                                      policy=prometheus_policy(), prometheus_result=answer(partial))])
    plan = results["plan"]
    assert plan["evictions"] == []
    assert "unable to find metric entry for n3" in plan["errors"][0]["message"]
    assert QUERY in plan["errors"][0]["message"]


@pytest.mark.parametrize(("result", "message"), [
    ("/nonexistent/answer.json", "does not exist"),
    ({"data": []}, "JSON body of a Prometheus /api/v1/query answer"),
])
def test_bad_prometheus_result_fails_before_planning(tmp_path: Path, result: Any, message: str) -> None:
    process, results = run_tasks(tmp_path, [plan_task(snapshot=write_snapshot(tmp_path, cluster_objects()),
                                                      policy=prometheus_policy(), prometheus_result=result)])
    assert results["plan"]["failed"]
    assert "prometheus_result" in results["plan"]["msg"] and message in results["plan"]["msg"]
    assert "Traceback" not in results["plan"]["msg"]


# --- live: a stand-in Prometheus next to the `kube` cluster ------------------------------------------------------

@pytest.fixture
def loaded(kube: Any) -> Any:
    load_cluster(kube)
    return kube


def test_live_prometheus_query_with_token(loaded: Any, tmp_path: Path) -> None:
    with PrometheusStandIn({QUERY: SAMPLES}, token="s3cret") as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(
            **connection(loaded), policy=prometheus_policy(prometheus.url), prometheus_url=prometheus.url,
            prometheus_token="s3cret")])
        sent = prometheus.requests
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert [e["node"] for e in plan["evictions"]] == ["n1"]  # Prometheus mode: one eviction per node, no limit
    assert sent[0]["query"] == {"query": QUERY, "time": f"{NOW_TS:.3f}"}
    assert sent[0]["authorization"] == "Bearer s3cret"


def test_live_prometheus_unauthorised_is_reported_with_the_fix(loaded: Any, tmp_path: Path) -> None:
    with PrometheusStandIn({QUERY: SAMPLES}, token="s3cret") as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(
            **connection(loaded), policy=prometheus_policy(prometheus.url), prometheus_url=prometheus.url,
            prometheus_token="wrong")])
    plan = results["plan"]
    assert plan["evictions"] == []
    message = plan["errors"][0]["message"]
    assert "401 Unauthorized" in message and "prometheus_token" in message and QUERY in message


def test_live_prometheus_unreachable_is_reported(loaded: Any, tmp_path: Path) -> None:
    process, results = run_tasks(tmp_path, [plan_task(
        **connection(loaded), policy=prometheus_policy(), prometheus_url="http://127.0.0.1:9")])
    message = results["plan"]["errors"][0]["message"]
    assert "cannot reach Prometheus at http://127.0.0.1:9" in message


# --- live: the metrics API --------------------------------------------------------------------------------------

def metrics_objects() -> list[dict]:
    nodes = [{"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": name},
              "timestamp": NOW, "window": "20s", "usage": {"cpu": cpu, "memory": "0"}}
             for name, cpu in (("n1", "3201m"), ("n2", "401m"), ("n3", "11m"))]
    pods = [{"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
             "metadata": {"name": f"p{i}", "namespace": NAMESPACE}, "timestamp": NOW, "window": "20s",
             "containers": [{"name": "c", "usage": {"cpu": "801m", "memory": "0"}}]} for i in range(1, 6)]
    return nodes + pods


@pytest.fixture
def metrics_server(loaded: Any) -> Iterator[MetricsServer]:
    """The metrics API serving metrics_objects() for the loaded cluster."""
    with loaded.api_client() as client, MetricsServer(client) as metrics:
        metrics.load(metrics_objects())
        yield metrics


def test_live_metrics_api_plans_from_node_and_pod_metrics(kube: Any, metrics_server: Any, tmp_path: Path) -> None:
    process, results = run_tasks(tmp_path, [plan_task(**connection(kube), policy=metrics_policy())])
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    # n2 uses 401m of 4 cores by metrics: room for two pods of 801m (by requests it would take four)
    assert [e["name"] for e in plan["evictions"]] == ["p1", "p2"]
    assert plan["actual_utilization"]["plugins"]["load/LowNodeUtilization"]["nodes"]["n1"]["cpu"] == 80.03


def test_metrics_api_not_served_is_reported(loaded: Any, tmp_path: Path) -> None:
    process, results = run_tasks(tmp_path, [plan_task(**connection(loaded), policy=metrics_policy())])
    plan = results["plan"]
    assert plan["evictions"] == []
    assert "metrics.k8s.io/v1beta1 API is not served" in plan["errors"][0]["message"]


# --- recording (metrics_record) and replaying offline ------------------------------------------------------------

def test_recorded_metrics_replay_the_live_plan(kube: Any, metrics_server: Any, tmp_path: Path) -> None:
    kubeconfig = connection(kube)
    metrics_file, answers_file = tmp_path / "metrics.json", tmp_path / "prometheus.json"
    both_policies = metrics_policy()
    both_policies["profiles"] += prometheus_policy()["profiles"]
    both_policies["profiles"][1]["name"] = "psi"
    with PrometheusStandIn({QUERY: SAMPLES}, token="s3cret") as prometheus:
        both_policies["metricsProviders"] = [{"source": "KubernetesMetrics"},
                                             {"source": "Prometheus", "prometheus": {"url": prometheus.url}}]
        record = {"descheduler.fleet.metrics_record": {
            **kubeconfig, "policy": both_policies, "dest": str(metrics_file), "prometheus_dest": str(answers_file),
            "prometheus_url": prometheus.url, "prometheus_token": "s3cret", "now": NOW}}
        live = plan_task(**kubeconfig, policy=both_policies, prometheus_url=prometheus.url, prometheus_token="s3cret")
        process, results = run_tasks(tmp_path, [{**record, "register": "first"}, {**record, "register": "again"},
                                                {**live, "register": "live"}])
    assert results["first"]["changed"] is True, results["first"].get("msg")
    assert results["first"]["node_metrics"] == 3 and results["first"]["pod_metrics"] == 5
    assert results["first"]["samples"] == {QUERY: 3}
    assert results["again"]["changed"] is False  # the same state recorded again: nothing to write
    objects = list(kube.list("pods", NAMESPACE) + kube.list("nodes"))
    offline = plan_task(snapshot=write_snapshot(tmp_path, objects), policy=both_policies,
                        metrics_file=str(metrics_file), prometheus_result=str(answers_file))
    process, replayed = run_tasks(tmp_path, [offline])
    assert replayed["plan"]["errors"] == [] and results["live"]["errors"] == []
    assert [e["name"] for e in replayed["plan"]["evictions"]] == [e["name"] for e in results["live"]["evictions"]]
    assert len(replayed["plan"]["evictions"]) == 3  # two by KubernetesMetrics, one by Prometheus


def test_metrics_record_needs_a_query_for_prometheus_dest(tmp_path: Path, kube: Any) -> None:
    process, results = run_tasks(tmp_path, [{"descheduler.fleet.metrics_record": {
        **connection(kube), "prometheus_dest": str(tmp_path / "p.json")}, "register": "record",
        "ignore_errors": True}])
    assert results["record"]["failed"]
    assert "no query to record" in results["record"]["msg"]
    assert not (tmp_path / "p.json").exists()


# --- the KubeVirt profile on a live cluster --------------------------------------------------------------------

KUBEVIRT_QUERY = "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m"


def test_live_kubevirt_profile_reads_vmis_and_prometheus(kube: Any, tmp_path: Path) -> None:
    from standins.kubevirt import KubeVirt

    if getattr(kube, "is_external", False):
        pytest.skip("the KubeVirt stand-in's webhook listens on 127.0.0.1, which only the suite's own control plane "
                    "reaches")
    nodes = [node(name) for name in ("w1", "w2", "w3")]
    for item in nodes:
        item["metadata"]["labels"]["kubevirt.io/schedulable"] = "true"
    kube.load([*nodes, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vms"}}])
    kubevirt = KubeVirt.on(kube)
    try:
        for index in range(3):
            kubevirt.create_vm("vms", f"vm{index}", "w1")
    finally:
        kubevirt.uninstall()  # the VMs stay; nothing evicts or migrates them here
    kubevirt.check()
    kube.patch("virtualmachineinstances", "vms", "vm0",  # vm0 is migrating now
               {"status": {"migrationState": {"startTimestamp": "2026-11-22T11:59:00Z"}}})
    kubeconfig = connection(kube)
    spec = {"mode": "Predictive", "deschedulingIntervalSeconds": 60, "profiles": ["KubeVirtRelieveAndMigrate"]}
    with PrometheusStandIn({KUBEVIRT_QUERY: {"w1": 0.8, "w2": 0.2, "w3": 0.1}}) as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(**kubeconfig, kubedescheduler=spec,
                                                          prometheus_url=prometheus.url)])
        queried = [r["query"]["query"] for r in prometheus.requests]
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert queried == [KUBEVIRT_QUERY]
    assert plan["errors"] == []
    assert sorted(e["vm"]["name"] for e in plan["evictions"]) == ["vm1", "vm2"]  # vm0 is mid-migration
    assert any("KubevirtMigrationAware Filter" in reason for reason in plan["spared"]["by_reason"])
    assert plan["summary"]["vms_to_migrate"] == 2
    assert [t["key"] for t in plan["soft_taints"]["nodes"]["w1"]][-1].endswith("/overutilized")


def test_live_kubedescheduler_plan_takes_the_prometheus_url_from_the_route(loaded: Any, tmp_path: Path) -> None:
    """Without prometheus_url, the policy names https://<admitted host of openshift-monitoring/prometheus-k8s>, as
    the operator renders it (operator-observed.md), and the plan queries it there."""
    from standins.kubedescheduler_types import ROUTE_CRD
    from standins.rest import Rest, install_crds, path

    host = "127.0.0.1:9"  # nothing listens: the query fails at once, naming the URL
    with loaded.api_client() as client:
        rest = Rest(client)
        install_crds(rest, [ROUTE_CRD])
        rest.create_if_absent(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                         "metadata": {"name": "openshift-monitoring"}})
        routes = path("route.openshift.io/v1", "routes", "openshift-monitoring")
        rest.create(routes, {"apiVersion": "route.openshift.io/v1", "kind": "Route",
                             "metadata": {"name": "prometheus-k8s", "namespace": "openshift-monitoring"},
                             "spec": {"host": "not-admitted.example"}})
        rest.change(routes + "/prometheus-k8s/status", lambda r: r.update(status={"ingress": [{"host": host}]}))
    spec = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
            "profiles": ["LifecycleAndUtilization"],
            "profileCustomizations": {"devActualUtilizationProfile": "PrometheusCPUUsage"}}
    process, results = run_tasks(tmp_path, [plan_task(**connection(loaded), kubedescheduler=spec)])
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert plan["policy"]["metricsProviders"] == [{"prometheus": {"url": f"https://{host}"}, "source": "Prometheus"}]
    assert f"cannot reach Prometheus at https://{host}" in plan["errors"][0]["message"]
