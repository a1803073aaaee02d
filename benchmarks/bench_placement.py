"""Benchmark the placement preview: the plan with and without ``placement`` on one synthetic cluster.

    python benchmarks/bench_placement.py                              # 5000 nodes x 30 pods, ~10,000 evictions
    python benchmarks/bench_placement.py --nodes 1000 --evictions 2000

The cluster comes from examples/generate_cluster.py; the first nodes get a NoSchedule taint until about
``--evictions`` pods run on them, and the policy is RemovePodsViolatingNodeTaints (a drain of those nodes), so every
planned eviction needs a new node. The target is placement within 2x the time of the plan without it.

The plan without and with placement run in turn, ``--repeat`` pairs of them (default 3), each in a fresh Python
process as a module's plan does. Every run's wall and CPU time is printed, then per figure the minimum and median,
and the ratio of each pair. A target is met when both the median pair ratio (a pair runs back to back, so a machine
slowing down moves both of its runs) and the ratio of the best runs are within it.

Two measures (``--measure``, default ``both``):
- ``module``, the target: what the plan module runs, on a JSON snapshot file written once (runner.plan.run_plan
  with ``snapshot``: read and parse the file, record what placement reads of the raw pods, index, plan). This is
  "the plan without placement" as a user runs it; a live plan lists the objects from the API server instead, which
  takes longer than parsing a file, so the ratio of a live plan is lower still.
- ``engine``, a diagnostic: compute_plan alone on objects already in memory (unpickled), so the denominator is the
  planning work without reading the cluster. Placement costs the same in both; this ratio is the higher one.

``--placements FILE`` writes every eviction's placement and the utilization after placement as JSON, so that two
versions of the code can be compared on the benchmark cluster (``cmp`` of the files).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any, Optional

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


def timed_module(snapshot_file: str, placement: bool) -> tuple[float, float, dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import run_plan

    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    plan = run_plan({"snapshot": snapshot_file, "policy": POLICY, "now": NOW, "placement": placement,
                     "return_evictions": "all"})
    return time.perf_counter() - start, time.process_time() - cpu_start, plan


def one_run(objects_file: str, placement: bool, placements_file: Optional[str]) -> int:
    """A child process: one timed plan on the pickled objects (or the module's flow on a JSON snapshot file); its
    figures as one JSON line on stdout."""
    if objects_file.endswith(".json"):
        seconds, cpu, plan = timed_module(objects_file, placement)
    else:
        with open(objects_file, "rb") as handle:
            objects = pickle.load(handle)
        seconds, cpu, plan = timed(objects, placement)
    figures: dict[str, Any] = {"seconds": seconds, "cpu": cpu, "evictions": len(plan["evictions"])}
    if placement:
        figures["verdict"] = {k: v for k, v in plan["placement"].items() if isinstance(v, int)}
    if placements_file:
        with open(placements_file, "w", encoding="utf-8") as handle:
            json.dump({"evictions": [[e["namespace"], e["name"], e["placement"]] for e in plan["evictions"]],
                       "nodes": [[n["name"], n["requested_after_placement"], n["after_placement"]]
                                 for n in plan["utilization"]["nodes"]],
                       "verdict": plan["placement"]}, handle, sort_keys=True)
    print(json.dumps(figures))
    return 0


def run_child(objects_file: str, placement: bool, placements_file: Optional[str]) -> dict:
    command = [sys.executable, __file__, "--one-run", "with" if placement else "without", "--objects", objects_file]
    if placements_file:
        command += ["--placements", placements_file]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(runs: dict[bool, list[dict]], measure: str) -> bool:
    """Print the figures of one measure; whether its ratios are within the target."""
    for label, placement in (("plan without placement", False), ("plan with placement:   ", True)):
        walls = sorted(r["seconds"] for r in runs[placement])
        cpus = sorted(r["cpu"] for r in runs[placement])
        print(f"{label} min {walls[0]:.1f} s, median {median(walls):.1f} s (CPU min {cpus[0]:.1f} s, "
              f"median {median(cpus):.1f} s)")
    pairs = list(zip(runs[False], runs[True], strict=True))
    placed = runs[True][-1]
    alone = median([with_it["seconds"] - without["seconds"] for without, with_it in pairs])
    print(f"placement alone (median): {alone:.1f} s, {alone / max(placed['evictions'], 1) * 1000:.2f} ms "
          "per replacement")
    verdict = placed["verdict"]
    print(f"evictions {placed['evictions']}: placed {verdict['placed']}, same node {verdict['same_node']}, "
          f"unplaced {verdict['unplaced']}, not replaced {verdict['not_replaced']}, ties {verdict['ties']}")
    ratios = [with_it["seconds"] / without["seconds"] for without, with_it in pairs]
    cpu_ratios = [with_it["cpu"] / without["cpu"] for without, with_it in pairs]
    print(f"pair ratios (wall): {', '.join(f'{r:.2f}' for r in ratios)}; (CPU): "
          f"{', '.join(f'{r:.2f}' for r in cpu_ratios)}")
    ratio = median(ratios)
    best = min(r["seconds"] for r in runs[True]) / min(r["seconds"] for r in runs[False])
    met = ratio <= TARGET_RATIO and best <= TARGET_RATIO
    role = "the target" if measure == "module" else "diagnostic, not the target"
    print(f"{measure} ({role}): ratio {ratio:.3f} (median of {len(ratios)} pairs), {best:.3f} (best run with / best "
          f"run without); within {TARGET_RATIO} for both: {'yes' if met else 'NO'}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--evictions", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (without, with placement); default 3")
    parser.add_argument("--placements", help="write the placements and utilization after placement to this file")
    parser.add_argument("--measure", choices=["both", "module", "engine"], default="both",
                        help="module: the plan module's whole flow on a JSON snapshot file (the target); engine: "
                             "compute_plan alone on loaded objects (a diagnostic); both (default)")
    parser.add_argument("--one-run", choices=["without", "with"], help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--objects", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        return one_run(args.objects, args.one_run == "with", args.placements)
    objects = generator().build_cluster(args.nodes, args.pods_per_node, seed=args.seed, now=NOW)
    tainted = taint_nodes(objects, args.evictions)
    pods = sum(1 for o in objects if o.get("kind") == "Pod")
    print(f"cluster: {args.nodes} nodes, {pods} pods; {tainted} nodes tainted for the drain", flush=True)
    measures = ["module", "engine"] if args.measure == "both" else [args.measure]
    met: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="bench-placement-") as scratch:
        files = {}
        if "module" in measures:
            files["module"] = os.path.join(scratch, "snapshot.json")
            with open(files["module"], "w", encoding="utf-8") as handle:
                json.dump(objects, handle)
        if "engine" in measures:
            files["engine"] = os.path.join(scratch, "objects.pickle")
            with open(files["engine"], "wb") as handle:
                pickle.dump(objects, handle, protocol=pickle.HIGHEST_PROTOCOL)
        del objects
        for measure in measures:
            print(f"measure: {measure}", flush=True)
            runs: dict[bool, list[dict]] = {False: [], True: []}
            for repeat in range(args.repeat):
                for placement in (False, True):
                    last = repeat == args.repeat - 1 and measure == measures[0]
                    figures = run_child(files[measure], placement, args.placements if placement and last else None)
                    runs[placement].append(figures)
                    print(f"run {repeat + 1} {'with' if placement else 'without'} placement: "
                          f"{figures['seconds']:.1f} s, CPU {figures['cpu']:.1f} s", flush=True)
            met[measure] = report(runs, measure)
    if "module" in met:
        print(f"target (placement within {TARGET_RATIO}x the plan module's run without it): "
              f"{'met' if met['module'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
