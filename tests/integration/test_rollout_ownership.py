"""A rollback takes back only what its change created or changed, as the change left it (docs/rolling-out.md,
"Faults and what the next run does"): the rollout module's `kind: operator`, flavor upstream, on the session's control
plane (the kubelet stand-in runs the descheduler's pod), through the module's runner (runner/rollout.py).

The failing change is a first install whose Deployment cannot roll out: its pods ask for a PriorityClass that does
not exist, so the API server refuses every pod. While it waits (its Deployment exists, so every other object was
written before), "another team" acts on the cluster from a thread: it creates a ConfigMap in the new namespace, or it
edits the ClusterRole the change created. Only once the API server has confirmed that write does the thread end the
wait: it writes the Deployment's ProgressDeadlineExceeded condition, as the deployment controller does once the
progress deadline has passed (`deadline_passed`). The rollout's own deadline is never reached, so the order is the
same however slow the machine. After each run the test compares the objects and their resourceVersions with before,
then fixes the cause (creates the PriorityClass) and reruns: the same change converges, and what others made is still
as they left it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import run_rollout
from evict_helpers import node
from operator_support import descheduler_operator
from standins.descheduler_operator import GENERATION_ANNOTATION, OPERAND, OPERATOR_NAMESPACE
from standins.rest import Rest, path, wait_until

RECORD = path("v1", "configmaps", "kube-system", "descheduler-fleet-last-good")
# seconds: the rollout's progress deadline, never reached. A failing run ends on its Deployment's
# ProgressDeadlineExceeded condition, which the test writes after the other team's write (`deadline_passed`).
DEADLINE = 900


def deadline_passed(rest: Rest, url: str, stalled: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Write what kube-controller-manager's deployment controller writes once the Deployment at ``url`` is past its
    progress deadline (syncRolloutStatus): Progressing=False, reason ProgressDeadlineExceeded, naming the new
    ReplicaSet. Written now rather than after the deadline, so that the failure comes after the caller's own write.

    Written once the controller has observed the Deployment and it is ``stalled`` (no more pods will be created or
    become ready): the controller replaces the condition when it sees progress (DeploymentProgressing), and keeps
    it otherwise (DeploymentTimedOut holds for a condition of that reason). A write that conflicts with the
    controller's (409) is made again on a fresh read (Rest.change). Returns the Deployment as written."""

    def observed_and_stalled() -> dict[str, Any] | None:
        deployment = rest.get(url)
        if deployment is None:
            return None
        observed = (deployment.get("status") or {}).get("observedGeneration", 0) >= deployment["metadata"]["generation"]
        return deployment if observed and stalled(deployment) else None

    deployment = wait_until(observed_and_stalled, 120, 0.2, f"{url} to be observed by its controller, stalled")
    revision = deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
    replica_sets = rest.list(path("apps/v1", "replicasets", deployment["metadata"]["namespace"]))
    new = next(rs["metadata"]["name"] for rs in replica_sets
               if any(o.get("uid") == deployment["metadata"]["uid"] for o in rs["metadata"].get("ownerReferences", []))
               and rs["metadata"]["annotations"].get("deployment.kubernetes.io/revision") == revision)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    timed_out = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                 "message": f'ReplicaSet "{new}" has timed out progressing.', "lastUpdateTime": now,
                 "lastTransitionTime": now}

    def time_out(current: dict[str, Any]) -> None:
        status = current.setdefault("status", {})
        kept = [c for c in status.get("conditions") or [] if c.get("type") != "Progressing"]
        status["conditions"] = [*kept, timed_out]

    written = rest.change(f"{url}/status", time_out)
    assert written is not None, f"{url} is gone"
    return written


def pods_refused(deployment: dict[str, Any]) -> bool:
    """The API server refuses its ReplicaSet's pods (ReplicaFailure, FailedCreate): it has none and gets none."""
    return any(c.get("type") == "ReplicaFailure" and c.get("status") == "True"
               for c in (deployment.get("status") or {}).get("conditions") or [])


def in_thread(work: Callable[[], None]) -> threading.Thread:
    """``work`` in a thread of its own; what it raises, ``join_checked`` fails the test with."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - surfaced by the test through join_checked
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.errors = errors  # type: ignore[attr-defined]
    thread.start()
    return thread


class Install:
    """One upstream descheduler's objects on the cluster, under a unique name and a new namespace."""

    def __init__(self, rest: Rest, connection: dict[str, str]) -> None:
        suffix = uuid.uuid4().hex[:8]
        self.rest, self.connection = rest, connection
        self.name, self.namespace, self.priority_class = f"desch-{suffix}", f"team-{suffix}", f"critical-{suffix}"

    @property
    def paths(self) -> dict[str, str]:
        """What the install writes besides its namespace, by kind."""
        return {
            "ServiceAccount": path("v1", "serviceaccounts", self.namespace, self.name),
            "ConfigMap": path("v1", "configmaps", self.namespace, self.name),
            "Deployment": path("apps/v1", "deployments", self.namespace, self.name),
            "ClusterRole": path("rbac.authorization.k8s.io/v1", "clusterroles", name=self.name),
            "ClusterRoleBinding": path("rbac.authorization.k8s.io/v1", "clusterrolebindings", name=self.name),
        }

    @property
    def namespace_path(self) -> str:
        return path("v1", "namespaces", name=self.namespace)

    def roll_out(self, on_interrupted: str = "fail") -> dict[str, Any]:
        cluster = {
            "name": "c1",
            "connection": self.connection,
            "state": "present",
            "operator": {
                "flavor": "upstream",
                "upstream": {
                    "name": self.name,
                    "namespace": self.namespace,
                    "priority_class_name": self.priority_class,
                },
            },
        }
        return run_rollout(
            {
                "kind": "operator",
                "clusters": [cluster],
                "progress_deadline": DEADLINE,
                "min_success_time": 2,
                "gate_interval": 1,
                "wait_sleep": 1,
                "run_id": f"ownership-{self.name}",
                "on_interrupted": on_interrupted,
            },
            check_mode=False,
        )

    def create_priority_class(self) -> None:
        self.rest.create(
            path("scheduling.k8s.io/v1", "priorityclasses"),
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": self.priority_class},
                "value": 1000,
            },
        )

    def versions(self) -> dict[str, str | None]:
        """Each object's resourceVersion (None: absent), the namespace's included."""
        found = {kind: self.rest.get(url) for kind, url in {**self.paths, "Namespace": self.namespace_path}.items()}
        return {kind: (obj or {}).get("metadata", {}).get("resourceVersion") for kind, obj in found.items()}

    def during_the_wait(self, act: Callable[[], None]) -> threading.Thread:
        """``act`` from another thread once the install's Deployment exists (everything else is written then); once
        it returned (its write confirmed), the Deployment's progress deadline passes: the install fails after it."""

        def run() -> None:
            wait_until(lambda: self.rest.get(self.paths["Deployment"]), 120, 0.2, "the install's Deployment")
            act()
            deadline_passed(self.rest, self.paths["Deployment"], pods_refused)

        return in_thread(run)


def join_checked(thread: threading.Thread) -> None:
    thread.join(timeout=120)
    assert not thread.is_alive(), "the other team's thread did not finish"
    assert not thread.errors, thread.errors  # type: ignore[attr-defined]


@pytest.fixture
def install(kube: Any) -> Iterator[Install]:
    """An install's names on the session's cluster with a node; the record it writes in kube-system is removed at
    the end (the cluster-scoped objects and the namespace go with the `kube` fixture's cleanup)."""
    rest = Rest(kube.api_client())
    if not rest.list(path("v1", "nodes")):
        kube.load([node("worker-1")])
    previous = rest.get(RECORD)
    try:
        yield Install(rest, {"kubeconfig": str(kube.kubeconfig), "context": kube.context})
    finally:
        if previous is None:
            rest.delete(RECORD)
        rest.api_client.close()


def cluster_result(result: dict[str, Any]) -> dict[str, Any]:
    return result["clusters"]["c1"]


def converges(install: Install, others: dict[str, str], on_interrupted: str = "fail") -> None:
    """The cause fixed, the same change again: installed and verified; ``others`` (url: resourceVersion) untouched."""
    install.create_priority_class()
    outcome = cluster_result(install.roll_out(on_interrupted))
    assert outcome["status"] == "succeeded" and outcome["soak"] == "verified", outcome
    assert all(install.rest.get(url) is not None for url in install.paths.values())
    for url, version in others.items():
        assert install.rest.get(url)["metadata"]["resourceVersion"] == version, url
    assert install.rest.get(RECORD)["metadata"]["annotations"]["descheduler.fleet/state"] == "verified"


def test_a_failed_first_install_keeps_the_namespace_another_team_put_objects_in(install: Install) -> None:
    notes_path = path("v1", "configmaps", install.namespace, "team-notes")
    notes: dict[str, Any] = {}

    def other_team() -> None:
        notes.update(
            install.rest.create(
                path("v1", "configmaps", install.namespace),
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "team-notes"},
                    "data": {"owner": "team"},
                },
            )
        )

    thread = install.during_the_wait(other_team)
    outcome = cluster_result(install.roll_out())
    join_checked(thread)

    assert outcome["status"] == "rolled_back", outcome
    assert f"Deployment {install.namespace}/{install.name} exceeded its progress deadline" in outcome["error"]
    assert outcome["last_good"] == {"present": False, "spec": None}
    # what the change created is gone; the namespace and the other team's ConfigMap stay, as they were
    assert {kind: version for kind, version in install.versions().items() if kind != "Namespace"} == dict.fromkeys(
        install.paths
    )
    namespace = install.rest.get(install.namespace_path)
    assert namespace is not None and namespace["metadata"].get("deletionTimestamp") is None
    assert install.rest.get(notes_path)["metadata"]["resourceVersion"] == notes["metadata"]["resourceVersion"]
    assert (
        f"Namespace {install.namespace} kept: it holds what the change did not create "
        f"(ConfigMap {install.namespace}/team-notes)"
    ) in outcome["rollback"]["msg"]
    # what the change created carried its id
    assert namespace["metadata"]["labels"]["descheduler.fleet/change-id"] == f"ownership-{install.name}"

    converges(
        install,
        {
            notes_path: notes["metadata"]["resourceVersion"],
            install.namespace_path: namespace["metadata"]["resourceVersion"],
        },
    )


def test_an_object_modified_by_someone_else_since_the_change_is_left_and_reported(install: Install) -> None:
    edited: dict[str, Any] = {}

    def other_team() -> None:
        def label(role: dict[str, Any]) -> None:
            role["metadata"].setdefault("labels", {})["team.example/reviewed"] = "true"

        edited.update(install.rest.change(install.paths["ClusterRole"], label))

    thread = install.during_the_wait(other_team)
    outcome = cluster_result(install.roll_out())
    join_checked(thread)

    assert outcome["status"] == "rollback_failed", outcome
    assert f"Deployment {install.namespace}/{install.name} exceeded its progress deadline" in outcome["error"]
    left = outcome["rollback"]["left_in_place"]
    assert len(left) == 1 and left[0].startswith(
        f"ClusterRole {install.name} was modified by someone else since "
        f"the change (resourceVersion {edited['metadata']['resourceVersion']}"
    )
    after = install.versions()
    assert after["ClusterRole"] == edited["metadata"]["resourceVersion"]  # left as the other team made it
    assert {kind: version for kind, version in after.items() if kind != "ClusterRole"} == dict.fromkeys(
        ["ServiceAccount", "ConfigMap", "Deployment", "ClusterRoleBinding", "Namespace"]
    )
    # the change's namespace held nothing else: it went with the rest
    # a rollback that left something in place leaves the record unfinished: the rerun says to keep what runs
    converges(install, {}, on_interrupted="resume")
    assert install.rest.get(install.paths["ClusterRole"])["metadata"]["labels"]["team.example/reviewed"] == "true"


def test_a_cluster_role_of_another_install_is_refused_before_any_write(install: Install) -> None:
    helm = {"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "descheduler"}
    role = install.rest.create(
        path("rbac.authorization.k8s.io/v1", "clusterroles"),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": install.name, "labels": helm},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
    )
    binding = install.rest.create(
        path("rbac.authorization.k8s.io/v1", "clusterrolebindings"),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": install.name, "labels": helm},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": install.name},
            "subjects": [{"kind": "ServiceAccount", "name": "descheduler", "namespace": "kube-system"}],
        },
    )
    before = install.versions()
    record_before = (install.rest.get(RECORD) or {}).get("metadata", {}).get("resourceVersion")
    assert before["ClusterRole"] == role["metadata"]["resourceVersion"]
    assert before["ClusterRoleBinding"] == binding["metadata"]["resourceVersion"]

    for _run in range(2):  # a rerun refuses the same way and changes nothing either
        outcome = cluster_result(install.roll_out())
        assert outcome["status"] == "failed" and outcome["last_good"] is None and outcome["rollback"] is None
        assert (
            f"upstream.name: ClusterRole {install.name} already exists and belongs to another install (its "
            "labels: app.kubernetes.io/instance=descheduler, app.kubernetes.io/managed-by=Helm;"
        ) in outcome["error"]
        assert "nothing was changed" in outcome["error"]
        assert install.versions() == before
        assert (install.rest.get(RECORD) or {}).get("metadata", {}).get("resourceVersion") == record_before


# ---- kind kubedescheduler: the `cluster` KubeDescheduler, with the operator stand-in ---------------------------------

KD = path("operator.openshift.io/v1", "kubedeschedulers", OPERATOR_NAMESPACE, "cluster")
OPERAND_DEPLOYMENT = path("apps/v1", "deployments", OPERATOR_NAMESPACE, OPERAND)
SPEC = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 1800,
        "profiles": ["AffinityAndTaints"]}


def tune(connection: dict[str, str], on_interrupted: str = "fail") -> dict[str, Any]:
    cluster = {"name": "c1", "connection": connection, "spec": SPEC}
    return cluster_result(
        run_rollout(
            {
                "kind": "kubedescheduler",
                "clusters": [cluster],
                "progress_deadline": DEADLINE,
                "min_success_time": 2,
                "gate_interval": 1,
                "wait_sleep": 1,
                "run_id": "ownership-tune",
                "on_interrupted": on_interrupted,
            },
            check_mode=False,
        )
    )


def test_a_kubedescheduler_modified_by_someone_else_since_the_change_is_left_and_reported(kube: Any) -> None:
    """The first tune creates the KubeDescheduler, whose operand never becomes ready; while it waits, someone sets
    another interval. The rollback would delete the KubeDescheduler (there was none): it leaves theirs and says so.

    The order is fixed: the operator has rendered the change's generation and its pod runs, never ready; then they
    edit, then the operand's progress deadline passes (`deadline_passed`), and the tune fails on it. Meanwhile the
    operator is held (its loop's lock) until the tune has returned: it reconciles their edit only then, as a busy
    operator may. Without that it would render their generation at once, the tune would never see its own one rolled
    out, and only the rollout's deadline would end the wait."""
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    with descheduler_operator(kube, operand_ready=False) as operator:
        rest = operator.rest
        theirs: dict[str, Any] = {}
        tuned = threading.Event()

        def rendered(deployment: dict[str, Any] | None) -> str | None:
            """The KubeDescheduler generation the operator rendered into the operand."""
            template = ((deployment or {}).get("spec") or {}).get("template") or {}
            return ((template.get("metadata") or {}).get("annotations") or {}).get(GENERATION_ANNOTATION)

        def one_pod_never_ready(deployment: dict[str, Any]) -> bool:
            status = deployment.get("status") or {}
            return status.get("updatedReplicas") == status.get("replicas") == 1

        def other_team() -> None:
            change = str(wait_until(lambda: rest.get(KD), 120, 0.2, "the KubeDescheduler")["metadata"]["generation"])
            wait_until(lambda: rendered(rest.get(OPERAND_DEPLOYMENT)) == change, 120, 0.2,
                       f"the operator to render generation {change}")
            with operator.lock:  # the operator reconciles nothing until the tune has returned
                theirs.update(rest.change(KD, lambda kd: kd["spec"].update(deschedulingIntervalSeconds=7200)))
                deadline_passed(rest, OPERAND_DEPLOYMENT, one_pod_never_ready)
                tuned.wait(DEADLINE + 120)

        thread = in_thread(other_team)
        try:
            outcome = tune(connection)
        finally:
            tuned.set()
        join_checked(thread)

        assert outcome["status"] == "rollback_failed", outcome
        assert f"Deployment {OPERAND} exceeded its progress deadline" in outcome["error"], outcome["error"]
        assert outcome["rollback"]["left_in_place"] == [
            "KubeDescheduler openshift-kube-descheduler-operator/cluster was modified by someone else since the "
            "change (its spec is not the one the change left); left as it is"
        ]
        kd = rest.get(KD)
        assert kd["spec"]["deschedulingIntervalSeconds"] == 7200
        assert kd["metadata"]["generation"] == theirs["metadata"]["generation"]

        # the cause fixed (the operand's pods become ready once the operator makes them again): the change converges
        operator.operand_ready = True
        rest.delete(OPERAND_DEPLOYMENT)
        wait_until(lambda: rest.get(OPERAND_DEPLOYMENT) is None, 120, 0.2, "the never-ready operand to go")
        again = tune(connection, on_interrupted="resume")  # the rollback left the record unfinished, as above
        assert again["status"] == "succeeded" and again["soak"] == "verified", (again["error"], again["rollback"])
        assert rest.get(KD)["spec"]["deschedulingIntervalSeconds"] == SPEC["deschedulingIntervalSeconds"]
