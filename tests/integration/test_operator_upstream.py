"""The operator module, flavor upstream (the descheduler as its Helm chart deploys it), through real ansible-playbook
runs. Runs against a real cluster too (TEST_KUBECONFIG): there the objects go to a fresh namespace, with unique
cluster-scoped names, and rollouts are not awaited (the image would have to be pulled)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from evict_helpers import node
from kubernetes import client
from playbook import run_tasks

RESTARTS_POLICY = {
    "profiles": [{
        "name": "restarts",
        "pluginConfig": [{"name": "DefaultEvictor"},
                         {"name": "RemovePodsHavingTooManyRestarts", "args": {"podRestartThreshold": 10}}],
        "plugins": {"deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts"]}},
    }],
}


@pytest.fixture
def target(kube: Any, namespace: str) -> dict[str, Any]:
    """Where the descheduler goes: a fresh namespace and a unique name (the ClusterRole is cluster-scoped)."""
    if not kube.is_external:
        kube.load([node("worker-1")])  # somewhere for the kubelet stand-in to run the descheduler pod
    # The control plane's controllers + kubelet stand-in make the pods ready; on a tester's cluster the image may
    # not be pullable, so the test does not wait there.
    return {"kube": kube, "namespace": namespace, "name": f"descheduler-{namespace}", "wait": not kube.is_external}


def upstream_task(target: dict[str, Any], register: str, *, check: bool = False, diff: bool = False,
                  ignore_errors: bool = False, state: str = "present", **upstream: Any) -> dict:
    kube = target["kube"]
    task: dict[str, Any] = {
        "name": f"upstream descheduler ({register})",
        "descheduler.fleet.operator": {
            "kubeconfig": str(kube.kubeconfig), "context": kube.context, "flavor": "upstream", "state": state,
            "wait": target["wait"], "wait_timeout": 120, "wait_sleep": 1,
            "upstream": {"name": target["name"], "namespace": target["namespace"], **upstream},
        },
        "register": register,
    }
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
    """An object as a plain dict, or None."""
    readers = {
        "Deployment": lambda: client.AppsV1Api(api_client).read_namespaced_deployment(name, namespace),
        "CronJob": lambda: client.BatchV1Api(api_client).read_namespaced_cron_job(name, namespace),
        "ConfigMap": lambda: client.CoreV1Api(api_client).read_namespaced_config_map(name, namespace),
        "ServiceAccount": lambda: client.CoreV1Api(api_client).read_namespaced_service_account(name, namespace),
        "ClusterRole": lambda: client.RbacAuthorizationV1Api(api_client).read_cluster_role(name),
        "ClusterRoleBinding": lambda: client.RbacAuthorizationV1Api(api_client).read_cluster_role_binding(name),
    }
    try:
        return api_client.sanitize_for_serialization(readers[kind]())
    except client.exceptions.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_deployment_in_predictive_mode_then_no_change(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, upstream_task(target, "install", policy=RESTARTS_POLICY, interval="10m"),
                  upstream_task(target, "again", policy=RESTARTS_POLICY, interval="10m"))
    install, again = results["install"], results["again"]
    name, namespace = target["name"], target["namespace"]

    assert install["changed"] is True
    assert [a["step"] for a in install["actions"] if a["action"] == "create"] == [
        "service_account", "cluster_role", "cluster_role_binding", "policy", "workload"]
    assert again["changed"] is False
    deployment = read(api_client, "Deployment", namespace, name)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.k8s.io/descheduler/descheduler:v0.36.0"
    assert container["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=10m",
                                 "--v=3", "--dry-run=true"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == name
    policy_text = read(api_client, "ConfigMap", namespace, name)["data"]["policy.yaml"]
    assert "apiVersion: descheduler/v1alpha2" in policy_text and "podRestartThreshold: 10" in policy_text
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["checksum/config"] == hashlib.sha256(policy_text.encode()).hexdigest()
    rules = read(api_client, "ClusterRole", "", name)["rules"]
    assert {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]} in rules
    binding = read(api_client, "ClusterRoleBinding", "", name)
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
    if target["wait"]:
        assert install["actions"][-1]["action"] == "wait"


def test_switch_to_automatic_shows_the_diff(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, upstream_task(target, "install", version="v0.35.0"),
                  upstream_task(target, "automatic", diff=True, version="v0.36.0", mode="automatic"))
    automatic = results["automatic"]

    assert [(a["step"], a["action"]) for a in automatic["actions"] if a["changed"]] == [
        ("service_account", "update"), ("cluster_role", "update"), ("cluster_role_binding", "update"),
        ("policy", "update"), ("workload", "update")]  # the version label changed on each
    (workload_diff,) = [d for d in automatic["diff"] if d["after_header"].startswith("Deployment")]
    before_args = workload_diff["before"]["spec"]["template"]["spec"]["containers"][0]["args"]
    after_args = workload_diff["after"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--dry-run=true" in before_args and "--dry-run=true" not in after_args
    container = read(api_client, "Deployment", target["namespace"], target["name"])["spec"]["template"]["spec"][
        "containers"][0]
    assert container["image"].endswith(":v0.36.0") and "--dry-run=true" not in container["args"]


def test_cronjob_replaces_the_deployment(target: dict, api_client: Any, tmp_path: Path) -> None:
    results = run(tmp_path, upstream_task(target, "deployment"),
                  upstream_task(target, "cronjob", kind="cronjob", schedule="*/10 * * * *"),
                  upstream_task(target, "steady", kind="cronjob", schedule="*/10 * * * *"))

    assert ("workload", "delete") in [(a["step"], a["action"]) for a in results["cronjob"]["actions"]]
    assert results["steady"]["changed"] is False
    assert read(api_client, "Deployment", target["namespace"], target["name"]) is None
    cronjob = read(api_client, "CronJob", target["namespace"], target["name"])
    assert cronjob["spec"]["schedule"] == "*/10 * * * *" and cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--v=3", "--dry-run=true"]


def test_invalid_policy_or_interval_fails_before_any_write(target: dict, api_client: Any, tmp_path: Path) -> None:
    bad_policy = {"profiles": [{"name": "p", "pluginConfig": [
        {"name": "DefaultEvictor", "args": {"priorityThreshold": {"name": "no-such-class"}}},
        {"name": "RemovePodsHavingTooManyRestarts", "args": {"podRestartThreshold": 10}}],
        "plugins": {"deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts"]}}}]}
    results = run(tmp_path, upstream_task(target, "policy", policy=bad_policy, ignore_errors=True),
                  upstream_task(target, "interval", interval="ten minutes", ignore_errors=True))

    assert results["policy"]["msg"].startswith("upstream.policy is not a policy the descheduler accepts: ")
    assert "no-such-class" in results["policy"]["msg"] and "no PriorityClass of that name" in results["policy"]["msg"]
    assert results["policy"]["field"].startswith("upstream.policy.profiles[0]")
    assert results["interval"]["msg"].startswith("upstream.interval: invalid value 'ten minutes'")
    assert results["policy"]["actions"] == [] and results["interval"]["actions"] == []
    assert read(api_client, "ServiceAccount", target["namespace"], target["name"]) is None


def test_check_mode_then_uninstall_removes_all_but_the_namespace(target: dict, api_client: Any,
                                                                 tmp_path: Path) -> None:
    results = run(tmp_path, upstream_task(target, "check", check=True),
                  upstream_task(target, "install"),
                  upstream_task(target, "remove", state="absent"),
                  upstream_task(target, "again", state="absent"))

    assert results["check"]["changed"] is True
    assert {a["message"] for a in results["check"]["actions"] if a["changed"]} == {"would create (check mode)"}
    assert len(results["remove"]["removed"]) == 5  # Deployment, ConfigMap, binding, role, ServiceAccount
    assert results["again"]["changed"] is False
    for kind in ("Deployment", "CronJob", "ConfigMap", "ServiceAccount"):
        assert read(api_client, kind, target["namespace"], target["name"]) is None
    for kind in ("ClusterRole", "ClusterRoleBinding"):
        assert read(api_client, kind, "", target["name"]) is None
    assert client.CoreV1Api(api_client).read_namespace(target["namespace"]) is not None
