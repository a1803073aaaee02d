"""The secondary_scheduler module through real ansible-playbook runs, on the `kube` fixture (the suite's real
kube-apiserver): the Secondary Scheduler Operator installed through the OLM stand-in from its own
catalog package and bundle, the Trimaran configuration written and checked (a Prometheus stand-in answers the
reachability check), the SecondaryScheduler CR reconciled by the operator stand-in
(standins/secondary_scheduler_operator.py) into a scheduler Deployment whose pod really runs (kube-controller-manager
and the kubelet stand-in on a node of the test), idempotence, check mode, diff, invalid configurations refused before
any write, and removal in order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import info_task, node
from playbook import run_tasks
from standins.httpserver import BackgroundServer
from standins.loop import StandIn
from standins.metrics_server import MetricsServer
from standins.olm import Olm
from standins.rest import Rest, path, wait_until
from standins.secondary_scheduler_operator import (
    NAMESPACE,
    PACKAGE,
    SecondarySchedulerOperator,
    secondary_scheduler_package,
)

CSV_V140 = "secondaryscheduleroperator.v1.4.0"
IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8"
TOKEN = "s3cr3t-prometheus-token"
OLM = "operators.coreos.com/v1alpha1"


@contextmanager
def secondary_scheduler_catalog(kube: Any) -> Iterator[Olm]:
    """OLM serving the Secondary Scheduler Operator's package, the operator stand-in, and somewhere for the
    scheduler's pod to run: a node for the control plane's kubelet stand-in."""
    with kube.api_client() as client:
        rest = Rest(client)
        if not rest.list(path("v1", "nodes")):
            kube.load([node("worker-1")])
        olm = Olm(client, packages=[secondary_scheduler_package()]).install()
        helpers: list[StandIn] = [SecondarySchedulerOperator(client).start()]
        try:
            yield olm
        finally:
            for helper in helpers:
                helper.stop()
            olm.uninstall()
            rest.delete(path("v1", "namespaces", name=NAMESPACE))
            wait_until(lambda: rest.get(path("v1", "namespaces", name=NAMESPACE)) is None, 120, 0.5,
                       "the operator namespace to go")
        for helper in [olm, *helpers]:
            helper.check()


@pytest.fixture
def sso(kube: Any) -> Iterator[Olm]:
    with secondary_scheduler_catalog(kube) as olm:
        yield olm


def serve_the_metrics_api(kube: Any) -> None:
    """Make /apis/metrics.k8s.io/v1beta1 served, as installing metrics-server does: on a real API server the
    metrics-server stand-in's CRDs (standins/metrics_server.py; the control plane handle removes them afterwards)."""
    with kube.api_client() as client:
        MetricsServer(client).install()


@pytest.fixture
def rest(kube: Any) -> Iterator[Rest]:
    with kube.api_client() as client:
        yield Rest(client)


@pytest.fixture
def prometheus() -> Iterator[dict[str, Any]]:
    """A Prometheus HTTP API stand-in that requires the bearer token and records what it was asked."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
            authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            body = json.dumps({"status": "success", "data": {"version": "2.55.0"}} if authorized
                              else {"status": "error", "error": "unauthorized"}).encode()
            self.send_response(200 if authorized else 401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with BackgroundServer(Handler, "prometheus-version-standin") as server:
        yield {"address": server.url, "seen": seen}


def trimaran(prometheus: dict[str, Any], **changes: Any) -> dict[str, Any]:
    options = {"target_utilization": 70, "default_requests_cpu": "2000m", "default_requests_multiplier": "1",
               "metric_provider": {"type": "Prometheus", "address": prometheus["address"], "token": TOKEN}}
    return {**options, **changes}


def task(kube: Any, register: str, *, check: bool = False, diff: bool = False,
         ignore_errors: bool = False, **options: Any) -> dict:
    body = {"kubeconfig": str(kube.kubeconfig), "context": kube.context, "wait_timeout": 120, "wait_sleep": 1,
            **options}
    if options.get("state") != "absent":
        body.setdefault("scheduler_image", IMAGE)
    result: dict[str, Any] = {"name": f"secondary scheduler ({register})",
                              "descheduler.fleet.secondary_scheduler": body, "register": register}
    for keyword, wanted in (("check_mode", check), ("diff", diff), ("ignore_errors", ignore_errors)):
        if wanted:
            result[keyword] = True
    return result


def run(tmp_path: Path, *tasks: dict) -> dict[str, Any]:
    process, results = run_tasks(tmp_path, list(tasks))
    expected_failure = any(t.get("ignore_errors") for t in tasks)
    assert process.returncode == 0 or expected_failure, process.stdout[-5000:] + process.stderr[-2000:]
    return results


def changed_steps(result: dict) -> list[tuple[str, str]]:
    return [(a["step"], a["action"]) for a in result["actions"] if a["changed"] or a["action"] == "wait"]


EXPECTED_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [{
        "schedulerName": "secondary-scheduler",
        "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}],
                              "disabled": [{"name": "NodeResourcesBalancedAllocation"},
                                           {"name": "NodeResourcesFit"}]}},
        "pluginConfig": [{"name": "TargetLoadPacking", "args": {
            "targetUtilization": 70, "defaultRequests": {"cpu": "2000m"}, "defaultRequestsMultiplier": "1",
            "metricProvider": {"type": "Prometheus", "address": None, "token": TOKEN}}}],
    }],
}


def test_install_configure_then_second_run_changes_nothing(kube: Any, sso: Olm, rest: Rest, prometheus: dict,
                                                           tmp_path: Path) -> None:
    options = {"trimaran": trimaran(prometheus), "check_metric_provider": True}
    results = run(tmp_path, task(kube, "install", **options), task(kube, "again", **options),
                  info_task(kube, "info", read_log=False))
    install, again, info = results["install"], results["again"], results["info"]

    assert changed_steps(install) == [
        ("namespace", "create"), ("operator_group", "create"), ("subscription", "create"), ("wait", "wait"),
        ("config_map", "create"), ("secondary_scheduler", "create"), ("wait", "wait")]
    assert (install["installed_csv"], install["installed_version"], install["csv_phase"]) == (
        CSV_V140, "1.4.0", "Succeeded")
    assert install["scheduler_names"] == ["secondary-scheduler"]
    assert install["deployment"]["available_replicas"] == 1
    assert install["metric_provider_checks"][0]["reachable"] is True
    assert prometheus["seen"][0] == {"path": "/api/v1/status/buildinfo", "authorization": f"Bearer {TOKEN}"}
    assert TOKEN not in json.dumps(install)  # no_log: the token never reaches the output
    assert again["changed"] is False

    config_map = rest.get(path("v1", "configmaps", NAMESPACE, "secondary-scheduler-config"))
    deployed = yaml.safe_load(config_map["data"]["config.yaml"])
    expected = json.loads(json.dumps(EXPECTED_CONFIG))
    expected["profiles"][0]["pluginConfig"][0]["args"]["metricProvider"]["address"] = prometheus["address"]
    assert deployed == expected
    cr = rest.get(path("operator.openshift.io/v1", "secondaryschedulers", NAMESPACE, "cluster"))
    # what the module wrote, and operatorLogLevel as the CRD defaults it (secondary-scheduler-operator.crd.yaml)
    assert cr["spec"] == {"managementState": "Managed", "schedulerConfig": "secondary-scheduler-config",
                          "schedulerImage": IMAGE, "logLevel": "Normal", "operatorLogLevel": "Normal"}
    assert rest.get(path("v1", "namespaces", name=NAMESPACE))["metadata"]["labels"][
        "app.kubernetes.io/managed-by"] == "descheduler.fleet"
    subscription = rest.get(path(OLM, "subscriptions", NAMESPACE, PACKAGE))
    assert subscription["spec"]["name"] == PACKAGE and subscription["status"]["installedCSV"] == CSV_V140

    facts = info["secondary_scheduler"]  # the info module reports it, the token redacted
    assert (facts["installed_csv"], facts["installed_version"], facts["csv_phase"]) == (CSV_V140, "1.4.0",
                                                                                        "Succeeded")
    assert facts["scheduler_names"] == ["secondary-scheduler"]
    assert facts["secondary_scheduler"]["spec"]["schedulerImage"] == IMAGE
    assert facts["config"]["profiles"][0]["pluginConfig"][0]["args"]["metricProvider"]["token"] == "(redacted)"
    assert facts["deployment"]["available_replicas"] == 1
    assert info["flavor"] == "none" and info["volcano"] is None


def test_check_mode_with_diff_shows_the_config_change_and_writes_nothing(kube: Any, sso: Olm, rest: Rest,
                                                                         prometheus: dict, tmp_path: Path) -> None:
    results = run(tmp_path, task(kube, "fresh", check=True, trimaran=trimaran(prometheus)),
                  task(kube, "install", trimaran=trimaran(prometheus)),
                  task(kube, "check", check=True, diff=True, trimaran=trimaran(prometheus, target_utilization=50)))
    fresh, check = results["fresh"], results["check"]

    assert fresh["changed"] is True and fresh["deployment"] is None
    assert {a["message"] for a in fresh["actions"] if a["changed"]} == {"would create (check mode)"}
    assert changed_steps(check) == [("config_map", "update")]
    (config_diff,) = check["diff"]
    assert "targetUtilization: 70" in config_diff["before"]["data"]["config.yaml"]
    assert "targetUtilization: 50" in config_diff["after"]["data"]["config.yaml"]
    stored = rest.get(path("v1", "configmaps", NAMESPACE, "secondary-scheduler-config"))["data"]["config.yaml"]
    assert "targetUtilization: 70" in stored


def test_invalid_configurations_are_refused_before_any_write(kube: Any, sso: Olm, rest: Rest, prometheus: dict,
                                                             tmp_path: Path) -> None:
    unknown_plugin = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "profiles": [{"schedulerName": "lb", "plugins": {"score": {"enabled": [
                          {"name": "TargetLoadPackin"}]}}}]}
    filter_plugin = {**unknown_plugin, "profiles": [{"schedulerName": "lb", "plugins": {"filter": {"enabled": [
        {"name": "TargetLoadPacking"}]}}}]}
    results = run(
        tmp_path,
        task(kube, "zero", trimaran=trimaran(prometheus, target_utilization=0), ignore_errors=True),
        task(kube, "no_address", trimaran=trimaran(prometheus, metric_provider={"type": "Prometheus"}),
             ignore_errors=True),
        task(kube, "unknown", scheduler_config=unknown_plugin, ignore_errors=True),
        task(kube, "wrong_point", scheduler_config=filter_plugin, ignore_errors=True),
        task(kube, "bad_token", check_metric_provider=True, ignore_errors=True,
             trimaran=trimaran(prometheus, metric_provider={"type": "Prometheus", "address": prometheus["address"],
                                                            "token": "wrong"})),
        task(kube, "unreachable", check_metric_provider=True, ignore_errors=True,
             trimaran=trimaran(prometheus, metric_provider={"type": "Prometheus", "address": "http://127.0.0.1:9"})))

    assert results["zero"]["field"] == "trimaran.target_utilization"
    assert results["zero"]["msg"].startswith("trimaran.target_utilization: invalid value 0: an integer percentage")
    assert results["no_address"]["field"] == "trimaran.metric_provider.address"
    assert "metricProvider type Prometheus needs its address" in results["no_address"]["msg"]
    assert results["unknown"]["field"] == "scheduler_config.profiles[0].plugins.score.enabled[0].name"
    assert "'TargetLoadPackin': unknown plugin" in results["unknown"]["msg"]
    assert "TargetLoadPacking" in results["unknown"]["msg"]  # the known names are listed
    assert "TargetLoadPacking does not implement filter; it implements score" in results["wrong_point"]["msg"]
    assert "HTTP 401 (check metricProvider.token)" in results["bad_token"]["msg"]
    assert results["unreachable"]["field"] == "trimaran.metric_provider.address"
    assert "http://127.0.0.1:9/api/v1/status/buildinfo failed" in results["unreachable"]["msg"]
    for result in results.values():
        assert result["failed"] is True and result["actions"] == []
    assert rest.get(path("v1", "namespaces", name=NAMESPACE)) is None


def test_uninstall_in_order_leaves_nothing(kube: Any, sso: Olm, rest: Rest, prometheus: dict, tmp_path: Path) -> None:
    results = run(tmp_path, task(kube, "install", trimaran=trimaran(prometheus)),
                  task(kube, "remove", state="absent"), task(kube, "again", state="absent"))
    remove = results["remove"]

    assert [(a["step"], a["action"]) for a in remove["actions"] if a["action"] != "none"] == [
        ("secondary_scheduler", "delete"), ("operand", "wait"), ("config_map", "delete"), ("subscription", "delete"),
        ("csv", "delete"), ("operator_group", "delete"), ("namespace", "delete"), ("namespace", "wait")]
    assert remove["removed_csvs"] == [CSV_V140] and remove["namespace_removed"] is True
    assert results["again"]["changed"] is False
    for api, plural in (("operator.openshift.io/v1", "secondaryschedulers"), (OLM, "subscriptions"),
                        (OLM, "clusterserviceversions"), ("operators.coreos.com/v1", "operatorgroups")):
        assert rest.list(path(api, plural, NAMESPACE)) == []
    assert rest.get(path("apps/v1", "deployments", NAMESPACE, "secondary-scheduler")) is None
    assert rest.get(path("v1", "configmaps", NAMESPACE, "secondary-scheduler-config")) is None
    assert rest.get(path("v1", "namespaces", name=NAMESPACE)) is None


def test_metrics_server_provider_is_checked_through_the_cluster(kube: Any, sso: Olm, tmp_path: Path) -> None:
    before = run(tmp_path, task(kube, "missing", check=True, check_metric_provider=True,
                                ignore_errors=True))["missing"]
    serve_the_metrics_api(kube)
    after = run(tmp_path, task(kube, "served", check=True, check_metric_provider=True))["served"]

    assert before["field"] == "trimaran.metric_provider.type"  # the default provider, KubernetesMetricsServer
    assert "/apis/metrics.k8s.io/v1beta1 is not served on this cluster: install metrics-server" in before["msg"]
    assert before["actions"] == []
    assert after["metric_provider_checks"] == [{"field": "trimaran.metric_provider.type",
                                                "address": "/apis/metrics.k8s.io/v1beta1", "reachable": True}]


def test_manual_pin_installs_that_version_and_leaves_the_upgrade_waiting(kube: Any, sso: Olm, rest: Rest,
                                                                         tmp_path: Path) -> None:
    pinned = {"install_plan_approval": "Manual", "starting_csv": "secondaryscheduleroperator.v1.3.1"}
    install = run(tmp_path, task(kube, "install", **pinned))["install"]
    assert (install["installed_csv"], install["installed_version"]) == ("secondaryscheduleroperator.v1.3.1", "1.3.1")
    # OLM (the stand-in, in its own time) proposes the channel head; it must stay waiting
    wait_until(lambda: any(p["spec"]["clusterServiceVersionNames"] == [CSV_V140]
                           for p in rest.list(path(OLM, "installplans", NAMESPACE))),
               timeout=120, what="OLM to propose the upgrade to 1.4.0")
    (tmp_path / "again").mkdir()
    again = run(tmp_path / "again", task(kube, "again", **pinned))["again"]
    assert again["pending_upgrade"]["csvs"] == [CSV_V140] and again["pending_upgrade"]["approved"] is False
    assert again["changed"] is False and again["installed_csv"] == "secondaryscheduleroperator.v1.3.1"
    assert rest.get(path(OLM, "clusterserviceversions", NAMESPACE, CSV_V140)) is None
