"""Benchmark the whatif module's runner: N candidates on one read of a snapshot, against one plan of the same file.

    python benchmarks/bench_whatif.py                          # 500x30, 20 candidates (the target)
    python benchmarks/bench_whatif.py --nodes 1000 --candidates 10

Generates a cluster with examples/generate_cluster.py and writes it as a snapshot file, then times, in this order,
runner.plan.run_plan (read + one plan) and runner.whatif.run_whatif (one read + N plans) on that file. The
candidates are KubeDescheduler specs: the three OpenShift profiles of bench_engine.py with the LowNodeUtilization
presets and pod lifetimes varied. Prints both times (wall clock and CPU), the ratios, the time per extra candidate
and whether the target holds: 20 candidates on 500x30 within 3x one plan (wall clock).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=TARGET[0])
    parser.add_argument("--pods-per-node", type=int, default=TARGET[1])
    parser.add_argument("--candidates", type=int, default=TARGET[2])
    parser.add_argument("--cluster-seed", type=int, default=1)
    parser.add_argument("--now", default=DEFAULT_NOW)
    return parser.parse_args(argv)


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
        shared = {"snapshot": path, "now": args.now, "samples": 1, "field_validation": "Strict"}
        listed = candidates(args.candidates)
        started, cpu = time.perf_counter(), time.process_time()
        one = run_plan({**shared, "kubedescheduler": listed[0]["kubedescheduler"]})
        one_seconds, one_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        many = run_whatif({**shared, "candidates": listed})
        many_seconds, many_cpu = time.perf_counter() - started, time.process_time() - cpu
    ratio = many_seconds / one_seconds
    per_candidate = (many_seconds - one_seconds) / max(args.candidates - 1, 1)
    print(f"cluster            {args.nodes} nodes x {args.pods_per_node} pods ({pods} pods)")
    print(f"one plan           {one_seconds:.2f} s (read + plan; {one_cpu:.2f} s CPU), "
          f"{one['summary']['total']} evictions")
    print(f"whatif             {many_seconds:.2f} s for {args.candidates} candidates (one read; {many_cpu:.2f} s CPU), "
          f"{per_candidate:.2f} s per extra candidate; best {many['best']}")
    # on a loaded machine the wall-clock ratio swings with the load; the CPU-time ratio much less
    print(f"ratio              {ratio:.1f}x one plan ({many_cpu / one_cpu:.1f}x in CPU time)")
    nodes, pods_per_node, count, limit = TARGET
    if (args.nodes, args.pods_per_node, args.candidates) == (nodes, pods_per_node, count):
        verdict = "holds" if ratio <= limit else "MISSED"
        print(f"target             {count} candidates on {nodes}x{pods_per_node} within {limit:.0f}x one plan: "
              f"{verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
