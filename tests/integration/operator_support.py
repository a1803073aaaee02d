"""Helpers for the kubedescheduler, info and tune tests: the operator emulation fixture and task builders.

On the emulator, `operator_standin` installs the Kube Descheduler Operator emulation
(tests/integration/emulator/descheduler_operator.py).
On a real cluster (TEST_KUBECONFIG) the operator must already be installed; the KubeDescheduler `cluster` found there
is put back at the end of each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from emulator.descheduler_operator import (
    OPERATOR_NAMESPACE,
    ROUTE_CRD,
    SCHEDULER_CRD,
    KubeDeschedulerOperator,
    install_descheduler_operator,
)

KD_API = "operator.openshift.io/v1"
BASE_SPEC = {"mode": "Predictive", "deschedulingIntervalSeconds": 3600, "profiles": ["AffinityAndTaints"]}


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def kd_task(kube: Any, register: str = "kd", **options: Any) -> dict[str, Any]:
    """A descheduler.fleet.kubedescheduler task (short waits on the emulator, where the operator acts at once)."""
    timeout = 20 if getattr(kube, "is_emulator", False) else 300
    args = {**connection(kube), "wait_timeout": timeout, "wait_sleep": 1, **options}
    return {"name": f"KubeDescheduler ({register})", "descheduler.fleet.kubedescheduler": args, "register": register}


def info_task(kube: Any, register: str = "info", **options: Any) -> dict[str, Any]:
    return {"name": "Descheduler facts", "descheduler.fleet.info": {**connection(kube), **options},
            "register": register}


def assert_succeeded(process: Any) -> None:
    assert process.returncode == 0, process.stdout[-6000:] + process.stderr[-3000:]


def run_ok(tmp_path: Any, tasks: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """Run tasks that must succeed; their registered results."""
    from playbook import run_tasks

    process, results = run_tasks(tmp_path, tasks, **options)
    assert_succeeded(process)
    return results


def assert_failed(process: Any) -> None:
    assert process.returncode != 0, process.stdout[-6000:]


def get_kd(kube: Any) -> dict[str, Any] | None:
    if getattr(kube, "is_emulator", False):
        return kube.get("kubedeschedulers.operator.openshift.io", OPERATOR_NAMESPACE, "cluster")
    return kube.get("KubeDescheduler", OPERATOR_NAMESPACE, "cluster", api_version=KD_API)


def get_object(kube: Any, kind: str, name: str, api_version: str = "v1") -> dict[str, Any] | None:
    if getattr(kube, "is_emulator", False):
        return kube.get(kind, OPERATOR_NAMESPACE, name)
    return kube.get(kind, OPERATOR_NAMESPACE, name, api_version=api_version)


def _real_cluster_kd(kube: Any) -> Iterator[None]:
    """Start without a KubeDescheduler; put the real cluster's one back as it was at the end."""
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

    with kube.api_client() as client:
        try:
            resource = DynamicClient(client).resources.get(api_version=KD_API, kind="KubeDescheduler")
        except ResourceNotFoundError:
            pytest.skip("the Kube Descheduler Operator is not installed on TEST_KUBECONFIG's cluster")
        try:
            original = resource.get(name="cluster", namespace=OPERATOR_NAMESPACE).to_dict()
            resource.delete(name="cluster", namespace=OPERATOR_NAMESPACE)
        except NotFoundError:
            original = None
    yield
    with kube.api_client() as client:
        resource = DynamicClient(client).resources.get(api_version=KD_API, kind="KubeDescheduler")
        try:
            resource.delete(name="cluster", namespace=OPERATOR_NAMESPACE)
        except NotFoundError:
            pass
        if original is not None:
            resource.create(body={"apiVersion": KD_API, "kind": "KubeDescheduler",
                                  "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE},
                                  "spec": original.get("spec") or {}}, namespace=OPERATOR_NAMESPACE)


def operator_for(kube: Any) -> Iterator[KubeDeschedulerOperator | None]:
    """For an `operator_standin` fixture: the operator, emulated (yielded, to steer it) or the real cluster's (None)."""
    if getattr(kube, "is_emulator", False):
        yield install_descheduler_operator(kube)
        return
    yield from _real_cluster_kd(kube)


def node(name: str, kubevirt: bool = False) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": ""}
    if kubevirt:
        labels["kubevirt.io/schedulable"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def serve_openshift_config(emulator: Any, *, scheduler_profile: str | None = None, route: bool = True) -> None:
    """The OpenShift objects the operator reads: schedulers.config.openshift.io/cluster and the Prometheus route."""
    if emulator.get("customresourcedefinitions", None, SCHEDULER_CRD["metadata"]["name"]) is None:
        emulator.create(dict(SCHEDULER_CRD))
        emulator.create(dict(ROUTE_CRD))
    if scheduler_profile is not None:
        emulator.create({"apiVersion": "config.openshift.io/v1", "kind": "Scheduler", "metadata": {"name": "cluster"},
                         "spec": {"profile": scheduler_profile}})
    if route:
        if emulator.get("namespaces", None, "openshift-monitoring") is None:
            emulator.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-monitoring"}})
        emulator.load([{"apiVersion": "route.openshift.io/v1", "kind": "Route",
                        "metadata": {"name": "prometheus-k8s", "namespace": "openshift-monitoring"},
                        "spec": {"host": "prometheus-k8s-openshift-monitoring.apps.example.com"},
                        "status": {"ingress": [{"host": "prometheus-k8s-openshift-monitoring.apps.example.com"}]}}])
