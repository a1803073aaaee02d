"""The operator module, flavor volcano (the Volcano descheduler as its installer deploys it), through real
ansible-playbook runs against the `kube` fixture: install, idempotent re-run, check mode, diff, the pairing with the
Volcano scheduler's configuration refused before any write, ordered removal. On a real cluster the Deployment's
rollout is not awaited (the image would have to be pulled)."""

from __future__ import annotations

import copy
import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import node
from kubernetes import client
from operator_support import info_task
from playbook import run_tasks

PROMETHEUS = "http://prometheus.monitoring:9090"
POLICY = {
    "profiles": [{
        "name": "default",
        "pluginConfig": [
            {"name": "DefaultEvictor", "args": {"ignorePvcPods": True, "nodeFit": True}},
            {"name": "LoadAware", "args": {"metrics": {"type": "prometheus", "address": PROMETHEUS},
                                           "thresholds": {"cpu": 30, "memory": 30},
                                           "targetThresholds": {"cpu": 80, "memory": 85}}},
        ],
        "plugins": {"balance": {"enabled": ["LoadAware"]}},
    }],
}
SCHEDULER_CONF = f"""actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: usage
    arguments:
      thresholds: {{cpu: 80, mem: 80}}
- plugins:
  - name: predicates
  - name: nodeorder
  - name: binpack
metrics:
  type: prometheus
  address: {PROMETHEUS}
"""
WITHOUT_USAGE = SCHEDULER_CONF.replace("  - name: usage\n    arguments:\n      thresholds: {cpu: 80, mem: 80}\n", "")


@pytest.fixture
def target(kube: Any, namespace: str) -> dict[str, Any]:
    """A namespace that does not exist yet (so it is ours, and removed), a unique name (ClusterRole is
    cluster-scoped), and `shared`: an existing namespace, as volcano-system is when the Volcano scheduler runs."""
    if not kube.is_external:
        kube.load([node("worker-1")])  # somewhere for the kubelet stand-in to run the descheduler pod
    # The control plane's controllers + kubelet stand-in make the pods ready; on a tester's cluster the image may
    # not be pullable, so the test does not wait there.
    return {"kube": kube, "namespace": f"volcano-{uuid.uuid4().hex[:8]}", "shared": namespace,
            "name": f"volcano-descheduler-{namespace}", "wait": not kube.is_external}


def volcano_task(target: dict[str, Any], register: str, *, check: bool = False, diff: bool = False,
                 ignore_errors: bool = False, state: str = "present", scheduler: Any = None,
                 **volcano: Any) -> dict:
    kube = target["kube"]
    options: dict[str, Any] = {
        "kubeconfig": str(kube.kubeconfig), "context": kube.context, "flavor": "volcano", "state": state,
        "wait": target["wait"], "wait_timeout": 120, "wait_sleep": 1,
        "volcano": {"name": target["name"], "namespace": target["namespace"], **volcano},
    }
    if scheduler is not None:
        options["volcano_scheduler_config"] = scheduler
    task: dict[str, Any] = {"name": f"volcano descheduler ({register})", "descheduler.fleet.operator": options,
                            "register": register}
    for keyword, wanted in (("check_mode", check), ("diff", diff), ("ignore_errors", ignore_errors)):
        if wanted:
            task[keyword] = True
    return task


def run(tmp_path: Path, *tasks: dict) -> dict[str, Any]:
    process, results = run_tasks(tmp_path, list(tasks))
    expected_failure = any(t.get("ignore_errors") for t in tasks)
    assert process.returncode == 0 or expected_failure, process.stdout[-5000:] + process.stderr[-2000:]
    return results


def read(api_client: Any, kind: str, namespace: str, name: str) -> dict | None:
    readers = {
        "Deployment": lambda: client.AppsV1Api(api_client).read_namespaced_deployment(name, namespace),
        "ConfigMap": lambda: client.CoreV1Api(api_client).read_namespaced_config_map(name, namespace),
        "ServiceAccount": lambda: client.CoreV1Api(api_client).read_namespaced_service_account(name, namespace),
        "ClusterRole": lambda: client.RbacAuthorizationV1Api(api_client).read_cluster_role(name),
        "ClusterRoleBinding": lambda: client.RbacAuthorizationV1Api(api_client).read_cluster_role_binding(name),
        "Namespace": lambda: client.CoreV1Api(api_client).read_namespace(name),
    }
    try:
        obj = api_client.sanitize_for_serialization(readers[kind]())
    except client.exceptions.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return None if (obj.get("metadata") or {}).get("deletionTimestamp") else obj


def test_install_paired_with_the_scheduler_then_no_change(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, volcano_task(target, "install", policy=POLICY, scheduler=SCHEDULER_CONF),
                  volcano_task(target, "again", policy=POLICY, scheduler=SCHEDULER_CONF))
    install, again = results["install"], results["again"]
    name, namespace = target["name"], target["namespace"]

    assert install["changed"] is True
    assert [a["step"] for a in install["actions"] if a["action"] == "create"] == [
        "namespace", "service_account", "cluster_role", "cluster_role_binding", "policy", "workload"]
    assert again["changed"] is False and all(not a["changed"] for a in again["actions"])
    assert read(api_client, "Namespace", "", namespace)["metadata"]["labels"][
        "app.kubernetes.io/managed-by"] == "descheduler.fleet"
    deployment = read(api_client, "Deployment", namespace, name)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "docker.io/volcanosh/vc-descheduler:v0.1.0"
    assert container["command"] == ["/vc-descheduler"]
    assert container["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=10m",
                                 "--leader-elect=false", "--v=3", "--dry-run=true"]
    policy_text = read(api_client, "ConfigMap", namespace, name)["data"]["policy.yaml"]
    deployed = yaml.safe_load(policy_text)
    assert deployed["kind"] == "DeschedulerPolicy" and deployed["profiles"] == POLICY["profiles"]
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["checksum/config"] == hashlib.sha256(policy_text.encode()).hexdigest()
    rules = read(api_client, "ClusterRole", "", name)["rules"]
    assert {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list", "delete"]} in rules
    assert read(api_client, "ClusterRoleBinding", "", name)["subjects"] == [
        {"kind": "ServiceAccount", "name": name, "namespace": namespace}]
    if target["wait"]:
        assert install["actions"][-1]["action"] == "wait"


def test_info_reports_it_and_the_pairing_with_the_scheduler_found_beside_it(target: dict, api_client: Any,
                                                                            tmp_path: Path) -> None:
    run(tmp_path, volcano_task(target, "install", policy=POLICY))
    client.CoreV1Api(api_client).create_namespaced_config_map(target["namespace"], {
        "metadata": {"name": "volcano-scheduler-configmap"}, "data": {"volcano-scheduler.conf": WITHOUT_USAGE}})
    results = run(tmp_path, info_task(target["kube"], "info", read_log=False),
                  volcano_task(target, "again", policy=POLICY))
    info, again = results["info"]["volcano"], results["again"]

    assert (info["namespace"], info["name"]) == (target["namespace"], target["name"])
    assert (info["mode"], info["interval"]) == ("predictive", "10m")
    assert info["policy"]["profiles"] == POLICY["profiles"]
    assert info["scheduler_config_source"] == f"ConfigMap {target['namespace']}/volcano-scheduler-configmap"
    assert [(p["field"], p["severity"]) for p in info["pairing"]] == [("volcano_scheduler_config.tiers", "error")]
    assert "no 'usage' plugin" in info["pairing"][0]["message"]
    # not given as volcano_scheduler_config, the scheduler's ConfigMap found beside it only warns
    assert again["changed"] is False
    assert any("no 'usage' plugin" in w and "pass it as volcano_scheduler_config" in w for w in again["warnings"])


def test_check_mode_and_diff_of_an_interval_change(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, volcano_task(target, "fresh_check", check=True, policy=POLICY),
                  volcano_task(target, "install", policy=POLICY),
                  volcano_task(target, "check", check=True, diff=True, policy=POLICY, interval="30m"))
    fresh, check = results["fresh_check"], results["check"]

    assert fresh["changed"] is True
    assert {a["message"] for a in fresh["actions"] if a["changed"]} == {"would create (check mode)"}
    assert [(a["step"], a["action"]) for a in check["actions"] if a["changed"]] == [("workload", "update")]
    (workload_diff,) = check["diff"]
    before = workload_diff["before"]["spec"]["template"]["spec"]["containers"][0]["args"]
    after = workload_diff["after"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--descheduling-interval=10m" in before and "--descheduling-interval=30m" in after
    container = read(api_client, "Deployment", target["namespace"], target["name"])["spec"]["template"]["spec"][
        "containers"][0]
    assert "--descheduling-interval=10m" in container["args"]  # check mode wrote nothing


def test_pairing_and_policy_errors_fail_before_any_write(target: dict, api_client: Any, tmp_path: Path) -> None:
    other_prometheus = SCHEDULER_CONF.replace(PROMETHEUS, "http://thanos.monitoring:9090")
    flat = copy.deepcopy(POLICY)
    flat["profiles"][0]["pluginConfig"][1]["args"]["targetThresholds"] = {"cpu": 30, "memory": 85}
    results = run(tmp_path,
                  volcano_task(target, "no_usage", policy=POLICY, scheduler=WITHOUT_USAGE, ignore_errors=True),
                  volcano_task(target, "other_source", policy=POLICY, scheduler=yaml.safe_load(other_prometheus),
                               ignore_errors=True),
                  volcano_task(target, "flat", policy=flat, ignore_errors=True),
                  volcano_task(target, "interval", policy=POLICY, interval="often", ignore_errors=True))

    assert results["no_usage"]["failed"] is True
    assert results["no_usage"]["field"] == "volcano_scheduler_config.tiers"
    assert "no 'usage' plugin" in results["no_usage"]["msg"] and "'- name: usage'" in results["no_usage"]["msg"]
    assert results["other_source"]["field"] == "volcano.policy.profiles[0].pluginConfig[1].args.metrics.address"
    assert "http://thanos.monitoring:9090" in results["other_source"]["msg"]
    assert results["flat"]["field"] == "volcano.policy.profiles[0].pluginConfig[1].args.targetThresholds.cpu"
    assert "must be above thresholds.cpu (30)" in results["flat"]["msg"]
    assert results["interval"]["msg"].startswith("volcano.interval: invalid value 'often'")
    for name in results:
        assert results[name]["actions"] == []
    assert read(api_client, "Namespace", "", target["namespace"]) is None
    assert read(api_client, "ClusterRole", "", target["name"]) is None


def test_uninstall_in_order_leaves_nothing_and_reruns_clean(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, volcano_task(target, "install", policy=POLICY),
                  volcano_task(target, "remove_check", state="absent", check=True),
                  volcano_task(target, "remove", state="absent"),
                  volcano_task(target, "again", state="absent"))
    remove = results["remove"]
    name, namespace = target["name"], target["namespace"]

    assert results["remove_check"]["changed"] is True
    assert {a["message"] for a in results["remove_check"]["actions"] if a["changed"]} == {"would delete (check mode)"}
    # the real removal still found every object: check mode deleted nothing
    deleted = [a["object"] for a in remove["actions"] if a["action"] == "delete"]
    assert deleted == [f"Deployment {namespace}/{name}", f"ConfigMap {namespace}/{name}",
                       f"ClusterRoleBinding {name}", f"ClusterRole {name}", f"ServiceAccount {namespace}/{name}",
                       f"Namespace {namespace}"]
    assert results["again"]["changed"] is False
    for kind in ("Deployment", "ConfigMap", "ServiceAccount"):
        assert read(api_client, kind, namespace, name) is None
    for kind in ("ClusterRole", "ClusterRoleBinding"):
        assert read(api_client, kind, "", name) is None


def test_a_namespace_it_did_not_create_is_kept(target: dict, api_client: Any, tmp_path: Path) -> None:
    shared = {**target, "namespace": target["shared"]}
    results = run(tmp_path, volcano_task(shared, "install", policy=POLICY),
                  volcano_task(shared, "remove", state="absent"))

    assert ("namespace", "none") in [(a["step"], a["action"]) for a in results["install"]["actions"]]
    kept = [a for a in results["remove"]["actions"] if a["step"] == "namespace"]
    assert kept[0]["action"] == "none" and "not created by descheduler.fleet" in kept[0]["message"]
    assert read(api_client, "Namespace", "", target["shared"]) is not None
    assert read(api_client, "Deployment", target["shared"], target["name"]) is None
