"""Benchmark the planning engine and the `plan` module on synthetic clusters.

    python benchmarks/bench_engine.py                                  # 1000x30, 2500x30, 5000x30
    python benchmarks/bench_engine.py --nodes 5000 --pods-per-node 30  # one scale
    python benchmarks/bench_engine.py --scales 300x20 --only-generate  # just the generator

Per scale it generates a cluster with examples/generate_cluster.py, writes it as a snapshot file, then measures,
each in its own child process so one measurement's memory never inflates the next one's peak:
  parse   load_snapshot_file(path)                     wall time, peak RSS
  engine  compute_plan(objects, spec, now)             wall time, RSS growth during the call, evictions
  module  python -m ...plugins.modules.plan args.json  wall time and peak RSS of the whole module run
then prints a table, time per pod at each scale (linearity) and whether the targets hold at 5000x30:
engine <= 20 s, module <= 60 s, module peak RSS <= 4 GB.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GENERATOR_PATH = REPO / "examples" / "generate_cluster.py"
COLLECTION = "ansible_collections.descheduler.fleet"
MODULE_NAME = f"{COLLECTION}.plugins.modules.plan"
DEFAULT_NOW = "2026-11-22T12:00:00Z"
DEFAULT_SCALES = "1000x30,2500x30,5000x30"
KUBEDESCHEDULER_SPEC = {
    "profiles": ["AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"],
    "deschedulingIntervalSeconds": 3600,
    "mode": "Predictive",
}
TARGET_SCALE = (5000, 30)
TARGET_ENGINE_SECONDS = 20.0
TARGET_MODULE_SECONDS = 60.0
TARGET_MODULE_RSS_MIB = 4096.0
CHILD_FAILED = 3  # exit code of a child that could not import what it measures


@dataclass
class ScaleResult:
    nodes: int
    pods_per_node: int
    pods: int = 0
    objects: int = 0
    generate_seconds: float | None = None
    snapshot_mib: float | None = None
    parse_seconds: float | None = None
    parse_rss_mib: float | None = None
    build_seconds: float | None = None  # building the same objects in memory for the engine run
    engine_seconds: float | None = None
    engine_rss_growth_mib: float | None = None
    engine_rss_peak_mib: float | None = None
    evictions: int | None = None
    module_seconds: float | None = None
    module_rss_mib: float | None = None
    module_evictions: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.nodes}x{self.pods_per_node}"


# --------------------------------------------------------------------------------------------------------------
# Imports that may not exist yet


def load_generator() -> ModuleType:
    """examples/ is not a package, so import the generator by path."""
    spec = importlib.util.spec_from_file_location("generate_cluster", GENERATOR_PATH)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {GENERATOR_PATH}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_cluster"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def collections_root() -> Path | None:
    """A directory holding ansible_collections/descheduler/fleet -> this checkout, made if needed."""
    built = REPO / "build" / "collections"
    if (built / "ansible_collections" / "descheduler" / "fleet").exists():
        return built
    root = Path(tempfile.gettempdir()) / f"bench-collections-{os.getuid()}"
    link = root / "ansible_collections" / "descheduler" / "fleet"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(REPO, target_is_directory=True)
    return root


def make_collection_importable() -> str:
    """Put the collection on sys.path (and return the PYTHONPATH children need)."""
    root = str(collections_root())
    if root not in sys.path:
        sys.path.insert(0, root)
    return os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))


def import_engine_api() -> tuple[Any, Any]:
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import load_snapshot_file
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import (
        compute_plan_for_kind,
    )

    return compute_plan_for_kind, load_snapshot_file


def missing_engine_message(error: BaseException) -> str:
    return (f"the engine is not importable yet ({type(error).__name__}: {error}); expected "
            f"{COLLECTION}.plugins.module_utils.kubedescheduler.planning.compute_plan_for_kind and "
            "engine.snapshot.load_snapshot_file")


# --------------------------------------------------------------------------------------------------------------
# Child processes: each prints one JSON line on stdout


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_parse(snapshot: str) -> dict[str, Any]:
    try:
        _compute_plan, load_snapshot_file = import_engine_api()
    except ImportError as error:
        return {"error": missing_engine_message(error)}
    started = time.perf_counter()
    objects = load_snapshot_file(snapshot)
    return {"seconds": time.perf_counter() - started, "objects": len(objects), "rss_mib": peak_rss_mib()}


def count_evictions(plan: Any) -> int | None:
    """Evictions in a plan (docs/plan-format.md), tolerant of a module result that wraps it."""
    if not isinstance(plan, dict):
        return None
    for holder in (plan, plan.get("plan")):
        if isinstance(holder, dict):
            total = (holder.get("summary") or {}).get("total")
            if isinstance(total, int):
                return total
            if isinstance(holder.get("evictions"), list):
                return len(holder["evictions"])
    return None


def child_engine(args: argparse.Namespace) -> dict[str, Any]:
    try:
        compute_plan, _load_snapshot_file = import_engine_api()
    except ImportError as error:
        return {"error": missing_engine_message(error)}
    generator = load_generator()
    now = generator.parse_time(args.now)
    started = time.perf_counter()
    objects = generator.build_cluster(args.nodes, args.pods_per_node, args.seed, now, args.flavor)
    built = time.perf_counter() - started
    if args.gc_freeze:  # what a module could do once the snapshot is loaded: the GC then skips those objects
        gc.collect()
        gc.freeze()
    before = peak_rss_mib()
    started = time.perf_counter()
    plan = compute_plan(objects, KUBEDESCHEDULER_SPEC, now, policy_kind="KubeDescheduler")
    seconds = time.perf_counter() - started
    peak = peak_rss_mib()
    return {"build_seconds": built, "seconds": seconds, "rss_growth_mib": peak - before, "rss_mib": peak,
            "evictions": count_evictions(plan), "objects": len(objects)}


def run_child(mode: str, args: argparse.Namespace, extra: list[str], pythonpath: str) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--seed", str(args.seed),
               "--now", args.now, "--flavor", args.flavor, *extra]
    if args.gc_freeze:
        command.append("--gc-freeze")
    env = dict(os.environ, PYTHONPATH=pythonpath)
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout, check=False)
    lines = completed.stdout.strip().splitlines()
    if lines:
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError:
            pass
    tail = (completed.stderr or completed.stdout).strip().splitlines()[-5:]
    return {"error": f"{mode} child exited {completed.returncode}: " + " | ".join(tail)}


# --------------------------------------------------------------------------------------------------------------
# The whole module, as Ansible would run it (minus ansible-playbook itself)


@dataclass
class ModuleRun:
    """One run of the plan module in a child process: its own wall and CPU seconds and peak RSS (os.wait4: earlier
    children's peaks never leak in, as RUSAGE_CHILDREN's would), its result, and why it failed (None if it did
    not)."""

    seconds: float
    cpu_seconds: float
    rss_mib: float
    result: dict[str, Any]
    error: str | None = None


def run_plan_module(module_args: dict[str, Any], workdir: Path, pythonpath: str, timeout: float,
                    stem: str = "module") -> ModuleRun:
    """The plan module as Ansible runs it (minus ansible-playbook): ``<stem>.args.json`` in, ``<stem>.out`` and
    ``<stem>.err`` beside it in ``workdir``."""
    args_file = workdir / f"{stem}.args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": module_args}))
    out_path, err_path = workdir / f"{stem}.out", workdir / f"{stem}.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", MODULE_NAME, str(args_file)], stdout=out, stderr=err,
                                   env=dict(os.environ, PYTHONPATH=pythonpath), cwd=workdir)
        status, usage = wait_with_rusage(process, timeout)
        seconds = time.perf_counter() - started
    run = ModuleRun(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, read_module_result(out_path))
    if status is None:
        run.error = f"the plan module timed out after {timeout:.0f}s"
    elif os.waitstatus_to_exitcode(status) != 0 or run.result.get("failed"):
        detail = run.result.get("msg") or " | ".join(err_path.read_text(errors="replace").strip().splitlines()[-5:])
        run.error = f"the plan module failed: {detail}"
    return run


def run_module(snapshot: str, workdir: Path, args: argparse.Namespace, pythonpath: str) -> dict[str, Any]:
    module_args = {"snapshot": snapshot, "kubedescheduler": KUBEDESCHEDULER_SPEC, "now": args.now}
    run = run_plan_module(module_args, workdir, pythonpath, args.timeout)
    if run.error:
        return {"error": run.error, "seconds": run.seconds, "rss_mib": run.rss_mib}
    return {"seconds": run.seconds, "rss_mib": run.rss_mib, "evictions": count_evictions(run.result)}


def wait_with_rusage(process: subprocess.Popen, timeout: float) -> tuple[int | None, Any]:
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)  # we reaped it; tell Popen
            return status, usage
        if time.monotonic() > deadline:
            process.kill()
            _pid, _status, usage = os.wait4(process.pid, 0)
            process.returncode = -9
            return None, usage
        time.sleep(0.01)


def read_module_result(path: Path) -> dict[str, Any]:
    text = path.read_text(errors="replace").strip()
    try:
        return json.loads(text[text.index("{"):]) if "{" in text else {}
    except json.JSONDecodeError:
        return {"msg": text[-300:]}


# --------------------------------------------------------------------------------------------------------------
# Orchestration


def parse_scales(args: argparse.Namespace) -> list[tuple[int, int]]:
    if args.scales:
        text = args.scales
    elif args.nodes is not None or args.pods_per_node is not None:
        text = f"{args.nodes or TARGET_SCALE[0]}x{args.pods_per_node or TARGET_SCALE[1]}"
    else:
        text = DEFAULT_SCALES
    scales = []
    for item in text.split(","):
        nodes, _x, per_node = item.strip().lower().partition("x")
        if not (nodes.isdigit() and per_node.isdigit()):
            raise SystemExit(f"bad scale {item!r}: expected NODESxPODS_PER_NODE, e.g. 5000x30")
        scales.append((int(nodes), int(per_node)))
    return scales


def generate_snapshot(generator: ModuleType, result: ScaleResult, path: Path, args: argparse.Namespace) -> None:
    started = time.perf_counter()
    objects = generator.iter_cluster(result.nodes, result.pods_per_node, args.seed, args.now, args.flavor)
    counts = generator.write_cluster(objects, str(path))
    result.generate_seconds = time.perf_counter() - started
    result.pods = counts.get("Pod", 0)
    result.objects = sum(counts.values())
    result.snapshot_mib = path.stat().st_size / 2**20
    if args.only_generate:
        summary = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
        print(f"{result.label}: {result.objects} objects in {result.generate_seconds:.1f}s, "
              f"{result.snapshot_mib:.0f} MiB ({path.name})\n  {summary}", flush=True)


def measure_scale(generator: ModuleType, nodes: int, per_node: int, args: argparse.Namespace,
                  pythonpath: str) -> ScaleResult:
    result = ScaleResult(nodes, per_node)
    with tempfile.TemporaryDirectory(prefix="bench-engine-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        snapshot = workdir / ("cluster.json.gz" if args.gzip else "cluster.json")
        generate_snapshot(generator, result, snapshot, args)
        if args.only_generate:
            return result
        record_parse(result, run_child("parse", args, ["--snapshot", str(snapshot)], pythonpath))
        engine = run_child("engine", args, ["--nodes", str(nodes), "--pods-per-node", str(per_node)], pythonpath)
        record_engine(result, engine)
        if args.skip_module:
            result.notes.append("module skipped (--skip-module)")
        else:
            record_module(result, run_module(str(snapshot), workdir, args, pythonpath))
    return result


def record_parse(result: ScaleResult, outcome: dict[str, Any]) -> None:
    if "error" in outcome:
        result.notes.append(f"parse: {outcome['error']}")
        return
    result.parse_seconds, result.parse_rss_mib = outcome["seconds"], outcome["rss_mib"]


def record_engine(result: ScaleResult, outcome: dict[str, Any]) -> None:
    if "error" in outcome:
        result.notes.append(f"engine: {outcome['error']}")
        return
    result.build_seconds, result.engine_seconds = outcome["build_seconds"], outcome["seconds"]
    result.engine_rss_growth_mib, result.engine_rss_peak_mib = outcome["rss_growth_mib"], outcome["rss_mib"]
    result.evictions = outcome["evictions"]


def record_module(result: ScaleResult, outcome: dict[str, Any]) -> None:
    if "error" in outcome:
        result.notes.append(outcome["error"])
    result.module_seconds, result.module_rss_mib = outcome.get("seconds"), outcome.get("rss_mib")
    result.module_evictions = outcome.get("evictions")


# --------------------------------------------------------------------------------------------------------------
# Reporting


def fmt(value: float | int | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def pods_per_second(result: ScaleResult) -> float | None:
    return result.pods / result.engine_seconds if result.engine_seconds else None


def print_table(results: list[ScaleResult]) -> None:
    columns = ("scale", "pods", "gen s", "parse s", "parse MiB", "engine s", "engine +MiB", "engine peak MiB",
               "module s", "module MiB", "evictions", "engine pods/s")
    rows = [columns]
    for r in results:
        evictions = r.evictions if r.evictions is not None else r.module_evictions
        rows.append((r.label, str(r.pods), fmt(r.generate_seconds), fmt(r.parse_seconds), fmt(r.parse_rss_mib, ".0f"),
                     fmt(r.engine_seconds, ".2f"), fmt(r.engine_rss_growth_mib, ".0f"),
                     fmt(r.engine_rss_peak_mib, ".0f"), fmt(r.module_seconds), fmt(r.module_rss_mib, ".0f"),
                     fmt(evictions, "d"), fmt(pods_per_second(r), ",.0f")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    for index, row in enumerate(rows):
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("  ".join("-" * width for width in widths))
    for r in results:
        for note in r.notes:
            print(f"  note {r.label}: {note}")


def print_linearity(results: list[ScaleResult]) -> None:
    """Time per pod should stay flat as the cluster grows; a rising figure means something is superlinear."""
    for name, attribute in (("engine", "engine_seconds"), ("module", "module_seconds"), ("parse", "parse_seconds")):
        measured = [(r, getattr(r, attribute)) for r in results if getattr(r, attribute) and r.pods]
        if not measured:
            continue
        per_pod = [(r.label, seconds / r.pods * 1e6) for r, seconds in measured]
        text = ", ".join(f"{label} {micros:.1f}" for label, micros in per_pod)
        verdict = ""
        if len(per_pod) > 1:
            ratio = per_pod[-1][1] / per_pod[0][1]
            verdict = f" -> x{ratio:.2f} from smallest to largest: " + (
                "linear" if ratio <= 1.5 else "mildly superlinear" if ratio <= 2.5 else "superlinear")
        print(f"{name} us/pod: {text}{verdict}")


def print_targets(results: list[ScaleResult]) -> None:
    at_target = [r for r in results if (r.nodes, r.pods_per_node) == TARGET_SCALE]
    label = f"{TARGET_SCALE[0]}x{TARGET_SCALE[1]}"
    if not at_target:
        estimate_targets(results, label)
        return
    r = at_target[-1]
    checks = (
        ("engine wall", r.engine_seconds, TARGET_ENGINE_SECONDS, "s"),
        ("module wall", r.module_seconds, TARGET_MODULE_SECONDS, "s"),
        ("module peak RSS", r.module_rss_mib, TARGET_MODULE_RSS_MIB, "MiB"),
    )
    print(f"targets at {label} ({r.pods} pods):")
    for name, value, limit, unit in checks:
        verdict = "not measured" if value is None else ("MET" if value <= limit else "MISSED")
        print(f"  {name:16} {fmt(value):>8} {unit:3} <= {limit:g} {unit}: {verdict}")


def estimate_targets(results: list[ScaleResult], label: str) -> None:
    """No run at the target scale: extrapolate linearly from the largest measured one."""
    measured = [r for r in results if r.engine_seconds and r.pods]
    if not measured:
        print(f"targets at {label}: not measured")
        return
    largest = measured[-1]
    target_pods = TARGET_SCALE[0] * TARGET_SCALE[1]
    factor = target_pods / largest.pods
    engine = largest.engine_seconds * factor
    module = largest.module_seconds * factor if largest.module_seconds else None
    print(f"targets at {label}: not measured; linear extrapolation from {largest.label} (x{factor:.1f}): "
          f"engine ~{engine:.1f}s (<= {TARGET_ENGINE_SECONDS:g}), module ~{fmt(module)}s "
          f"(<= {TARGET_MODULE_SECONDS:g})")


# --------------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--nodes", type=int, help="one scale: number of nodes (default scales: " + DEFAULT_SCALES + ")")
    parser.add_argument("--pods-per-node", type=int, help="one scale: average pods per node")
    parser.add_argument("--scales", help="comma-separated NODESxPODS_PER_NODE list, e.g. 1000x30,5000x30")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flavor", choices=("kubernetes", "openshift"), default="openshift",
                        help="default openshift, since the policy is a KubeDescheduler spec")
    parser.add_argument("--now", default=DEFAULT_NOW)
    parser.add_argument("--only-generate", action="store_true", help="only time the generator and count objects")
    parser.add_argument("--skip-module", action="store_true", help="do not run the plan module")
    parser.add_argument("--gzip", action="store_true", help="write the snapshot as .json.gz")
    parser.add_argument("--gc-freeze", action="store_true",
                        help="gc.freeze() the loaded objects before compute_plan (shows what the GC costs)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per child process")
    parser.add_argument("--workdir", help="where to put the temporary snapshots (default: the system temp dir)")
    parser.add_argument("--json", dest="json_out", help="also write the results to this JSON file")
    parser.add_argument("--child", choices=("parse", "engine"), help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def child_main(args: argparse.Namespace) -> int:
    outcome = child_parse(args.snapshot) if args.child == "parse" else child_engine(args)
    print(json.dumps(outcome))
    return CHILD_FAILED if "error" in outcome else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    generator = load_generator()
    pythonpath = make_collection_importable()
    if not args.only_generate:
        try:
            import_engine_api()
        except ImportError as error:
            print(f"bench_engine: {missing_engine_message(error)}.\n"
                  "Only the generator can be measured now: rerun with --only-generate.", file=sys.stderr)
            return 2
    results = []
    for nodes, per_node in parse_scales(args):
        print(f"== {nodes}x{per_node} ({args.flavor}, seed {args.seed})", flush=True)
        results.append(measure_scale(generator, nodes, per_node, args, pythonpath))
    if not args.only_generate:
        print()
        print_table(results)
        print()
        print_linearity(results)
        print_targets(results)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "flavor": args.flavor,
             "seed": args.seed, "python": sys.version.split()[0], "results": [asdict(r) for r in results]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
