"""The secondary_scheduler module through real ansible-playbook runs: the Secondary Scheduler Operator installed
through the emulator's OLM, the Trimaran configuration written and checked (a Prometheus stand-in answers the
reachability check), the SecondaryScheduler CR reconciled by a small operator stand-in, idempotence, check mode,
diff, invalid configurations refused before any write, and removal in order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import emulator.olm as emulated_olm
import pytest
import yaml
from emulator import Emulator
from emulator.controllers import Controller
from emulator.metrics_api import serve_metrics_api
from emulator.olm import CatalogPackage, Olm, crd
from emulator.resources import ResourceType
from operator_support import info_task
from playbook import run_tasks

pytestmark = pytest.mark.needs_emulator  # OLM and the operator are emulated

NAMESPACE = "openshift-secondary-scheduler-operator"
PACKAGE = "openshift-secondary-scheduler-operator"
CSV_V140 = "secondaryscheduleroperator.v1.4.0"
IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8"
TOKEN = "s3cr3t-prometheus-token"
SECONDARY_SCHEDULER_CRD = crd("operator.openshift.io", "SecondaryScheduler", "secondaryschedulers", ("v1",))
SECONDARY_SCHEDULERS = ("operator.openshift.io", "secondaryschedulers")
DEPLOYMENTS = ("apps", "deployments")


class SecondarySchedulerOperator(Controller):
    """What the operator does with SecondaryScheduler `cluster` (openshift/secondary-scheduler-operator): it reads
    the ConfigMap `spec.schedulerConfig` and runs Deployment `secondary-scheduler` (owned by the CR, so it goes with
    it) with `spec.schedulerImage`; the roll-out is immediate."""

    name = "secondary-scheduler-operator"
    watches = (SECONDARY_SCHEDULERS,)

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        self._reconcile(emulator, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        if old.get("spec") != new.get("spec") and not new["metadata"].get("deletionTimestamp"):
            self._reconcile(emulator, new)

    @staticmethod
    def _reconcile(emulator: Emulator, cr: dict[str, Any]) -> None:
        spec = cr.get("spec") or {}
        if emulator.store.get(("", "configmaps"), NAMESPACE, spec.get("schedulerConfig", "")) is None:
            return  # the real operator reports Degraded and runs nothing
        labels = {"app": "secondary-scheduler"}
        desired = {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "secondary-scheduler", "namespace": NAMESPACE, "labels": labels,
                         "ownerReferences": [{"apiVersion": "operator.openshift.io/v1", "kind": "SecondaryScheduler",
                                              "name": cr["metadata"]["name"], "uid": cr["metadata"]["uid"]}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "secondary-scheduler", "image": spec.get("schedulerImage"),
                                         "args": ["--config=/etc/kubernetes/config.yaml"]}]}}},
        }
        deployment_type = emulator.storage_type(DEPLOYMENTS)
        assert deployment_type is not None
        existing = emulator.store.get(DEPLOYMENTS, NAMESPACE, "secondary-scheduler")
        if existing is None:
            written = emulator.api.create(deployment_type, NAMESPACE, desired)
        else:
            updated = {**existing, "spec": desired["spec"]}
            updated["metadata"] = {**existing["metadata"], "generation": existing["metadata"].get("generation", 1) + 1}
            written = emulator.api.write(deployment_type, updated, existing)
        Olm._set_status(emulator, DEPLOYMENTS, written, {
            "observedGeneration": written["metadata"].get("generation", 1), "replicas": 1, "updatedReplicas": 1,
            "readyReplicas": 1, "availableReplicas": 1})


@pytest.fixture
def sso(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Olm:
    """The emulator's OLM serves the descheduler's package; its names are pointed at the Secondary Scheduler
    Operator's bundle (package, namespace, CSV names, owned CRD, operator Deployment) for this test."""
    for name, value in {"PACKAGE": PACKAGE, "OPERATOR_NAMESPACE": NAMESPACE,
                        "CSV_PREFIX": "secondaryscheduleroperator.v", "KUBEDESCHEDULER_CRD": SECONDARY_SCHEDULER_CRD,
                        "OPERATOR_DEPLOYMENT": "secondary-scheduler-operator",
                        "OPERATOR_IMAGE": "registry.redhat.io/openshift-secondary-scheduler-operator/operator",
                        "OPERAND_IMAGE": IMAGE.split(":")[0]}.items():
        monkeypatch.setattr(emulated_olm, name, value)
    olm = Olm(packages=[CatalogPackage(PACKAGE, "stable", {"stable": ["1.3.1", "1.4.0"]})]).install(emulator)
    emulator.add_controller(SecondarySchedulerOperator())
    return olm


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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"address": f"http://127.0.0.1:{server.server_address[1]}", "seen": seen}
    finally:
        server.shutdown()
        server.server_close()


def trimaran(prometheus: dict[str, Any], **changes: Any) -> dict[str, Any]:
    options = {"target_utilization": 70, "default_requests_cpu": "2000m", "default_requests_multiplier": "1",
               "metric_provider": {"type": "Prometheus", "address": prometheus["address"], "token": TOKEN}}
    return {**options, **changes}


def task(emulator: Emulator, register: str, *, check: bool = False, diff: bool = False,
         ignore_errors: bool = False, **options: Any) -> dict:
    body = {"kubeconfig": str(emulator.kubeconfig), "wait_timeout": 10, "wait_sleep": 1, **options}
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


def test_install_configure_then_second_run_changes_nothing(emulator: Emulator, sso: Olm, prometheus: dict,
                                                          tmp_path: Path) -> None:
    options = {"trimaran": trimaran(prometheus), "check_metric_provider": True}
    results = run(tmp_path, task(emulator, "install", **options), task(emulator, "again", **options),
                  info_task(emulator, "info", read_log=False))
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

    config_map = emulator.get("ConfigMap", NAMESPACE, "secondary-scheduler-config")
    deployed = yaml.safe_load(config_map["data"]["config.yaml"])
    expected = json.loads(json.dumps(EXPECTED_CONFIG))
    expected["profiles"][0]["pluginConfig"][0]["args"]["metricProvider"]["address"] = prometheus["address"]
    assert deployed == expected
    cr = emulator.get("secondaryschedulers.operator.openshift.io", NAMESPACE, "cluster")
    assert cr["spec"] == {"managementState": "Managed", "schedulerConfig": "secondary-scheduler-config",
                          "schedulerImage": IMAGE, "logLevel": "Normal"}
    assert emulator.get("Namespace", None, NAMESPACE)["metadata"]["labels"][
        "app.kubernetes.io/managed-by"] == "descheduler.fleet"
    subscription = emulator.get("subscriptions.operators.coreos.com", NAMESPACE, PACKAGE)
    assert subscription["spec"]["name"] == PACKAGE and subscription["status"]["installedCSV"] == CSV_V140

    facts = info["secondary_scheduler"]  # the info module reports it, the token redacted
    assert (facts["installed_csv"], facts["installed_version"], facts["csv_phase"]) == (CSV_V140, "1.4.0",
                                                                                         "Succeeded")
    assert facts["scheduler_names"] == ["secondary-scheduler"]
    assert facts["secondary_scheduler"]["spec"]["schedulerImage"] == IMAGE
    assert facts["config"]["profiles"][0]["pluginConfig"][0]["args"]["metricProvider"]["token"] == "(redacted)"
    assert facts["deployment"]["available_replicas"] == 1
    assert info["flavor"] == "none" and info["volcano"] is None


def test_check_mode_with_diff_shows_the_config_change_and_writes_nothing(emulator: Emulator, sso: Olm,
                                                                        prometheus: dict, tmp_path: Path) -> None:
    results = run(tmp_path, task(emulator, "fresh", check=True, trimaran=trimaran(prometheus)),
                  task(emulator, "install", trimaran=trimaran(prometheus)),
                  task(emulator, "check", check=True, diff=True, trimaran=trimaran(prometheus, target_utilization=50)))
    fresh, check = results["fresh"], results["check"]

    assert fresh["changed"] is True and fresh["deployment"] is None
    assert {a["message"] for a in fresh["actions"] if a["changed"]} == {"would create (check mode)"}
    assert changed_steps(check) == [("config_map", "update")]
    (config_diff,) = check["diff"]
    assert "targetUtilization: 70" in config_diff["before"]["data"]["config.yaml"]
    assert "targetUtilization: 50" in config_diff["after"]["data"]["config.yaml"]
    stored = emulator.get("ConfigMap", NAMESPACE, "secondary-scheduler-config")["data"]["config.yaml"]
    assert "targetUtilization: 70" in stored


def test_invalid_configurations_are_refused_before_any_write(emulator: Emulator, sso: Olm, prometheus: dict,
                                                             tmp_path: Path) -> None:
    unknown_plugin = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "profiles": [{"schedulerName": "lb", "plugins": {"score": {"enabled": [
                          {"name": "TargetLoadPackin"}]}}}]}
    filter_plugin = {**unknown_plugin, "profiles": [{"schedulerName": "lb", "plugins": {"filter": {"enabled": [
        {"name": "TargetLoadPacking"}]}}}]}
    results = run(
        tmp_path,
        task(emulator, "zero", trimaran=trimaran(prometheus, target_utilization=0), ignore_errors=True),
        task(emulator, "no_address", trimaran=trimaran(prometheus, metric_provider={"type": "Prometheus"}),
             ignore_errors=True),
        task(emulator, "unknown", scheduler_config=unknown_plugin, ignore_errors=True),
        task(emulator, "wrong_point", scheduler_config=filter_plugin, ignore_errors=True),
        task(emulator, "bad_token", check_metric_provider=True, ignore_errors=True,
             trimaran=trimaran(prometheus, metric_provider={"type": "Prometheus", "address": prometheus["address"],
                                                            "token": "wrong"})),
        task(emulator, "unreachable", check_metric_provider=True, ignore_errors=True,
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
    assert emulator.get("Namespace", None, NAMESPACE) is None


def test_uninstall_in_order_leaves_nothing(emulator: Emulator, sso: Olm, prometheus: dict, tmp_path: Path) -> None:
    results = run(tmp_path, task(emulator, "install", trimaran=trimaran(prometheus)),
                  task(emulator, "remove", state="absent"), task(emulator, "again", state="absent"))
    remove = results["remove"]

    assert [(a["step"], a["action"]) for a in remove["actions"] if a["action"] != "none"] == [
        ("secondary_scheduler", "delete"), ("operand", "wait"), ("config_map", "delete"), ("subscription", "delete"),
        ("csv", "delete"), ("operator_group", "delete"), ("namespace", "delete"), ("namespace", "wait")]
    assert remove["removed_csvs"] == [CSV_V140] and remove["namespace_removed"] is True
    assert results["again"]["changed"] is False
    for kind in ("secondaryschedulers.operator.openshift.io", "subscriptions.operators.coreos.com",
                 "clusterserviceversions.operators.coreos.com", "operatorgroups.operators.coreos.com"):
        assert emulator.list(kind, NAMESPACE) == []
    assert emulator.get("Deployment", NAMESPACE, "secondary-scheduler") is None
    assert emulator.get("ConfigMap", NAMESPACE, "secondary-scheduler-config") is None
    assert emulator.get("Namespace", None, NAMESPACE) is None


def test_metrics_server_provider_is_checked_through_the_cluster(emulator: Emulator, sso: Olm,
                                                               tmp_path: Path) -> None:
    before = run(tmp_path, task(emulator, "missing", check=True, check_metric_provider=True,
                                ignore_errors=True))["missing"]
    serve_metrics_api(emulator)
    after = run(tmp_path, task(emulator, "served", check=True, check_metric_provider=True))["served"]

    assert before["field"] == "trimaran.metric_provider.type"  # the default provider, KubernetesMetricsServer
    assert "/apis/metrics.k8s.io/v1beta1 is not served on this cluster: install metrics-server" in before["msg"]
    assert before["actions"] == []
    assert after["metric_provider_checks"] == [{"field": "trimaran.metric_provider.type",
                                                "address": "/apis/metrics.k8s.io/v1beta1", "reachable": True}]


def test_manual_pin_installs_that_version_and_leaves_the_upgrade_waiting(emulator: Emulator, sso: Olm,
                                                                        tmp_path: Path) -> None:
    pinned = {"install_plan_approval": "Manual", "starting_csv": "secondaryscheduleroperator.v1.3.1"}
    results = run(tmp_path, task(emulator, "install", **pinned), task(emulator, "again", **pinned))
    install, again = results["install"], results["again"]

    assert (install["installed_csv"], install["installed_version"]) == ("secondaryscheduleroperator.v1.3.1", "1.3.1")
    assert install["pending_upgrade"]["csvs"] == [CSV_V140] and install["pending_upgrade"]["approved"] is False
    assert again["changed"] is False and again["installed_csv"] == "secondaryscheduleroperator.v1.3.1"
    assert emulator.get("clusterserviceversions.operators.coreos.com", NAMESPACE, CSV_V140) is None
