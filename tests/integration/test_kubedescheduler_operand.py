"""The operator's Deployments previewed by descheduler.fleet.kubedescheduler and compared by descheduler.fleet.info
(issue #47 item 5), through real ansible-playbook runs against the real API server.

The operator stand-in writes the Deployments from the upstream assets and manageDeschedulerDeployment, not from the
collection's rendering; the expected arguments below are literal, read from upstream
(pkg/operator/target_config_reconciler.go and its tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from operator_support import (
    BASE_SPEC,
    KD_API,
    OPERATOR_NAMESPACE,
    assert_succeeded,
    descheduler_operator,
    get_kd,
    get_object,
    info_task,
    kd_task,
    node,
    run_ok,
    serve_openshift_config,
)
from playbook import run_tasks
from standins.rest import Rest, path, wait_until

BASE_ARGS = ["--policy-config-file=/policy-dir/policy.yaml", "--logging-format=text",
             "--tls-cert-file=/certs-dir/tls.crt", "--tls-private-key-file=/certs-dir/tls.key"]
# what the operator's config observer puts into the spec from the cluster's APIServer TLS profile
SERVING_INFO = {"cipherSuites": ["TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
                "minTLSVersion": "VersionTLS12"}
TLS_ARGS = ["--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "--tls-min-version=VersionTLS12"]
PREDICTIVE_ARGS = [*BASE_ARGS, "--descheduling-interval=3600s", *TLS_ARGS, "--dry-run=true", "-v=2"]
KUBEVIRT_ARGS = [*BASE_ARGS, "--descheduling-interval=3600s", "--feature-gates=EvictionsInBackground=true",
                 *TLS_ARGS, "-v=4"]
SOFTTAINTER_ARGS = ["--policy-config-file=/policy-dir/policy.yaml", "-v=4"]
KD_URL = path(KD_API, "kubedeschedulers", OPERATOR_NAMESPACE, "cluster")


def _args(deployment: dict[str, Any] | None) -> list[str]:
    assert deployment is not None
    return deployment["spec"]["template"]["spec"]["containers"][0]["args"]


def _observe_tls(kube: Any) -> None:
    """As the operator's config observer does: spec.observedConfig.servingInfo (the module keeps it)."""
    with kube.api_client() as client:
        Rest(client).change(KD_URL, lambda kd: kd["spec"].update(observedConfig={"servingInfo": SERVING_INFO}))


def _live_args_become(kube: Any, expected: list[str]) -> None:
    wait_until(lambda: _args(get_object(kube, "deployments", "descheduler", api_version="apps/v1")) == expected,
               what=f"the operator to write the descheduler's args {expected}")


def test_preview_apply_and_drift_of_the_operand(kube: Any, tmp_path: Path) -> None:
    with descheduler_operator(kube) as operator:
        kube.load([node("virt-1", kubevirt=True), node("virt-2", kubevirt=True)])
        serve_openshift_config(kube)
        run_ok(tmp_path, [kd_task(kube, "valid", spec=BASE_SPEC)])
        _observe_tls(kube)
        _live_args_become(kube, PREDICTIVE_ARGS)
        before = get_kd(kube)

        # check mode and diff: the Deployments the operator will write, next to the live ones
        kubevirt = {**BASE_SPEC, "profiles": ["KubeVirtRelieveAndMigrate"], "mode": "Automatic", "logLevel": "Debug"}
        process, results = run_tasks(tmp_path, [{**kd_task(kube, "preview", spec=kubevirt), "diff": True}],
                                     check=True)
        assert_succeeded(process)
        preview = results["preview"]
        rendered = preview["rendered_operand"]
        assert _args(rendered["descheduler"]) == KUBEVIRT_ARGS
        assert _args(rendered["softtainter"]) == SOFTTAINTER_ARGS
        assert rendered["softtainter_why"] == "a KubeVirt profile is set"
        assert rendered["eviction_limits"] == {"total": 5, "node": 2}
        diff = preview["diff"]
        assert diff["before"]["operand"]["descheduler"]["container.args"] == PREDICTIVE_ARGS
        assert diff["after"]["operand"]["descheduler"]["container.args"] == KUBEVIRT_ARGS
        assert diff["before"]["operand"]["softtainter"] is None
        assert diff["after"]["operand"]["softtainter"]["container.args"] == SOFTTAINTER_ARGS
        assert '+                "--feature-gates=EvictionsInBackground=true",' in process.stdout
        after_check = get_kd(kube)
        assert before is not None and after_check is not None
        # nothing written: the spec and its generation as they were (the operator's status writes go on)
        assert after_check["metadata"]["generation"] == before["metadata"]["generation"]
        assert after_check["spec"] == before["spec"]

        # applied: the operator writes what was previewed, and info finds no drift
        results = run_ok(tmp_path, [kd_task(kube, "applied", spec=kubevirt), info_task(kube, "info", read_log=False)])
        assert _args(get_object(kube, "deployments", "descheduler", api_version="apps/v1")) == KUBEVIRT_ARGS
        assert _args(get_object(kube, "deployments", "softtainter", api_version="apps/v1")) == SOFTTAINTER_ARGS
        assert results["info"]["operand_drift"] == []
        assert _args(results["info"]["expected_operand"]["descheduler"]) == KUBEVIRT_ARGS

        # someone edits the live Deployment while the operator is down: info names the field
        operator.stop()
        edited = [arg for arg in KUBEVIRT_ARGS if arg != "-v=4"] + ["-v=10"]
        deployment_url = path("apps/v1", "deployments", OPERATOR_NAMESPACE, "descheduler")
        with kube.api_client() as client:
            Rest(client).change(deployment_url, lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
                args=edited))
        drift = run_ok(tmp_path, [info_task(kube, "drifted", read_log=False)])["drifted"]["operand_drift"]
        assert drift == [{"deployment": "descheduler", "field": "container.args", "live": edited,
                          "expected": KUBEVIRT_ARGS}]
