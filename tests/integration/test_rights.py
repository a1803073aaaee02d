"""Each job runs with exactly its shipped rights (cluster/rights.py, rbac/<job>.yml), as a real ServiceAccount
(restricted_user.py); with one rule taken away, the module fails before any write, naming what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import (
    CHANGE_LEASE_RULE,
    CONFIGURING,
    EXECUTING,
    INSTALLING,
    PLANNING,
    Job,
    Rule,
    bound_jobs,
)
from evict_helpers import namespace_object, node, plan_of, ready_replicas, replicaset, sealed
from operator_support import BASE_SPEC, get_kd, kd_task, operator_for
from playbook import REPO, run_playbook, run_tasks
from restricted_user import _wait_until_effective as wait_until_effective
from restricted_user import restricted_kubeconfig, user_name
from standins.descheduler_operator import OPERATOR_NAMESPACE
from test_operator_upstream import RESTARTS_POLICY, read, upstream_task

RECORD = "descheduler-fleet-last-good"
FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}


def shipped(job: Job, without: Rule | None = None) -> tuple[list[dict], list[dict]]:
    """(namespaced, cluster) PolicyRules of the job's ServiceAccount as the access role binds them."""
    rules = [rule for bound in bound_jobs(job) for rule in bound.rules if rule != without]
    return (
        [r.as_policy_rule() for r in rules if r.namespaced],
        [r.as_policy_rule() for r in rules if not r.namespaced],
    )


def account(kube: Any, tmp_path: Path, name: str, job: Job, namespace: str, without: Rule | None = None) -> str:
    namespaced, cluster = shipped(job, without)
    if namespaced:
        return str(restricted_kubeconfig(kube, tmp_path, name, namespaced, namespace=namespace, cluster_rules=cluster))
    return str(restricted_kubeconfig(kube, tmp_path, name, cluster))


def assert_names_rule(message: str, rule: Rule) -> None:
    assert "nothing was changed" in message and "lacks" in message, message
    for resource in rule.resources:
        base = resource.partition("/")[0]
        assert any(f"{verb} {resource}" in message or f"{verb} {base}/" in message for verb in rule.verbs), (
            resource,
            message,
        )
    assert "Traceback" not in message


def rule_of(job: Job, resource: str, verb: str) -> Rule:
    return next(rule for rule in job.rules if resource in rule.resources and verb in rule.verbs)


# ---- planning: a dry run's plan ----------------------------------------------------------------------------------


def plan_task(kubeconfig: str, kube: Any) -> dict:
    return {
        "descheduler.fleet.plan": {"kubeconfig": kubeconfig, "context": kube.context, "policy": RESTARTS_POLICY},
        "register": "plan",
        "ignore_errors": True,
    }


def test_plan_runs_with_exactly_the_planning_rights(kube: Any, namespace: str, tmp_path: Path) -> None:
    kube.load([node("worker-1"), node("worker-2")])
    kubeconfig = account(kube, tmp_path, "planner", PLANNING, namespace)
    _process, results = run_tasks(tmp_path, [plan_task(kubeconfig, kube)])
    assert not results["plan"].get("failed"), results["plan"].get("msg")
    assert results["plan"]["cluster_identity"]["uid"]


def test_whatif_runs_with_exactly_the_planning_rights(kube: Any, namespace: str, tmp_path: Path) -> None:
    kube.load([node("worker-1"), node("worker-2")])
    kubeconfig = account(kube, tmp_path, "comparer", PLANNING, namespace)
    candidates = [
        {"name": "restarts", "policy": RESTARTS_POLICY},
        {"name": "operator-profile", "kubedescheduler": BASE_SPEC},
    ]
    task = {
        "descheduler.fleet.whatif": {"kubeconfig": kubeconfig, "context": kube.context, "candidates": candidates},
        "register": "whatif",
        "ignore_errors": True,
    }
    _process, results = run_tasks(tmp_path, [task])
    assert not results["whatif"].get("failed"), results["whatif"].get("msg")
    assert [c["name"] for c in results["whatif"]["candidates"]] == ["restarts", "operator-profile"]


@pytest.mark.parametrize(
    ("resource", "verb"), [("pods", "list"), ("poddisruptionbudgets", "list"), ("kubedeschedulers", "get")]
)
def test_plan_without_one_planning_rule_names_it(
    kube: Any, namespace: str, tmp_path: Path, resource: str, verb: str
) -> None:
    removed = rule_of(PLANNING, resource, verb)
    kubeconfig = account(kube, tmp_path, f"planner-without-{resource}", PLANNING, namespace, removed)
    _process, results = run_tasks(tmp_path, [plan_task(kubeconfig, kube)])
    assert results["plan"]["failed"] is True
    assert_names_rule(results["plan"]["msg"], removed)
    assert "descheduler-fleet-planning" in results["plan"]["msg"]


# ---- executing: evict with its Lease ------------------------------------------------------------------------------


@pytest.fixture
def shop(kube: Any) -> list[dict]:
    kube.load([namespace_object("shop"), node("worker-1"), node("worker-2")])
    kube.create(replicaset("shop", "web", 2))
    return ready_replicas(kube, "shop", "web", 2)


def evict_task(kubeconfig: str, kube: Any, pods: list[dict], lease_namespace: str, context: str = "") -> dict:
    return {
        "descheduler.fleet.evict": {
            "kubeconfig": kubeconfig,
            "context": context or kube.context,
            "plan": sealed(kube, plan_of(pods)),
            "lease": {"namespace": lease_namespace},
            **FAST,
        },
        "register": "evict",
        "ignore_errors": True,
    }


def pod_uids(kube: Any) -> set[str]:
    return {pod["metadata"]["uid"] for pod in kube.list("pods", "shop")}


def test_evict_runs_with_exactly_the_executing_rights(
    kube: Any, namespace: str, shop: list[dict], tmp_path: Path
) -> None:
    kubeconfig = account(kube, tmp_path, "evicter", EXECUTING, namespace)
    _process, results = run_tasks(tmp_path, [evict_task(kubeconfig, kube, shop, namespace)])
    assert not results["evict"].get("failed"), results["evict"].get("msg")
    assert results["evict"]["counts"]["evicted"] == 2
    assert not pod_uids(kube) & {pod["metadata"]["uid"] for pod in shop}


@pytest.mark.parametrize(
    ("resource", "verb"), [("pods/eviction", "create"), ("leases", "update"), ("replicationcontrollers", "get")]
)
def test_evict_without_one_executing_rule_evicts_nothing_and_names_it(
    kube: Any, namespace: str, shop: list[dict], tmp_path: Path, resource: str, verb: str
) -> None:
    removed = rule_of(EXECUTING, resource, verb)
    name = f"evicter-without-{resource.replace('/', '-')}"
    kubeconfig = account(kube, tmp_path, name, EXECUTING, namespace, removed)
    _process, results = run_tasks(tmp_path, [evict_task(kubeconfig, kube, shop, namespace)])
    assert results["evict"]["failed"] is True
    assert_names_rule(results["evict"]["msg"], removed)
    assert pod_uids(kube) == {pod["metadata"]["uid"] for pod in shop}
    assert kube.list("Lease", namespace, api_version="coordination.k8s.io/v1") == []


# ---- configuring: tune's KubeDescheduler -------------------------------------------------------------------------


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    yield from operator_for(kube)


def test_kubedescheduler_runs_with_exactly_the_configuring_rights(
    kube: Any, namespace: str, operator_standin: Any, tmp_path: Path
) -> None:
    kubeconfig = account(kube, tmp_path, "tuner", CONFIGURING, namespace)
    _process, results = run_tasks(
        tmp_path, [{**kd_task(kube, "kd", spec=BASE_SPEC, kubeconfig=kubeconfig), "ignore_errors": True}]
    )
    assert not results["kd"].get("failed"), results["kd"].get("msg")
    assert get_kd(kube)["spec"]["profiles"] == BASE_SPEC["profiles"]


def test_kubedescheduler_without_create_changes_nothing_and_names_it(
    kube: Any, namespace: str, operator_standin: Any, tmp_path: Path
) -> None:
    removed = rule_of(CONFIGURING, "kubedeschedulers", "create")
    kubeconfig = account(kube, tmp_path, "tuner-without-kd-writes", CONFIGURING, namespace, removed)
    _process, results = run_tasks(
        tmp_path, [{**kd_task(kube, "kd", spec=BASE_SPEC, kubeconfig=kubeconfig), "ignore_errors": True}]
    )
    assert results["kd"]["failed"] is True
    assert_names_rule(results["kd"]["msg"], removed)
    assert get_kd(kube) is None


def rollout_task(kube: Any, kubeconfig: str, run_id: str) -> dict:
    cluster = {"name": "c1", "connection": {"kubeconfig": kubeconfig, "context": kube.context}, "spec": BASE_SPEC}
    args = {
        "clusters": [cluster],
        "min_success_time": "1s",
        "gate_interval": 1,
        "progress_deadline": "180s",
        "wait_sleep": 1,
        "run_id": run_id,
    }
    return {"descheduler.fleet.rollout": args, "register": "rollout", "ignore_errors": True}


def change_lease(kube: Any) -> dict | None:
    return kube.get("Lease", "kube-system", "descheduler-fleet-change", api_version="coordination.k8s.io/v1")


@pytest.mark.parametrize(("resource", "verb"), [("configmaps", "update"), ("leases", "create")])
def test_rollout_without_one_rule_changes_no_cluster_and_names_it(
    kube: Any, operator_standin: Any, tmp_path: Path, resource: str, verb: str
) -> None:
    """The record's rule (a Role in the record's namespace) or the change Lease's: the rollout fails before its
    first write (the Lease, the record, the KubeDescheduler), naming the rule."""
    removed = rule_of(CONFIGURING, resource, verb)
    kubeconfig = account(kube, tmp_path, f"roller-without-{resource}", CONFIGURING, OPERATOR_NAMESPACE, removed)
    _process, results = run_tasks(tmp_path, [rollout_task(kube, kubeconfig, "rights")])
    assert results["rollout"]["failed"] is True
    assert_names_rule(results["rollout"]["msg"], removed)
    assert "c1: " in results["rollout"]["msg"] and "descheduler-fleet-configuring" in results["rollout"]["msg"]
    assert get_kd(kube) is None and change_lease(kube) is None
    assert kube.get("ConfigMap", OPERATOR_NAMESPACE, RECORD) is None


def test_the_change_lease_granted_by_a_role_in_kube_system_is_enough(
    kube: Any, operator_standin: Any, tmp_path: Path
) -> None:
    """A rule used in one namespace is checked there: the change Lease's rule as a Role in kube-system, not in the
    ClusterRole, and tune's KubeDescheduler is written (taking the Lease there)."""
    namespaced, cluster = shipped(CONFIGURING)
    lease_rule = CHANGE_LEASE_RULE.as_policy_rule()
    cluster = [rule for rule in cluster + namespaced if rule != lease_rule]  # the record's rule everywhere
    kubeconfig = restricted_kubeconfig(
        kube, tmp_path, "tuner-lease-role", [lease_rule], namespace="kube-system", cluster_rules=cluster
    )
    task = {**kd_task(kube, "kd", spec=BASE_SPEC, kubeconfig=str(kubeconfig)), "ignore_errors": True}
    _process, results = run_tasks(tmp_path, [task])
    assert not results["kd"].get("failed"), results["kd"].get("msg")
    assert get_kd(kube)["spec"]["profiles"] == BASE_SPEC["profiles"]
    assert change_lease(kube) is not None  # taken through the Role


# ---- installing: the upstream descheduler ------------------------------------------------------------------------


def install_task(kubeconfig: str, kube: Any, namespace: str, state: str = "present") -> dict:
    target = {"kube": kube, "namespace": namespace, "name": f"descheduler-{namespace}", "wait": False}
    register = "install" if state == "present" else "uninstall"
    task = upstream_task(target, register, ignore_errors=True, state=state, policy=RESTARTS_POLICY)
    task["descheduler.fleet.operator"]["kubeconfig"] = kubeconfig
    return task


def test_install_and_uninstall_run_with_exactly_the_installing_rights(
    kube: Any, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = account(kube, tmp_path, "installer", INSTALLING, namespace)
    _process, results = run_tasks(tmp_path, [install_task(kubeconfig, kube, namespace)])
    assert not results["install"].get("failed"), results["install"].get("msg")
    with kube.api_client() as admin:
        assert read(admin, "Deployment", namespace, f"descheduler-{namespace}") is not None
        assert read(admin, "ClusterRole", "", f"descheduler-{namespace}") is not None
    # and removes it with the same rights
    _process, results = run_tasks(tmp_path, [install_task(kubeconfig, kube, namespace, state="absent")])
    assert not results["uninstall"].get("failed"), results["uninstall"].get("msg")
    with kube.api_client() as admin:
        assert read(admin, "Deployment", namespace, f"descheduler-{namespace}") is None
        assert read(admin, "ClusterRole", "", f"descheduler-{namespace}") is None


@pytest.mark.parametrize(("resource", "verb"), [("clusterroles", "escalate"), ("deployments", "create")])
def test_install_without_one_installing_rule_writes_nothing_and_names_it(
    kube: Any, namespace: str, tmp_path: Path, resource: str, verb: str
) -> None:
    removed = rule_of(INSTALLING, resource, verb)
    kubeconfig = account(kube, tmp_path, f"installer-without-{resource}", INSTALLING, namespace, removed)
    _process, results = run_tasks(tmp_path, [install_task(kubeconfig, kube, namespace)])
    assert results["install"]["failed"] is True
    assert_names_rule(results["install"]["msg"], removed)
    assert results["install"].get("actions", []) == []
    with kube.api_client() as admin:
        assert read(admin, "ClusterRole", "", f"descheduler-{namespace}") is None


# ---- the access module puts a job's rights on the cluster --------------------------------------------------------


def test_access_module_grants_a_job_idempotently_and_its_kubeconfig_evicts(
    kube: Any, namespace: str, shop: list[dict], tmp_path: Path
) -> None:
    dest = tmp_path / "evict.kubeconfig"
    grant = {
        "kubeconfig": str(kube.kubeconfig),
        "context": kube.context,
        "job": "executing",
        "namespace": namespace,
        "role_namespace": namespace,
        "service_account": "evicter-sa",
        "kubeconfig_dest": str(dest),
    }
    _process, results = run_tasks(
        tmp_path, [{"descheduler.fleet.access": grant, "register": "checked", "check_mode": True}]
    )
    assert results["checked"]["changed"] is True and not dest.exists()
    assert kube.get("ServiceAccount", namespace, "evicter-sa") is None  # check mode wrote nothing

    _process, results = run_tasks(
        tmp_path,
        [
            {"descheduler.fleet.access": grant, "register": "granted"},
            {"descheduler.fleet.access": grant, "register": "again"},
        ],
    )
    assert results["granted"]["changed"] is True, results["granted"].get("msg")
    assert results["granted"]["cluster_roles"] == ["descheduler-fleet-planning", "descheduler-fleet-executing"]
    assert results["again"]["changed"] is False
    assert dest.stat().st_mode & 0o777 == 0o600
    token = yaml.safe_load(dest.read_text())["users"][0]["user"]["token"]
    assert token not in json.dumps(results)  # the token stays in the file
    role = kube.get("Role", namespace, "descheduler-fleet-executing", api_version="rbac.authorization.k8s.io/v1")
    assert role["rules"] == [rule.as_policy_rule() for rule in EXECUTING.namespaced_rules]

    namespaced, cluster = shipped(EXECUTING)
    with kube.api_client() as admin:  # the authorizer learns new bindings from informers: wait until it has
        wait_until_effective(admin, token, user_name("evicter-sa", namespace), namespaced, namespace, cluster)
    _process, results = run_tasks(tmp_path, [evict_task(str(dest), kube, shop, namespace, "descheduler-fleet")])
    assert not results["evict"].get("failed"), results["evict"].get("msg")
    assert results["evict"]["counts"]["evicted"] == 2


def access_inventory(kube: Any, tmp_path: Path, **variables: Any) -> Path:
    host = {"descheduler_fleet_connection": {"kubeconfig": str(kube.kubeconfig), "context": kube.context}, **variables}
    path = tmp_path / "access-inventory.yml"
    path.write_text(yaml.safe_dump({"clusters": {"hosts": {"c1": host}}}))
    return path


def test_access_role_grants_configuring_idempotently_and_its_kubeconfig_rolls_out_a_change(
    kube: Any, operator_standin: Any, tmp_path: Path
) -> None:
    """playbooks/access.yml (the access role): --check writes nothing, a run grants, a second run changes nothing;
    the written kubeconfig alone rolls out tune's change (the rollout module), its record in the operator's
    namespace. A missing ServiceAccount namespace is refused naming it and the fix."""
    dest = tmp_path / "c1-configuring.kubeconfig"
    variables = {
        "access_job": "configuring",
        "access_namespace": OPERATOR_NAMESPACE,
        "access_role_namespace": OPERATOR_NAMESPACE,
        "access_service_account": "roller",
        "access_kubeconfig_dest": str(dest),
    }
    inventory = access_inventory(kube, tmp_path, **variables)
    checked = run_playbook(REPO / "playbooks/access.yml", "-i", str(inventory), "--check")
    assert checked.returncode == 0, checked.stdout[-4000:]
    assert "object(s) would change" in checked.stdout and not dest.exists()
    assert kube.get("ServiceAccount", OPERATOR_NAMESPACE, "roller") is None

    granted = run_playbook(REPO / "playbooks/access.yml", "-i", str(inventory))
    assert granted.returncode == 0, granted.stdout[-4000:]
    assert "bound to descheduler-fleet-planning, descheduler-fleet-configuring" in granted.stdout
    again = run_playbook(REPO / "playbooks/access.yml", "-i", str(inventory))
    assert again.returncode == 0 and "0 object(s) changed" in again.stdout, again.stdout[-4000:]
    assert " changed=0 " in again.stdout.split("PLAY RECAP")[1]
    token = yaml.safe_load(dest.read_text())["users"][0]["user"]["token"]
    assert token not in granted.stdout + again.stdout

    namespaced, cluster = shipped(CONFIGURING)
    with kube.api_client() as admin:  # the authorizer learns new bindings from informers: wait until it has
        wait_until_effective(
            admin, token, user_name("roller", OPERATOR_NAMESPACE), namespaced, OPERATOR_NAMESPACE, cluster
        )
    grant_missing = {
        "descheduler.fleet.access": {
            "kubeconfig": str(kube.kubeconfig),
            "context": kube.context,
            "job": "configuring",
            "namespace": "no-such-namespace",
            "role_namespace": OPERATOR_NAMESPACE,
        },
        "register": "missing",
        "ignore_errors": True,
    }
    rollout = rollout_task(kube, str(dest), "access-role")
    rollout["descheduler.fleet.rollout"]["clusters"][0]["connection"]["context"] = "descheduler-fleet"
    _process, results = run_tasks(tmp_path, [grant_missing, rollout])
    assert results["missing"]["failed"] is True
    assert results["missing"]["msg"].startswith("namespace: namespace no-such-namespace does not exist"), results[
        "missing"
    ]["msg"]
    assert "kubectl create namespace no-such-namespace" in results["missing"]["msg"]
    assert results["missing"]["actions"] == [] and not results["missing"]["changed"]
    assert not results["rollout"].get("failed"), results["rollout"].get("msg")
    assert results["rollout"]["summary"]["changed"] == 1, results["rollout"]["summary"]
    assert get_kd(kube)["spec"]["profiles"] == BASE_SPEC["profiles"]
    assert kube.get("ConfigMap", OPERATOR_NAMESPACE, RECORD) is not None
