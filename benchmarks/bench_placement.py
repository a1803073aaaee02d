"""Benchmark the placement preview: the plan with and without ``placement`` on one synthetic cluster.

    python benchmarks/bench_placement.py                              # 5000 nodes x 30 pods, ~10,000 evictions
    python benchmarks/bench_placement.py --nodes 1000 --evictions 2000

The cluster comes from examples/generate_cluster.py; the first nodes get a NoSchedule taint until about
``--evictions`` pods run on them, and the policy is RemovePodsViolatingNodeTaints (a drain of those nodes), so every
planned eviction needs a new node. Both runs call compute_plan on the same objects in one process; the target is
placement within 2x the time of the plan without it. Wall time and this process's CPU time are both printed: on a
shared machine the CPU-time ratio is the steadier one (other jobs only slow the wall clock).

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


def timed(objects: list[dict], placement: bool) -> tuple[float, float, dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
        PlacementRequest,
    )

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
    parser.add_argument("--placements", help="write the placements and utilization after placement to this file")
    args = parser.parse_args()
    objects = generator().build_cluster(args.nodes, args.pods_per_node, seed=args.seed, now=NOW)
    tainted = taint_nodes(objects, args.evictions)
    pods = sum(1 for o in objects if o.get("kind") == "Pod")
    print(f"cluster: {args.nodes} nodes, {pods} pods; {tainted} nodes tainted for the drain")
    plain_seconds, plain_cpu, plain = timed(copy.deepcopy(objects), placement=False)
    placed_seconds, placed_cpu, placed = timed(objects, placement=True)
    verdict = placed["placement"]
    ratio = placed_seconds / plain_seconds if plain_seconds else float("inf")
    cpu_ratio = placed_cpu / plain_cpu if plain_cpu else float("inf")
    print(f"evictions: {len(plain['evictions'])} (with placement: {len(placed['evictions'])})")
    print(f"plan without placement: {plain_seconds:.1f} s")
    print(f"plan with placement:    {placed_seconds:.1f} s  (placement alone {placed_seconds - plain_seconds:.1f} s, "
          f"{(placed_seconds - plain_seconds) / max(len(placed['evictions']), 1) * 1000:.2f} ms per replacement)")
    print(f"placed {verdict['placed']}, same node {verdict['same_node']}, unplaced {verdict['unplaced']}, "
          f"not replaced {verdict['not_replaced']}, ties {verdict['ties']}")
    print(f"CPU time: {plain_cpu:.1f} s without, {placed_cpu:.1f} s with placement: ratio {cpu_ratio:.2f}")
    print(f"ratio {ratio:.2f} (target <= {TARGET_RATIO}): {'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    if args.placements:
        with open(args.placements, "w", encoding="utf-8") as handle:
            json.dump({"evictions": [[e["namespace"], e["name"], e["placement"]] for e in placed["evictions"]],
                       "nodes": [[n["name"], n["requested_after_placement"], n["after_placement"]]
                                 for n in placed["utilization"]["nodes"]],
                       "verdict": verdict}, handle, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
