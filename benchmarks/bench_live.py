"""A live plan at scale: the plan module and the real upstream descheduler on one loaded kube-apiserver.

    python benchmarks/bench_live.py                                  # 5000x30 (about 150k pods)
    python benchmarks/bench_live.py --scales 34x30,334x30,1667x30    # about 1k, 10k and 50k pods
    python benchmarks/bench_live.py --scales 100x30 --skip-upstream
    python benchmarks/bench_live.py --keep --workdir /big/disk             # leave the loaded plane running ...
    python benchmarks/bench_live.py --reuse /big/disk/bench-live-XXXXXXXX  # ... and measure on it again

Per scale, on a control plane of its own (tests/controlplane: kube-apiserver and etcd, no controller-manager, so
nothing replaces, binds or garbage-collects the pods, and no kubelet):
  load      the generator's cluster (examples/generate_cluster.py, OpenShift flavour) created through the API in
            bulk: PriorityClasses, Namespaces, ServiceAccounts, RuntimeClasses, Nodes then their status, Pods then
            their status (without the QoS class, which the server computes), PersistentVolumeClaims,
            PodDisruptionBudgets (the kinds the plan and the descheduler read; workloads are left out: the plan does
            not list them and without a controller-manager they would do nothing)
  dump      what the server then holds written to a snapshot file (a `kind: List`), read in raw-JSON pages
then, one after another on the otherwise idle server:
  upstream  the real descheduler (tests/upstream/build.sh) in --dry-run mode, one cycle a second, wall, CPU and
            peak RSS read from /proc at the end of each cycle, until two cycles in a row evict as many pods (within
            3%): its first cycles start before its dry-run sandbox mirrored every pod, and evict fewer
  live      the plan module reading the cluster through the kubeconfig (its default: streamed lists)
  live, pages   the same with `watch_list: false` (500-object pages)
  file      the plan module on the snapshot file, `now` the time the live plan started
Both sides get the same DeschedulerPolicy: the one the operator renders from the benchmark's KubeDescheduler spec
(benchmarks/bench_engine.py KUBEDESCHEDULER_SPEC) for these namespaces. For each run it prints wall and CPU seconds,
peak RSS and evictions, and what the API server spent: its RSS above the level before the run (sampled every 0.2 s)
and the requests and response bytes it served (from its /metrics, before and after).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import yaml
from bench_engine import (
    KUBEDESCHEDULER_SPEC,
    count_evictions,
    load_generator,
    make_collection_importable,
    run_plan_module,
)
from upstream_dry_runs import start_control_plane

REPO = Path(__file__).resolve().parents[1]
UPSTREAM_BUILD = REPO / "tests" / "upstream" / "build.sh"
DEFAULT_SCALES = "5000x30"
GENERATED_AT = "2026-11-22T12:00:00Z"
LOADED_KINDS = ("PriorityClass", "Namespace", "Node", "Pod", "PersistentVolumeClaim", "PodDisruptionBudget")
MAX_CYCLES = 12
LOADED_FILE = "loaded.json"  # what a run loaded, kept beside the plane for --reuse
SETTLED_SHARE = 0.03  # two upstream cycles this close in evictions: its sandbox holds the whole cluster
DUMPED = (("v1", "nodes"), ("v1", "pods"), ("v1", "namespaces"), ("scheduling.k8s.io/v1", "priorityclasses"),
          ("policy/v1", "poddisruptionbudgets"), ("v1", "persistentvolumeclaims"))
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
BUILT_IN_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
REQUESTS_METRIC = re.compile(r'^apiserver_request_total\{([^}]*)\} (\S+)$')
RESPONSE_BYTES_METRIC = re.compile(r'^apiserver_response_sizes_sum\{([^}]*)\} (\S+)$')
WATCH_BYTES_METRIC = re.compile(r'^apiserver_watch_events_sizes_sum\{([^}]*)\} (\S+)$')
ALLOCATED_METRIC = re.compile(r'^go_memstats_alloc_bytes_total (\S+)$')  # bytes the API server's heap handed out
VERB_LABEL = re.compile(r'verb="([A-Z]+)"')


# ---- talking to the server ------------------------------------------------------------------------------------


def admin_client(kubeconfig: Path) -> Any:
    """The collection's own API client for the plane (admin certificate), shared by the loading threads."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import build_api_client

    return build_api_client({"kubeconfig": str(kubeconfig)}, env={})


# ---- loading the cluster --------------------------------------------------------------------------------------


def creatable(obj: dict) -> dict:
    """The object as a client would create it: no server-owned metadata, no status; a Pod without the priority
    the Priority admission plugin computes from its class (it refuses a different one) nor the overhead the
    RuntimeClass plugin copies from its class (same), a mirror (static) pod
    without a service account (the ServiceAccount admission plugin refuses one)."""
    body = {key: value for key, value in obj.items() if key != "status"}
    body["metadata"] = {key: value for key, value in obj["metadata"].items()
                        if key not in ("uid", "resourceVersion", "creationTimestamp")}
    if obj.get("kind") == "Pod":
        dropped = ("priority", "overhead", "serviceAccountName") if is_mirror(obj) else ("priority", "overhead")
        body["spec"] = {key: value for key, value in obj["spec"].items() if key not in dropped}
    return body


def is_mirror(pod: dict) -> bool:
    return MIRROR_ANNOTATION in (pod["metadata"].get("annotations") or {})


def create_with_status(api_client: Any, api_version: str, plural: str, obj: dict) -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
        patch_raw,
        post_raw,
        resource_path,
    )

    namespace = obj["metadata"].get("namespace")
    try:
        post_raw(api_client, resource_path(api_version, plural, namespace), creatable(obj))
    except ClusterApiError as error:
        if error.status != 409:  # 409: a namespace or class that exists already
            raise
    status = {key: value for key, value in (obj.get("status") or {}).items() if key != "qosClass"}
    if status:
        patch_raw(api_client, resource_path(api_version, plural, namespace, obj["metadata"]["name"], "status"),
                  {"status": status})


def service_accounts(pods: Iterable[dict]) -> set[tuple[str, str]]:
    """The ServiceAccount admission plugin refuses a pod whose account does not exist."""
    return {(p["metadata"]["namespace"], p["spec"].get("serviceAccountName") or "default")
            for p in pods if not is_mirror(p)}


def runtime_classes(pods: Iterable[dict]) -> list[dict]:
    """The RuntimeClass admission plugin refuses a pod whose class does not exist, or whose overhead differs."""
    overheads = {p["spec"]["runtimeClassName"]: p["spec"].get("overhead")
                 for p in pods if p["spec"].get("runtimeClassName")}
    return [{"metadata": {"name": name}, "handler": name, **({"overhead": {"podFixed": overhead}} if overhead else {})}
            for name, overhead in sorted(overheads.items())]


def load_cluster(api_client: Any, objects: list[dict], workers: int) -> dict[str, int]:
    by_kind: dict[str, list[dict]] = {kind: [] for kind in LOADED_KINDS}
    for obj in objects:
        if obj["kind"] in by_kind:
            by_kind[obj["kind"]].append(obj)
    by_kind["PriorityClass"] = [c for c in by_kind["PriorityClass"]
                                if c["metadata"]["name"] not in BUILT_IN_PRIORITY_CLASSES]
    steps: list[tuple[str, str, Iterable[dict]]] = [
        ("scheduling.k8s.io/v1", "priorityclasses", by_kind["PriorityClass"]),
        ("v1", "namespaces", by_kind["Namespace"]),
        ("v1", "serviceaccounts", [{"metadata": {"namespace": ns, "name": name}}
                                   for ns, name in sorted(service_accounts(by_kind["Pod"]))]),
        ("node.k8s.io/v1", "runtimeclasses", runtime_classes(by_kind["Pod"])),
        ("v1", "nodes", by_kind["Node"]),
        ("v1", "pods", by_kind["Pod"]),
        ("v1", "persistentvolumeclaims", by_kind["PersistentVolumeClaim"]),
        ("policy/v1", "poddisruptionbudgets", by_kind["PodDisruptionBudget"]),
    ]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for api_version, plural, items in steps:  # each kind complete before the next (pods need their namespace)
            list(pool.map(lambda obj, v=api_version, p=plural: create_with_status(api_client, v, p, obj), items))
    return {kind: len(items) for kind, items in by_kind.items()}


def dump_cluster(api_client: Any, path: Path, page_size: int = 500) -> int:
    """What the server holds, as one `kind: List` file, written page by page (never held whole)."""
    count = 0
    with path.open("w") as out:
        out.write('{"apiVersion": "v1", "kind": "List", "items": [')
        for api_version, plural in DUMPED:
            for item in paged(api_client, api_version, plural, page_size):
                out.write(("," if count else "") + json.dumps(item))
                count += 1
        out.write("]}\n")
    return count


def paged(api_client: Any, api_version: str, plural: str, page_size: int) -> Iterator[dict]:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
        request_raw,
        resource_path,
    )

    token = ""
    while True:
        query = [("limit", page_size)] + ([("continue", token)] if token else [])
        page = request_raw(api_client, "GET", resource_path(api_version, plural), query=query)
        kind = page["kind"].removesuffix("List")
        for item in page["items"]:
            yield {"apiVersion": page["apiVersion"], "kind": kind, **item}
        token = page["metadata"].get("continue") or ""
        if not token:
            return


# ---- what the API server spends -------------------------------------------------------------------------------


def rss_mib(pid: int, field_name: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


class PeakSampler:
    """The API server's largest RSS while a measured run is under way."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakSampler:
        self.before = rss_mib(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_mib(self.pid))


def served(api_client: Any) -> dict[str, float]:
    """Requests by verb, response bytes and watch event bytes the API server has served so far."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_text

    totals: dict[str, float] = {"requests": 0.0, "response_bytes": 0.0, "watch_bytes": 0.0}
    for line in get_text(api_client, "/metrics").splitlines():
        allocated = ALLOCATED_METRIC.match(line)
        if allocated:
            totals["allocated_bytes"] = float(allocated.group(1))
        for pattern, key in ((REQUESTS_METRIC, "requests"), (RESPONSE_BYTES_METRIC, "response_bytes"),
                             (WATCH_BYTES_METRIC, "watch_bytes")):
            match = pattern.match(line)
            if match:
                totals[key] += float(match.group(2))
                verb = VERB_LABEL.search(match.group(1))
                if key == "requests" and verb:
                    totals[verb.group(1)] = totals.get(verb.group(1), 0.0) + float(match.group(2))
    return totals


@dataclass
class Usage:
    """What one process had spent at a moment: from its start, or up to the end of an upstream cycle."""

    seconds: float
    cpu_seconds: float
    rss_mib: float
    evictions: int | None


@dataclass
class Run:
    name: str
    marks: list[Usage] = field(default_factory=list)  # the plan module: one; upstream: one per cycle
    apiserver_extra_mib: float | None = None
    apiserver_cpu_seconds: float | None = None
    apiserver_served: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def measured(api_client: Any, apiserver_pid: int, run: Run, action: Callable[[Run], None]) -> Run:
    before, cpu_before = served(api_client), cpu_seconds(apiserver_pid)
    with PeakSampler(apiserver_pid) as sampler:
        try:
            action(run)
        except (RuntimeError, OSError, subprocess.SubprocessError) as error:
            run.error = str(error)
    after = served(api_client)
    run.apiserver_cpu_seconds = cpu_seconds(apiserver_pid) - cpu_before
    run.apiserver_extra_mib = max(sampler.peak - sampler.before, 0.0)
    run.apiserver_served = {key: after.get(key, 0.0) - before.get(key, 0.0) for key in after
                            if after.get(key, 0.0) - before.get(key, 0.0) > 0}
    return run


# ---- the three runs -------------------------------------------------------------------------------------------


def build_upstream() -> Path:
    completed = subprocess.run(["bash", str(UPSTREAM_BUILD)], stdout=subprocess.PIPE, text=True, check=True)
    return Path(completed.stdout.strip().splitlines()[-1]) / "descheduler"


def upstream_cycle(binary: Path, kubeconfig: Path, policy_file: Path, workdir: Path, timeout: float) -> Callable:
    def action(run: Run) -> None:
        command = [str(binary), f"--kubeconfig={kubeconfig}", f"--policy-config-file={policy_file}", "--dry-run",
                   "--descheduling-interval=1s", "--secure-port=0", "--disable-metrics", "--v=1",
                   "--logging-format=text"]
        from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import (
            CYCLE_TOTALS,
            DRY_RUN_EVICTION,
        )

        evicted = 0
        started = time.perf_counter()
        with (workdir / "descheduler.log").open("w") as log, subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
            watchdog = threading.Timer(timeout, process.kill)
            watchdog.start()
            try:
                for line in process.stdout:
                    log.write(line)
                    evicted += f'"{DRY_RUN_EVICTION}"' in line
                    if CYCLE_TOTALS in line:
                        run.marks.append(Usage(time.perf_counter() - started, cpu_seconds(process.pid),
                                               rss_mib(process.pid, "VmHWM"), evicted))
                        evicted = 0
                        if settled(run.marks) or len(run.marks) == MAX_CYCLES:
                            break
            finally:
                watchdog.cancel()
                process.kill()
        if not settled(run.marks):
            raise RuntimeError(f"the descheduler's evictions had not settled after {len(run.marks)} cycle(s) "
                               f"({[mark.evictions for mark in run.marks]}); see {workdir / 'descheduler.log'}")
    return action


def settled(marks: list[Usage]) -> bool:
    if len(marks) < 2 or not marks[-1].evictions:
        return False
    return abs(marks[-1].evictions - (marks[-2].evictions or 0)) <= SETTLED_SHARE * marks[-1].evictions


def plan_module(module_args: dict, workdir: Path, pythonpath: str, timeout: float, files: str = "") -> Callable:
    def action(run: Run) -> None:
        module = run_plan_module(module_args, workdir, pythonpath, timeout, files or run.name)
        if module.error:
            raise RuntimeError(f"{run.name}: {module.error}")
        run.marks.append(Usage(module.seconds, module.cpu_seconds, module.rss_mib, count_evictions(module.result)))
    return action


# ---- orchestration --------------------------------------------------------------------------------------------


@dataclass
class ScaleReport:
    label: str
    loaded: dict[str, int] = field(default_factory=dict)
    load_seconds: float = 0.0
    dumped_objects: int = 0
    apiserver_rest_mib: float = 0.0
    runs: list[Run] = field(default_factory=list)


def generate_and_load(kubeconfig: str, nodes: int, per_node: int, seed: int,
                      workers: int) -> tuple[dict[str, int], list[str], float]:
    """Generate the cluster and create it through the API; what was loaded, its namespaces and the seconds it
    took. Run in a process of its own: the generated objects take GBs at 150k pods, and a process's peak RSS
    (what wait4 reports for the module runs measured later) starts from its parent's peak."""
    make_collection_importable()  # a spawned process starts without the parent's sys.path
    objects = list(load_generator().iter_cluster(nodes, per_node, seed, GENERATED_AT, "openshift"))
    namespaces = sorted({o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"} | {"default"})
    started = time.perf_counter()
    loaded = load_cluster(admin_client(Path(kubeconfig)), objects, workers)
    return loaded, namespaces, time.perf_counter() - started


def measure_scale(nodes: int, per_node: int, args: argparse.Namespace, pythonpath: str) -> ScaleReport:
    report = ScaleReport(f"{nodes}x{per_node}")
    make_collection_importable()
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import render_policy

    workdir = Path(tempfile.mkdtemp(prefix="bench-live-", dir=args.workdir))
    plane = start_control_plane(workdir / "plane")
    try:
        api_client = admin_client(plane.kubeconfig)
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as loader:
            report.loaded, namespaces, report.load_seconds = loader.submit(
                generate_and_load, str(plane.kubeconfig), nodes, per_node, args.seed, args.load_workers).result()
        (workdir / "policy.yaml").write_text(yaml.safe_dump(render_policy(dict(KUBEDESCHEDULER_SPEC),
                                                                          namespaces=namespaces)))
        report.dumped_objects = dump_cluster(api_client, workdir / "snapshot.json")
        pid = next(p.popen.pid for p in plane.processes if p.name == "kube-apiserver")
        time.sleep(args.settle)  # let the API server's garbage collector return what the load used
        report.apiserver_rest_mib = rss_mib(pid)
        (workdir / LOADED_FILE).write_text(json.dumps({
            "label": report.label, "loaded": report.loaded, "load_seconds": report.load_seconds,
            "dumped_objects": report.dumped_objects, "apiserver_rest_mib": report.apiserver_rest_mib}))
        measure_runs(report, workdir, plane.kubeconfig, pid, args, pythonpath)
    finally:
        if args.keep:
            pids = " ".join(str(process.popen.pid) for process in plane.processes)
            print(f"kept: the control plane (kubeconfig {plane.kubeconfig}) runs on; the snapshot, the policy and "
                  f"the runs' arguments are in {workdir}; measure again with --reuse {workdir}; stop it with: "
                  f"kill {pids}")
        else:
            plane.stop()
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def measure_kept(workdir: Path, args: argparse.Namespace, pythonpath: str) -> ScaleReport:
    """The runs again on a plane an earlier --keep left loaded (its workdir)."""
    kept = json.loads((workdir / LOADED_FILE).read_text())
    report = ScaleReport(kept["label"], kept["loaded"], kept["load_seconds"], kept["dumped_objects"],
                         kept["apiserver_rest_mib"])
    kubeconfig = workdir / "plane" / "admin.kubeconfig"
    measure_runs(report, workdir, kubeconfig, kept_apiserver_pid(workdir), args, pythonpath)
    return report


def kept_apiserver_pid(workdir: Path) -> int:
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if proc.name.isdigit() and command[0].endswith(b"kube-apiserver") and str(workdir).encode() in b" ".join(
                command):
            return int(proc.name)
    raise SystemExit(f"--reuse: no kube-apiserver of {workdir} is running (was it started with --keep?)")


def measure_runs(report: ScaleReport, workdir: Path, kubeconfig: Path, apiserver_pid: int,
                 args: argparse.Namespace, pythonpath: str) -> None:
    """upstream (unless --skip-upstream), then the live plan (streamed lists, then pages), then the plan of the
    snapshot file."""
    api_client = admin_client(kubeconfig)
    policy_file = workdir / "policy.yaml"
    policy = yaml.safe_load(policy_file.read_text())
    if not args.skip_upstream:
        run = upstream_cycle(build_upstream(), kubeconfig, policy_file, workdir, args.timeout)
        report.runs.append(measured(api_client, apiserver_pid, Run("upstream"), run))
        time.sleep(args.settle)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    live_run = plan_module({"kubeconfig": str(kubeconfig), "policy": policy}, workdir, pythonpath, args.timeout)
    report.runs.append(measured(api_client, apiserver_pid, Run("live"), live_run))
    time.sleep(args.settle)
    pages_args = {"kubeconfig": str(kubeconfig), "policy": policy, "watch_list": False}
    pages_run = plan_module(pages_args, workdir, pythonpath, args.timeout, "live-pages")
    report.runs.append(measured(api_client, apiserver_pid, Run("live, pages"), pages_run))
    file_args = {"snapshot": str(workdir / "snapshot.json"), "policy": policy, "now": now}
    file_run = plan_module(file_args, workdir, pythonpath, args.timeout)
    report.runs.append(measured(api_client, apiserver_pid, Run("file"), file_run))


def fmt(value: float | int | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def print_report(report: ScaleReport) -> None:
    pods = report.loaded.get("Pod", 0)
    print(f"\n## {report.label}: {pods:,} pods, {report.loaded.get('Node', 0):,} nodes, "
          f"{report.dumped_objects:,} objects listed back; loaded in {report.load_seconds:.0f} s; "
          f"kube-apiserver at rest {report.apiserver_rest_mib:,.0f} MiB\n")
    print("| run | wall s | CPU s | peak RSS MiB | evictions | kube-apiserver CPU s | kube-apiserver extra MiB "
          "| kube-apiserver allocated MiB | requests (LIST, WATCH) | response MiB | watch events MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for run in report.runs:
        print_run(run)
    for run in report.runs:
        if run.error:
            print(f"\n{run.name} failed: {run.error}")
    print_ratios({run.name: run.marks for run in report.runs if run.marks})


def print_run(run: Run) -> None:
    served_ = run.apiserver_served
    server_columns = (f"{fmt(run.apiserver_cpu_seconds)} | {fmt(run.apiserver_extra_mib, ',.0f')} | "
                      f"{served_.get('allocated_bytes', 0) / 2**20:,.0f} | "
                      f"{served_.get('requests', 0):.0f} "
                      f"({served_.get('LIST', 0):.0f}, {served_.get('WATCH', 0):.0f}) | "
                      f"{served_.get('response_bytes', 0) / 2**20:,.1f} | {served_.get('watch_bytes', 0) / 2**20:,.1f}")
    for index, mark in enumerate(run.marks or [None]):
        name = f"{run.name} (to the end of cycle {index + 1})" if run.name == "upstream" else run.name
        usage = ("- | - | - | -" if mark is None else f"{fmt(mark.seconds)} | {fmt(mark.cpu_seconds)} | "
                 f"{fmt(mark.rss_mib, ',.0f')} | {fmt(mark.evictions, ',d')}")
        print(f"| {name} | {usage} | {server_columns if index == 0 else '(same process) | | | | | |'} |")


def print_ratios(marks: dict[str, list[Usage]]) -> None:
    if "upstream" not in marks or "live" not in marks:
        return
    live, cycles = marks["live"][0], marks["upstream"]
    print()
    first_complete = len(cycles) - 2 if settled(cycles) else len(cycles) - 1
    for index in sorted({0, first_complete}):
        cycle = cycles[index]
        print(f"live plan / upstream to the end of cycle {index + 1}: time {live.seconds / cycle.seconds:.2f}x, "
              f"CPU {live.cpu_seconds / max(cycle.cpu_seconds, 0.01):.2f}x, "
              f"peak RSS {live.rss_mib / cycle.rss_mib:.2f}x")


def parse_scales(text: str) -> list[tuple[int, int]]:
    scales = []
    for item in text.split(","):
        nodes, _x, per_node = item.strip().partition("x")
        if not (nodes.isdigit() and per_node.isdigit()):
            raise SystemExit(f"--scales: {item!r} is not NODESxPODS_PER_NODE (for example 5000x30)")
        scales.append((int(nodes), int(per_node)))
    return scales


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--scales", default=DEFAULT_SCALES, help="NODESxPODS_PER_NODE, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--load-workers", type=int, default=8, help="concurrent requests while loading")
    parser.add_argument("--skip-upstream", action="store_true", help="measure only the plan module")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds of rest before each measurement")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed for each run")
    parser.add_argument("--workdir", default=None, help="where the plane's data and the snapshot go (large)")
    parser.add_argument("--keep", action="store_true", help="leave the loaded control plane running, for profiling")
    parser.add_argument("--reuse", default=None, metavar="WORKDIR",
                        help="measure again on the plane a --keep run left loaded (its workdir); --scales is ignored")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pythonpath = make_collection_importable()
    failed = False
    reports = ([measure_kept(Path(args.reuse).resolve(), args, pythonpath)] if args.reuse else
               (measure_scale(nodes, per_node, args, pythonpath) for nodes, per_node in parse_scales(args.scales)))
    for report in reports:  # each scale printed as soon as it is measured
        print_report(report)
        failed = failed or any(run.error for run in report.runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
