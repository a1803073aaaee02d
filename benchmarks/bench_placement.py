"""Benchmark the placement preview: the plan with and without ``placement`` on one synthetic cluster.

    python benchmarks/bench_placement.py                              # 5000 nodes x 30 pods, ~10,000 evictions
    python benchmarks/bench_placement.py --nodes 1000 --evictions 2000

The cluster comes from examples/generate_cluster.py; the first nodes get a NoSchedule taint until about
``--evictions`` pods run on them, and the policy is RemovePodsViolatingNodeTaints (a drain of those nodes), so every
planned eviction needs a new node. The target is placement within 2x the time of the plan without it.

The plan without and with placement run in turn, ``--repeat`` pairs of them (default 3), in one process. Each run
gets its own copy of the objects and starts with the engine's module caches empty, as a module's fresh process
does. Every run's wall and CPU time is printed, then per figure the minimum and median, and the ratio of each pair:
the verdict is on the median pair ratio (a pair runs back to back, so a machine slowing down moves both of its runs).

``--placements FILE`` writes every eviction's placement and the utilization after placement as JSON, so that two
versions of the code can be compared on the benchmark cluster (``cmp`` of the files).
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib.util
import json
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build" / "collections"))
NOW = "2026-11-22T12:00:00Z"
TAINT = {"key": "bench/drain", "value": "true", "effect": "NoSchedule"}
POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "drain", "pluginConfig": [{"name": "RemovePodsViolatingNodeTaints", "args": {}}],
    "plugins": {"deschedule": {"enabled": ["RemovePodsViolatingNodeTaints"]}}}]}
TARGET_RATIO = 2.0


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("generate_cluster", REPO / "examples" / "generate_cluster.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["generate_cluster"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def evictable(pod: dict) -> bool:
    """Roughly what the DefaultEvictor lets go: controller-owned, no local storage, not a system namespace."""
    owners = [r.get("kind") for r in pod["metadata"].get("ownerReferences") or []]
    volumes = (pod.get("spec") or {}).get("volumes") or []
    namespace = pod["metadata"].get("namespace") or ""
    return (any(k in ("ReplicaSet", "StatefulSet") for k in owners)
            and not any("emptyDir" in v or "hostPath" in v for v in volumes)
            and not namespace.startswith(("kube-", "openshift-")))


def taint_nodes(objects: list[dict], evictions: int) -> int:
    """Taint nodes in name order until about ``evictions`` evictable pods run on them; returns the tainted count."""
    pods_on: dict[str, int] = {}
    for obj in objects:
        if obj.get("kind") == "Pod" and evictable(obj):
            name = (obj.get("spec") or {}).get("nodeName")
            if name:
                pods_on[name] = pods_on.get(name, 0) + 1
    nodes = sorted((o for o in objects if o.get("kind") == "Node"), key=lambda o: o["metadata"]["name"])
    covered = tainted = 0
    for node in nodes:
        if covered >= evictions:
            break
        node.setdefault("spec", {}).setdefault("taints", []).append(dict(TAINT))
        covered += pods_on.get(node["metadata"]["name"], 0)
        tainted += 1
    return tainted


def empty_caches() -> None:
    """The engine's module-level caches start empty in a module's process: empty them before each timed run."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine import quantity
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler import podinfo

    for cache in (quantity._cache, podinfo._NONZERO_CACHE, podinfo._TERM_CACHE):
        cache.clear()


def timed(objects: list[dict], placement: bool) -> tuple[float, float, dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
        PlacementRequest,
    )

    empty_caches()
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    plan = compute_plan(objects, POLICY, NOW, placement=PlacementRequest() if placement else None)
    return time.perf_counter() - start, time.process_time() - cpu_start, plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--evictions", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (without, with placement); default 3")
    parser.add_argument("--placements", help="write the placements and utilization after placement to this file")
    args = parser.parse_args()
    objects = generator().build_cluster(args.nodes, args.pods_per_node, seed=args.seed, now=NOW)
    tainted = taint_nodes(objects, args.evictions)
    pods = sum(1 for o in objects if o.get("kind") == "Pod")
    print(f"cluster: {args.nodes} nodes, {pods} pods; {tainted} nodes tainted for the drain")
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    plans: dict[bool, dict] = {}
    for repeat in range(args.repeat):
        for placement in (False, True):
            seconds, cpu, plans[placement] = timed(copy.deepcopy(objects), placement)
            runs[placement].append((seconds, cpu))
            print(f"run {repeat + 1} {'with' if placement else 'without'} placement: {seconds:.1f} s, CPU {cpu:.1f} s")
    plain, placed = plans[False], plans[True]
    verdict = placed["placement"]
    print(f"evictions: {len(plain['evictions'])} (with placement: {len(placed['evictions'])})")
    for label, placement in (("plan without placement", False), ("plan with placement:   ", True)):
        walls, cpus = (sorted(figures) for figures in zip(*runs[placement], strict=True))
        print(f"{label} min {walls[0]:.1f} s, median {median(walls):.1f} s (CPU min {cpus[0]:.1f} s, "
              f"median {median(cpus):.1f} s)")
    pairs = list(zip(runs[False], runs[True], strict=True))  # ((wall, CPU) without, (wall, CPU) with placement)
    alone = median([placed_run[0] - plain_run[0] for plain_run, placed_run in pairs])
    print(f"placement alone (median): {alone:.1f} s, {alone / max(len(placed['evictions']), 1) * 1000:.2f} ms "
          "per replacement")
    print(f"placed {verdict['placed']}, same node {verdict['same_node']}, unplaced {verdict['unplaced']}, "
          f"not replaced {verdict['not_replaced']}, ties {verdict['ties']}")
    ratios = [placed_run[0] / plain_run[0] for plain_run, placed_run in pairs]
    cpu_ratios = [placed_run[1] / plain_run[1] for plain_run, placed_run in pairs]
    print(f"pair ratios (wall): {', '.join(f'{r:.2f}' for r in ratios)}; (CPU): "
          f"{', '.join(f'{r:.2f}' for r in cpu_ratios)}")
    ratio = median(ratios)
    print(f"ratio {ratio:.2f} (median of {len(ratios)} pairs, target <= {TARGET_RATIO}): "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    if args.placements:
        with open(args.placements, "w", encoding="utf-8") as handle:
            json.dump({"evictions": [[e["namespace"], e["name"], e["placement"]] for e in placed["evictions"]],
                       "nodes": [[n["name"], n["requested_after_placement"], n["after_placement"]]
                                 for n in placed["utilization"]["nodes"]],
                       "verdict": verdict}, handle, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
