"""Benchmark LowNodeUtilization from actual utilization against the same plan from requests.

    python benchmarks/bench_metrics.py                          # 5000x30 (the target)
    python benchmarks/bench_metrics.py --nodes 500 --repeat 3

Generates a cluster with examples/generate_cluster.py, records NodeMetrics and PodMetrics for it (usage = requests
scaled by a seeded random factor, as metrics-server would return them) and a Prometheus answer for every node,
builds the engine's Snapshot once, then times:

- requests:   compute_plan with LowNodeUtilization (cpu/memory/pods thresholds), no metrics;
- metrics:    the same thresholds with metricsUtilization.source KubernetesMetrics, reading the recorded
              NodeMetrics/PodMetrics (building the ActualUsage is included in the time);
- prometheus: MetricResource thresholds with metricsUtilization.source Prometheus, from the recorded answer.

Prints the best of --repeat runs of each, the ratios, and whether the target holds: metrics within 1.2x of requests
on 5000 nodes x 30 pods.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from bench_engine import DEFAULT_NOW, load_generator, make_collection_importable

TARGET = (5000, 30, 1.2)  # nodes, pods per node, allowed ratio metrics/requests
QUERY = "instance:node_cpu:rate:sum"


def policy(thresholds: dict, targets: dict, metrics: dict | None) -> dict:
    args: dict[str, Any] = {"thresholds": thresholds, "targetThresholds": targets}
    providers = []
    if metrics is not None:
        args["metricsUtilization"] = metrics
        providers = [{"source": metrics["source"], **({"prometheus": {"url": "https://prometheus.invalid:9091"}}
                                                      if metrics["source"] == "Prometheus" else {})}]
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "metricsProviders": providers,
            "profiles": [{"name": "load", "pluginConfig": [{"name": "LowNodeUtilization", "args": args}],
                          "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]}


def record_metrics(snapshot: Any, seed: int) -> tuple[list[dict], dict]:
    """NodeMetrics/PodMetrics and one Prometheus answer, as the APIs would return them for this cluster."""
    randomness = random.Random(seed)
    objects: list[dict] = []
    node_usage: dict[str, list[int]] = {}
    for pod in snapshot.pods:
        if not pod.node_name or pod.is_terminal():
            continue
        factor = randomness.uniform(0.2, 1.6)
        cpu = int(pod.requests.get("cpu", 0) / 10**6 * factor)  # nano-units → millicores
        memory = int(pod.requests.get("memory", 0) / 10**9 * factor)
        used = node_usage.setdefault(pod.node_name, [0, 0])
        used[0] += cpu
        used[1] += memory
        objects.append({"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
                        "metadata": {"name": pod.name, "namespace": pod.namespace}, "timestamp": DEFAULT_NOW,
                        "window": "20s", "containers": [{"name": "main", "usage": {"cpu": f"{cpu}m",
                                                                                   "memory": str(memory)}}]})
    samples = []
    for name in snapshot.nodes:
        cpu, memory = node_usage.get(name, [0, 0])
        objects.append({"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": name},
                        "timestamp": DEFAULT_NOW, "window": "20s",
                        "usage": {"cpu": f"{cpu + 150}m", "memory": str(memory + 512 * 2**20)}})
        samples.append({"metric": {"instance": name}, "value": [0, f"{randomness.uniform(0.05, 0.95):.4f}"]})
    return objects, {"status": "success", "data": {"resultType": "vector", "result": samples}}


def timed(snapshot: Any, document: dict, now: str, metrics_objects: list[dict] | None,
          answer: dict | None) -> tuple[float, dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import ActualUsage
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan

    snapshot.actual = None
    started = time.perf_counter()
    if metrics_objects is not None or answer is not None:
        snapshot.actual = ActualUsage.build(metrics_objects or [], {QUERY: answer} if answer else None,
                                            parse_time(now))
    plan = compute_plan(snapshot, document, now)
    return time.perf_counter() - started, plan


def best(repeat: int, *args: Any) -> tuple[float, dict]:
    runs = [timed(*args) for _unused in range(repeat)]
    return min(r[0] for r in runs), runs[-1][1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=TARGET[0])
    parser.add_argument("--pods-per-node", type=int, default=TARGET[1])
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated cluster and metrics")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each plan; the best is reported")
    parser.add_argument("--now", default=DEFAULT_NOW)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

    objects = load_generator().build_cluster(args.nodes, args.pods_per_node, args.seed, args.now)
    snapshot = Snapshot(objects)
    del objects
    metrics_objects, answer = record_metrics(snapshot, args.seed)
    low, high = {"cpu": 20, "memory": 20, "pods": 20}, {"cpu": 50, "memory": 50, "pods": 50}
    requests_s, requests_plan = best(args.repeat, snapshot, policy(low, high, None), args.now, None, None)
    metrics_s, metrics_plan = best(args.repeat, snapshot, policy(low, high, {"source": "KubernetesMetrics"}),
                                   args.now, metrics_objects, None)
    prometheus = policy({"MetricResource": 30}, {"MetricResource": 60},
                        {"source": "Prometheus", "prometheus": {"query": QUERY}})
    prometheus_s, prometheus_plan = best(args.repeat, snapshot, prometheus, args.now, None, answer)
    for plan in (requests_plan, metrics_plan, prometheus_plan):
        if plan["errors"]:
            print(f"plan errors: {plan['errors']}")
            return 2
    ratio = metrics_s / requests_s if requests_s else float("inf")
    print(f"cluster      {args.nodes} nodes x {args.pods_per_node} pods ({len(snapshot.pods)} pods), "
          f"{len(metrics_objects)} metrics objects")
    print(f"requests     {requests_s:.2f} s, {len(requests_plan['evictions'])} evictions")
    print(f"metrics      {metrics_s:.2f} s, {len(metrics_plan['evictions'])} evictions ({ratio:.2f}x requests)")
    print(f"prometheus   {prometheus_s:.2f} s, {len(prometheus_plan['evictions'])} evictions "
          f"({prometheus_s / requests_s:.2f}x requests)")
    nodes, per_node, allowed = TARGET
    if (args.nodes, args.pods_per_node) == (nodes, per_node):
        verdict = "met" if ratio <= allowed else "MISSED"
        print(f"target       metrics within {allowed}x of requests on {nodes}x{per_node}: {verdict}")
        return 0 if ratio <= allowed else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
