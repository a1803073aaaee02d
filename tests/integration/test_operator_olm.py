"""The operator module, flavor olm, through real ansible-playbook runs against the OLM stand-in (standins/olm.py) on
the test's API server: install with Automatic and Manual approval, version pins and the upgrade that must not be
approved, idempotence, check mode, diff, the precise failures (catalog, channel, CSV), uninstall and reinstall."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from playbook import run_tasks
from restricted_user import restricted_kubeconfig, user_name
from standins.descheduler_operator import DeschedulerOperator
from standins.kubedescheduler_types import CRD_NAME
from standins.olm import Olm, csv_name
from standins.rest import Rest, path, wait_until

NAMESPACE = "openshift-kube-descheduler-operator"
V532, V540, V550 = csv_name("5.3.2"), csv_name("5.4.0"), csv_name("5.5.0")
OLM_API = "operators.coreos.com/v1alpha1"
SUBSCRIPTION = path(OLM_API, "subscriptions", NAMESPACE, "cluster-kube-descheduler-operator")
OPERATOR_DEPLOYMENT = path("apps/v1", "deployments", NAMESPACE, "descheduler-operator")
NAMESPACE_PATH = path("v1", "namespaces", name=NAMESPACE)
CRD_PATH = path("apiextensions.k8s.io/v1", "customresourcedefinitions", name=CRD_NAME)


def csv_path(name: str) -> str:
    return path(OLM_API, "clusterserviceversions", NAMESPACE, name)


def operator_task(kube: Any, register: str, *, check: bool = False, diff: bool = False,
                  ignore_errors: bool = False, **options: Any) -> dict:
    task: dict[str, Any] = {
        "name": f"operator ({register})",
        "descheduler.fleet.operator": {"kubeconfig": str(kube.kubeconfig), "context": kube.context,
                                       "wait_timeout": 120, "wait_sleep": 1, **options},
        "register": register,
    }
    if check:
        task["check_mode"] = True
    if diff:
        task["diff"] = True
    if ignore_errors:
        task["ignore_errors"] = True
    return task


def run(tmp_path: Path, *tasks: dict) -> dict[str, Any]:
    process, results = run_tasks(tmp_path, list(tasks))
    failed_on_purpose = all(t.get("ignore_errors") for t in tasks if results.get(t["register"], {}).get("failed"))
    assert process.returncode == 0 or failed_on_purpose, process.stdout[-5000:] + process.stderr[-2000:]
    return results


def steps(result: dict) -> list[tuple[str, str]]:
    return [(a["step"], a["action"]) for a in result["actions"]]


@pytest.fixture
def rest(kube: Any) -> Iterator[Rest]:
    """HTTP reads and writes on the test's API server; on exit the operator namespace is removed."""
    with kube.api_client() as client:
        rest = Rest(client)
        yield rest
        rest.delete(NAMESPACE_PATH)
        wait_until(lambda: rest.get(NAMESPACE_PATH) is None, 120, 0.5, "the operator namespace to go")


@pytest.fixture
def start_olm(kube: Any, rest: Rest) -> Iterator[Callable[..., Olm]]:
    """start_olm(**options) installs and runs the OLM stand-in; stopped, checked and removed at the end."""
    running: list[Olm] = []

    def start(**options: Any) -> Olm:
        running.append(Olm(rest.api_client, **options).install())
        return running[-1]

    yield start
    for olm in running:
        olm.uninstall()
    for olm in running:
        olm.check()


@pytest.fixture
def olm(start_olm: Callable[..., Olm]) -> Olm:
    return start_olm()


def versions(rest: Rest) -> dict[str, str]:
    """resourceVersion of every object a check-mode run could touch: equal before and after means nothing written."""
    collections = [path("v1", "namespaces"), path("apiextensions.k8s.io/v1", "customresourcedefinitions"),
                   path(OLM_API, "subscriptions"), path(OLM_API, "installplans"),
                   path(OLM_API, "clusterserviceversions"), path("operators.coreos.com/v1", "operatorgroups"),
                   path("apps/v1", "deployments", NAMESPACE), path("v1", "nodes")]
    # objects already being deleted (an earlier test's namespace) are left out: they go whatever the run does,
    # and an object the run deleted would still differ (present before, gone or marked after)
    return {f"{url}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for url in collections for o in rest.list(url) if not o["metadata"].get("deletionTimestamp")}


# ---- install ---------------------------------------------------------------------------------------------------------

def test_automatic_install_then_second_run_changes_nothing(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(kube, "first"), operator_task(kube, "second"))
    first, second = results["first"], results["second"]

    assert first["changed"] is True
    assert steps(first) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create"),
                            ("wait", "wait")]
    assert (first["installed_csv"], first["installed_version"], first["csv_phase"]) == (V540, "5.4.0", "Succeeded")
    assert first["crd_established"] is True
    assert first["subscription"]["state"] == "AtLatestKnown"
    assert second["changed"] is False
    assert all(not a["changed"] for a in second["actions"])

    namespace = rest.get(NAMESPACE_PATH)
    assert namespace["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"
    group = rest.get(path("operators.coreos.com/v1", "operatorgroups", NAMESPACE, NAMESPACE))
    assert group["spec"]["targetNamespaces"] == [NAMESPACE]
    subscription = rest.get(SUBSCRIPTION)
    assert subscription["spec"] == {"name": "cluster-kube-descheduler-operator", "channel": "stable",
                                    "source": "redhat-operators", "sourceNamespace": "openshift-marketplace",
                                    "installPlanApproval": "Automatic"}
    assert rest.get(OPERATOR_DEPLOYMENT) is not None
    assert rest.get(CRD_PATH) is not None


def test_manual_pin_installs_that_version_and_never_approves_the_upgrade(kube: Any, rest: Rest, olm: Olm,
                                                                         tmp_path: Path) -> None:
    pinned = {"install_plan_approval": "Manual", "starting_csv": V532}
    install = run(tmp_path, operator_task(kube, "install", **pinned))["install"]
    assert install["installed_csv"] == V532 and install["installed_version"] == "5.3.2"
    approvals = [a for a in install["actions"] if a["action"] == "approve"]
    assert len(approvals) == 1 and V532 in approvals[0]["message"]

    # 5.3.2 is below the channel head: OLM (the stand-in, in its own time) proposes 5.4.0, which must stay waiting
    wait_until(lambda: any(p["spec"]["clusterServiceVersionNames"] == [V540]
                           for p in rest.list(path(OLM_API, "installplans", NAMESPACE))),
               timeout=120, what="OLM to propose the upgrade to 5.4.0")
    (tmp_path / "again").mkdir()
    again = run(tmp_path / "again", operator_task(kube, "again", **pinned))["again"]
    assert again["pending_upgrade"]["csvs"] == [V540] and again["pending_upgrade"]["approved"] is False
    assert any("not the requested version" in w for w in again["warnings"]), again["warnings"]
    assert again["changed"] is False and again["installed_csv"] == V532
    plans = rest.list(path(OLM_API, "installplans", NAMESPACE))
    approvals = {p["spec"]["clusterServiceVersionNames"][0]: p["spec"]["approved"] for p in plans}
    assert approvals == {V532: True, V540: False}
    assert rest.get(csv_path(V540)) is None


def test_moving_the_pin_approves_exactly_that_upgrade(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(kube, "install", install_plan_approval="Manual", starting_csv=V532))
    olm.publish("5.5.0")  # the catalog moves on: an InstallPlan for 5.5.0 waits too
    results = run(tmp_path, operator_task(kube, "upgrade", install_plan_approval="Manual", starting_csv=V540))
    upgrade = results["upgrade"]

    assert upgrade["installed_csv"] == V540 and upgrade["csv_phase"] == "Succeeded"
    approved = [a["object"] for a in upgrade["actions"] if a["action"] == "approve"]
    assert len(approved) == 1
    assert upgrade["pending_upgrade"]["csvs"] == [V550]
    wait_until(lambda: rest.get(csv_path(V532)) is None, what=f"{V532} to be replaced")
    assert rest.get(csv_path(V550)) is None
    operator = rest.get(OPERATOR_DEPLOYMENT)
    assert operator["metadata"]["ownerReferences"][0]["name"] == V540


def test_manual_without_pin_approves_the_head_once_then_no_upgrade(kube: Any, rest: Rest, olm: Olm,
                                                                   tmp_path: Path) -> None:
    first = run(tmp_path, operator_task(kube, "install", install_plan_approval="Manual"))["install"]
    assert first["installed_csv"] == V540 and first["requested_csv"] == V540
    olm.publish("5.5.0")
    later = run(tmp_path, operator_task(kube, "later", install_plan_approval="Manual"))["later"]

    assert later["changed"] is False
    assert later["installed_csv"] == V540
    assert later["pending_upgrade"]["csvs"] == [V550]
    assert later["subscription"]["state"] == "UpgradePending"


def test_check_mode_writes_nothing_and_says_what_it_would_do(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    before = versions(rest)
    fresh = run(tmp_path, operator_task(kube, "fresh", check=True))["fresh"]

    assert fresh["changed"] is True and fresh["check_mode"] is True
    assert steps(fresh) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create")]
    assert all("would create (check mode)" == a["message"] for a in fresh["actions"])
    assert versions(rest) == before
    assert rest.get(NAMESPACE_PATH) is None

    results = run(tmp_path, operator_task(kube, "install"),
                  operator_task(kube, "manual_check", check=True, install_plan_approval="Manual"))
    manual_check = results["manual_check"]
    assert manual_check["changed"] is True
    assert [a["step"] for a in manual_check["actions"] if a["changed"]] == ["subscription"]
    subscription = rest.get(SUBSCRIPTION)
    assert subscription["spec"]["installPlanApproval"] == "Automatic"


def test_diff_shows_before_and_after_of_each_object(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(kube, "install", diff=True),
                  operator_task(kube, "switch", diff=True, install_plan_approval="Manual"))
    created = {d["after_header"]: d for d in results["install"]["diff"]}
    namespace_diff = created[f"Namespace {NAMESPACE}"]
    assert namespace_diff["before"] == {}
    assert namespace_diff["after"]["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"

    (switch,) = results["switch"]["diff"]
    assert switch["before"]["spec"]["installPlanApproval"] == "Automatic"
    assert switch["after"]["spec"]["installPlanApproval"] == "Manual"
    assert "status" not in switch["after"] and "resourceVersion" not in switch["after"]["metadata"]


# ---- precise failures ------------------------------------------------------------------------------------------------

def test_catalog_without_the_package(kube: Any, rest: Rest, start_olm: Callable[..., Olm], tmp_path: Path) -> None:
    start_olm(packages=[])
    result = run(tmp_path, operator_task(kube, "install", ignore_errors=True))["install"]

    assert result["failed"] is True
    assert result["msg"].startswith("package cluster-kube-descheduler-operator is not in catalog redhat-operators "
                                    "(namespace openshift-marketplace)")
    assert "OKDerators" in result["msg"]
    assert result["actions"] == []
    assert rest.get(NAMESPACE_PATH) is None  # nothing written


def test_unknown_channel_lists_the_channels(kube: Any, olm: Olm, tmp_path: Path) -> None:
    result = run(tmp_path, operator_task(kube, "install", channel="fast", ignore_errors=True))["install"]

    assert result["msg"] == (
        "channel 'fast' is not in package cluster-kube-descheduler-operator of catalog redhat-operators "
        f"(openshift-marketplace); the package's channels: stable (default, head {V540}). Set channel to one of them")
    assert result["available_channels"] == ["stable"]


def test_unknown_catalog_source_and_csv_outside_the_channel(kube: Any, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path,
                  operator_task(kube, "source", source="community-operators", ignore_errors=True),
                  operator_task(kube, "csv", starting_csv=csv_name("4.13.0"), install_plan_approval="Manual",
                                ignore_errors=True))

    assert results["source"]["msg"].startswith("catalog source 'community-operators' not found in namespace "
                                               "openshift-marketplace; catalog sources there: redhat-operators")
    assert results["csv"]["msg"] == (f"starting_csv '{csv_name('4.13.0')}' is not in channel stable of package "
                                     f"cluster-kube-descheduler-operator; the channel holds: {V540}, {V532}")


def test_failed_csv_reports_its_reason_and_message(kube: Any, start_olm: Callable[..., Olm], tmp_path: Path) -> None:
    message = 'install strategy failed: Deployment.apps "descheduler-operator" is invalid'
    start_olm(failing={"5.4.0": ("InstallComponentFailed", message)})
    result = run(tmp_path, operator_task(kube, "install", ignore_errors=True))["install"]

    assert result["msg"] == f"ClusterServiceVersion {V540} failed: InstallComponentFailed: {message}"
    assert (result["csv_phase"], result["csv_reason"]) == ("Failed", "InstallComponentFailed")
    assert steps(result) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create")]


def test_cluster_without_olm(kube: Any, tmp_path: Path) -> None:
    result = run(tmp_path, operator_task(kube, "install", ignore_errors=True))["install"]

    assert result["msg"].startswith("OLM is not installed on this cluster")
    assert "flavor: upstream" in result["msg"]


# What an installer may do on the API groups the operator module touches, everything but create Subscriptions
# (RBAC only adds permissions: "all but one" is spelled out).
INSTALLER_BUT_SUBSCRIPTION_CREATE = [
    {"apiGroups": ["", "apps", "batch", "apiextensions.k8s.io", "admissionregistration.k8s.io", "scheduling.k8s.io",
                   "rbac.authorization.k8s.io", "packages.operators.coreos.com", "operator.openshift.io"],
     "resources": ["*"], "verbs": ["*"]},
    {"apiGroups": ["operators.coreos.com"], "verbs": ["*"],
     "resources": ["catalogsources", "operatorgroups", "clusterserviceversions", "installplans", "operators",
                   "operatorconditions", "olmconfigs"]},
    {"apiGroups": ["operators.coreos.com"], "resources": ["subscriptions"],
     "verbs": ["get", "list", "watch", "update", "patch", "delete"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
]


def test_forbidden_names_the_missing_permission(kube: Any, olm: Olm, tmp_path: Path) -> None:
    # a real ServiceAccount with every permission the install needs but that one
    kubeconfig = restricted_kubeconfig(kube, tmp_path, "installer-without-subscriptions",
                                       rules=INSTALLER_BUT_SUBSCRIPTION_CREATE)
    installer = SimpleNamespace(kubeconfig=kubeconfig, context=kube.context)
    result = run(tmp_path, operator_task(installer, "install", ignore_errors=True))["install"]

    # refused before the first write by the rights check (cluster/rights.py), naming the missing rights
    assert "create subscriptions (API group 'operators.coreos.com') at the cluster scope" in result["msg"]
    assert "descheduler-fleet-installing" in result["msg"] and "rbac/installing.yml" in result["msg"], result["msg"]
    assert user_name("installer-without-subscriptions") in result["msg"]
    assert not result.get("actions")  # nothing was written


def test_timeout_names_the_state_it_saw_and_slow_csv_is_awaited(kube: Any, rest: Rest, start_olm: Callable[..., Olm],
                                                                tmp_path: Path) -> None:
    olm = start_olm(auto_complete=False)
    run(tmp_path, operator_task(kube, "install", wait=False))
    # the state the timeout must name, awaited first: the module's own short wait then only decides when to stop
    wait_until(lambda: (((rest.get(SUBSCRIPTION) or {}).get("status") or {}).get("installedCSV") == V540
                        and ((rest.get(csv_path(V540)) or {}).get("status") or {}).get("phase") == "Pending"),
               120, 0.2, f"OLM to install {V540} as far as a Pending CSV")
    timed_out = run(tmp_path, operator_task(kube, "waited", wait_timeout=2, ignore_errors=True))["waited"]
    assert timed_out["msg"].startswith("the operator was not installed within 2s: Subscription state AtLatestKnown, "
                                       f"installedCSV {V540}")
    assert "CSV phase Pending" in timed_out["msg"]

    stop = threading.Event()

    def operator_lifecycle_manager() -> None:
        while not stop.wait(0.3):
            olm.step()

    worker = threading.Thread(target=operator_lifecycle_manager, daemon=True)
    worker.start()
    try:
        awaited = run(tmp_path, operator_task(kube, "again", wait_timeout=300))["again"]
    finally:
        stop.set()
        worker.join()
    assert awaited["csv_phase"] == "Succeeded" and awaited["changed"] is False


# ---- uninstall and reinstall -----------------------------------------------------------------------------------------

def leftovers(kube: Any, rest: Rest) -> list[tuple[str, dict]]:
    """What the running operator would have rendered (operator.md §3), owned by the KubeDescheduler: (path, object)."""
    kd = rest.create(path("operator.openshift.io/v1", "kubedeschedulers", NAMESPACE), {
        "apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
        "metadata": {"name": "cluster", "namespace": NAMESPACE},
        "spec": {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                 "profiles": ["KubeVirtRelieveAndMigrate"]}})
    owner = [{"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler", "name": "cluster",
              "uid": kd["metadata"]["uid"], "controller": True}]
    rbac, admission = "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1"
    objects = [
        (path("apps/v1", "deployments", NAMESPACE),
         {"apiVersion": "apps/v1", "kind": "Deployment",
          "metadata": {"name": name, "namespace": NAMESPACE, "ownerReferences": owner},
          "spec": {"selector": {"matchLabels": {"app": name}},
                   "template": {"metadata": {"labels": {"app": name}},
                                "spec": {"containers": [{"name": name, "image": f"{name}:test"}]}}}})
        for name in ("descheduler", "softtainter")]
    objects += [(path(rbac, "clusterroles"),
                 {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": n, "ownerReferences": owner}})
                for n in ("openshift-descheduler-operand", "openshift-descheduler-softtainter")]
    objects += [(path(rbac, "clusterrolebindings"),
                 {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": n, "ownerReferences": owner},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": n}})
                for n in ("openshift-descheduler-operand", "cluster-monitoring-view-cr",
                          "openshift-descheduler-softtainter", "openshift-descheduler-softtainter-monitoring")]
    objects += [
        (path(admission, "validatingadmissionpolicies"),
         {"apiVersion": admission, "kind": "ValidatingAdmissionPolicy",
          "metadata": {"name": "openshift-descheduler-softtainter-vap"},
          "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                           "operations": ["UPDATE"], "resources": ["nodes"]}]},
                   "validations": [{"expression": "true"}]}}),
        (path(admission, "validatingadmissionpolicybindings"),
         {"apiVersion": admission, "kind": "ValidatingAdmissionPolicyBinding",
          "metadata": {"name": "openshift-descheduler-softtainter-vap-binding"},
          "spec": {"policyName": "openshift-descheduler-softtainter-vap", "validationActions": ["Deny"]}}),
    ]
    for url, obj in objects:
        rest.create(url, obj)
    taints = [{"key": "nodeutilization.descheduler.openshift.io/overutilized", "value": "true",
               "effect": "PreferNoSchedule"},
              {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    kube.load([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}, "spec": {"taints": taints}},
               {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-2"},
                "spec": {"taints": [{"key": "nodeutilization.descheduler.openshift.io/appropriate",
                                     "value": "true", "effect": "PreferNoSchedule"}]}}])
    return objects


def test_uninstall_leaves_nothing_it_promised_to_remove(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(kube, "install"))
    objects = leftovers(kube, rest)
    results = run(tmp_path, operator_task(kube, "check", state="absent", check=True),
                  operator_task(kube, "remove", state="absent", diff=True),
                  operator_task(kube, "again", state="absent"))
    check, remove, again = results["check"], results["remove"], results["again"]

    assert check["changed"] is True
    assert rest.get(NAMESPACE_PATH) is None  # gone after the real run, not the check
    deleted = [a["step"] for a in remove["actions"] if a["action"] == "delete"]
    assert deleted[:4] == ["kubedescheduler", "subscription", "csv", "operator_group"]
    assert deleted[-1] == "namespace"
    assert [a["step"] for a in remove["actions"] if a["action"] == "wait"] == ["operand", "namespace"]
    assert remove["removed_csvs"] == [V540]
    assert sorted(remove["untainted_nodes"]) == ["worker-1", "worker-2"]
    assert again["changed"] is False

    for url, obj in objects:
        assert rest.get(f"{url}/{obj['metadata']['name']}") is None, obj
    assert rest.get(OPERATOR_DEPLOYMENT) is None
    assert rest.get(path("v1", "nodes", name="worker-1"))["spec"]["taints"] == [
        {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    assert not rest.get(path("v1", "nodes", name="worker-2"))["spec"].get("taints")
    assert rest.get(CRD_PATH) is not None  # kept unless remove_crd

    crd = run(tmp_path, operator_task(kube, "crd", state="absent", remove_crd=True))["crd"]
    assert steps(crd)[-1] == ("crd", "delete")
    assert rest.get(CRD_PATH) is None


def test_check_mode_uninstall_deletes_nothing(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(kube, "install"))
    before = versions(rest)
    check = run(tmp_path, operator_task(kube, "check", state="absent", check=True, remove_crd=True))["check"]

    assert ("namespace", "delete") in steps(check) and ("crd", "delete") in steps(check)
    assert all(a["message"] in ("would delete (check mode)", "already absent") or a["step"] == "soft_taints"
               for a in check["actions"])
    assert versions(rest) == before


def test_reinstall_after_uninstall(kube: Any, rest: Rest, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(kube, "install"), operator_task(kube, "remove", state="absent"),
                  operator_task(kube, "reinstall"), operator_task(kube, "steady"))

    assert results["reinstall"]["changed"] is True
    assert results["reinstall"]["installed_csv"] == V540 and results["reinstall"]["csv_phase"] == "Succeeded"
    assert results["steady"]["changed"] is False
    assert rest.get(OPERATOR_DEPLOYMENT) is not None


def test_operand_goes_with_the_uninstall_and_reinstall_starts_clean(kube: Any, rest: Rest,
                                                                    start_olm: Callable[..., Olm],
                                                                    tmp_path: Path) -> None:
    """With the operator stand-in started when the CSV succeeds (as OLM starts the operator's Deployment), the
    KubeDescheduler renders its operand; the uninstall waits for it to go."""
    operators: list[DeschedulerOperator] = []

    def start_operator(csv: dict) -> None:
        if operators:
            operators[0].restart()  # a reinstall restarts the operator pod
        else:
            operators.append(DeschedulerOperator(rest.api_client).install(operator_deployment=False))

    start_olm(on_succeeded=[start_operator])
    try:
        run(tmp_path, operator_task(kube, "install"))
        rest.create(path("operator.openshift.io/v1", "kubedeschedulers", NAMESPACE), {
            "apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
            "metadata": {"name": "cluster", "namespace": NAMESPACE},
            "spec": {"managementState": "Managed", "deschedulingIntervalSeconds": 3600,
                     "profiles": ["AffinityAndTaints"]}})
        wait_until(lambda: rest.get(path("apps/v1", "deployments", NAMESPACE, "descheduler")), what="the operand")
        assert rest.get(path("v1", "configmaps", NAMESPACE, "cluster")) is not None

        # the operand goes when the garbage collector follows its owner reference to the deleted KubeDescheduler;
        # on a loaded machine that has taken longer than 30 s
        results = run(tmp_path, operator_task(kube, "remove", state="absent", wait_timeout=120),
                      operator_task(kube, "reinstall"))
    finally:
        for operator in operators:
            operator.stop()
            operator.check()

    assert [a["object"] for a in results["remove"]["actions"] if a["step"] == "operand"] == [
        f"Deployment {NAMESPACE}/descheduler, Deployment {NAMESPACE}/softtainter"]
    assert results["reinstall"]["csv_phase"] == "Succeeded"
    # a reinstall starts without a config
    assert rest.get(path("operator.openshift.io/v1", "kubedeschedulers", NAMESPACE, "cluster")) is None
    assert rest.get(path("apps/v1", "deployments", NAMESPACE, "descheduler")) is None
