"""Helpers for the kubedescheduler, info and tune tests: the operator stand-in fixture and task builders.

`operator_for(kube)` starts the Kube Descheduler Operator stand-in (standins/descheduler_operator.py) on the test's
API server and stops it and removes what it installed at the end. Reads go through HTTP (`get_kd`, `get_object`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from real_cluster import wait_namespaces_gone
from standins.descheduler_operator import OPERAND, OPERATOR_NAMESPACE, DeschedulerOperator
from standins.kubedescheduler_types import API_VERSION, KUBEDESCHEDULER_CRD, ROUTE_CRD, SCHEDULER_CRD
from standins.rest import Rest, install_crds, path, remove_crds, wait_until

KD_API = API_VERSION
BASE_SPEC = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
             "profiles": ["AffinityAndTaints"]}


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def kd_task(kube: Any, register: str = "kd", **options: Any) -> dict[str, Any]:
    """A descheduler.fleet.kubedescheduler task. The stand-in acts within a second on an idle machine; the wait's
    bound is generous all the same (a wait ends as soon as its condition holds, so only a failing run pays for it).

    A removal waits on the real garbage collector. Its owner is a KubeDescheduler whose CRD this test's stand-in
    installed seconds before, and kube-controller-manager learns new kinds only at its 30 s discovery resync,
    retrying the owner lookup with exponential backoff meanwhile: the operand can stay for up to about a minute."""
    args = {**connection(kube), "wait_timeout": 120, "wait_sleep": 1, **options}
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


def read(kube: Any, url: str) -> dict[str, Any] | None:
    with kube.api_client() as client:
        return Rest(client).get(url)


def get_kd(kube: Any) -> dict[str, Any] | None:
    return read(kube, path(KD_API, "kubedeschedulers", OPERATOR_NAMESPACE, "cluster"))


def get_object(kube: Any, plural: str, name: str, api_version: str = "v1") -> dict[str, Any] | None:
    """An object of the operator namespace, e.g. get_object(kube, "deployments", "descheduler", "apps/v1")."""
    return read(kube, path(api_version, plural, OPERATOR_NAMESPACE, name))


@contextmanager
def descheduler_operator(kube: Any, *, monitoring_label: bool = True, psi_enabled: bool = True,
                         operand_ready: bool = True) -> Iterator[DeschedulerOperator]:
    """The operator stand-in on `kube` (`operand_ready=False`: the operand's pods run but never become Ready); on exit
    the loops stop and the KubeDescheduler, its namespace and the CRD it created are removed."""
    client = kube.api_client()
    rest = Rest(client)
    if not rest.list(path("v1", "nodes")):
        kube.load([node("control-plane-1")])  # somewhere for the kubelet stand-in to run the operand
    crd_existed = rest.get(path("apiextensions.k8s.io/v1", "customresourcedefinitions",
                                name=KUBEDESCHEDULER_CRD["metadata"]["name"])) is not None
    operator = DeschedulerOperator(client, psi_enabled=psi_enabled, operand_ready=operand_ready)
    try:
        yield operator.install(monitoring_label=monitoring_label)
        operator.check()
    finally:
        operator.stop()
        _remove_operator(rest, remove_crd=not crd_existed)
        client.close()


def _remove_operator(rest: Rest, remove_crd: bool) -> None:
    rest.delete(path(KD_API, "kubedeschedulers", OPERATOR_NAMESPACE, "cluster"))
    rest.delete(path("v1", "namespaces", name=OPERATOR_NAMESPACE))
    wait_namespaces_gone(rest.api_client, {OPERATOR_NAMESPACE}, 120)
    if remove_crd:
        remove_crds(rest, [KUBEDESCHEDULER_CRD["metadata"]["name"]])


def operator_for(kube: Any, **options: Any) -> Iterator[DeschedulerOperator]:
    """For an `operator_standin` fixture: the running stand-in, to steer it."""
    with descheduler_operator(kube, **options) as operator:
        yield operator


def node(name: str, kubevirt: bool = False) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": ""}
    if kubevirt:
        labels["kubevirt.io/schedulable"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


PROMETHEUS_HOST = "prometheus-k8s-openshift-monitoring.apps.example.com"


def serve_openshift_config(kube: Any, *, scheduler_profile: str | None = None, route: bool = True) -> None:
    """The OpenShift objects the operator reads: schedulers.config.openshift.io/cluster and the Prometheus route."""
    with kube.api_client() as client:
        rest = Rest(client)
        install_crds(rest, [SCHEDULER_CRD, ROUTE_CRD])
        if scheduler_profile is not None:
            rest.create(path("config.openshift.io/v1", "schedulers"), {
                "apiVersion": "config.openshift.io/v1", "kind": "Scheduler", "metadata": {"name": "cluster"},
                "spec": {"profile": scheduler_profile}})
        if route:
            rest.create_if_absent(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": "openshift-monitoring"}})
            routes = path("route.openshift.io/v1", "routes", "openshift-monitoring")
            rest.create(routes, {"apiVersion": "route.openshift.io/v1", "kind": "Route",
                                 "metadata": {"name": "prometheus-k8s", "namespace": "openshift-monitoring"},
                                 "spec": {"host": PROMETHEUS_HOST}})
            rest.change(routes + "/prometheus-k8s/status",
                        lambda r: r.update(status={"ingress": [{"host": PROMETHEUS_HOST}]}))


def operand_started(kube: Any) -> datetime:
    """When the running operand pod's container started (`startedAt`, as the kubelet stand-in reports it); waits for
    the operator to have rolled the operand out."""
    def started() -> str | None:
        with kube.api_client() as client:
            pods = Rest(client).list(path("v1", "pods", OPERATOR_NAMESPACE), label_selector=f"app={OPERAND}")
        running = [status["state"]["running"]["startedAt"] for pod in pods
                   for status in (pod.get("status") or {}).get("containerStatuses") or []
                   if (status.get("state") or {}).get("running")]
        return max(running) if running else None

    stamp = wait_until(started, what="the operand pod to run")
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def predictive_log(cycles: list[list[dict[str, Any]]], started: datetime, interval: int = 3600) -> str:
    """The operand's log in Predictive mode after its container started at `started`: each cycle (a list of plan
    evictions, with `namespace`, `name`, `plugin`, `node` and `profile`) logs each eviction in dry-run mode, then
    its total; the first cycle runs a few seconds after the start, the next ones `interval` seconds apart (the test
    reads the log before those stamps come: nothing compares them with the clock)."""
    lines = []
    for number, evictions in enumerate(cycles):
        begun = started + timedelta(seconds=2 + number * interval)
        for index, eviction in enumerate(evictions):
            stamp = (begun + timedelta(milliseconds=10 * index)).strftime("%m%d %H:%M:%S.%f")
            lines.append(f'I{stamp}       1 evictions.go:607] "Evicted pod in dry run mode" '
                         f'pod="{eviction["namespace"]}/{eviction["name"]}" reason="" strategy="{eviction["plugin"]}" '
                         f'node="{eviction["node"]}" profile="{eviction["profile"]}"')
        closed = (begun + timedelta(seconds=1 + len(evictions) / 100)).strftime("%m%d %H:%M:%S.%f")
        lines.append(f'I{closed}       1 descheduler.go:252] "Number of evictions/requests" '
                     f'totalEvicted={len(evictions)} evictionRequests=0')
    return "\n".join(lines) + "\n"
