"""Prometheus load-aware plans compared with the real descheduler: LowNodeUtilization with
``metricsUtilization.source: Prometheus``.

Each seed loads a random cluster (random_clusters.py) and gives every node a random utilization in [0, 1], answered
by the Prometheus stand-in (standins/prometheus.py) to the policy's query, one sample per node labelled
``instance``, behind a bearer token. The policy names the stand-in in ``metricsProviders`` with
``authToken.secretReference`` to a Secret holding that token under ``prometheusAuthToken``, as a user writes it for
upstream. Both sides read everything from the policy: the plan module plans the cluster live with ``samples`` and
no Prometheus option; the real kubernetes-sigs descheduler (tests/upstream) reads the token from the Secret and
queries the stand-in, UPSTREAM_RUNS processes each giving one cycle (as in test_upstream_agreement_loadaware.py).
Upstream's Prometheus client loads a CA bundle from a pod's service-account directory even for a plain-HTTP URL;
its build reads it from the working directory instead (tests/upstream/build.sh), and the test writes one there.

Upstream in Prometheus mode reads a node's usage as ``int(value * 100)`` of ``MetricResource``, knows no pod's
usage, and evicts at most one pod per overutilized node (more only up to ``evictionLimits.node``, without updating
the node's usage): which pod of a node is the plan's frequency to get right. What must hold is what
test_upstream_agreement_loadaware.py checks (possible pods, certain pods, counts within the plan's range, each
pod's share of cycles within upstream's noise of the plan's frequency), and that upstream really read the stand-in:
its "Node has been classified" lines carry each node's MetricResource as the stand-in answered it.

Half the seeds (kubevirt_shaped) use the policy the operator renders for KubeVirtRelieveAndMigrate: deviation
thresholds, per-node and total limits, a nodeSelector (its KubevirtMigrationAware plugin is not in upstream).
Seeds 0-15 agreed when this test was written (24 processes), seeds 0-5 with 40 for issue 48; 4 and 5 (one of
each kind) run by default,
UPSTREAM_AGREEMENT_PROMETHEUS_SEEDS=0-15 runs others (about 30 s each).

A cycle counts once it saw the whole cluster: every node of the test logged with its usage (the Prometheus client
is made when the Secret's informer delivers it, so a process's first cycles may find none) and, at verbosity 2,
every node it took pods from logged with all the test's pods on it ("Pods on node").
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from random_clusters import load_cluster, random_cluster
from standins.httpserver import server_tls
from standins.prometheus import PrometheusStandIn
from test_upstream_agreement import plan_with_samples, seeds_from_environment, skip_without_own_control_plane
from test_upstream_agreement_loadaware import assert_frequencies_agree, logged_usage
from upstream_descheduler import PROMETHEUS_CA_FILE, Cycle, fresh_cycles

SEEDS = seeds_from_environment(range(4, 6), "UPSTREAM_AGREEMENT_PROMETHEUS_SEEDS")  # 4 static, 5 KubeVirt-shaped
# processes, one cycle each (see test_upstream_agreement_loadaware.py); UPSTREAM_AGREEMENT_PROMETHEUS_RUNS=60 takes more
UPSTREAM_RUNS = int(os.environ.get("UPSTREAM_AGREEMENT_PROMETHEUS_RUNS", "40"))
QUERY = "instance:node_cpu_utilisation:rate1m"
TOKEN = "agreement-token"
SECRET = "prometheus-token"
KUBEVIRT_SCHEDULABLE = "kubevirt.io/schedulable"
# the operator's devDeviationThresholds presets (thresholds, targetThresholds): Low, Medium, High, Asymmetric*
DEVIATION_PRESETS = [(10, 10), (20, 20), (30, 30), (0, 10), (0, 20), (0, 30)]


def random_utilization(seed: int, nodes: list[dict]) -> dict[str, float]:
    """Each node cold (5-15% used) or hot (55-95%), the first one cold so that some node can receive pods, to three
    decimals. The stand-in sends each value as Python's repr, which Go parses to the same double, so upstream's
    int(value * 100) is Python's."""
    rng = random.Random(seed * 15485863 + 11)
    values = {}
    for index, node in enumerate(nodes):
        low, high = (0.05, 0.15) if index == 0 or rng.random() < 0.4 else (0.55, 0.95)
        values[node["metadata"]["name"]] = round(rng.uniform(low, high), 3)
    return values


def kubevirt_shaped(seed: int) -> bool:
    """Whether the seed's policy is the one the operator renders for KubeVirtRelieveAndMigrate (else a plain
    LowNodeUtilization with static thresholds)."""
    return random.Random(seed * 104723 + 2).random() < 0.5


def prometheus_policy(seed: int, url: str, namespace: str) -> dict:
    """LowNodeUtilization on MetricResource with static thresholds (sometimes a per-node limit), or, for a
    kubevirt_shaped seed, as the operator renders KubeVirtRelieveAndMigrate (docs: the reference's operator facts,
    section 2.3): deviation thresholds from one of its presets, evictionLimits.node 2, at most 5 evictions in all
    and 2 per node, only nodes labelled kubevirt.io/schedulable=true, the DefaultEvictor evicting local storage
    and PVC pods."""
    rng = random.Random(seed * 7919 + 5)
    provider = {"url": url, "authToken": {"secretReference": {"namespace": namespace, "name": SECRET}}}
    policy: dict[str, Any] = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                              "metricsProviders": [{"source": "Prometheus", "prometheus": provider}]}
    metrics = {"source": "Prometheus", "prometheus": {"query": QUERY}}
    if kubevirt_shaped(seed):
        low, high = rng.choice(DEVIATION_PRESETS)
        args: dict[str, Any] = {"useDeviationThresholds": True, "thresholds": {"MetricResource": low},
                                "targetThresholds": {"MetricResource": high}, "metricsUtilization": metrics,
                                "evictionLimits": {"node": 2},
                                "evictableNamespaces": {"exclude": ["kube-system", "openshift"]}}
        evictor: dict[str, Any] = {"evictLocalStoragePods": True, "ignorePvcPods": False}
        policy.update({"nodeSelector": f"{KUBEVIRT_SCHEDULABLE}=true", "maxNoOfPodsToEvictTotal": 5,
                       "maxNoOfPodsToEvictPerNode": 2})
    else:
        low = rng.choice([20, 30])
        args = {"thresholds": {"MetricResource": low},
                "targetThresholds": {"MetricResource": low + rng.choice([20, 30])}, "metricsUtilization": metrics}
        if rng.random() < 0.4:
            args["evictionLimits"] = {"node": rng.randint(2, 3)}
        evictor = {"nodeFit": False, "evictLocalStoragePods": True}
    config = [{"name": "DefaultEvictor", "args": evictor}, {"name": "LowNodeUtilization", "args": args}]
    plugins = {"filter": {"enabled": ["DefaultEvictor"]}, "balance": {"enabled": ["LowNodeUtilization"]}}
    policy["profiles"] = [{"name": "prometheus", "pluginConfig": config, "plugins": plugins}]
    return policy


def label_kubevirt_nodes(seed: int, nodes: list[dict]) -> list[dict]:
    """For a kubevirt_shaped seed, label about three nodes in four (the first always) kubevirt.io/schedulable=true
    and return those: the nodes the policy's nodeSelector keeps. Otherwise every node."""
    if not kubevirt_shaped(seed):
        return nodes
    rng = random.Random(seed * 613 + 9)
    chosen = [node for index, node in enumerate(nodes) if index == 0 or rng.random() < 0.75]
    for node in chosen:
        node["metadata"].setdefault("labels", {})[KUBEVIRT_SCHEDULABLE] = "true"
    return chosen


@pytest.fixture
def prometheus() -> Iterator[PrometheusStandIn]:
    with PrometheusStandIn({}, token=TOKEN) as standin:
        yield standin


def complete_cycle(nodes: list[dict], pods: list[dict]) -> Callable[[Cycle], bool]:
    """Every node of the test logged with its usage, and every node the cycle took pods from with all its pods."""
    expected = Counter(pod["spec"]["nodeName"] for pod in pods)
    names = {node["metadata"]["name"] for node in nodes}

    def complete(cycle: Cycle) -> bool:
        if not names <= set(logged_usage(cycle.records)):
            return False
        for record in cycle.records:
            if record.message == "Pods on node":
                node = record.values.get("node", "").rsplit("/", 1)[-1]
                if node in names and int(record.values.get("allPods", -1)) != expected[node]:
                    return False
        return True

    return complete


def assert_upstream_read_the_standin(workdir: Path, utilization: dict[str, float]) -> None:
    """Every process logged each node with the MetricResource the stand-in answered (int(value * 100))."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import parse_klog_line

    wanted = {node: str(int(value * 100)) for node, value in utilization.items()}
    logs = sorted(workdir.glob("process-*/descheduler.log"))
    assert logs, f"no descheduler log under {workdir}"
    for log in logs:
        records = [record for record in map(parse_klog_line, log.read_text().splitlines()) if record is not None]
        read = {node: usage.get("MetricResource") for node, usage in logged_usage(records).items() if node in wanted}
        assert read == wanted, f"{log}: upstream read the nodes' MetricResource as {read}, not {wanted}"


@pytest.mark.parametrize("seed", SEEDS)
def test_prometheus_frequencies_agree_with_the_descheduler(kube: Any, api_client: Any, namespace: str,
                                                           tmp_path: Path, descheduler_binary: Path,
                                                           prometheus: PrometheusStandIn, seed: int) -> None:
    skip_without_own_control_plane(kube)
    nodes, pods, replica_sets = random_cluster(seed, namespace)
    selected = label_kubevirt_nodes(seed, nodes)
    load_cluster(kube, api_client, (nodes, pods, replica_sets))
    utilization = random_utilization(seed, nodes)
    prometheus.answers[QUERY] = utilization
    kube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": namespace},
                 "stringData": {"prometheusAuthToken": TOKEN}})
    policy = prometheus_policy(seed, prometheus.url, namespace)
    plan = plan_with_samples(kube, tmp_path, policy, seed)
    assert not plan["errors"], plan["errors"]
    runs = fresh_cycles(descheduler_binary, kube.kubeconfig, policy, tmp_path / "upstream", UPSTREAM_RUNS,
                        complete_cycle(selected, pods), files={PROMETHEUS_CA_FILE: server_tls().ca_pem.decode()},
                        verbosity=2)
    names = {node["metadata"]["name"] for node in selected}
    assert_upstream_read_the_standin(tmp_path / "upstream", {n: v for n, v in utilization.items() if n in names})
    assert_frequencies_agree(plan, runs, policy)
