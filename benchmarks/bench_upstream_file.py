"""The plan module and the real upstream descheduler on the same snapshot file, side by side (issue 24).

    python benchmarks/bench_upstream_file.py                         # 5000 x 30 (150k pods), 2 rounds
    python benchmarks/bench_upstream_file.py --nodes 2000 --repeat 3
    python benchmarks/bench_upstream_file.py --snapshot cluster.json # a snapshot of your own (JSON)

It writes the generator's OpenShift-flavoured cluster as a JSON snapshot, renders the DeschedulerPolicy the operator
would from bench_engine.py's KubeDescheduler spec for its namespaces, builds tests/upstream/snapshotcycle (upstream
v0.36.0 in dry-run mode on the file's objects held in client-go's fake clientset, no API server: see its main.go),
then measures in turns, each in its own process:
  ours             python -m ...plugins.modules.plan {snapshot, policy, now}    (return_evictions: all, the list)
  ours, summary    the same with return_evictions: false                          (counts, no list)
  ours, reports    return_evictions: false and report_dir                          (the list in plan.json/md/html)
  upstream         snapshotcycle SNAPSHOT POLICY: dry-run cycles until two in a row evict the same pods
For each: wall seconds, CPU seconds, peak RSS; for upstream at the end of each cycle. Its first cycle may start
before its sandbox has mirrored the whole cluster and evict fewer; the first complete cycle is what a plan is
compared with. Both sides take the same `now` (upstream reads the clock; the module gets the time the run started).
It then checks that ours and upstream's complete cycle evict the same pods, and prints our time and memory as a
share of upstream's (issue 24's target: at most 0.25).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Optional

import yaml
from bench_engine import (
    KUBEDESCHEDULER_SPEC,
    load_generator,
    make_collection_importable,
    run_plan_module,
)

REPO = Path(__file__).resolve().parents[1]
UPSTREAM_MODULE = REPO / "tests" / "upstream"
TARGET_SHARE = 0.25


@dataclass
class Measure:
    name: str
    seconds: float
    cpu_seconds: float
    rss_mib: float
    evictions: Optional[int]
    note: str = ""


def build_snapshotcycle(workdir: Path) -> Path:
    """go build of tests/upstream/snapshotcycle (its go.mod pins upstream; a warm Go cache makes this seconds)."""
    binary = workdir / "snapshotcycle"
    env = dict(os.environ, GOFLAGS=os.environ.get("GOFLAGS", "-mod=readonly"))
    subprocess.run(["go", "build", "-trimpath", "-o", str(binary), "./snapshotcycle"], cwd=UPSTREAM_MODULE, env=env,
                   check=True)
    return binary


def write_snapshot(args: argparse.Namespace, path: Path) -> None:
    generator = load_generator()
    started = time.perf_counter()
    counts = generator.write_cluster(
        generator.iter_cluster(args.nodes, args.pods_per_node, args.seed, args.generated_at, "openshift"), str(path))
    print(f"snapshot: {counts.get('Pod', 0)} pods, {sum(counts.values())} objects, "
          f"{path.stat().st_size / 2**20:.0f} MiB, written in {time.perf_counter() - started:.0f} s", flush=True)


def namespaces_of(snapshot: Path) -> list[str]:
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import iter_snapshot_file

    return sorted({o["metadata"]["name"] for o in iter_snapshot_file(str(snapshot)) if o.get("kind") == "Namespace"}
                  | {"default"})


def rendered_policy(snapshot: Path) -> dict:
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import render_policy

    return render_policy(dict(KUBEDESCHEDULER_SPEC), namespaces=namespaces_of(snapshot))


def run_ours(name: str, module_args: dict, workdir: Path, pythonpath: str, timeout: float) -> tuple[Measure, dict]:
    module = run_plan_module(module_args, workdir, pythonpath, timeout, name)
    if module.error:
        raise SystemExit(f"{name}: {module.error}")
    return Measure(name, module.seconds, module.cpu_seconds, module.rss_mib, module.result["summary"]["total"]), \
        module.result


def run_upstream(binary: Path, snapshot: Path, policy_file: Path, workdir: Path,
                 timeout: float) -> tuple[list[Measure], set[str]]:
    evicted_file = workdir / "upstream-evicted.txt"
    process = subprocess.run([str(binary), str(snapshot), str(policy_file)], capture_output=True, text=True,
                             timeout=timeout, env=dict(os.environ, SNAPSHOTCYCLE_EVICTED=str(evicted_file)),
                             check=False)
    if process.returncode != 0:
        raise SystemExit(f"upstream failed ({process.returncode}): {process.stderr[-2000:]}")
    report = json.loads(process.stdout.strip().splitlines()[-1])
    cycles = [Measure(f"upstream, end of cycle {number}", c["seconds"], c["cpu_seconds"], c["max_rss_mib"],
                      c["evictions"], note=_plugins(c["by_plugin"]))
              for number, c in enumerate(report["cycles"], 1)]
    evicted = set(evicted_file.read_text().split()) if evicted_file.exists() else set()
    return cycles, evicted


def _plugins(by_plugin: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(by_plugin.items()))


def first_complete(cycles: list[Measure]) -> Measure:
    """The first cycle that evicts what the last one does (the last two agree when the run settled)."""
    final = cycles[-1].evictions
    return next(c for c in cycles if c.evictions == final)


def print_measure(measure: Measure) -> None:
    evictions = "-" if measure.evictions is None else f"{measure.evictions:,}"
    print(f"| {measure.name} | {measure.seconds:.1f} | {measure.cpu_seconds:.1f} | {measure.rss_mib:,.0f} | "
          f"{evictions} |", flush=True)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--generated-at", default="2026-11-22T12:00:00Z", help="the generator's notion of now")
    parser.add_argument("--snapshot", type=Path, help="measure this JSON snapshot instead of generating one")
    parser.add_argument("--repeat", type=int, default=2, help="rounds of (ours three ways, upstream)")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--workdir", type=Path, help="where the snapshot, policy and outputs go (a temp dir)")
    parser.add_argument("--json", type=Path, help="write every measure here as JSON")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    pythonpath = make_collection_importable()
    workdir = Path(tempfile.mkdtemp(prefix="bench-upstream-file-", dir=args.workdir))
    try:
        snapshot = args.snapshot or workdir / "cluster.json"
        if args.snapshot is None:
            write_snapshot(args, snapshot)
        policy = rendered_policy(snapshot)
        policy_file = workdir / "policy.yaml"
        policy_file.write_text(yaml.safe_dump(policy))
        binary = build_snapshotcycle(workdir)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        base = {"snapshot": str(snapshot), "policy": policy, "now": now}
        variants = {"ours": {**base, "return_evictions": "all"}, "ours, summary": {**base, "return_evictions": False},
                    "ours, reports": {**base, "return_evictions": False, "report_dir": str(workdir / "report")}}
        measures: list[dict[str, Any]] = []
        print("| run | wall s | CPU s | peak RSS MiB | evictions |\n|---|---:|---:|---:|---:|", flush=True)
        for _round in range(args.repeat):
            ours: dict[str, Measure] = {}
            for name, module_args in variants.items():
                ours[name], result = run_ours(name, module_args, workdir, pythonpath, args.timeout)
                print_measure(ours[name])
                if name == "ours":
                    ours_evicted = {f"{e['namespace']}/{e['name']}" for e in result["evictions"]}
            cycles, upstream_evicted = run_upstream(binary, snapshot, policy_file, workdir, args.timeout)
            for cycle in cycles:
                print_measure(cycle)
            complete = first_complete(cycles)
            same = ours_evicted == upstream_evicted
            print(f"  same pods evicted: {same} (ours {len(ours_evicted):,}, upstream {len(upstream_evicted):,}, "
                  f"only ours {len(ours_evicted - upstream_evicted)}, only upstream "
                  f"{len(upstream_evicted - ours_evicted)}); upstream's complete cycle: {complete.name}", flush=True)
            for mine in ours.values():
                time_share, memory_share = mine.seconds / complete.seconds, mine.rss_mib / complete.rss_mib
                verdict = "met" if max(time_share, memory_share) <= TARGET_SHARE else "not met"
                print(f"  {mine.name}: {time_share:.2f} of upstream's time, {memory_share:.2f} of its memory "
                      f"(target {TARGET_SHARE}: {verdict})", flush=True)
            measures.append({"ours": {name: vars(m) for name, m in ours.items()},
                             "upstream": [vars(c) for c in cycles], "same_pods": same})
        if args.json:
            args.json.write_text(json.dumps(measures, indent=1))
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
