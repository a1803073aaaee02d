"""Benchmark the plan's ``samples``: N cycles on one snapshot, against one cycle.

    python benchmarks/bench_sampling.py                        # 500x30, samples 10 (the target)
    python benchmarks/bench_sampling.py --nodes 1000 --samples 20

Generates a cluster with examples/generate_cluster.py, builds the engine's Snapshot once, then times compute_plan
with samples=1 and with samples=N for the three OpenShift profiles (KubeDescheduler spec, as bench_engine.py).
Prints the figures, the cost per extra cycle, the spread the samples found, and whether the target holds:
samples 10 on 500x30 within 60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from bench_engine import DEFAULT_NOW, KUBEDESCHEDULER_SPEC, load_generator, make_collection_importable

TARGET = (500, 30, 10, 60.0)  # nodes, pods per node, samples, seconds


def timed_plan(snapshot: Any, now: str, samples: int, seed: int) -> tuple[float, dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import (
        compute_plan_for_kind,
    )

    started = time.perf_counter()
    plan = compute_plan_for_kind(snapshot, KUBEDESCHEDULER_SPEC, now, policy_kind="KubeDescheduler", samples=samples,
                                 seed=seed)
    return time.perf_counter() - started, plan


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=TARGET[0])
    parser.add_argument("--pods-per-node", type=int, default=TARGET[1])
    parser.add_argument("--samples", type=int, default=TARGET[2])
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled orders")
    parser.add_argument("--cluster-seed", type=int, default=1, help="seed of the generated cluster")
    parser.add_argument("--now", default=DEFAULT_NOW)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

    generator = load_generator()
    objects = generator.build_cluster(args.nodes, args.pods_per_node, args.cluster_seed, args.now)
    started = time.perf_counter()
    snapshot = Snapshot(objects)
    index_seconds = time.perf_counter() - started
    one_seconds, one = timed_plan(snapshot, args.now, 1, args.seed)
    many_seconds, many = timed_plan(snapshot, args.now, args.samples, args.seed)
    sampling = many["sampling"]
    per_cycle = (many_seconds - one_seconds) / max(args.samples - 1, 1)
    print(f"cluster            {args.nodes} nodes x {args.pods_per_node} pods ({len(snapshot.pods)} pods), "
          f"indexed in {index_seconds:.2f} s")
    print(f"samples 1          {one_seconds:.2f} s, {len(one['evictions'])} evictions")
    print(f"samples {args.samples:<10} {many_seconds:.2f} s ({per_cycle:.2f} s per extra cycle)")
    spread = sampling["evictions_per_cycle"]
    print(f"evictions/cycle    min {spread['min']} max {spread['max']} mean {spread['mean']}; "
          f"certain {sampling['certain']}, possible {sampling['possible']}")
    for plugin, counts in sampling["by_plugin"].items():
        print(f"  {plugin:<60} min {counts['min']:>4} max {counts['max']:>4} mean {counts['mean']}")
    nodes, per_node, samples, limit = TARGET
    if (args.nodes, args.pods_per_node, args.samples) == (nodes, per_node, samples):
        verdict = "met" if many_seconds <= limit else "MISSED"
        print(f"target             samples {samples} on {nodes}x{per_node} <= {limit:.0f} s: {verdict}")
        return 0 if many_seconds <= limit else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
