"""Fixtures for the integration tests: an in-process Kubernetes API emulator, or a real cluster.

- `emulator`: a started `Emulator` with a kubeconfig in tmp_path (`.url`, `.kubeconfig`, `.context`, `.store`,
  `.load()`, `.get()`, `.faults`, `.auth`, `.set_pod_log()`). Configure it per test with
  `@pytest.mark.emulator(controllers=["replicaset"], graceful_pod_deletion=True)`.
- `kube`: the same emulator, or – when TEST_KUBECONFIG is set – a `RealCluster` handle on that cluster
  (TEST_KUBE_CONTEXT picks a context). Tests that need emulator-only features are marked `needs_emulator`
  and are skipped against a real cluster.
- `api_client`: a `kubernetes.client.ApiClient` for `kube`; `dynamic_client`: a DynamicClient on it;
  `namespace`: a fresh namespace for the test.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/integration has no __init__.py: make `emulator` importable

from emulator import Emulator, RealCluster  # noqa: E402

REAL_CLUSTER_ENV = "TEST_KUBECONFIG"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_emulator: uses emulator-only features (fault injection, seeding, "
                                       "controllers); skipped when TEST_KUBECONFIG points at a real cluster")
    config.addinivalue_line("markers", "emulator(**options): keyword arguments for the Emulator of this test")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get(REAL_CLUSTER_ENV):
        return
    skip = pytest.mark.skip(reason=f"needs the emulator ({REAL_CLUSTER_ENV} points at a real cluster)")
    for item in items:
        if item.get_closest_marker("needs_emulator"):
            item.add_marker(skip)


@pytest.fixture
def emulator(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Emulator]:
    marker = request.node.get_closest_marker("emulator")
    instance = Emulator(**(marker.kwargs if marker else {})).start()
    instance.write_kubeconfig(tmp_path / "kubeconfig")
    try:
        yield instance
    finally:
        instance.stop()


@pytest.fixture
def kube(request: pytest.FixtureRequest) -> Emulator | RealCluster:
    kubeconfig = os.environ.get(REAL_CLUSTER_ENV)
    if kubeconfig:
        return RealCluster(kubeconfig, os.environ.get("TEST_KUBE_CONTEXT"))
    return request.getfixturevalue("emulator")


@pytest.fixture
def api_client(kube: Emulator | RealCluster) -> Iterator[Any]:
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
def namespace(kube: Emulator | RealCluster, api_client: Any) -> Iterator[str]:
    from kubernetes import client

    name = f"it-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api_client)
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
