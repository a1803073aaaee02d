"""The operator module, flavor olm, through real ansible-playbook runs against the emulator's OLM (emulator/olm.py):
install with Automatic and Manual approval, version pins and the upgrade that must not be approved, idempotence,
check mode, diff, the precise failures (catalog, channel, CSV), uninstall and reinstall."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from emulator import Emulator
from emulator.olm import KUBEDESCHEDULER_CRD, Olm, csv_name
from playbook import run_tasks

pytestmark = pytest.mark.needs_emulator  # OLM is emulated: a real OpenShift would install the real operator

NAMESPACE = "openshift-kube-descheduler-operator"
CRD_NAME = KUBEDESCHEDULER_CRD["metadata"]["name"]
V532, V540, V550 = csv_name("5.3.2"), csv_name("5.4.0"), csv_name("5.5.0")


def operator_task(emulator: Emulator, register: str, *, check: bool = False, diff: bool = False,
                  ignore_errors: bool = False, **options: Any) -> dict:
    task: dict[str, Any] = {
        "name": f"operator ({register})",
        "descheduler.fleet.operator": {"kubeconfig": str(emulator.kubeconfig), "wait_timeout": 10, "wait_sleep": 1,
                                       **options},
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
def olm(emulator: Emulator) -> Olm:
    return Olm().install(emulator)


# ---- install ---------------------------------------------------------------------------------------------------------

def test_automatic_install_then_second_run_changes_nothing(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(emulator, "first"), operator_task(emulator, "second"))
    first, second = results["first"], results["second"]

    assert first["changed"] is True
    assert steps(first) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create"),
                            ("wait", "wait")]
    assert (first["installed_csv"], first["installed_version"], first["csv_phase"]) == (V540, "5.4.0", "Succeeded")
    assert first["crd_established"] is True
    assert first["subscription"]["state"] == "AtLatestKnown"
    assert second["changed"] is False
    assert all(not a["changed"] for a in second["actions"])

    namespace = emulator.get("Namespace", None, NAMESPACE)
    assert namespace["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"
    group = emulator.get("operatorgroups.operators.coreos.com", NAMESPACE, NAMESPACE)
    assert group["spec"]["targetNamespaces"] == [NAMESPACE]
    subscription = emulator.get("subscriptions.operators.coreos.com", NAMESPACE, "cluster-kube-descheduler-operator")
    assert subscription["spec"] == {"name": "cluster-kube-descheduler-operator", "channel": "stable",
                                    "source": "redhat-operators", "sourceNamespace": "openshift-marketplace",
                                    "installPlanApproval": "Automatic"}
    assert emulator.get("Deployment", NAMESPACE, "descheduler-operator") is not None
    assert emulator.get("CustomResourceDefinition", None, CRD_NAME) is not None


def test_manual_pin_installs_that_version_and_never_approves_the_upgrade(emulator: Emulator, olm: Olm,
                                                                         tmp_path: Path) -> None:
    pinned = {"install_plan_approval": "Manual", "starting_csv": V532}
    results = run(tmp_path, operator_task(emulator, "install", **pinned), operator_task(emulator, "again", **pinned))
    install, again = results["install"], results["again"]

    assert install["installed_csv"] == V532 and install["installed_version"] == "5.3.2"
    approvals = [a for a in install["actions"] if a["action"] == "approve"]
    assert len(approvals) == 1 and V532 in approvals[0]["message"]
    # 5.3.2 is below the channel head: OLM proposes 5.4.0 at once, and it must stay waiting
    assert install["pending_upgrade"]["csvs"] == [V540] and install["pending_upgrade"]["approved"] is False
    assert any("not the requested version" in w for w in install["warnings"])
    assert again["changed"] is False and again["installed_csv"] == V532
    plans = emulator.list("installplans.operators.coreos.com", NAMESPACE)
    approvals = {p["spec"]["clusterServiceVersionNames"][0]: p["spec"]["approved"] for p in plans}
    assert approvals == {V532: True, V540: False}
    assert emulator.get("clusterserviceversions.operators.coreos.com", NAMESPACE, V540) is None


def test_moving_the_pin_approves_exactly_that_upgrade(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(emulator, "install", install_plan_approval="Manual", starting_csv=V532))
    olm.publish("5.5.0")  # the catalog moves on: an InstallPlan for 5.5.0 waits too
    results = run(tmp_path, operator_task(emulator, "upgrade", install_plan_approval="Manual", starting_csv=V540))
    upgrade = results["upgrade"]

    assert upgrade["installed_csv"] == V540 and upgrade["csv_phase"] == "Succeeded"
    approved = [a["object"] for a in upgrade["actions"] if a["action"] == "approve"]
    assert len(approved) == 1
    assert upgrade["pending_upgrade"]["csvs"] == [V550]
    assert emulator.get("clusterserviceversions.operators.coreos.com", NAMESPACE, V532) is None  # replaced
    assert emulator.get("clusterserviceversions.operators.coreos.com", NAMESPACE, V550) is None
    operator = emulator.get("Deployment", NAMESPACE, "descheduler-operator")
    assert operator["metadata"]["ownerReferences"][0]["name"] == V540


def test_manual_without_pin_approves_the_head_once_then_no_upgrade(emulator: Emulator, olm: Olm,
                                                                   tmp_path: Path) -> None:
    first = run(tmp_path, operator_task(emulator, "install", install_plan_approval="Manual"))["install"]
    assert first["installed_csv"] == V540 and first["requested_csv"] == V540
    olm.publish("5.5.0")
    later = run(tmp_path, operator_task(emulator, "later", install_plan_approval="Manual"))["later"]

    assert later["changed"] is False
    assert later["installed_csv"] == V540
    assert later["pending_upgrade"]["csvs"] == [V550]
    assert later["subscription"]["state"] == "UpgradePending"


def test_check_mode_writes_nothing_and_says_what_it_would_do(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    before = emulator.store.resource_version
    fresh = run(tmp_path, operator_task(emulator, "fresh", check=True))["fresh"]

    assert fresh["changed"] is True and fresh["check_mode"] is True
    assert steps(fresh) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create")]
    assert all("would create (check mode)" == a["message"] for a in fresh["actions"])
    assert emulator.store.resource_version == before
    assert emulator.get("Namespace", None, NAMESPACE) is None

    results = run(tmp_path, operator_task(emulator, "install"),
                  operator_task(emulator, "manual_check", check=True, install_plan_approval="Manual"))
    manual_check = results["manual_check"]
    assert manual_check["changed"] is True
    assert [a["step"] for a in manual_check["actions"] if a["changed"]] == ["subscription"]
    subscription = emulator.get("subscriptions.operators.coreos.com", NAMESPACE, "cluster-kube-descheduler-operator")
    assert subscription["spec"]["installPlanApproval"] == "Automatic"


def test_diff_shows_before_and_after_of_each_object(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(emulator, "install", diff=True),
                  operator_task(emulator, "switch", diff=True, install_plan_approval="Manual"))
    created = {d["after_header"]: d for d in results["install"]["diff"]}
    namespace_diff = created[f"Namespace {NAMESPACE}"]
    assert namespace_diff["before"] == {}
    assert namespace_diff["after"]["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"

    (switch,) = results["switch"]["diff"]
    assert switch["before"]["spec"]["installPlanApproval"] == "Automatic"
    assert switch["after"]["spec"]["installPlanApproval"] == "Manual"
    assert "status" not in switch["after"] and "resourceVersion" not in switch["after"]["metadata"]


# ---- precise failures ------------------------------------------------------------------------------------------------

def test_catalog_without_the_package(emulator: Emulator, tmp_path: Path) -> None:
    Olm(packages=[]).install(emulator)
    result = run(tmp_path, operator_task(emulator, "install", ignore_errors=True))["install"]

    assert result["failed"] is True
    assert result["msg"].startswith("package cluster-kube-descheduler-operator is not in catalog redhat-operators "
                                    "(namespace openshift-marketplace)")
    assert "OKDerators" in result["msg"]
    assert result["actions"] == []
    assert emulator.get("Namespace", None, NAMESPACE) is None  # nothing written


def test_unknown_channel_lists_the_channels(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    result = run(tmp_path, operator_task(emulator, "install", channel="fast", ignore_errors=True))["install"]

    assert result["msg"] == (
        "channel 'fast' is not in package cluster-kube-descheduler-operator of catalog redhat-operators "
        f"(openshift-marketplace); the package's channels: stable (default, head {V540}). Set channel to one of them")
    assert result["available_channels"] == ["stable"]


def test_unknown_catalog_source_and_csv_outside_the_channel(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path,
                  operator_task(emulator, "source", source="community-operators", ignore_errors=True),
                  operator_task(emulator, "csv", starting_csv=csv_name("4.13.0"), install_plan_approval="Manual",
                                ignore_errors=True))

    assert results["source"]["msg"].startswith("catalog source 'community-operators' not found in namespace "
                                               "openshift-marketplace; catalog sources there: redhat-operators")
    assert results["csv"]["msg"] == (f"starting_csv '{csv_name('4.13.0')}' is not in channel stable of package "
                                     f"cluster-kube-descheduler-operator; the channel holds: {V540}, {V532}")


def test_failed_csv_reports_its_reason_and_message(emulator: Emulator, tmp_path: Path) -> None:
    message = 'install strategy failed: Deployment.apps "descheduler-operator" is invalid'
    Olm(failing={"5.4.0": ("InstallComponentFailed", message)}).install(emulator)
    result = run(tmp_path, operator_task(emulator, "install", ignore_errors=True))["install"]

    assert result["msg"] == f"ClusterServiceVersion {V540} failed: InstallComponentFailed: {message}"
    assert (result["csv_phase"], result["csv_reason"]) == ("Failed", "InstallComponentFailed")
    assert steps(result) == [("namespace", "create"), ("operator_group", "create"), ("subscription", "create")]


def test_cluster_without_olm(emulator: Emulator, tmp_path: Path) -> None:
    result = run(tmp_path, operator_task(emulator, "install", ignore_errors=True))["install"]

    assert result["msg"].startswith("OLM is not installed on this cluster")
    assert "flavor: upstream" in result["msg"]


def test_forbidden_names_the_missing_permission(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    emulator.auth.forbid("create", "subscriptions.operators.coreos.com")
    result = run(tmp_path, operator_task(emulator, "install", ignore_errors=True))["install"]

    assert "cannot create 'subscriptions'" in result["msg"]
    assert "operators.coreos.com" in result["msg"]
    assert steps(result) == [("namespace", "create"), ("operator_group", "create")]  # where it stopped


def test_timeout_names_the_state_it_saw_and_slow_csv_is_awaited(emulator: Emulator, tmp_path: Path) -> None:
    olm = Olm(auto_complete=False).install(emulator)
    timed_out = run(tmp_path, operator_task(emulator, "install", wait_timeout=2, ignore_errors=True))["install"]
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
        awaited = run(tmp_path, operator_task(emulator, "again", wait_timeout=30))["again"]
    finally:
        stop.set()
        worker.join()
    assert awaited["csv_phase"] == "Succeeded" and awaited["changed"] is False


# ---- uninstall and reinstall -----------------------------------------------------------------------------------------

def leftovers(emulator: Emulator) -> list[dict]:
    """What the running operator would have rendered (operator.md §3), owned by the KubeDescheduler."""
    kd = emulator.create({"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                          "metadata": {"name": "cluster", "namespace": NAMESPACE},
                          "spec": {"mode": "Predictive", "deschedulingIntervalSeconds": 3600,
                                   "profiles": ["KubeVirtRelieveAndMigrate"]}})
    owner = [{"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler", "name": "cluster",
              "uid": kd["metadata"]["uid"], "controller": True}]
    rbac = "rbac.authorization.k8s.io/v1"
    objects = [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": NAMESPACE, "ownerReferences": owner},
         "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}}}}
        for name in ("descheduler", "softtainter")]
    objects += [{"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": n, "ownerReferences": owner}}
                for n in ("openshift-descheduler-operand", "openshift-descheduler-softtainter")]
    objects += [{"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": n, "ownerReferences": owner},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": n}}
                for n in ("openshift-descheduler-operand", "cluster-monitoring-view-cr",
                          "openshift-descheduler-softtainter", "openshift-descheduler-softtainter-monitoring")]
    objects += [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
         "metadata": {"name": "openshift-descheduler-softtainter-vap"}, "spec": {}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
         "metadata": {"name": "openshift-descheduler-softtainter-vap-binding"},
         "spec": {"policyName": "openshift-descheduler-softtainter-vap"}},
    ]
    for obj in objects:
        emulator.create(obj)
    taints = [{"key": "nodeutilization.descheduler.openshift.io/overutilized", "value": "true",
               "effect": "PreferNoSchedule"},
              {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    emulator.load([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"},
                    "spec": {"taints": taints}},
                   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-2"},
                    "spec": {"taints": [{"key": "nodeutilization.descheduler.openshift.io/appropriate",
                                         "value": "true", "effect": "PreferNoSchedule"}]}}])
    return objects


def test_uninstall_leaves_nothing_it_promised_to_remove(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(emulator, "install"))
    objects = leftovers(emulator)
    results = run(tmp_path, operator_task(emulator, "check", state="absent", check=True),
                  operator_task(emulator, "remove", state="absent", diff=True),
                  operator_task(emulator, "again", state="absent"))
    check, remove, again = results["check"], results["remove"], results["again"]

    assert check["changed"] is True
    assert emulator.get("Namespace", None, NAMESPACE) is None  # gone after the real run, not the check
    deleted = [a["step"] for a in remove["actions"] if a["action"] == "delete"]
    assert deleted[:4] == ["kubedescheduler", "subscription", "csv", "operator_group"]
    assert deleted[-1] == "namespace"
    assert [a["step"] for a in remove["actions"] if a["action"] == "wait"] == ["operand", "namespace"]
    assert remove["removed_csvs"] == [V540]
    assert sorted(remove["untainted_nodes"]) == ["worker-1", "worker-2"]
    assert again["changed"] is False

    for obj in objects:
        assert emulator.get(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]) is None, obj
    assert emulator.get("Deployment", NAMESPACE, "descheduler-operator") is None
    assert emulator.get("Node", None, "worker-1")["spec"]["taints"] == [
        {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    assert not emulator.get("Node", None, "worker-2")["spec"].get("taints")
    assert emulator.get("CustomResourceDefinition", None, CRD_NAME) is not None  # kept unless remove_crd

    crd = run(tmp_path, operator_task(emulator, "crd", state="absent", remove_crd=True))["crd"]
    assert steps(crd)[-1] == ("crd", "delete")
    assert emulator.get("CustomResourceDefinition", None, CRD_NAME) is None


def test_check_mode_uninstall_deletes_nothing(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    run(tmp_path, operator_task(emulator, "install"))
    before = emulator.store.resource_version
    check = run(tmp_path, operator_task(emulator, "check", state="absent", check=True, remove_crd=True))["check"]

    assert ("namespace", "delete") in steps(check) and ("crd", "delete") in steps(check)
    assert all(a["message"] in ("would delete (check mode)", "already absent") or a["step"] == "soft_taints"
               for a in check["actions"])
    assert emulator.store.resource_version == before


def test_reinstall_after_uninstall(emulator: Emulator, olm: Olm, tmp_path: Path) -> None:
    results = run(tmp_path, operator_task(emulator, "install"), operator_task(emulator, "remove", state="absent"),
                  operator_task(emulator, "reinstall"), operator_task(emulator, "steady"))

    assert results["reinstall"]["changed"] is True
    assert results["reinstall"]["installed_csv"] == V540 and results["reinstall"]["csv_phase"] == "Succeeded"
    assert results["steady"]["changed"] is False
    assert emulator.get("Deployment", NAMESPACE, "descheduler-operator") is not None


def test_operand_goes_with_the_uninstall_and_reinstall_starts_clean(emulator: Emulator, tmp_path: Path) -> None:
    """With the operator's own behaviour emulated (emulator/descheduler_operator.py, started when the CSV succeeds), the
    KubeDescheduler renders its operand; the uninstall waits for it to go."""
    olm = Olm()
    olm.on_succeeded.append(start_operator)
    olm.install(emulator)
    run(tmp_path, operator_task(emulator, "install"))
    emulator.create({"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                     "metadata": {"name": "cluster", "namespace": NAMESPACE},
                     "spec": {"deschedulingIntervalSeconds": 3600, "profiles": ["AffinityAndTaints"]}})
    assert emulator.get("Deployment", NAMESPACE, "descheduler") is not None
    assert emulator.get("ConfigMap", NAMESPACE, "cluster") is not None

    results = run(tmp_path, operator_task(emulator, "remove", state="absent"), operator_task(emulator, "reinstall"))

    assert [a["object"] for a in results["remove"]["actions"] if a["step"] == "operand"] == [
        f"Deployment {NAMESPACE}/descheduler, Deployment {NAMESPACE}/softtainter"]
    assert results["reinstall"]["csv_phase"] == "Succeeded"
    assert emulator.get("KubeDescheduler", NAMESPACE, "cluster") is None  # a reinstall starts without a config
    assert emulator.get("Deployment", NAMESPACE, "descheduler") is None


def start_operator(emulator: Emulator, csv: dict) -> None:
    from emulator.descheduler_operator import install_descheduler_operator

    install_descheduler_operator(emulator)
