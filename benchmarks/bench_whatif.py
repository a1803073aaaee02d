"""Benchmark the whatif module's runner: N candidates on one read of a snapshot, against one plan of the same file.

    python benchmarks/bench_whatif.py                          # 500x30, 20 threshold variants (the target)
    python benchmarks/bench_whatif.py --set heterogeneous      # 500x30, 20 different plugin mixes
    python benchmarks/bench_whatif.py --nodes 1000 --candidates 10

Generates a cluster with examples/generate_cluster.py and writes it as a snapshot file, then times, in this order,
runner.plan.run_plan (read + one plan) and runner.whatif.run_whatif (one read + N plans) on that file. The
candidates are, with ``--set thresholds`` (the default), KubeDescheduler specs: the three OpenShift profiles of
bench_engine.py with the LowNodeUtilization presets and pod lifetimes varied; with ``--set heterogeneous``, the
cluster's own policy (that spec) followed by DeschedulerPolicies of other plugin mixes (one or two profiles, each
with its own plugins, args and evictor). Prints both times (wall clock and CPU), the ratios, the time per extra
candidate and whether the target holds: 20 candidates on 500x30 within 3x one plan (wall clock).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from typing import Any

from bench_engine import DEFAULT_NOW, KUBEDESCHEDULER_SPEC, load_generator, make_collection_importable

TARGET = (500, 30, 20, 3.0)  # nodes, pods per node, candidates, at most this many times one plan
THRESHOLDS = ("Low", "Medium", "High")
LIFETIMES = ("24h", "48h", "72h", "168h", "336h", "720h", "1440h")


def candidates(count: int) -> list[dict[str, Any]]:
    variants = itertools.cycle(itertools.product(THRESHOLDS, LIFETIMES))
    result = []
    for index in range(count):
        threshold, lifetime = next(variants)
        customizations = {**(KUBEDESCHEDULER_SPEC.get("profileCustomizations") or {}),
                          "devLowNodeUtilizationThresholds": threshold, "podLifetime": lifetime}
        result.append({"name": f"c{index:02d}-{threshold.lower()}-{lifetime}",
                       "kubedescheduler": {**KUBEDESCHEDULER_SPEC, "profileCustomizations": customizations}})
    return result


# The heterogeneous set's plugins: (name, extension point, args), in the order a candidate enables them.
NODE_AFFINITY = ("RemovePodsViolatingNodeAffinity", "deschedule",
                 {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]})
TAINTS = ("RemovePodsViolatingNodeTaints", "deschedule", {})
ANTI_AFFINITY = ("RemovePodsViolatingInterPodAntiAffinity", "deschedule", {})
RESTARTS = ("RemovePodsHavingTooManyRestarts", "deschedule",
            {"podRestartThreshold": 100, "includingInitContainers": True})
FAILED = ("RemoveFailedPods", "deschedule", {"minPodLifetimeSeconds": 3600})
DUPLICATES = ("RemoveDuplicates", "balance", {})
SPREAD = ("RemovePodsViolatingTopologySpreadConstraint", "balance", {"constraints": ["DoNotSchedule"]})
SOFT_SPREAD = ("RemovePodsViolatingTopologySpreadConstraint", "balance",
               {"constraints": ["DoNotSchedule", "ScheduleAnyway"]})


def lifetime(hours: int) -> tuple[str, str, dict]:
    return ("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": hours * 3600})


def low(low_percent: int, high_percent: int) -> tuple[str, str, dict]:
    resources = ("cpu", "memory", "pods")
    return ("LowNodeUtilization", "balance", {"thresholds": dict.fromkeys(resources, low_percent),
                                              "targetThresholds": dict.fromkeys(resources, high_percent)})


def high(percent: int) -> tuple[str, str, dict]:
    return ("HighNodeUtilization", "balance", {"thresholds": dict.fromkeys(("cpu", "memory"), percent)})


def profile(name: str, *plugins: tuple[str, str, dict], evictor: dict | None = None) -> dict:
    enabled: dict[str, list[str]] = {}
    for plugin, point, _args in plugins:
        enabled.setdefault(point, []).append(plugin)
    config = [{"name": plugin, "args": args} for plugin, _point, args in plugins]
    config.append({"name": "DefaultEvictor", "args": evictor or {"ignorePvcPods": True, "evictLocalStoragePods": True}})
    return {"name": name, "pluginConfig": config, "plugins": {
        "filter": {"enabled": ["DefaultEvictor"]}, "preEvictionFilter": {"enabled": ["DefaultEvictor"]},
        **{point: {"enabled": names} for point, names in enabled.items()}}}


def policy(*profiles: dict, **top: Any) -> dict:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", **top, "profiles": list(profiles)}


NODE_FIT = {"ignorePvcPods": True, "evictLocalStoragePods": True, "nodeFit": True}
HETEROGENEOUS = [  # 19 policies besides the cluster's own: other plugin mixes, evictors, limits and profile splits
    policy(profile("lifecycle", lifetime(24), RESTARTS, FAILED)),
    policy(profile("affinity", NODE_AFFINITY, TAINTS, ANTI_AFFINITY)),
    policy(profile("balance", DUPLICATES, SPREAD, low(20, 50))),
    policy(profile("balance", DUPLICATES, SOFT_SPREAD, low(30, 60))),
    policy(profile("compact", high(40))),
    policy(profile("compact", lifetime(168), high(30))),
    policy(profile("lifecycle", lifetime(72)), profile("balance", low(20, 50))),
    policy(profile("affinity", NODE_AFFINITY, TAINTS), profile("spread", SPREAD)),
    policy(profile("all", NODE_AFFINITY, TAINTS, ANTI_AFFINITY, lifetime(48), RESTARTS, DUPLICATES, SPREAD,
                   low(25, 55))),
    policy(profile("all", NODE_AFFINITY, TAINTS, ANTI_AFFINITY, lifetime(48), RESTARTS, DUPLICATES, SPREAD,
                   low(25, 55), evictor=NODE_FIT)),
    policy(profile("lifecycle", lifetime(336), FAILED, DUPLICATES), maxNoOfPodsToEvictPerNode=3),
    policy(profile("balance", low(10, 40)), maxNoOfPodsToEvictPerNamespace=5),
    policy(profile("duplicates", DUPLICATES)),
    policy(profile("spread", SOFT_SPREAD, low(40, 70))),
    policy(profile("restarts", RESTARTS), profile("taints", TAINTS, ANTI_AFFINITY)),
    policy(profile("lifecycle", lifetime(720), RESTARTS, SPREAD, high(50))),
    policy(profile("balance", low(20, 50), evictor=NODE_FIT)),
    policy(profile("affinity", ANTI_AFFINITY, NODE_AFFINITY), profile("lifecycle", lifetime(96), DUPLICATES),
           maxNoOfPodsToEvictTotal=200),
    policy(profile("failed", FAILED, lifetime(1440), SOFT_SPREAD, DUPLICATES, low(30, 50))),
]


def heterogeneous_candidates(count: int) -> list[dict[str, Any]]:
    """The cluster's own policy (bench_engine's KubeDescheduler spec), then the other plugin mixes in turn."""
    result: list[dict[str, Any]] = [{"name": "c00-cluster", "kubedescheduler": KUBEDESCHEDULER_SPEC}]
    for index, document in zip(range(1, count), itertools.cycle(HETEROGENEOUS)):
        names = "-".join(entry["name"] for entry in document["profiles"])
        result.append({"name": f"c{index:02d}-{names}", "policy": document})
    return result


SETS = {"thresholds": candidates, "heterogeneous": heterogeneous_candidates}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=TARGET[0])
    parser.add_argument("--pods-per-node", type=int, default=TARGET[1])
    parser.add_argument("--candidates", type=int, default=TARGET[2])
    parser.add_argument("--cluster-seed", type=int, default=1)
    parser.add_argument("--now", default=DEFAULT_NOW)
    parser.add_argument("--set", choices=sorted(SETS), default="thresholds", dest="candidate_set",
                        help="threshold variants of one policy, or the cluster's policy and 19 other plugin mixes")
    parser.add_argument("--placement", action="store_true",
                        help="plan the replacements' placement in both the one plan and every candidate")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternated; medians are printed")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the whatif call to FILE")
    return parser.parse_args(argv)


def profiled(path: str | None, call: Any) -> Any:
    if not path:
        return call()
    import cProfile

    profiler = cProfile.Profile()
    try:
        return profiler.runcall(call)
    finally:
        profiler.dump_stats(path)


def timed(call: Any) -> tuple[Any, float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - started, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import run_plan
    from ansible_collections.descheduler.fleet.plugins.module_utils.runner.whatif import run_whatif

    generator = load_generator()
    objects = generator.build_cluster(args.nodes, args.pods_per_node, args.cluster_seed, args.now)
    with tempfile.TemporaryDirectory(prefix="bench-whatif-") as workdir:
        path = os.path.join(workdir, "cluster.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, handle)
        pods = sum(1 for obj in objects if obj.get("kind") == "Pod")
        del objects
        # placement the same on both sides (whatif turns it on for a spread objective unless told)
        shared = {"snapshot": path, "now": args.now, "samples": 1, "field_validation": "Strict",
                  "placement": args.placement}
        listed = SETS[args.candidate_set](args.candidates)
        runs = []
        for _round in range(args.repeat):  # alternated, so a drift of the machine's speed hits both sides alike
            one, one_seconds, one_cpu = timed(
                lambda: run_plan({**shared, "kubedescheduler": listed[0]["kubedescheduler"]}))
            many, many_seconds, many_cpu = timed(
                lambda: profiled(args.profile, lambda: run_whatif({**shared, "candidates": listed})))
            runs.append((one_seconds, one_cpu, many_seconds, many_cpu))
    one_seconds, one_cpu, many_seconds, many_cpu = (statistics.median(column) for column in zip(*runs, strict=True))
    ratio = statistics.median(run[2] / run[0] for run in runs)
    cpu_ratio = statistics.median(run[3] / run[1] for run in runs)
    per_candidate = (many_seconds - one_seconds) / max(args.candidates - 1, 1)
    print(f"candidates         {args.candidate_set}: "
          f"{', '.join(str(c['evictions']) for c in many['candidates'])} evictions")
    print(f"cluster            {args.nodes} nodes x {args.pods_per_node} pods ({pods} pods), "
          f"placement {'on' if args.placement else 'off'}; medians of {args.repeat} alternated runs")
    print(f"one plan           {one_seconds:.2f} s (read + plan; {one_cpu:.2f} s CPU), "
          f"{one['summary']['total']} evictions")
    print(f"whatif             {many_seconds:.2f} s for {args.candidates} candidates (one read; {many_cpu:.2f} s CPU), "
          f"{per_candidate:.2f} s per extra candidate; best {many['best']}")
    # on a loaded machine the wall-clock ratio swings with the load; the CPU-time ratio much less
    print(f"ratio              {ratio:.1f}x one plan ({cpu_ratio:.1f}x in CPU time); per run "
          + ", ".join(f"{run[2] / run[0]:.1f} ({run[3] / run[1]:.1f})" for run in runs))
    nodes, pods_per_node, count, limit = TARGET
    if (args.nodes, args.pods_per_node, args.candidates) == (nodes, pods_per_node, count):
        verdict = "holds" if ratio <= limit else "MISSED"
        print(f"target             {count} candidates on {nodes}x{pods_per_node} within {limit:.0f}x one plan: "
              f"{verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
