"""The plan module with Volcano's LoadAware on a live cluster: the per-node and per-pod queries Volcano's descheduler
sends go to the stand-in Prometheus (tests/integration/standins/prometheus.py) over HTTP, as a form POST (GET after
a 405), to the policy's metrics.address or to prometheus_url; an unreachable or unauthorised Prometheus is a warning
naming it, as Volcano logs it and reads every node as 0% used.

The nodes and pods live on the `kube` cluster (the real control plane by default). The pods are owned by a ConfigMap
that exists: the garbage collector keeps them (it deletes pods whose owner is missing), no workload controller
replaces them, and the descheduler sees owned (evictable) pods, not bare ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from playbook import REPO, run_tasks

sys.path.insert(0, str(REPO / "tests" / "integration"))
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware import (  # noqa: E402
    node_queries,
    pod_queries,
)
from standins.prometheus import PrometheusStandIn  # noqa: E402

NOW = "2026-11-22T12:00:00Z"
NAMESPACE = "loadaware-live"
LABEL = "loadaware-live-test"
GI = 2**30
# measured fractions per node (cpu, memory) and usage per pod (cores, bytes): la-n1 is hot on cpu (90% of 4 cores)
NODES = {"la-n1": (0.9, 0.5), "la-n2": (0.1, 0.2), "la-n3": (0.5, 0.5)}
PODS = {"big": ("la-n1", 1.2, GI), "mid": ("la-n1", 0.8, GI), "small": ("la-n1", 0.1, GI), "other": ("la-n3", 0.5, GI)}
IN_CLUSTER = "http://prometheus-k8s.monitoring.svc:9090"  # what a CCE policy names; not reachable from the test


def node(name: str) -> dict:
    resources = {"cpu": "4", "memory": str(8 * GI), "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {LABEL: "yes"}}, "spec": {},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, node_name: str, owner_uid: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": "2026-11-22T11:00:00Z",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                              "uid": owner_uid}]},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                                            "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running"}}


def load_cluster(kube: Any) -> None:
    kube.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    owner = kube.create({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "owner", "namespace": NAMESPACE}})
    kube.load([node(name) for name in NODES] +
              [pod(name, where, owner["metadata"]["uid"]) for name, (where, _c, _m) in PODS.items()])


def answers() -> dict[str, dict[str, Any]]:
    """What Prometheus holds: each of Volcano's queries answered with one sample."""
    table: dict[str, dict[str, Any]] = {}
    for name, (cpu, memory) in NODES.items():
        cpu_query, memory_query = node_queries(name)
        table[cpu_query], table[memory_query] = {name: cpu}, {name: memory}
    for name, (_node, cores, memory_bytes) in PODS.items():
        cpu_query, memory_query = pod_queries(name)
        table[cpu_query], table[memory_query] = {"kubelet": cores}, {"kubelet": memory_bytes}
    return table


def loadaware_policy(address: str) -> dict:
    args = {"thresholds": {"cpu": 30, "memory": 30}, "targetThresholds": {"cpu": 80, "memory": 85},
            "evictableNamespaces": {"exclude": ["kube-system"]}, "metrics": {"type": "prometheus", "address": address}}
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "nodeSelector": f"{LABEL}=yes",
            "profiles": [{"name": "load", "pluginConfig": [{"name": "DefaultEvictor", "args": {}},
                                                           {"name": "LoadAware", "args": args}],
                          "plugins": {"balance": {"enabled": ["LoadAware"]}}}]}


def plan_task(kube: Any, **options: Any) -> dict:
    return {"name": "Plan", "descheduler.fleet.plan": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                                       "now": NOW, **options},
            "register": "plan", "ignore_errors": True}


def no_data_warnings(plan: dict) -> list[str]:
    return [w for w in plan["plan_warnings"] if "LoadAware: no usage data" in w]


def test_live_plan_sends_volcanos_queries_to_metrics_address(kube: Any, tmp_path: Path) -> None:
    load_cluster(kube)
    with PrometheusStandIn(answers()) as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy(prometheus.url))])
        sent = list(prometheus.requests)
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert [(e["name"], e["node"]) for e in plan["evictions"]] == [("big", "la-n1")]  # 3.6 - 1.2 ≤ 3.2 cores
    assert no_data_warnings(plan) == [] and plan["errors"] == []
    reading = plan["actual_utilization"]["plugins"]["load/LoadAware"]
    assert reading["nodes"]["la-n1"]["cpu"] == 90.0 and reading["nodes"]["la-n2"]["memory"] == 20.0
    assert {r["query"]["query"] for r in sent} == set(answers())  # exactly Volcano's queries, for these nodes/pods
    assert len(sent) == len(answers())  # each once
    assert {r["method"] for r in sent} == {"POST"}
    assert {r["query"]["time"] for r in sent} == {"1795348800.000"}  # evaluated at now
    assert {r["authorization"] for r in sent} == {None}  # Volcano sends no token; the cluster's is not handed out


def test_prometheus_url_replaces_metrics_address_and_a_refused_post_becomes_get(kube: Any, tmp_path: Path) -> None:
    load_cluster(kube)
    with PrometheusStandIn(answers(), token="s3cret", refuse_post=405) as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy(IN_CLUSTER),
                                                          prometheus_url=prometheus.url, prometheus_token="s3cret")])
        sent = list(prometheus.requests)
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert [e["name"] for e in plan["evictions"]] == ["big"]
    assert no_data_warnings(plan) == []
    assert [r["method"] for r in sent] == ["POST", "GET"] * len(answers())
    assert {r["query"]["query"] for r in sent if r["method"] == "GET"} == set(answers())
    assert {r["authorization"] for r in sent} == {"Bearer s3cret"}


def test_an_unreachable_prometheus_is_named_in_one_warning(kube: Any, tmp_path: Path) -> None:
    load_cluster(kube)
    process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy("http://127.0.0.1:9"))])
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert plan["evictions"] == []  # every node reads 0%, as in Volcano: all underutilized, nothing to do
    warnings = no_data_warnings(plan)
    assert len(warnings) == 1
    assert "cannot reach Prometheus at http://127.0.0.1:9" in warnings[0]
    assert "la-n1 cpu" in warnings[0] and "0% used" in warnings[0]


def test_an_unauthorised_prometheus_is_asked_once_and_the_warning_says_what_to_give(kube: Any,
                                                                                    tmp_path: Path) -> None:
    load_cluster(kube)
    with PrometheusStandIn(answers(), token="s3cret") as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy(prometheus.url),
                                                          prometheus_token="wrong")])
        sent = list(prometheus.requests)
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert plan["evictions"] == []
    assert len(sent) == 1  # the refusal is remembered: no request per node and pod
    warning = no_data_warnings(plan)[0]
    assert "401 Unauthorized" in warning and "prometheus_token" in warning


def test_recorded_answers_replay_the_live_plan_without_asking_prometheus(kube: Any, tmp_path: Path) -> None:
    load_cluster(kube)
    answers_file = tmp_path / "prometheus.json"
    with PrometheusStandIn(answers()) as prometheus:
        record = {"name": "Record", "descheduler.fleet.metrics_record": {
            "kubeconfig": str(kube.kubeconfig), "context": kube.context, "policy": loadaware_policy(IN_CLUSTER),
            "prometheus_url": prometheus.url, "prometheus_dest": str(answers_file), "now": NOW}, "register": "record"}
        live = plan_task(kube, policy=loadaware_policy(prometheus.url))
        process, results = run_tasks(tmp_path, [record, live])
        asked_live = list(prometheus.requests)
    assert not results["record"].get("failed"), results["record"].get("msg")
    assert set(results["record"]["queries"]) == set(answers())  # Volcano's queries for these nodes and pods
    recorded = json.loads(answers_file.read_text())
    assert set(recorded) == set(answers())
    assert len(asked_live) == 2 * len(answers())  # the recording, then the live plan

    # the replay: the policy's Prometheus does not exist; every answer comes from the file
    replay = {**plan_task(kube, policy=loadaware_policy("http://127.0.0.1:9"), prometheus_result=str(answers_file)),
              "register": "replay"}
    process, replayed = run_tasks(tmp_path, [replay])
    plan, again = results["plan"], replayed["replay"]
    assert not again.get("failed"), again.get("msg")
    assert no_data_warnings(again) == []
    assert again["evictions"] == plan["evictions"] and [e["name"] for e in plan["evictions"]] == ["big"]
    assert again["actual_utilization"] == plan["actual_utilization"]


# --- Volcano reads the first sample of an answer, whatever its labels ---
# A hot node (95% of 4 cores = 3.8 > the 3.2-core target) with eight pods; the pod queries' series carry the
# labels cAdvisor's metrics have after a relabelling that drops `instance`. Volcano (metrics_client_prometheus.go,
# PodsMetricsAvg) reads the first sample's value whatever its labels, so it evicts the biggest users until the node
# is under target: 3.8 - 0.3 - 0.25 - 0.2 = 3.05 ≤ 3.2, three pods. Read with the upstream descheduler's `instance`
# rule every pod would use nothing and all eight would go.
HOT_NODES = {"la-hot": (0.95, 0.4), "la-cool": (0.1, 0.2), "la-mid": (0.5, 0.5)}
HOT_PODS = {f"w{i}": ("la-hot", cores, GI) for i, cores in
            enumerate([0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.04, 0.02], start=1)} | {"m1": ("la-mid", 0.5, GI)}


def load_hot_cluster(kube: Any) -> None:
    kube.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    owner = kube.create({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "owner", "namespace": NAMESPACE}})
    kube.load([node(name) for name in HOT_NODES] +
              [pod(name, where, owner["metadata"]["uid"]) for name, (where, _c, _m) in HOT_PODS.items()])


def series_answers(extra_first: dict[str, float]) -> dict[str, Any]:
    """Node queries answered per instance; each pod query with series labelled only by namespace, pod and job,
    preceded by a series of value extra_first[pod] where one is given (Volcano reads that one)."""
    table: dict[str, Any] = {}
    for name, (cpu, memory) in HOT_NODES.items():
        cpu_query, memory_query = node_queries(name)
        table[cpu_query], table[memory_query] = {name: cpu}, {name: memory}
    for name, (_node, cores, memory_bytes) in HOT_PODS.items():
        labels = {"namespace": NAMESPACE, "pod": name, "job": "kubelet", "metrics_path": "/metrics/cadvisor"}
        cpu_query, memory_query = pod_queries(name)
        first = [({**labels, "id": "/kubepods/first"}, extra_first[name])] if name in extra_first else []
        table[cpu_query] = first + [(labels, cores)]
        table[memory_query] = [(labels, memory_bytes)]
    return table


def test_pod_answers_without_an_instance_label_are_read_as_volcano_reads_them(kube: Any, tmp_path: Path) -> None:
    load_hot_cluster(kube)
    table = series_answers({})
    with PrometheusStandIn(table) as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy(prometheus.url))])
        sent = {r["query"]["query"] for r in prometheus.requests}
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert sent == set(table)  # every answer the plan read came from the stand-in, the pods' without `instance`
    assert all("instance" not in labels for query in pod_queries("w1") for labels, _value in table[query])
    assert sorted((e["name"], e["node"]) for e in plan["evictions"]) == [("w1", "la-hot"), ("w2", "la-hot"),
                                                                         ("w3", "la-hot")]
    assert plan["errors"] == [] and no_data_warnings(plan) == []


def test_of_several_series_of_a_pod_the_first_is_read(kube: Any, tmp_path: Path) -> None:
    """w1's answer starts with a 0.01-core series: Volcano reads that, so w2, w3 and w4 are the biggest users
    (3.8 - 0.25 - 0.2 - 0.15 = 3.2 ≤ 3.2) and w1 stays."""
    load_hot_cluster(kube)
    with PrometheusStandIn(series_answers({"w1": 0.01})) as prometheus:
        process, results = run_tasks(tmp_path, [plan_task(kube, policy=loadaware_policy(prometheus.url))])
    plan = results["plan"]
    assert not plan.get("failed"), plan.get("msg")
    assert sorted(e["name"] for e in plan["evictions"]) == ["w2", "w3", "w4"]
