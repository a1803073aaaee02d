"""The secondary_scheduler role through its playbook on one cluster (the `kube` fixture - the real control plane by
default - with the OLM and operator stand-ins and the node of test_secondary_scheduler.py's `sso` fixture): install
and configure, a second run that changes nothing, the summary line, and removal with secondary_scheduler_state=absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from playbook import REPO, run_playbook
from standins.rest import Rest, path
from test_secondary_scheduler import (  # noqa: F401 (fixtures)  # pylint: disable=unused-import
    IMAGE,
    NAMESPACE,
    prometheus,
    rest,
    sso,
    trimaran,
)

PLAYBOOK = REPO / "playbooks" / "secondary_scheduler.yml"


def inventory(kube: Any, tmp_path: Path, metrics: dict[str, Any], **variables: Any) -> Path:
    host = {"descheduler_fleet_connection": {"kubeconfig": str(kube.kubeconfig), "context": kube.context},
            "secondary_scheduler_image": IMAGE, "secondary_scheduler_trimaran": trimaran(metrics),
            "secondary_scheduler_wait_timeout": 120, "secondary_scheduler_wait_sleep": 1, **variables}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"clusters": {"hosts": {"c1": host}}}))
    return path


def run(kube: Any, tmp_path: Path, metrics: dict[str, Any], *args: str, **variables: Any) -> Any:
    process = run_playbook(PLAYBOOK, "-i", str(inventory(kube, tmp_path, metrics, **variables)), *args,
                           env={"ANSIBLE_SHOW_CUSTOM_STATS": "1"})
    assert process.returncode == 0, process.stdout[-4000:]
    return process


def config_map(api: Rest) -> dict[str, Any] | None:
    return api.get(path("v1", "configmaps", NAMESPACE, "secondary-scheduler-config"))


def test_install_rerun_and_remove(kube: Any, sso: Any, rest: Rest, prometheus: dict,  # noqa: F811
                                  tmp_path: Path) -> None:
    first = run(kube, tmp_path, prometheus)
    assert "c1: secondary scheduler present" in first.stdout and "change(s)" in first.stdout
    written = yaml.safe_load(config_map(rest)["data"]["config.yaml"])
    assert written["profiles"][0]["schedulerName"] == "secondary-scheduler"
    assert rest.get(path("operator.openshift.io/v1", "secondaryschedulers", NAMESPACE, "cluster")) is not None

    again = run(kube, tmp_path, prometheus)
    assert "c1: secondary scheduler present" in again.stdout and "no change" in again.stdout
    assert "changed=0" in again.stdout

    run(kube, tmp_path, prometheus, "-e", json.dumps({"secondary_scheduler_state": "absent"}))
    assert config_map(rest) is None
    assert rest.get(path("operator.openshift.io/v1", "secondaryschedulers", NAMESPACE, "cluster")) is None
