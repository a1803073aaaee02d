"""CPU-seconds per integration test, to find what makes the suite slow on a loaded machine (issue 19).

On two cores the suite is CPU-bound (its workers keep the cores about 90% busy), so its wall time under load follows
the CPU it uses, not its waits. Set TEST_CPU_REPORT=<directory> and each pytest worker writes
`<directory>/ansible-core-<version>-<worker>.jsonl` (the version tells the integration stage from compat, which
runs beside it with workers of the same names): one line per test with the CPU-seconds spent during it, counted
where they are spent:
- `worker`: the pytest process itself (test code, the kubelet and operator stand-ins, the `kubernetes` client);
- `children`: its subprocesses that ended during the test (ansible-playbook and the modules it runs, kubectl,
  the upstream descheduler...), as the kernel adds them up when they are reaped;
- `servers`: the control planes' processes (etcd, kube-apiserver, kube-controller-manager, of the session's plane
  and of the fleet's extra planes), read from /proc, including their idle time during the test.
`python tests/integration/cpu_report.py <directory>` sums them per test file.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from ansible import release as ansible_release
from process_tree import stat_fields

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process (0 once it is gone)."""
    try:
        fields = stat_fields(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def own_and_children_seconds() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def ansible_core_version() -> str:
    """major.minor of the ansible-core this session's ansible-playbook runs (its venv's)."""
    return ".".join(ansible_release.__version__.split(".")[:2])


class CpuAccounting:
    """A pytest plugin: `server_pids()` gives the pids of the control-plane processes running now."""

    def __init__(self, report_dir: Path, server_pids: Callable[[], Iterable[int]]) -> None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        report_dir.mkdir(parents=True, exist_ok=True)
        self.path = report_dir / f"ansible-core-{ansible_core_version()}-{worker}.jsonl"
        self.server_pids = server_pids

    def _servers(self) -> dict[int, float]:
        return {pid: process_cpu_seconds(pid) for pid in self.server_pids()}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        started = time.monotonic()
        own_before, children_before = own_and_children_seconds()
        servers_before = self._servers()
        try:
            return (yield)
        finally:
            own_after, children_after = own_and_children_seconds()
            servers_after = self._servers()
            # A plane started during the test counts from zero. A plane stopped during it is reaped by this process,
            # so `children` holds its whole life: what earlier tests counted as `servers` is taken off again.
            servers = sum(after - servers_before.get(pid, 0.0) for pid, after in servers_after.items())
            stopped = sum(seconds for pid, seconds in servers_before.items() if pid not in servers_after)
            children = children_after - children_before - stopped
            line = {"test": item.nodeid, "wall": round(time.monotonic() - started, 2),
                    "worker": round(own_after - own_before, 2), "children": round(children, 2),
                    "servers": round(servers, 2)}
            with self.path.open("a") as sink:
                sink.write(json.dumps(line) + "\n")
