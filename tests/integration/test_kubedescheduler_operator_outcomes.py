"""What the kubedescheduler module does when the operator itself refuses or stalls, and the legacy v1beta1 path.

The operator stand-in (standins/descheduler_operator.py) shows both refusal outcomes of operator.md §1.5: "scale to 0 +
TargetConfigControllerDegraded" and "log-only" (nothing changes, one line in the operator log). The operator log is
read as `pods/log`: on the test control plane the kube-apiserver gets it from the kubelet stand-in
(tests/integration/kubelet_logs.py), where the operator stand-in wrote it over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubelet_standin import NEVER_READY
from operator_support import (
    BASE_SPEC,
    assert_succeeded,
    connection,
    descheduler_operator,
    get_kd,
    get_object,
    kd_task,
    node,
    operator_for,
    run_ok,
    serve_openshift_config,
)
from playbook import run_tasks
from restricted_user import restricted_kubeconfig, user_name
from standins.descheduler_operator import GENERATION_ANNOTATION, KD_PATH, OPERATOR_NAMESPACE, OPERATOR_POD_SELECTOR
from standins.rest import Rest, wait_until


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    yield from operator_for(kube)


def operator_pod_log(kube: Any) -> str:
    """The operator pod's log as the API server serves it (`pods/log`), as the module reads it."""
    from kubernetes import client

    with kube.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        pods = core.list_namespaced_pod(OPERATOR_NAMESPACE, label_selector=OPERATOR_POD_SELECTOR).items
        return "".join(core.read_namespaced_pod_log(pod.metadata.name, OPERATOR_NAMESPACE) for pod in pods)


def rendered_generation(kube: Any) -> str | None:
    """The KubeDescheduler generation the operator rendered into the operand Deployment, None before it exists."""
    deployment = get_object(kube, "deployments", "descheduler", api_version="apps/v1") or {}
    template = (deployment.get("spec") or {}).get("template") or {}
    return ((template.get("metadata") or {}).get("annotations") or {}).get(GENERATION_ANNOTATION)


# OpenShift 4.5/4.6 documentation, modules/nodes-descheduler-configuring-strategies.adoc
LEGACY_DOCS_EXAMPLE = {
    "apiVersion": "operator.openshift.io/v1beta1",
    "kind": "KubeDescheduler",
    "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
    "spec": {
        "deschedulingIntervalSeconds": 3600,
        "strategies": [
            {"name": "LowNodeUtilization", "params": [
                {"name": "CPUThreshold", "value": "10"}, {"name": "MemoryThreshold", "value": "20"},
                {"name": "PodsThreshold", "value": "30"}, {"name": "MemoryTargetThreshold", "value": "40"},
                {"name": "CPUTargetThreshold", "value": "50"}, {"name": "PodsTargetThreshold", "value": "60"},
                {"name": "NumberOfNodes", "value": "3"}]},
            {"name": "RemoveDuplicates"},
            {"name": "RemovePodsHavingTooManyRestarts", "params": [
                {"name": "PodRestartThreshold", "value": "10"}, {"name": "IncludingInitContainers", "value": "false"}]},
        ],
    },
}


def test_legacy_spec_is_translated_applied_and_reported(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    task = kd_task(kube, "migrated", legacy_spec=LEGACY_DOCS_EXAMPLE, mode="Predictive")
    result = run_ok(tmp_path, [task])["migrated"]
    assert result["spec"] == {"managementState": "Managed", "deschedulingIntervalSeconds": 3600, "mode": "Predictive",
                              "profiles": ["TopologyAndDuplicates", "LongLifecycle", "EvictPodsWithPVC"],
                              "logLevel": "Normal", "operatorLogLevel": "Normal"}
    report = result["legacy_translation"]
    assert report["summary"] == ("5 setting(s) map exactly, 9 change meaning, 1 cannot be expressed in v1, 1 were "
                                 "ignored by the legacy operator too")
    assert [e["source"] for e in report["cannot_express"]] == [
        "spec.strategies[2] (RemovePodsHavingTooManyRestarts) params.PodRestartThreshold"]
    assert report["cannot_express"][0]["note"] == ("v1 fixes the threshold at 100 restarts, so fewer pods are evicted "
                                                   "than with 10")
    stored = get_kd(kube)
    assert stored is not None
    assert stored["spec"]["profiles"] == ["TopologyAndDuplicates", "LongLifecycle", "EvictPodsWithPVC"]
    policy = result["policy"]
    assert [p["name"] for p in policy["profiles"]] == ["TopologyAndDuplicates", "LongLifecycle"]
    evictor = [c for c in policy["profiles"][1]["pluginConfig"] if c["name"] == "DefaultEvictor"][0]
    assert evictor["args"] == {"podProtections": {}}  # EvictPodsWithPVC: ignorePvcPods left unset (false)

    task = kd_task(kube, "again", legacy_spec=LEGACY_DOCS_EXAMPLE, mode="Predictive")
    assert run_ok(tmp_path, [task])["again"]["changed"] is False


def test_legacy_and_v1_spec_are_exclusive(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    task = {**kd_task(kube, "both", legacy_spec=LEGACY_DOCS_EXAMPLE, spec=BASE_SPEC), "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["both"]["failed"] is True
    assert "mutually exclusive" in results["both"]["msg"]


def test_degraded_operator_fails_the_wait_with_its_reason(kube: Any, tmp_path: Path) -> None:
    """PSI cannot be checked from outside: the operator scales the descheduler to 0 and degrades."""
    with descheduler_operator(kube, psi_enabled=False) as operator:
        kube.load([node("virt-1", kubevirt=True), node("virt-2", kubevirt=True)])
        serve_openshift_config(kube)
        degraded_then_recovered(kube, operator, tmp_path)


def degraded_then_recovered(kube: Any, operator: Any, tmp_path: Path) -> None:
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
    # the wait ends as soon as the operator reports Degraded: the timeout is only a bound
    task = {**kd_task(kube, "kubevirt", spec={**BASE_SPEC, "profiles": ["KubeVirtRelieveAndMigrate"]},
                      wait_timeout=120), "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    result = results["kubevirt"]
    assert result["failed"] is True
    assert result["msg"] == (
        "the operator refused generation 2 of KubeDescheduler cluster: TargetConfigControllerDegraded says "
        "'profile KubeVirtRelieveAndMigrate can only be used when PSI metrics are enabled for the worker nodes'; it "
        "scaled the descheduler to 0. Fix the cause and run again")
    assert result["operand"]["replicas"] == 0
    assert "PSI" in process.stdout + process.stderr  # the PSI warning was shown before the write
    deployment = get_object(kube, "deployments", "descheduler", api_version="apps/v1")
    assert deployment is not None and deployment["spec"]["replicas"] == 0
    assert operator.syncs >= 2

    operator.psi_enabled = True
    process, results = run_tasks(tmp_path, [kd_task(kube, "recovered", spec=BASE_SPEC)])
    assert_succeeded(process)
    assert results["recovered"]["operand"]["replicas"] == 1
    assert results["recovered"]["conditions"][0]["status"] == "False"


def test_log_only_refusal_times_out_with_the_operator_log(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
    operator_standin.inject_error(
        "Protected namespace openshift-gone included. It is forbidden to include any of the protected "
        "namespaces from [kube-system hypershift openshift openshift-gone]")
    spec = {**BASE_SPEC, "deschedulingIntervalSeconds": 60}
    run_ok(tmp_path, [kd_task(kube, "written", spec=spec, wait=False)])
    # the refusal awaited where the module reads it (the operator pod's log), so that the module's short wait for a
    # rollout that never comes, not the stand-in's pace, is what the run below shows
    wait_until(lambda: "Protected namespace openshift-gone" in operator_pod_log(kube), 120, 0.2,
               "the operator to log the refusal")
    process, results = run_tasks(tmp_path, [{**kd_task(kube, "ignored", spec=spec, wait_timeout=2),
                                             "ignore_errors": True}])
    result = results["ignored"]
    assert result["failed"] is True
    assert result["msg"].startswith("the operator did not roll out generation 2 of KubeDescheduler cluster within 2s "
                                    "(the descheduler still runs generation 1); it may have refused it without a "
                                    "condition (log-only). Its log says: ")
    assert 'failed with : Protected namespace openshift-gone included.' in result["msg"]
    assert len(result["operator_log"]) == 1
    policy = get_object(kube, "configmaps", "cluster")
    assert policy is not None  # the previous policy stays
    assert "--descheduling-interval=3600s" in str(get_object(kube, "deployments", "descheduler", "apps/v1"))


def test_operand_that_never_becomes_ready(kube: Any, tmp_path: Path) -> None:
    with descheduler_operator(kube, operand_ready=False):
        run_ok(tmp_path, [kd_task(kube, "written", spec=BASE_SPEC, wait=False)])
        # the operand never becomes ready, so the wait always runs out; the operator stand-in's rendering of
        # generation 1 is awaited first, so that the run below sees it whatever the machine's pace
        wait_until(lambda: rendered_generation(kube) == "1", 120, 0.2,
                   "the operator to render generation 1 into the operand")
        task = {**kd_task(kube, "stuck", spec=BASE_SPEC, wait_timeout=2), "ignore_errors": True}
        process, results = run_tasks(tmp_path, [task])
    assert results["stuck"]["failed"] is True
    # what the Deployment's status said last (how far its controller had got) sits between the two
    message = results["stuck"]["msg"]
    assert message.startswith("Deployment descheduler did not become available within 2s with generation 1 ("), message
    assert message.endswith("0/1 ready)"), message


def test_no_operator_installed(kube: Any, tmp_path: Path) -> None:
    task = {**kd_task(kube, "nothing", spec=BASE_SPEC), "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    assert results["nothing"]["failed"] is True
    assert results["nothing"]["msg"] == (
        "the cluster does not serve operator.openshift.io/v1 kubedeschedulers (CRD "
        "kubedeschedulers.operator.openshift.io not installed): install the Kube Descheduler Operator first "
        "(descheduler.fleet.operator or the install role)")


# Every verb on everything but create: the user may read what the module checks and change what exists (and take
# the change Lease, which every change holds: docs/rolling-out.md, "One change at a time").
ALL_BUT_CREATE = [{"apiGroups": ["*"], "resources": ["*"],
                   "verbs": ["get", "list", "watch", "update", "patch", "delete", "deletecollection"]},
                  {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]}]


def test_forbidden_write_names_the_missing_permission(kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    """The denial comes from the API server's RBAC: a real ServiceAccount allowed all but create
    (restricted_user.py)."""
    kubeconfig = restricted_kubeconfig(kube, tmp_path, "tuner-without-create", rules=ALL_BUT_CREATE)
    task = {**kd_task(kube, "denied", spec=BASE_SPEC, kubeconfig=str(kubeconfig)), "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    message = results["denied"]["msg"]
    assert results["denied"]["failed"] is True
    # refused before the first write by the rights check (cluster/rights.py), naming the one missing right
    assert message.startswith(f"the user of this connection ({user_name('tuner-without-create')}) lacks 1 right(s) "
                              "of the configuring job"), message
    # checked where it is used: a Role in the operator's namespace is enough
    assert ("create kubedeschedulers (API group 'operator.openshift.io') in namespace "
            "openshift-kube-descheduler-operator") in message, message
    assert "descheduler-fleet-configuring" in message, message
    assert get_kd(kube) is None


def degraded_conditions(kube: Any) -> dict[str, str]:
    conditions = ((get_kd(kube) or {}).get("status") or {}).get("conditions") or []
    return {c["type"]: c.get("reason", "") for c in conditions if c.get("status") == "True"}


def operand_replicas(kube: Any) -> int | None:
    deployment = get_object(kube, "deployments", "descheduler", api_version="apps/v1")
    return None if deployment is None else deployment["spec"]["replicas"]


def test_a_kubedescheduler_without_management_state_stops_descheduling(kube: Any, operator_standin: Any,
                                                                       tmp_path: Path) -> None:
    """Written around the module (oc apply), a spec without managementState is admitted by the API server; the
    operator degrades and scales the descheduler to 0, as the real one was seen to do. The module says so on its
    next run, refuses the same spec, and a spec with managementState brings the descheduler back."""
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
    assert operand_replicas(kube) == 1
    with kube.api_client() as client:
        Rest(client).change(KD_PATH, lambda current: current["spec"].pop("managementState"))
    message = "spec.managementState in body should match '^(Managed|Unmanaged|Force|Removed)$'"
    wait_until(lambda: operand_replicas(kube) == 0, 120, 0.2, "the operator to scale the descheduler to 0")
    assert degraded_conditions(kube) == {"TargetConfigControllerDegraded": message,
                                         "ConfigObservationDegraded": message}

    without = {key: value for key, value in BASE_SPEC.items() if key != "managementState"}
    process, results = run_tasks(tmp_path, [{**kd_task(kube, "refused", spec=without), "ignore_errors": True}])
    assert results["refused"]["failed"] is True
    assert "spec.managementState=null" in results["refused"]["msg"]

    recovered = run_ok(tmp_path, [kd_task(kube, "recovered", spec=BASE_SPEC)])["recovered"]
    assert recovered["operand"]["replicas"] == 1
    assert degraded_conditions(kube) == {}
    assert {c["type"] for c in recovered["conditions"]} == {
        "TargetConfigControllerDegraded", "ConfigObservationDegraded", "ResourceSyncControllerDegraded"}


def test_an_error_only_the_operand_meets_is_rendered_without_a_word(
        kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    """A thresholdPriorityClassName naming no PriorityClass: the operator renders and logs nothing; the descheduler
    pod fails (here: never becomes Ready). The module refuses it before writing; written around the module, the
    stand-in behaves as the operator does."""
    spec = {**BASE_SPEC, "profileCustomizations": {"thresholdPriorityClassName": "no-such-class"}}
    process, results = run_tasks(tmp_path, [{**kd_task(kube, "refused", spec=spec), "ignore_errors": True}])
    assert results["refused"]["failed"] is True
    error = results["refused"]["validation_errors"][0]
    assert error["field"] == "spec.profileCustomizations.thresholdPriorityClassName"
    assert error["operator_behaviour"] == "operand-fails"
    assert get_kd(kube) is None

    with kube.api_client() as client:
        Rest(client).create(KD_PATH.rsplit("/", 1)[0], {
            "apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
            "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE}, "spec": spec})
    wait_until(lambda: rendered_generation(kube) == "1", 120, 0.2, "the operator to render generation 1")
    policy = get_object(kube, "configmaps", "cluster")
    assert policy is not None and "name: no-such-class" in policy["data"]["policy.yaml"]
    assert degraded_conditions(kube) == {}
    assert operator_standin.operator_log == []  # nothing logged (the operator pod has no log to serve either)
    deployment = get_object(kube, "deployments", "descheduler", api_version="apps/v1")
    assert deployment is not None
    assert deployment["spec"]["template"]["metadata"]["annotations"][NEVER_READY] == "true"  # the pod fails


def running_operator_pod(kube: Any) -> str | None:
    with kube.api_client() as client:
        pods = Rest(client).list(f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/pods", label_selector=OPERATOR_POD_SELECTOR)
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp")]
    return running[0]["metadata"]["name"] if len(running) == 1 and len(pods) == 1 else None


def test_a_namespace_created_after_the_operator_started_is_not_protected_until_it_restarts(
        kube: Any, operator_standin: Any, tmp_path: Path) -> None:
    """The operator fixes its protected namespaces when it starts (operator-observed.md #4): an openshift-* namespace
    created later may be included, and is named in a warning, until the operator restarts."""
    wait_until(lambda: running_operator_pod(kube), 120, 0.2, "the operator pod to run")
    run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])  # seconds pass: the namespace below is later
    kube.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-late"}}])
    spec = {**BASE_SPEC, "profileCustomizations": {"namespaces": {"included": ["openshift-late"]}}}
    included = run_ok(tmp_path, [kd_task(kube, "included", spec=spec)])["included"]
    late = next(w for w in included["validation_warnings"] if w["field"] == "namespaces")
    assert late["value"] == ["openshift-late"]
    assert "not protect them until it restarts" in late["message"]
    item = next(w for w in included["validation_warnings"]
                if w["field"] == "spec.profileCustomizations.namespaces.included[0]")
    assert "once the operator restarts it is protected" in item["message"]
    args = included["policy"]["profiles"][0]["pluginConfig"][0]["args"]
    assert args["namespaces"] == {"include": ["openshift-late"]}
    # a plan of a spec for this cluster renders the exclude lists of the running operator, and says why
    plan_task = {"name": "Plan", "descheduler.fleet.plan": {**connection(kube), "kubedescheduler": BASE_SPEC},
                 "register": "plan"}
    plan = run_ok(tmp_path, [plan_task])["plan"]
    exclude = plan["policy"]["profiles"][0]["pluginConfig"][0]["args"]["namespaces"]["exclude"]
    assert "openshift-kube-descheduler-operator" in exclude and "openshift-late" not in exclude
    assert any(w.startswith("kubedescheduler: openshift-late: created after the operator started")
               for w in plan["plan_warnings"]), plan["plan_warnings"]

    first = running_operator_pod(kube)
    operator_standin.restart(pod=True)
    wait_until(lambda: running_operator_pod(kube) not in (None, first), 120, 0.2, "the new operator pod to run")
    process, results = run_tasks(tmp_path, [{**kd_task(kube, "refused", spec=spec), "ignore_errors": True}])
    assert results["refused"]["failed"] is True
    assert "Protected namespace openshift-late included" in results["refused"]["msg"]
