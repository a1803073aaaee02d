"""playbooks/install.yml with rollout controls (descheduler_fleet_rollout; docs/rolling-out.md): the rollout module's
kind operator on a fleet of three API servers (`fleet_clusters`), each with the OLM stand-in (standins/olm.py: it
installs the operator's CSV and Deployment, which really runs through kube-controller-manager and the kubelet
stand-in). One inventory host and one decision group each: canaries (mandatory: canary), wave-1 (prod-a), wave-2
(prod-b).

prod-a already has the operator's namespace (holding a ConfigMap of its own: the rollout did not create either) and a
Deployment `web`. Before OLM reports prod-a's new CSV Succeeded, web's pods come back never Ready (the OLM stand-in
turns them so and waits until web has lost them, as an operator breaking the cluster's workloads would): the install
itself succeeds, and the workloads gate breaches at the first poll of prod-a's soak. The rollout must roll prod-a back
to "not installed" - the Subscription, its CSV and the operator Deployment, the OperatorGroup and the CRD gone, the
namespace and its ConfigMap kept, the label the install added to the namespace taken away - keep the canary
installed and leave prod-b untouched. playbooks/uninstall.yml with the same controls then removes the canary's
operator. No sleeps: every wait is on observed state with a generous deadline.

On the session's own cluster (one OLM stand-in, no fleet), the rollout's operator change directly
(runner/rollout_operator.py): a rolled-back uninstall brings the Subscription back under its own name and with its
config, and a rolled-back upgrade fails without deleting the CSV it upgraded to (the only operator left).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import _targets
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_operator import OperatorChange
from fleet_support import run_concurrently
from kubelet_standin import NEVER_READY
from operator_support import node
from playbook import REPO, run_playbook
from standins.olm import Olm, csv_name
from standins.olm_types import OLM_API, PACKAGE
from standins.rest import Rest, path, wait_until

PLAYBOOK = REPO / "playbooks" / "install.yml"
NAMESPACE = "openshift-kube-descheduler-operator"
GROUPS = {"canary": "canaries", "prod-a": "wave-1", "prod-b": "wave-2"}
RECORD = path("v1", "configmaps", "kube-system", "descheduler-fleet-last-good")
CRD = path("apiextensions.k8s.io/v1", "customresourcedefinitions", name="kubedeschedulers.operator.openshift.io")
OPERATOR = path("apps/v1", "deployments", NAMESPACE, "descheduler-operator")
WEB = path("apps/v1", "deployments", "shop", "web")
SITE_NOTES = path("v1", "configmaps", NAMESPACE, "site-notes")


def web_deployment() -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]}}}}


def prepare_prod_a(rest: Rest) -> None:
    """What prod-a had before: the operator namespace with a ConfigMap of its own, and web ready."""
    for name in (NAMESPACE, "shop"):
        rest.create(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    site_notes = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "site-notes"}, "data": {"a": "b"}}
    rest.create(path("v1", "configmaps", NAMESPACE), site_notes)
    rest.create(path("apps/v1", "deployments", "shop"), web_deployment())
    wait_until(lambda: (rest.get(WEB).get("status") or {}).get("readyReplicas") == 2, 120, 0.5,
               "web's two replicas to be ready before the rollout")


class BreakingOlm(Olm):
    """The OLM stand-in, turning web's pods never Ready before it reports a CSV Succeeded, and waiting until web has
    no ready replica left: once the install is seen done, the breach is already there."""

    def _set_phase(self, csv: dict[str, Any], phase: str) -> dict[str, Any] | None:
        if phase == "Succeeded":
            self.rest.change(WEB, lambda web: web["spec"]["template"]["metadata"].setdefault(
                "annotations", {}).update({NEVER_READY: "true"}))
            wait_until(lambda: not (self.rest.get(WEB).get("status") or {}).get("readyReplicas"), 120, 0.5,
                       "web to lose its ready replicas")
        return super()._set_phase(csv, phase)


@pytest.fixture
def fleet(fleet_clusters: Callable[[int], list[Any]]) -> Iterator[dict[str, Any]]:
    """Three clusters with OLM and a node; prod-a with what it had before (`prepare_prod_a`)."""
    clusters: dict[str, Any] = {}
    olms: list[Olm] = []
    try:
        for name, cluster in zip(GROUPS, fleet_clusters(len(GROUPS)), strict=True):
            cluster.rest = Rest(cluster.api_client())
            clusters[name] = cluster
            if not cluster.rest.list(path("v1", "nodes")):
                cluster.load([node("worker-1")])
            if name == "prod-a":
                prepare_prod_a(cluster.rest)
            olms.append((BreakingOlm if name == "prod-a" else Olm)(cluster.api_client()).install())
        yield clusters
    finally:
        run_concurrently([olm.uninstall for olm in olms])
        for cluster in clusters.values():
            cluster.rest.delete(RECORD)
            cluster.rest.delete(path("v1", "namespaces", name=NAMESPACE))
            wait_until(lambda c=cluster: c.rest.get(path("v1", "namespaces", name=NAMESPACE)) is None, 120, 0.5,
                       "the operator namespace to go")
        for cluster in clusters.values():
            cluster.rest.api_client.close()
        for olm in olms:
            olm.api_client.close()
            olm.check()


def write_inventory(tmp_path: Path, fleet: dict[str, Any]) -> Path:
    hosts = {name: {"descheduler_fleet_connection": {"kubeconfig": str(cluster.kubeconfig),
                                                     "context": cluster.context}}
             for name, cluster in fleet.items()}
    children = {group: {"hosts": {name: {}}} for name, group in GROUPS.items()}
    inventory = {"clusters": {"vars": {"install_wait_sleep": 1, "uninstall_wait_sleep": 1}, "hosts": hosts,
                              "children": children}}
    inventory_path = tmp_path / "inventory.yml"
    inventory_path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return inventory_path


def subscription(cluster: Any) -> dict[str, Any] | None:
    return cluster.rest.get(path(OLM_API, "subscriptions", NAMESPACE, "cluster-kube-descheduler-operator"))


def test_a_gate_breach_in_the_second_group_rolls_its_cluster_back_to_not_installed(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    rollout = {"mandatory_groups": ["canaries"], "groups": ["wave-1", "wave-2"], "min_success_time": "10s",
               "gate_interval": 1, "progress_deadline": 180, "run_id": "install-test"}
    process = run_playbook(PLAYBOOK, "-i", str(write_inventory(tmp_path, fleet)),
                           "-e", json.dumps({"descheduler_fleet_rollout": rollout}))
    text = process.stdout + process.stderr
    assert process.returncode != 0, text[-6000:]
    assert "Rollout halted: group wave-1: health gate breached on prod-a: Deployment shop/web lacks " in text
    assert "prod-a: FAILED: health gate breached during the soak" in text
    assert "rolled back to what it had before" in text
    assert "prod-b: not reached yet: the rollout halted before its group wave-2" in text
    assert "Fleet: 1 installed, 1 failed, 1 not reached yet (of 3)" in text

    canary, prod_a, prod_b = fleet["canary"], fleet["prod-a"], fleet["prod-b"]
    # the canary's group passed: installed, its record verified
    assert subscription(canary)["status"]["installedCSV"] == csv_name("5.4.0")
    assert canary.rest.get(OPERATOR)["status"].get("availableReplicas") == 1
    recorded = canary.rest.get(RECORD)
    assert recorded["metadata"]["annotations"]["descheduler.fleet/state"] == "verified"
    assert json.loads(recorded["data"]["operator.json"])["spec"]["installed_csv"] == csv_name("5.4.0")

    # prod-a back to not installed: what the rollout created is gone ...
    assert subscription(prod_a) is None
    assert prod_a.rest.get(path(OLM_API, "clusterserviceversions", NAMESPACE, csv_name("5.4.0"))) is None
    assert prod_a.rest.list(path("operators.coreos.com/v1", "operatorgroups", NAMESPACE)) == []
    assert prod_a.rest.get(OPERATOR) is None and prod_a.rest.get(CRD) is None
    # ... and what it did not create stays, as it was
    namespace = prod_a.rest.get(path("v1", "namespaces", name=NAMESPACE))
    assert namespace is not None and "openshift.io/cluster-monitoring" not in namespace["metadata"]["labels"]
    assert prod_a.rest.get(SITE_NOTES)["data"] == {"a": "b"}
    before = json.loads(prod_a.rest.get(RECORD)["data"]["operator.json"])
    assert [(o["kind"], o["name"]) for o in before["spec"]["objects"]] == [("Namespace", NAMESPACE)]

    # prod-b untouched: nothing installed, nothing recorded
    assert prod_b.rest.get(path("v1", "namespaces", name=NAMESPACE)) is None
    assert subscription(prod_b) is None and prod_b.rest.get(RECORD) is None

    # the uninstall role through the same rollout: the canary's operator goes, and with it what it had installed
    removed = run_playbook(PLAYBOOK.with_name("uninstall.yml"), "-i", str(write_inventory(tmp_path, fleet)),
                           "-e", json.dumps({"descheduler_fleet_rollout": {**rollout, "min_success_time": "2s"}}))
    text = removed.stdout + removed.stderr
    assert removed.returncode == 0, text[-6000:]
    assert "Rollout done: canaries -> wave-1 -> wave-2" in text
    assert "Fleet: 3 uninstalled, 0 failed, 0 not reached yet (of 3)" in text
    assert subscription(canary) is None and canary.rest.get(path("v1", "namespaces", name=NAMESPACE)) is None
    assert canary.rest.get(OPERATOR) is None


# ---- the uninstall role's rollback, on the session's own cluster (no fleet needed) ----------------------------------

CONSOLE_SUBSCRIPTION = path(OLM_API, "subscriptions", NAMESPACE, "descheduler-from-the-console")
OPERATOR_POD_CONFIG = {"nodeSelector": {"node-role.kubernetes.io/worker": ""},
                       "env": [{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"}]}


def install_from_the_console(rest: Rest) -> None:
    """The operator as a console install leaves it: a Subscription of its own name, with config for the operator's
    pod; then until OLM has installed it and the operator runs."""
    rest.create(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    rest.create(path("operators.coreos.com/v1", "operatorgroups", NAMESPACE), {
        "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": {"name": "descheduler"},
        "spec": {"targetNamespaces": [NAMESPACE]}})
    rest.create(path(OLM_API, "subscriptions", NAMESPACE), {
        "apiVersion": OLM_API, "kind": "Subscription", "metadata": {"name": "descheduler-from-the-console"},
        "spec": {"name": PACKAGE, "channel": "stable", "source": "redhat-operators",
                 "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Automatic",
                 "config": OPERATOR_POD_CONFIG}})
    wait_until(lambda: ((rest.get(OPERATOR) or {}).get("status") or {}).get("availableReplicas") == 1, 120, 0.5,
               "the operator installed from the console to run")


@pytest.fixture
def one_cluster(kube: Any) -> Iterator[tuple[Rest, dict[str, str]]]:
    """The session's cluster with a node and the OLM stand-in: HTTP access and the connection options; on exit the
    stand-in and the operator namespace are gone."""
    rest = Rest(kube.api_client())
    if not rest.list(path("v1", "nodes")):
        kube.load([node("worker-1")])
    olm = Olm(kube.api_client()).install()
    try:
        yield rest, {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    finally:
        olm.uninstall()
        rest.delete(path("v1", "namespaces", name=NAMESPACE))
        wait_until(lambda: rest.get(path("v1", "namespaces", name=NAMESPACE)) is None, 120, 0.5,
                   "the operator namespace to go")
        rest.api_client.close()
        olm.api_client.close()
        olm.check()


def target_of(connection: dict[str, str], state: str, **options: Any) -> Target:
    return _targets([{"name": "c1", "connection": connection, "state": state, "operator": options}], "operator")["c1"]


def test_a_rolled_back_uninstall_puts_the_subscription_back_as_it_was(
        one_cluster: tuple[Rest, dict[str, str]]) -> None:
    """The uninstall role's rollback reinstalls the operator from the record: the Subscription must come back under
    its own name and with its config (the operator's pod placement and proxy), not as a new one of the operator
    module's making."""
    rest, connection = one_cluster
    install_from_the_console(rest)
    target = target_of(connection, "absent")
    change = OperatorChange({"wait_sleep": 1})
    recorded = change.current(rest.api_client, target)
    change.apply(target, 180, check_mode=False)
    assert rest.get(CONSOLE_SUBSCRIPTION) is None and rest.get(OPERATOR) is None

    change.restore(target, recorded, 180)
    subscriptions = rest.list(path(OLM_API, "subscriptions", NAMESPACE))
    assert [s["metadata"]["name"] for s in subscriptions] == ["descheduler-from-the-console"]
    assert subscriptions[0]["spec"]["config"] == OPERATOR_POD_CONFIG
    assert subscriptions[0]["status"]["installedCSV"] == csv_name("5.4.0")
    assert rest.get(OPERATOR)["status"].get("availableReplicas") == 1


def test_a_rolled_back_upgrade_keeps_the_operator_it_upgraded_to(one_cluster: tuple[Rest, dict[str, str]]) -> None:
    """5.3.2 ran before the rollout's upgrade to 5.4.0; OLM deleted 5.3.2 when 5.4.0 replaced it and never installs
    an older CSV. The rollback puts the Subscription back as recorded and fails, naming the version to fix by hand -
    without deleting 5.4.0, the only operator the cluster has left."""
    rest, connection = one_cluster
    change = OperatorChange({"wait_sleep": 1})
    pinned = {"install_plan_approval": "Manual"}
    change.apply(target_of(connection, "present", starting_csv=csv_name("5.3.2"), **pinned), 180, check_mode=False)
    upgrade = target_of(connection, "present", starting_csv=csv_name("5.4.0"), **pinned)
    recorded = change.current(rest.api_client, upgrade)
    change.apply(upgrade, 180, check_mode=False)
    assert subscription_of(rest)["status"]["installedCSV"] == csv_name("5.4.0")

    with pytest.raises(RolloutError) as raised:
        change.restore(upgrade, recorded, 120)
    assert raised.value.field == "last_good.installed_csv" and raised.value.value == csv_name("5.3.2")
    assert "OLM never downgrades" in str(raised.value)
    assert subscription_of(rest)["spec"]["startingCSV"] == csv_name("5.3.2")  # put back as recorded
    assert rest.get(path(OLM_API, "clusterserviceversions", NAMESPACE, csv_name("5.4.0"))) is not None
    assert rest.get(OPERATOR)["status"].get("availableReplicas") == 1


def subscription_of(rest: Rest) -> dict[str, Any]:
    return rest.get(path(OLM_API, "subscriptions", NAMESPACE, "cluster-kube-descheduler-operator"))
