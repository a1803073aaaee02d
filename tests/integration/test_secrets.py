"""Secrets never leave (#50, item 3, the dry run part): known values planted in every credential a dry run takes
(the connection's bearer token, the AWS and Kubernetes environment variables) appear in no output of the dry run
role at -vvv: not stdout, not stderr, not any file it writes (reports, plans, fleet summary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import PLANNING
from playbook import REPO, run_playbook
from restricted_user import restricted_kubeconfig, server_and_ca, service_account_token

PLANTED_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED0ACCESS0KEY",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-9f1c2e7d5b",
    "AWS_SESSION_TOKEN": "planted-aws-session-4a8b3c",
    "K8S_AUTH_PASSWORD": "planted-k8s-password-77e1",
}
POLICY = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "restarts",
            "pluginConfig": [
                {"name": "DefaultEvictor"},
                {"name": "RemovePodsHavingTooManyRestarts", "args": {"podRestartThreshold": 10}},
            ],
            "plugins": {"deschedule": {"enabled": ["RemovePodsHavingTooManyRestarts"]}},
        }
    ],
}


def test_no_credential_appears_in_any_output_of_a_dry_run_at_vvv(kube: Any, tmp_path: Path) -> None:
    restricted_kubeconfig(kube, tmp_path, "secret-planner", [rule.as_policy_rule() for rule in PLANNING.rules])
    token = service_account_token(kube, "secret-planner")
    server, ca = server_and_ca(kube)
    assert ca, "the test needs the CA as a file"
    out = tmp_path / "out"
    host = {
        "ansible_connection": "local",
        "dry_run_policy": POLICY,
        "dry_run_report_dir": str(out),
        "descheduler_fleet_connection": {"host": server, "api_key": token, "ca_cert": ca},
    }
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": {"east": host}}}))

    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory), "-vvv", env=PLANTED_ENV)

    assert process.returncode == 0, process.stdout[-3000:]
    assert (out / "east" / "plan.json").exists()  # the run did read the cluster with the token
    assert "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in process.stdout  # -vvv shows the module arguments, masked
    secrets = {"the bearer token": token, **PLANTED_ENV}
    outputs = {"stdout": process.stdout, "stderr": process.stderr}
    outputs.update({str(path): path.read_text(errors="replace") for path in out.rglob("*") if path.is_file()})
    leaks = [
        f"{name} in {where}" for name, value in secrets.items() for where, text in outputs.items() if value in text
    ]
    assert leaks == []
