"""Fixtures for the integration tests: a real Kubernetes control plane (default) or a cluster of the tester's.

- `kube`: where a test runs:
  1. TEST_KUBECONFIG set: a `RealCluster` handle on that cluster (TEST_KUBE_CONTEXT picks a context); tests marked
     `faults` are skipped.
  2. otherwise the suite's own control plane (`control_plane`: kube-apiserver, kube-controller-manager and etcd
     built from tests/controlplane, one per session, with the kubelet stand-in); each test gets a
     `ControlPlaneCluster` handle that removes the namespaces and cluster-scoped objects the test made. A test
     marked `faults` talks to it through a fault-injection proxy (`kube.faults`, tests/integration/faultproxy.py).
     TEST_KUBE_SCHEDULER=1 also runs kube-scheduler (the stand-in then leaves placement to it).
  Control-plane logs are appended to the report of a failed test.
- `fleet_clusters`: a factory, `fleet_clusters(n)` -> n clusters for a fleet test (one inventory host each): on the
  control plane, the session's plane and extra planes sharing its etcd (tests/integration/fleet_support.py),
  started on first use and stopped after the last of a run of fleet tests (`group_fleet_tests`), each handle
  cleaning up like `kube`; skipped with TEST_KUBECONFIG (one cluster).
- `api_client`: a `kubernetes.client.ApiClient` for `kube`; `dynamic_client`: a DynamicClient on it;
  `namespace`: a fresh namespace for the test.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/integration has no __init__.py: make its modules importable
sys.path.insert(0, str(Path(__file__).parents[1]))  # ... and tests/controlplane as `controlplane`

from real_cluster import (  # noqa: E402
    ControlPlaneCluster,
    RealCluster,
    cluster_scoped_names,
    wait_for_default_service_account,
)
from upstream_descheduler import build_descheduler  # noqa: E402

REAL_CLUSTER_ENV = "TEST_KUBECONFIG"
SCHEDULER_ENV = "TEST_KUBE_SCHEDULER"
CPU_REPORT_ENV = "TEST_CPU_REPORT"  # a directory: CPU-seconds per test (cpu_accounting.py)
_RUNNING: dict[str, Any] = {}  # the session's control plane, for failure reports
# The fleet tests' xdist groups, by module: two of about equal length (at 3d8e2ea, four workers: tune role and
# cluster identity about 1,350 worker-seconds; rollout, sliced workflow and the rest about 1,300), each on a worker.
FLEET_GROUPS_DEFAULT = "fleet-1"
FLEET_GROUPS = {"test_tune_role.py": "fleet-2", "test_cluster_identity.py": "fleet-2"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "faults: `kube.faults` injects errors, drops and delays (a proxy in front of "
                                       "the control plane); skipped when TEST_KUBECONFIG is set")
    if os.environ.get(CPU_REPORT_ENV):
        from cpu_accounting import CpuAccounting

        config.pluginmanager.register(CpuAccounting(Path(os.environ[CPU_REPORT_ENV]), _server_pids), "cpu_accounting")


def _server_pids() -> list[int]:
    """The processes of the control planes running now: the session's and the fleet's extra ones."""
    planes = [_RUNNING["plane"]] if "plane" in _RUNNING else []
    if "fleet" in _RUNNING:
        planes += _RUNNING["fleet"].extra_planes()
    return [process.popen.pid for plane in planes for process in plane.processes]


def uses_fleet(item: pytest.Item | None) -> bool:
    return item is not None and "fleet_clusters" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    group_fleet_tests(items)
    if not os.environ.get(REAL_CLUSTER_ENV):
        return
    skip = pytest.mark.skip(reason=f"needs the fault proxy ({REAL_CLUSTER_ENV} points at a real cluster)")
    for item in items:
        if item.get_closest_marker("faults"):
            item.add_marker(skip)


def fleet_group(item: pytest.Item) -> str:
    return FLEET_GROUPS.get(item.path.name, FLEET_GROUPS_DEFAULT)


def fail_unless_grouped(item: pytest.Item) -> None:
    """A fleet test fails when pytest-xdist ignored its group: every worker would start fleet planes of its own and
    the run would only be slower (pytest 9.2 with pytest-xdist 3.8 did; requirements-dev.txt)."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and getattr(item.config.option, "loadgroup", False)):
        return
    if not item.nodeid.endswith(f"@{fleet_group(item)}"):
        pytest.fail(f"pytest-xdist did not put this fleet test in its xdist_group {fleet_group(item)!r}: with pytest "
                    f"{pytest.__version__}, --dist loadgroup ignores the marks. Install the pytest and pytest-xdist "
                    f"versions requirements-dev.txt allows.", pytrace=False)


def group_fleet_tests(items: list[pytest.Item]) -> None:
    """The fleet tests' extra planes cost CPU while they live (about 1.6 CPU-seconds a minute each, idle): each fleet
    test module joins one of FLEET_GROUPS, an `xdist_group` that `--dist loadgroup` gives to one worker, so two
    workers start extra planes instead of every worker; and a group's tests run one after another (moved next to
    the first of them), so the planes stop after its last test (`pytest_runtest_teardown`)."""
    fleet = [item for item in items if uses_fleet(item)]
    for item in fleet:
        item.add_marker(pytest.mark.xdist_group(fleet_group(item)))
    if not fleet:
        return
    first = items.index(fleet[0])
    rest = [item for item in items if not uses_fleet(item)]
    by_group = sorted(fleet, key=fleet_group)
    items[:] = rest[:first] + by_group + rest[first:]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last fleet test of a run of them (the test's own fixtures torn down), the extra planes stop; a later
    fleet test starts them again."""
    result = yield
    fleet = _RUNNING.get("fleet")
    if fleet is not None and nextitem is not None and uses_fleet(item) and not uses_fleet(nextitem):
        fleet.stop(keep_logs=bool(item.session.testsfailed))
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    plane = _RUNNING.get("plane")
    if report.failed and plane is not None and "kube" in getattr(item, "fixturenames", ()):
        report.sections.append(("control plane logs (tail)", plane.log_tail(40)))
    fleet = _RUNNING.get("fleet")
    if report.failed and fleet is not None and "fleet_clusters" in getattr(item, "fixturenames", ()):
        report.sections.append(("fleet control plane logs (tail)", fleet.first.log_tail(40) + fleet.log_tail(40)))


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[Any]:
    """kube-apiserver, kube-controller-manager and etcd (tests/controlplane) plus the kubelet stand-in, for the
    whole session. Its directory (certificates, kubeconfigs, one log per component) is removed at the end unless a
    test failed; then its path is printed. Not under pytest's basetemp: other sessions on the machine prune that."""
    from controlplane import ControlPlane, build_binaries
    from kubelet_standin import KubeletStandIn

    with_scheduler = os.environ.get(SCHEDULER_ENV, "") not in ("", "0")
    workdir = Path(tempfile.mkdtemp(prefix="descheduler-fleet-controlplane-"))
    plane = ControlPlane(build_binaries(), workdir, scheduler=with_scheduler)
    plane.start()
    _RUNNING["plane"] = plane
    standin_client = RealCluster(plane.kubeconfig).api_client()
    kubelet = KubeletStandIn(standin_client, ["default-scheduler"] if with_scheduler else ()).start()
    plane.kubelet = kubelet
    try:
        yield plane
    finally:
        _RUNNING.pop("plane", None)
        kubelet.stop()
        standin_client.close()
        plane.stop()
        if request.session.testsfailed:
            print(f"\ncontrol plane logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _control_plane_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ControlPlaneCluster]:
    plane = request.getfixturevalue("control_plane")
    plane.check_alive()
    with RealCluster(plane.kubeconfig).api_client() as client:
        baseline = cluster_scoped_names(client)
    kubeconfig, proxy = plane.kubeconfig, None
    if request.node.get_closest_marker("faults"):
        from controlplane import write_kubeconfig
        from faultproxy import FaultProxy

        proxy = FaultProxy(plane.url, plane.admin_ssl_context()).start()
        kubeconfig = tmp_path / "faults.kubeconfig"
        write_kubeconfig(kubeconfig, proxy.url, None, None, plane.context)
    handle = ControlPlaneCluster(kubeconfig, plane.context, plane.kubelet, baseline, faults=proxy,
                                 admin_kubeconfig=plane.kubeconfig)
    try:
        yield handle
    finally:
        if proxy is not None:
            proxy.stop()
        handle.cleanup()


@pytest.fixture(scope="session")
def descheduler_binary() -> Path:
    """The real upstream descheduler (tests/upstream/build.sh: built once, cached), for the agreement tests."""
    return build_descheduler()


@pytest.fixture(scope="session")
def fleet_planes(request: pytest.FixtureRequest, control_plane: Any) -> Iterator[Any]:
    """The session's control plane and the extra clusters fleet tests started (fleet_support.FleetPlanes)."""
    from fleet_support import FleetPlanes

    planes = FleetPlanes(control_plane)
    _RUNNING["fleet"] = planes
    try:
        yield planes
    finally:
        _RUNNING.pop("fleet", None)
        planes.stop(keep_logs=bool(request.session.testsfailed))


@pytest.fixture
def fleet_clusters(request: pytest.FixtureRequest) -> Iterator[Any]:
    from fleet_support import SKIP_ON_ONE_CLUSTER, fleet_of

    if os.environ.get(REAL_CLUSTER_ENV):
        pytest.skip(SKIP_ON_ONE_CLUSTER)
    fail_unless_grouped(request.node)
    yield from fleet_of(request.getfixturevalue("fleet_planes").planes)


@pytest.fixture
def kube(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RealCluster]:
    kubeconfig = os.environ.get(REAL_CLUSTER_ENV)
    if kubeconfig:
        yield RealCluster(kubeconfig, os.environ.get("TEST_KUBE_CONTEXT"))
    else:
        yield from _control_plane_cluster(request, tmp_path)


@pytest.fixture
def api_client(kube: RealCluster) -> Iterator[Any]:
    client = kube.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def dynamic_client(api_client: Any, tmp_path: Path) -> Any:
    from kubernetes.dynamic import DynamicClient

    # A per-test discovery cache: the default one in /tmp is keyed by host:port, which tests reuse.
    return DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))


@pytest.fixture
def namespace(api_client: Any) -> Iterator[str]:
    from kubernetes import client

    name = f"it-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api_client)
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    wait_for_default_service_account(api_client, name)
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
