"""The real kubernetes-sigs descheduler (tests/upstream, built once and cached) run in dry-run mode against the test
control plane: what it would evict, read from its own log lines with the collection's log parser.

    binary = build_descheduler()
    cycles = dry_run_cycles(binary, kubeconfig, policy, workdir, 4)   # evictions per descheduling cycle

Dry-run cycles change nothing in the cluster (each starts from the mirrored cluster again), and each walks Go maps
in a new random order, so repeated cycles show the spread of choices the descheduler makes on an unchanged
cluster; but not independently where the order of a node's pods decides (see dry_run_cycles): `fresh_cycles`
takes one cycle from each of several processes instead.
"""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import yaml

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "upstream" / "build.sh"
CYCLE_TIMEOUT = 60
CYCLE_INTERVAL = "1s"
# The CA bundle the descheduler's Prometheus client reads, relative to its working directory (tests/upstream/build.sh
# sets that path at link time; upstream reads a pod's service-account ca.crt)
PROMETHEUS_CA_FILE = "prometheus-ca.crt"


class UpstreamError(RuntimeError):
    pass


@dataclass(frozen=True)
class UpstreamEviction:
    namespace: str
    name: str
    plugin: str
    node: str
    profile: str


def build_descheduler() -> Path:
    completed = subprocess.run(["bash", str(BUILD)], stdout=subprocess.PIPE, stderr=None, text=True, check=False)
    if completed.returncode != 0:
        raise UpstreamError(f"tests/upstream/build.sh failed (exit {completed.returncode}); see its output above")
    return Path(completed.stdout.strip().splitlines()[-1]) / "descheduler"


def dry_run_cycles(binary: Path, kubeconfig: Path, policy: dict[str, Any], workdir: Path,
                   cycles: int) -> list[list[UpstreamEviction]]:
    """`cycles` dry-run descheduling cycles of the real descheduler, each one's evictions in the order it logged
    them. The first cycle of the process is left out: in dry-run mode the descheduler mirrors the cluster into a
    fake client by informer events, and its first cycle may start before every pod arrived (upstream
    pkg/descheduler/descheduler.go, bootstrapDescheduler); later cycles see the whole cluster.

    The cycles of one process are not independent draws: the fake client's pods-by-node index lives as long as the
    process, and the pods a cycle evicted are deleted from it and added back (kubeclientsandbox.go,
    restoreEvictedPods) into the slots they freed, in the iteration order of its evicted-pods cache (a Go map keyed
    by UID: no set order). A node's one evicted pod goes back to its own slot, several may trade slots: where a
    node's choice depends on the order of its pods, a layout that needs one eviction is kept once reached, and later
    cycles drift towards the layouts that evict least; fresh_cycles gives independent ones."""
    finished = _run(binary, kubeconfig, policy, workdir, lambda done: len(done) > cycles, CYCLE_TIMEOUT * (cycles + 1))
    return [cycle.evictions for cycle in finished[1:]]


@dataclass
class Cycle:
    """One descheduling cycle: its dry-run evictions and every log record it wrote."""

    evictions: list[UpstreamEviction] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)


def fresh_cycles(binary: Path, kubeconfig: Path, policy: dict[str, Any], workdir: Path, count: int,
                 complete: Callable[[Cycle], bool], parallel: int = 3, files: dict[str, str] | None = None,
                 verbosity: int = 1) -> list[list[UpstreamEviction]]:
    """The evictions of `count` descheduler processes' first complete cycles, each from a new process (so each
    starts from a fresh pods-by-node index, as the plan's sampled cycles do), `parallel` processes at a time.

    `complete` says whether a cycle saw the whole cluster (every node and pod, with metrics); a process's cycles
    before its first complete one must have evicted nothing (else they moved pods in its index), or the process is
    left out and another one started, at most `count` more in all. `files` ({name: text}) are written into each
    process's working directory (PROMETHEUS_CA_FILE for a Prometheus metrics provider); `verbosity` is its --v."""
    results: list[list[UpstreamEviction]] = []
    attempts = 0
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        while len(results) < count:
            batch = min(parallel, count - len(results))
            if attempts + batch > 2 * count:
                raise UpstreamError(f"only {len(results)} of {count} descheduler processes gave a complete first "
                                    f"cycle in {attempts} attempts; their logs are under {workdir}")
            futures = [pool.submit(_first_complete_cycle, binary, kubeconfig, policy,
                                   workdir / f"process-{attempts + index}", complete, files, verbosity)
                       for index in range(batch)]
            attempts += batch
            results.extend(cycle for cycle in (future.result() for future in futures) if cycle is not None)
    return results


def _first_complete_cycle(binary: Path, kubeconfig: Path, policy: dict[str, Any], workdir: Path,
                          complete: Callable[[Cycle], bool], files: dict[str, str] | None,
                          verbosity: int) -> Optional[list[UpstreamEviction]]:
    finished = _run(binary, kubeconfig, policy, workdir, lambda done: bool(done) and complete(done[-1]),
                    CYCLE_TIMEOUT * 2, files, verbosity)
    if any(cycle.evictions for cycle in finished[:-1]):
        return None
    return finished[-1].evictions


def _run(binary: Path, kubeconfig: Path, policy: dict[str, Any], workdir: Path,
         enough: Callable[[list[Cycle]], bool], timeout: float, files: dict[str, str] | None = None,
         verbosity: int = 1) -> list[Cycle]:
    """Runs the descheduler in dry-run mode in `workdir` (with `files` written there, logging at `verbosity`) until
    `enough` of its finished cycles, or fails after `timeout` s."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import (
        CYCLE_TOTALS,
        DRY_RUN_EVICTION,
        parse_klog_line,
    )

    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (workdir / name).write_text(text)
    policy_file = workdir / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(policy))
    command = [str(binary), f"--kubeconfig={kubeconfig}", f"--policy-config-file={policy_file}", "--dry-run",
               f"--descheduling-interval={CYCLE_INTERVAL}", "--secure-port=0", "--disable-metrics", f"--v={verbosity}",
               "--logging-format=text"]
    log = workdir / "descheduler.log"
    finished: list[Cycle] = []
    current = Cycle()
    deadline = time.monotonic() + timeout
    with log.open("w") as sink, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 text=True, cwd=workdir) as process:
        try:
            for line in process.stdout:
                sink.write(line)
                record = parse_klog_line(line)
                if record is not None:
                    current.records.append(record)
                if record is not None and record.message == DRY_RUN_EVICTION:
                    namespace, _slash, name = record.values["pod"].partition("/")
                    current.evictions.append(UpstreamEviction(namespace, name, record.values.get("strategy", ""),
                                                              record.values.get("node", ""),
                                                              record.values.get("profile", "")))
                elif record is not None and record.message == CYCLE_TOTALS:
                    finished.append(current)
                    current = Cycle()
                    if enough(finished):
                        break
                if time.monotonic() > deadline:
                    break
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    if not finished or not enough(finished):
        raise UpstreamError(f"the descheduler did not finish the cycles wanted in {timeout:.0f} s ({len(finished)} "
                            f"finished, exit {process.returncode}); its log: {log}\n{log.read_text()[-4000:]}")
    return finished
