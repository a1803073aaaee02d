"""A fleet of clusters for the role tests that run one inventory host per cluster (tune, install/uninstall).

- `FleetPlanes` (session): the session's control plane plus extra planes that share its etcd under their own
  `--etcd-prefix` (tests/controlplane/launcher.py): each extra one is a separate cluster with its own certificates,
  kube-apiserver, kube-controller-manager and kubelet stand-in. They start on first use (about 15 s each), serve
  the fleet tests that follow and stop after the last of them (conftest.py runs a worker's fleet tests together).
- `fleet_of(...)` (per test, behind the `fleet_clusters` fixture of conftest.py): N handles, one per cluster, that
  remove what the test made at the end as `kube` does.
- `generated_cluster(cluster, objects)`: a generated cluster (examples/generate_cluster.py) loaded so that the real
  garbage collector and workload controllers leave its pods as they are (see there), and removed from the
  namespaces that outlive the test (kube-system, default) at the end.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from real_cluster import ControlPlaneCluster, RealCluster, cluster_scoped_names
from standins.rest import Rest, path, wait_until

# The scheduler the generated ReplicaSets' own pods ask for: neither the kubelet stand-in nor a kube-scheduler binds
# them, so the ReplicaSet controller deletes them before the generated (assigned) pods.
UNSERVED_SCHEDULER = "descheduler-fleet-tests-unserved"
SKIP_ON_ONE_CLUSTER = ("a fleet needs several API servers and TEST_KUBECONFIG names one cluster: run it on the "
                       "suite's control plane (the default)")


class FleetPlanes:
    """The session's clusters for fleet tests: `planes(n)` gives the first n, starting the missing ones."""

    def __init__(self, first: Any) -> None:
        self.first = first
        self._extra: list[tuple[Any, Any, Path]] = []  # (plane, the kubelet stand-in's client, workdir)

    def planes(self, count: int) -> list[Any]:
        while len(self._extra) < count - 1:
            self._start_extra()
        return [self.first, *(extra[0] for extra in self._extra[:count - 1])]

    def _start_extra(self) -> None:
        from controlplane import ControlPlane
        from kubelet_standin import KubeletStandIn

        number = len(self._extra) + 2  # the session's plane is cluster 1
        workdir = Path(tempfile.mkdtemp(prefix=f"descheduler-fleet-cluster{number}-"))
        plane = ControlPlane(self.first.binaries, workdir, etcd_url=self.first.etcd_url,
                             etcd_prefix=f"/fleet-{number}-{workdir.name}/registry")
        plane.start()
        client = RealCluster(plane.kubeconfig).api_client()
        plane.kubelet = KubeletStandIn(client).start()
        self._extra.append((plane, client, workdir))

    def extra_planes(self) -> list[Any]:
        """The planes started so far besides the session's."""
        return [plane for plane, *_rest in self._extra]

    def log_tail(self, lines: int = 40) -> str:
        return "\n\n".join(f"######## fleet cluster {index} ########\n{plane.log_tail(lines)}"
                           for index, (plane, *_rest) in enumerate(self._extra, start=2))

    def stop(self, keep_logs: bool) -> None:
        """Before the first plane stops: the extra planes' API servers use its etcd."""
        for plane, client, workdir in reversed(self._extra):
            plane.kubelet.stop()
            client.close()
            plane.stop()
            if keep_logs:
                print(f"\nfleet cluster logs kept in {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)
        self._extra.clear()


def fleet_of(planes: Callable[[int], list[Any]]) -> Iterator[Callable[[int], list[Any]]]:
    """A factory `clusters(n)`: n handles with a kubeconfig each (`.kubeconfig`, `.context`, `.get()`, `.load()`,
    `.api_client()`...). At the end each handle deletes the namespaces and cluster-scoped objects its test made (all
    clusters at once: most of it is waiting for namespace controllers)."""
    cleanups: list[Callable[[], None]] = []
    with ExitStack() as stack:
        stack.callback(run_concurrently, cleanups)

        def clusters(count: int) -> list[Any]:
            handles = []
            for plane in planes(count):
                plane.check_alive()
                with RealCluster(plane.kubeconfig).api_client() as client:
                    baseline = cluster_scoped_names(client)
                handle = ControlPlaneCluster(plane.kubeconfig, plane.context, plane.kubelet, baseline,
                                             admin_kubeconfig=plane.kubeconfig)
                cleanups.append(handle.cleanup)
                handles.append(handle)
            return handles

        yield clusters


def run_concurrently(calls: list[Callable[[], Any]]) -> None:
    """Each call in its own thread; waits for all, then raises the first error (teardowns of separate clusters)."""
    with ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
        futures = [pool.submit(call) for call in calls]
    errors = [future.exception() for future in futures if future.exception() is not None]
    if errors:
        raise errors[0]


# workload kinds a generated cluster leaves out: their controllers would add or rewrite pods
LEFT_OUT = ("Deployment", "DaemonSet", "StatefulSet")
GENERATED_JOB_MANAGER = "descheduler-fleet.test/generated-cluster"


# ---- a generated cluster on a real control plane ---------------------------------------------------------------

@contextmanager
def generated_cluster(cluster: Any, objects: list[dict[str, Any]]) -> Iterator[None]:
    """Load a generated cluster. A real control plane's garbage collector deletes a pod whose owner (by uid) does not
    exist, and its workload controllers would replace the generated pods with their own, so:
    - each ReplicaSet is created on its own (no Deployment above it) with as many replicas as it has generated
      pods, and those pods point at it by its new uid: the descheduler still sees ReplicaSet-owned (evictable)
      pods. The controller may create pods of its own before the generated ones arrive; its template asks for a
      scheduler nobody serves, so those stay unassigned, and a ReplicaSet that has too many pods deletes the
      unassigned ones first. The load waits until each ReplicaSet owns exactly its generated pods;
    - Deployments, DaemonSets and StatefulSets are left out and their pods lose the ownerReference: a DaemonSet
      controller would add a pod on every node, a StatefulSet controller rewrites its pods;
    - CronJobs are suspended (none starts a Job during the test) and Jobs are managed elsewhere (``spec.managedBy``):
      the Job controller neither adds pods nor writes the status the load writes. Jobs and their pods point at their
      loaded owner's new uid.
    Pods keep their node, status and requests (the kubelet stand-in leaves pods with a written status alone).
    The test's namespaces go with the test (`fleet_clusters`); on exit, what was loaded into namespaces that were
    there before (kube-system) is deleted here, as the next test loads the same names."""
    namespaces = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    existing = {name for name in namespaces if cluster.get("Namespace", None, name) is not None}
    try:
        _load_on_control_plane(cluster, objects)
        yield
    finally:
        _remove_from(cluster, [o for o in objects if o["metadata"].get("namespace") in existing])


def _load_on_control_plane(cluster: Any, objects: list[dict[str, Any]]) -> None:
    pods = [o for o in objects if o["kind"] == "Pod"]
    owned_here = ("Pod", "ReplicaSet", "Job", "CronJob")
    cluster.load([o for o in objects if o["kind"] not in owned_here + LEFT_OUT])
    uids: dict[tuple[str, str, str], str] = {}
    for cron_job in (o for o in objects if o["kind"] == "CronJob"):
        uids[_key(cron_job)] = cluster.create(_suspended(cron_job))["metadata"]["uid"]
    for job in (o for o in objects if o["kind"] == "Job"):
        cluster.load([_managed_elsewhere(_repointed(job, uids))])
        stored = cluster.get("Job", job["metadata"]["namespace"], job["metadata"]["name"], api_version="batch/v1")
        assert stored["spec"].get("managedBy") == GENERATED_JOB_MANAGER, "the API server dropped spec.managedBy"
        uids[_key(job)] = stored["metadata"]["uid"]
    for owner in (o for o in objects if o["kind"] == "ReplicaSet"):
        replicas = sum(1 for pod in pods if _controller_of(pod) == _key(owner))
        uids[_key(owner)] = cluster.create(_standalone_replicaset(owner, replicas))["metadata"]["uid"]
    cluster.load([_repointed(pod, uids) for pod in pods])
    _wait_until_replicasets_own_only_generated_pods(cluster, pods, uids)


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]


def _suspended(cron_job: dict[str, Any]) -> dict[str, Any]:
    """A CronJob that starts no Job while the test runs (its schedule may come due)."""
    return {**cron_job, "spec": {**cron_job["spec"], "suspend": True}, "status": {}}


def _managed_elsewhere(job: dict[str, Any]) -> dict[str, Any]:
    """A Job the Job controller leaves alone (spec.managedBy): it would otherwise create pods of its own and write
    the status (startTime) the load writes, and the second writer is refused."""
    return {**job, "spec": {**job["spec"], "managedBy": GENERATED_JOB_MANAGER}}


def _wait_until_replicasets_own_only_generated_pods(
        cluster: Any, pods: list[dict[str, Any]], uids: dict[tuple[str, str, str], str]) -> None:
    uids = {key: uid for key, uid in uids.items() if key[0] == "ReplicaSet"}
    wanted: dict[str, set[str]] = {uid: set() for uid in uids.values()}
    for pod in pods:
        owner = _controller_of(pod)
        if owner is not None and owner[0] == "ReplicaSet" and owner in uids:
            wanted[uids[owner]].add(pod["metadata"]["name"])
    namespaces = {namespace for kind, namespace, _name in uids if kind == "ReplicaSet"}

    def owned_now() -> dict[str, set[str]]:
        owned: dict[str, set[str]] = {uid: set() for uid in uids.values()}
        for namespace in namespaces:
            for pod in cluster.list("Pod", namespace):
                for reference in pod["metadata"].get("ownerReferences") or []:
                    if reference.get("uid") in owned:
                        owned[reference["uid"]].add(pod["metadata"]["name"])
        return owned

    wait_until(lambda: owned_now() == wanted, 60, 0.5,
               "each ReplicaSet to own exactly its generated pods (its own extra pods deleted)")


def _controller_of(pod: dict[str, Any]) -> tuple[str, str, str] | None:
    reference = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
    return None if reference is None else (reference["kind"], pod["metadata"]["namespace"], reference["name"])


def _standalone_replicaset(owner: dict[str, Any], replicas: int) -> dict[str, Any]:
    metadata = {key: value for key, value in owner["metadata"].items()
                if key in ("name", "namespace", "labels", "annotations")}
    template = owner["spec"]["template"]
    unserved = {**template, "spec": {**template["spec"], "schedulerName": UNSERVED_SCHEDULER}}
    spec = {**owner["spec"], "replicas": replicas, "template": unserved}
    return {**owner, "metadata": metadata, "spec": spec, "status": {}}


def _repointed(obj: dict[str, Any], uids: dict[tuple[str, str, str], str]) -> dict[str, Any]:
    """The object owned by the loaded owner's new uid (the garbage collector deletes what an absent uid owns), or
    by nothing when its owner is not loaded."""
    metadata = {key: value for key, value in obj["metadata"].items() if key not in ("uid", "ownerReferences")}
    owner = _controller_of(obj)
    if owner is not None and owner in uids:
        reference = next(r for r in obj["metadata"]["ownerReferences"] if r.get("controller"))
        metadata["ownerReferences"] = [{**reference, "uid": uids[owner]}]
    return {**obj, "metadata": metadata}


def _remove_from(cluster: Any, objects: list[dict[str, Any]]) -> None:
    """Delete the loaded objects (pods with grace period 0: no kubelet to wait for) and wait until they are gone."""
    from kubernetes.client.exceptions import ApiException

    loaded = [o for o in objects if o["kind"] not in LEFT_OUT]
    with cluster.api_client() as client:
        rest = Rest(client)
        for obj in loaded:
            namespace, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
            if obj["kind"] != "Pod":
                cluster.delete(obj["kind"], namespace, name, api_version=obj["apiVersion"])
                continue
            try:
                rest.request("DELETE", path("v1", "pods", namespace, name),
                             {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
            except ApiException as error:
                if error.status != 404:
                    raise
    wait_until(lambda: all(cluster.get(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"],
                                       api_version=o["apiVersion"]) is None for o in loaded), 60, 0.5,
               "the generated objects in namespaces that outlive the test to be deleted")
