"""Benchmark a fleet dry run from snapshots: ansible-playbook as S job slices (AWX style) x F forks each.

    python benchmarks/bench_fleet.py                                   # 500 clusters, slices 1,2,4 x forks 5,10,20
    python benchmarks/bench_fleet.py --clusters 50 --slices 2 --forks 5
    python benchmarks/bench_fleet.py --grid 1x5,2x10,4x5 --json benchmarks/out/fleet.json

It generates --clusters small OpenShift cluster snapshots with examples/generate_cluster.py (cluster i has
--min-nodes + (i * 7) % (span) nodes, i.e. --min-nodes to --max-nodes, x --pods-per-node pods, seed --seed + i;
written once as .json.gz and reused by every run), names them bench-0001, bench-0002, ... and plans each one with
the KubeDescheduler policy of examples/policies/openshift-kubedescheduler.yaml.

For every (slices S, forks F) of the grid, it writes the inventory AWX would give each slice (slice k of S gets
the hosts ordered by name at positions k-1, k-1+S, ...; the group variables in every slice), starts S
`ansible-playbook -f F playbooks/dry_run.yml` processes at once, with a directory run store
(descheduler_fleet_run_store: {path: ...}) and one run id per grid point, and waits for all of them. Then it runs
playbooks/fleet_report.yml on that run id and checks that the fleet summary holds every cluster exactly once, each
planned (status ok), and that the store holds one summary per cluster.

Measured per run:
  wall s          from starting the slices to the last one's exit (the fleet report not included)
  slice wall s    each slice's own wall time
  slice peak MiB  the peak, over samples every --interval s (0.2), of the summed RSS of the slice's
                  ansible-playbook process and all its descendants (forked workers, module processes), read
                  from /proc/<pid>/statm; also the summed PSS (/proc/<pid>/smaps_rollup) at each sample
  total peak MiB  the peak of the same sums over all slices at one sample (the control node's need)
  report s        the fleet_report.yml run
Why sampling and not ru_maxrss: getrusage(RUSAGE_CHILDREN) and wait4() report the largest single process of the
tree, not the sum of the processes alive together, and the forks run together. The RSS sum counts pages shared
between the forked workers (copy-on-write) once per process, so it over-states what the tree occupies; the PSS
sum divides each shared page among its users, so it is what the tree costs the machine (a cgroup limit, as in an
execution-environment pod, charges shared pages once: the PSS sum is the closer figure). A process living less
than one interval can be missed: the peaks are lower bounds at that resolution.

Options: --clusters (500), --min-nodes (20), --max-nodes (60), --pods-per-node (20), --seed (1), --grid SxF,...
(overrides --slices/--forks, default: every pair of --slices 1,2,4 and --forks 5,10,20), --interval (0.2 s),
--timeout (per run, 3600 s), --workdir (default a temporary directory; snapshots are kept there and reused when
it is given), --keep (keep the temporary directory), --json FILE (every run's figures). The collection must be
importable as ansible_collections.descheduler.fleet (build/collections from `make venv`); ansible-playbook is the
one next to this Python, else on PATH.
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_engine import DEFAULT_NOW, load_generator  # the generator loaded by path, as every benchmark does

REPO = Path(__file__).resolve().parents[1]
POLICY_FILE = REPO / "examples" / "policies" / "openshift-kubedescheduler.yaml"
DRY_RUN_PLAYBOOK = REPO / "playbooks" / "dry_run.yml"
FLEET_REPORT_PLAYBOOK = REPO / "playbooks" / "fleet_report.yml"
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024
NODE_STEP = 7  # spreads the node counts over the range without a pattern tied to the slice count


@dataclass
class SliceResult:
    index: int
    hosts: int
    seconds: float = 0.0
    returncode: int | None = None
    peak_rss_mib: float = 0.0
    peak_pss_mib: float = 0.0


@dataclass
class RunResult:
    slices: int
    forks: int
    clusters: int
    seconds: float = 0.0
    total_peak_rss_mib: float = 0.0
    total_peak_pss_mib: float = 0.0
    report_seconds: float = 0.0
    in_summary: int = 0
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    per_slice: list[SliceResult] = field(default_factory=list)
    load_before: str = ""
    load_after: str = ""


# --------------------------------------------------------------------------------------------------------------
# Snapshots and inventories

def host_name(index: int) -> str:
    return f"bench-{index:04d}"


def cluster_nodes(index: int, args: argparse.Namespace) -> int:
    span = args.max_nodes - args.min_nodes + 1
    return args.min_nodes + (index * NODE_STEP) % span


def generate_snapshots(args: argparse.Namespace, directory: Path) -> dict[str, Path]:
    """One snapshot per cluster; an existing file (same name, so same size and seed) is reused."""
    directory.mkdir(parents=True, exist_ok=True)
    generator = load_generator()
    snapshots: dict[str, Path] = {}
    started = time.monotonic()
    made = 0
    for index in range(1, args.clusters + 1):
        nodes = cluster_nodes(index, args)
        path = directory / f"{host_name(index)}-{nodes}x{args.pods_per_node}-s{args.seed + index}.json.gz"
        if not path.exists():
            objects = generator.iter_cluster(nodes, args.pods_per_node, args.seed + index, DEFAULT_NOW, "openshift")
            generator.write_cluster(objects, str(path))
            made += 1
        snapshots[host_name(index)] = path
    print(f"snapshots: {args.clusters} in {directory} ({made} generated in {time.monotonic() - started:.0f} s)",
          flush=True)
    return snapshots


def slice_hosts(names: list[str], slices: int) -> list[list[str]]:
    """AWX's slicing: hosts ordered by name, slice k of N takes positions k-1, k-1+N, ..."""
    ordered = sorted(names)
    return [ordered[k::slices] for k in range(slices)]


def write_inventory(path: Path, hosts: list[str], snapshots: dict[str, Path]) -> None:
    """The pared-down inventory of one slice, as JSON (YAML is a superset)."""
    inventory = {"clusters": {
        "vars": {"dry_run_now": DEFAULT_NOW, "dry_run_kubedescheduler_file": str(POLICY_FILE),
                 "dry_run_compare_previous": False},
        "hosts": {name: {"ansible_connection": "local", "dry_run_snapshot": str(snapshots[name])} for name in hosts},
    }}
    path.write_text(json.dumps(inventory, indent=1))


# --------------------------------------------------------------------------------------------------------------
# Memory of process trees, from /proc

def parent_map() -> dict[int, int]:
    """pid -> parent pid of every process we can read."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                text = stat.read()
        except OSError:
            continue  # the process ended meanwhile
        # the command name may hold spaces and parentheses: the fields after the last ')' are fixed
        fields = text[text.rfind(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
    return parents


def descendants(root: int, parents: dict[int, int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    tree, stack = [], [root]
    while stack:
        pid = stack.pop()
        if pid in parents:
            tree.append(pid)
        stack.extend(children.get(pid, ()))
    return tree


def rss_and_pss(pid: int) -> tuple[int, int]:
    """Resident and proportional set size of one process in bytes (0, 0 once it has ended)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            rss = int(statm.read().split()[1]) * PAGE_SIZE
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            pss = next((int(line.split()[1]) * 1024 for line in rollup if line.startswith("Pss:")), 0)
    except (OSError, ValueError, IndexError):
        return 0, 0
    return rss, pss


def tree_memory(root: int, parents: dict[int, int]) -> tuple[int, int]:
    rss_total = pss_total = 0
    for pid in descendants(root, parents):
        rss, pss = rss_and_pss(pid)
        rss_total += rss
        pss_total += pss
    return rss_total, pss_total


# --------------------------------------------------------------------------------------------------------------
# One run of the grid

def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def ansible_playbook() -> str:
    beside = Path(sys.executable).parent / "ansible-playbook"
    return str(beside) if beside.exists() else (shutil.which("ansible-playbook") or "ansible-playbook")


def ansible_env() -> dict[str, str]:
    root = REPO / "build" / "collections"
    env = dict(os.environ)
    if root.exists():
        env["ANSIBLE_COLLECTIONS_PATH"] = str(root)
    env.setdefault("ANSIBLE_HOST_KEY_CHECKING", "False")
    env["ANSIBLE_RETRY_FILES_ENABLED"] = "False"
    return env


def store_vars(run_dir: Path, run_id: str) -> list[str]:
    extra = {"descheduler_fleet_run_store": {"path": str(run_dir / "store")}, "descheduler_fleet_run_id": run_id}
    return ["-e", json.dumps(extra)]


def start_slices(run_dir: Path, groups: list[list[str]], snapshots: dict[str, Path], forks: int,
                 run_id: str) -> list[tuple[subprocess.Popen, Any, float]]:
    started = []
    for index, hosts in enumerate(groups, start=1):
        inventory = run_dir / f"slice-{index}.json"
        write_inventory(inventory, hosts, snapshots)
        log = open(run_dir / f"slice-{index}.log", "w", encoding="utf-8")  # closed in wait_and_sample
        command = [ansible_playbook(), "-i", str(inventory), "-f", str(forks), str(DRY_RUN_PLAYBOOK),
                   "-e", json.dumps({"dry_run_report_dir": str(run_dir / f"reports-{index}")}),
                   *store_vars(run_dir, run_id)]
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=ansible_env(), cwd=REPO)
        started.append((process, log, time.monotonic()))
    return started


def wait_and_sample(started: list[tuple[subprocess.Popen, Any, float]], result: RunResult, interval: float,
                    timeout: float) -> None:
    """Sample every slice's tree until all have exited, keeping the per-slice and the total peaks."""
    begin = time.monotonic()
    running = {id(process) for process, _log, _start in started}
    while running:
        parents = parent_map()
        total_rss = total_pss = 0
        for (process, log, start), slice_result in zip(started, result.per_slice, strict=True):
            if id(process) not in running:
                continue
            rss, pss = tree_memory(process.pid, parents)
            slice_result.peak_rss_mib = max(slice_result.peak_rss_mib, rss / MIB)
            slice_result.peak_pss_mib = max(slice_result.peak_pss_mib, pss / MIB)
            total_rss += rss
            total_pss += pss
            if process.poll() is not None:
                slice_result.seconds = time.monotonic() - start
                slice_result.returncode = process.returncode
                log.close()
                running.discard(id(process))
        result.total_peak_rss_mib = max(result.total_peak_rss_mib, total_rss / MIB)
        result.total_peak_pss_mib = max(result.total_peak_pss_mib, total_pss / MIB)
        if time.monotonic() - begin > timeout:
            for process, _log, _start in started:
                if process.poll() is None:
                    process.kill()
            result.problems.append(f"timed out after {timeout:.0f} s")
            timeout = float("inf")  # the killed slices are reaped on the next samples
        time.sleep(interval)


def run_fleet_report(run_dir: Path, run_id: str, result: RunResult) -> Path:
    report_dir = run_dir / "fleet-report"
    command = [ansible_playbook(), str(FLEET_REPORT_PLAYBOOK), *store_vars(run_dir, run_id),
               "-e", json.dumps({"fleet_report_dir": str(report_dir)})]
    start = time.monotonic()
    with open(run_dir / "fleet-report.log", "w", encoding="utf-8") as log:
        returncode = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, env=ansible_env(), cwd=REPO)
    result.report_seconds = time.monotonic() - start
    if returncode != 0:
        result.problems.append(f"fleet_report.yml exited {returncode} (see {run_dir / 'fleet-report.log'})")
    return report_dir / "fleet-summary.json"


def check_summary(summary_path: Path, run_dir: Path, run_id: str, names: list[str], result: RunResult) -> None:
    """Every cluster exactly once in the fleet summary, planned, and one stored summary per cluster."""
    try:
        rows = json.loads(summary_path.read_text())["clusters"]
    except (OSError, ValueError, KeyError) as error:
        result.problems.append(f"no fleet summary at {summary_path}: {error}")
        return
    seen = [row.get("cluster") for row in rows]
    result.in_summary = len(seen)
    missing = sorted(set(names) - set(seen))
    twice = sorted({name for name in seen if seen.count(name) > 1})
    extra = sorted(set(seen) - set(names))
    failed = [row.get("cluster") for row in rows if row.get("status") != "ok"]
    stored = list((run_dir / "store").glob(f"runs/{run_id}/clusters/*/*/*/summary.json"))
    for label, found in (("missing", missing), ("more than once", twice), ("unknown", extra), ("not ok", failed)):
        if found:
            result.problems.append(f"{len(found)} clusters {label} in the fleet summary: {', '.join(found[:5])}")
    if len(stored) != len(names):
        result.problems.append(f"{len(stored)} cluster summaries in the store, expected {len(names)}")


def measure(args: argparse.Namespace, workdir: Path, snapshots: dict[str, Path], slices: int,
            forks: int) -> RunResult:
    run_id = f"bench-{len(snapshots)}-s{slices}-f{forks}-{int(time.time())}"
    run_dir = workdir / "runs" / run_id
    run_dir.mkdir(parents=True)
    names = sorted(snapshots)
    groups = slice_hosts(names, slices)
    result = RunResult(slices=slices, forks=forks, clusters=len(names), load_before=load_average(),
                       per_slice=[SliceResult(index, len(hosts)) for index, hosts in enumerate(groups, start=1)])
    start = time.monotonic()
    wait_and_sample(start_slices(run_dir, groups, snapshots, forks, run_id), result, args.interval, args.timeout)
    result.seconds = time.monotonic() - start
    result.load_after = load_average()
    for slice_result in result.per_slice:
        if slice_result.returncode != 0:
            result.problems.append(f"slice {slice_result.index} exited {slice_result.returncode} "
                                   f"(see {run_dir / f'slice-{slice_result.index}.log'})")
    check_summary(run_fleet_report(run_dir, run_id, result), run_dir, run_id, names, result)
    result.ok = not result.problems
    return result


# --------------------------------------------------------------------------------------------------------------
# Output

def print_run(result: RunResult) -> None:
    slices = ", ".join(f"{s.seconds:.0f} s/{s.peak_rss_mib:.0f}/{s.peak_pss_mib:.0f}" for s in result.per_slice)
    print(f"| {result.slices} | {result.forks} | {result.seconds:.0f} | {result.clusters / result.seconds:.2f} "
          f"| {result.total_peak_rss_mib:.0f} | {result.total_peak_pss_mib:.0f} | {slices} "
          f"| {result.report_seconds:.0f} | {result.in_summary}/{result.clusters} "
          f"{'ok' if result.ok else 'FAILED'} | {result.load_before} / {result.load_after} |", flush=True)
    for problem in result.problems:
        print(f"    problem: {problem}", flush=True)


def print_header() -> None:
    print("| slices | forks | wall s | clusters/s | total peak RSS MiB | total peak PSS MiB "
          "| per slice: wall s/peak RSS/peak PSS MiB | report s | in summary | load 1/5/15 min before / after |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|---|---|", flush=True)


def parse_grid(args: argparse.Namespace) -> list[tuple[int, int]]:
    if args.grid:
        pairs = [item.lower().split("x") for item in args.grid.split(",") if item.strip()]
        return [(int(slices), int(forks)) for slices, forks in pairs]
    return [(int(slices), int(forks)) for slices in args.slices.split(",") for forks in args.forks.split(",")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clusters", type=int, default=500)
    parser.add_argument("--min-nodes", type=int, default=20)
    parser.add_argument("--max-nodes", type=int, default=60)
    parser.add_argument("--pods-per-node", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slices", default="1,2,4")
    parser.add_argument("--forks", default="5,10,20")
    parser.add_argument("--grid", help="SLICESxFORKS,... instead of every pair of --slices and --forks")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between memory samples")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per run, seconds")
    parser.add_argument("--workdir", help="snapshots and runs go here (kept; snapshots reused)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    parser.add_argument("--json", help="write every run's figures to this file")
    args = parser.parse_args(argv)
    if args.clusters < 1 or not 1 <= args.min_nodes <= args.max_nodes or args.pods_per_node < 1:
        parser.error("need --clusters >= 1, 1 <= --min-nodes <= --max-nodes and --pods-per-node >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    results: list[RunResult] = []
    try:
        snapshots = generate_snapshots(args, workdir / "snapshots")
        print(f"{args.clusters} clusters of {args.min_nodes}-{args.max_nodes} nodes x {args.pods_per_node} pods "
              f"(OpenShift flavor), {os.cpu_count()} CPUs; {ansible_playbook()}", flush=True)
        print_header()
        for slices, forks in parse_grid(args):
            results.append(measure(args, workdir, snapshots, slices, forks))
            print_run(results[-1])
            if args.json:
                Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                Path(args.json).write_text(json.dumps([asdict(result) for result in results], indent=1))
    finally:
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif results:
            print(f"work directory kept: {workdir}")
    return 0 if results and all(result.ok for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
