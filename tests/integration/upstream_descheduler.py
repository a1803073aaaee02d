"""The real kubernetes-sigs descheduler (tests/upstream, built once and cached) run in dry-run mode against the test
control plane: what it would evict, read from its own log lines with the collection's log parser.

    binary = build_descheduler()
    cycles = dry_run_cycles(binary, kubeconfig, policy, workdir, 4)   # evictions per descheduling cycle

Dry-run cycles change nothing in the cluster (each starts from the mirrored cluster again), and each walks Go maps
in a new random order, so repeated cycles show the spread of choices the descheduler makes on an unchanged
cluster.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "upstream" / "build.sh"
CYCLE_TIMEOUT = 60
CYCLE_INTERVAL = "1s"


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
    pkg/descheduler/descheduler.go, bootstrapDescheduler); later cycles see the whole cluster."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import (
        CYCLE_TOTALS,
        DRY_RUN_EVICTION,
        parse_klog_line,
    )

    workdir.mkdir(parents=True, exist_ok=True)
    policy_file = workdir / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(policy))
    command = [str(binary), f"--kubeconfig={kubeconfig}", f"--policy-config-file={policy_file}", "--dry-run",
               f"--descheduling-interval={CYCLE_INTERVAL}", "--secure-port=0", "--disable-metrics", "--v=1",
               "--logging-format=text"]
    log = workdir / "descheduler.log"
    finished: list[list[UpstreamEviction]] = []
    current: list[UpstreamEviction] = []
    deadline = time.monotonic() + CYCLE_TIMEOUT * (cycles + 1)
    with log.open("w") as sink, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 text=True) as process:
        try:
            for line in process.stdout:
                sink.write(line)
                record = parse_klog_line(line)
                if record is not None and record.message == DRY_RUN_EVICTION:
                    namespace, _slash, name = record.values["pod"].partition("/")
                    current.append(UpstreamEviction(namespace, name, record.values.get("strategy", ""),
                                                    record.values.get("node", ""), record.values.get("profile", "")))
                elif record is not None and record.message == CYCLE_TOTALS:
                    finished.append(current)
                    current = []
                    if len(finished) > cycles:
                        break
                if time.monotonic() > deadline:
                    break
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    if len(finished) <= cycles:
        raise UpstreamError(f"the descheduler finished {len(finished)} cycles of {cycles + 1} (exit "
                            f"{process.returncode}); its log: {log}\n{log.read_text()[-4000:]}")
    return finished[1:]
