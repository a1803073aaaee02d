"""The install and uninstall roles with flavor volcano, through their playbooks on one cluster (the `kube` fixture):
the Volcano descheduler deployed with its policy checked against the Volcano scheduler's configuration, a pairing
the scheduler cannot honour refused before anything is written, and removal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from playbook import REPO, run_playbook
from test_operator_volcano import (  # noqa: F401 (fixture)  # pylint: disable=unused-import
    POLICY,
    SCHEDULER_CONF,
    WITHOUT_USAGE,
    target,
)

INSTALL = REPO / "playbooks" / "install.yml"
UNINSTALL = REPO / "playbooks" / "uninstall.yml"


def inventory(place: dict[str, Any], tmp_path: Path, scheduler_conf: str) -> Path:
    kube = place["kube"]
    host = {"descheduler_fleet_connection": {"kubeconfig": str(kube.kubeconfig), "context": kube.context},
            "install_flavor": "volcano", "install_wait": place["wait"], "install_wait_timeout": 120,
            "install_wait_sleep": 1, "uninstall_wait_timeout": 120, "uninstall_wait_sleep": 1,
            "install_volcano": {"name": place["name"], "namespace": place["namespace"], "policy": POLICY},
            "install_volcano_scheduler_config": scheduler_conf}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"clusters": {"hosts": {"c1": host}}}))
    return path


def deployment(place: dict[str, Any]) -> Any:
    with place["kube"].api_client() as api:
        try:
            return client.AppsV1Api(api).read_namespaced_deployment(place["name"], place["namespace"])
        except client.exceptions.ApiException as exc:
            if exc.status == 404:
                return None
            raise


def test_install_then_uninstall(target: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    install = run_playbook(INSTALL, "-i", str(inventory(target, tmp_path, SCHEDULER_CONF)))
    assert install.returncode == 0, install.stdout[-4000:]
    assert "c1: installed" in install.stdout
    assert deployment(target) is not None
    uninstall = run_playbook(UNINSTALL, "-i", str(inventory(target, tmp_path, SCHEDULER_CONF)))
    assert uninstall.returncode == 0, uninstall.stdout[-4000:]
    assert deployment(target) is None


def test_a_scheduler_without_usage_is_refused_before_any_write(target: dict[str, Any],  # noqa: F811
                                                               tmp_path: Path) -> None:
    install = run_playbook(INSTALL, "-i", str(inventory(target, tmp_path, WITHOUT_USAGE)))
    assert install.returncode != 0
    assert "c1: FAILED" in install.stdout and "usage" in install.stdout
    assert deployment(target) is None
