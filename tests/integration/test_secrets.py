"""Secrets never leave (#50, item 3): known values planted in every credential a run takes (the connection's bearer
token, the run store's S3 keys, the AWS and Kubernetes environment variables) appear in no output at -vvv: not
stdout, not stderr (set_stats artifacts shown), not any file written (reports, plans, fleet summary, the evict
journal), not the run store's objects, not what the run left on the cluster (the rollout record, the Leases, the
KubeDescheduler). One workflow - a dry run, the evict role on its plan (from an S3 run store) and a tune rollout -
each step with its job's shipped ServiceAccount (cluster/rights.py) and nothing more."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import (
    CONFIGURING,
    EXECUTING,
    PLANNING,
    Job,
    bound_jobs,
)
from evict_helpers import namespace_object, node, ready_replicas, replicaset, wait_until_pods_are_older_than
from operator_support import BASE_SPEC, descheduler_operator, get_kd
from playbook import REPO, run_playbook
from restricted_user import restricted_kubeconfig, server_and_ca, service_account_token
from s3server import BUCKET, S3Server
from standins.descheduler_operator import OPERATOR_NAMESPACE

PLANTED_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED0ACCESS0KEY",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-9f1c2e7d5b",
    "AWS_SESSION_TOKEN": "planted-aws-session-4a8b3c",
    "K8S_AUTH_PASSWORD": "planted-k8s-password-77e1",
}
PLANTED_ENV_ALL = {**PLANTED_ENV, "K8S_AUTH_API_KEY": "planted-k8s-api-key-5d2e"}
PLANTED_STORE = {
    "access_key": "PLANTEDSTOREACCESSKEY",
    "secret_key": "planted-store-secret-c3d4e5",
    "session_token": "planted-store-session-0a9b",
}
AGED_OUT = {  # every pod of namespace shop older than a second: the web pod
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "aged",
            "pluginConfig": [
                {"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1, "namespaces": {"include": ["shop"]}}}
            ],
            "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
        }
    ],
}


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    with S3Server(tmp_path / "s3server") as server:
        yield server


@pytest.fixture
def operator_standin(kube: Any) -> Iterator[Any]:
    with descheduler_operator(kube) as running:  # its namespace holds the tuner's Role and the rollout record
        yield running


def job_token(kube: Any, tmp_path: Path, name: str, job: Job, role_namespace: str | None) -> str:
    """A token of a ServiceAccount with exactly the job's shipped rules (its Role's in ``role_namespace``)."""
    rules = [rule for bound in bound_jobs(job) for rule in bound.rules]
    cluster = [rule.as_policy_rule() for rule in rules if not rule.namespaced]
    namespaced = [rule.as_policy_rule() for rule in rules if rule.namespaced]
    if role_namespace:
        restricted_kubeconfig(kube, tmp_path, name, namespaced, namespace=role_namespace, cluster_rules=cluster)
    else:
        restricted_kubeconfig(kube, tmp_path, name, cluster)
    return service_account_token(kube, name, role_namespace)


def stored_objects(s3: S3Server) -> dict[str, str]:
    """Every object of the run store's bucket, by key, as text."""
    client = s3.client()
    keys = [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    return {key: client.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode(errors="replace") for key in keys}


def step(kube: Any, tmp_path: Path, playbook: str, token: str, variables: dict[str, Any], *args: str) -> Any:
    """One playbook of the workflow, its own inventory (the step's token as the connection's api_key), at -vvv."""
    server, ca = server_and_ca(kube)
    host = {
        "ansible_connection": "local",
        **variables,
        "descheduler_fleet_connection": {"host": server, "api_key": token, "ca_cert": ca},
    }
    inventory = tmp_path / f"inventory-{playbook}.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": {"east": host}}}))
    process = run_playbook(
        REPO / f"playbooks/{playbook}.yml",
        "-i",
        str(inventory),
        "-vvv",
        *args,
        env={**PLANTED_ENV_ALL, "ANSIBLE_SHOW_CUSTOM_STATS": "1"},
    )
    assert process.returncode == 0, process.stdout[-4000:]
    return process


def test_no_credential_appears_in_any_output_of_dry_run_evict_and_a_tune_rollout_at_vvv(
    kube: Any, s3: S3Server, operator_standin: Any, tmp_path: Path
) -> None:
    kube.load([namespace_object("shop"), node("worker-1"), node("worker-2")])
    kube.create(replicaset("shop", "web", 1))
    wait_until_pods_are_older_than(ready_replicas(kube, "shop", "web", 1), 1)
    tokens = {
        "planning": job_token(kube, tmp_path, "flow-planner", PLANNING, None),
        "executing": job_token(kube, tmp_path, "flow-evicter", EXECUTING, "shop"),
        "configuring": job_token(kube, tmp_path, "flow-tuner", CONFIGURING, OPERATOR_NAMESPACE),
    }
    reports = tmp_path / "reports"
    common = {
        "descheduler_fleet_run_store": {**s3.run_store(prefix="flow"), **PLANTED_STORE},
        "descheduler_fleet_run_id": "secrets-1",
        "dry_run_report_dir": str(reports),
    }
    processes = [step(kube, tmp_path, "dry_run", tokens["planning"], {**common, "dry_run_policy": AGED_OUT})]
    processes.append(
        step(
            kube,
            tmp_path,
            "evict",
            tokens["executing"],
            {
                **common,
                "evict_report_dir": str(reports),
                "evict_lease": {"namespace": "shop"},
                "evict_timeout": 120,
                "evict_replacement_timeout": 120,
                "evict_poll_interval": 0.1,
            },
            "-e",
            "evict_confirm=true",
        )
    )
    assert "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in processes[0].stdout  # -vvv shows module arguments, masked
    assert server_and_ca(kube)[1], "the connection needs the CA as a file"
    evicted = json.loads((reports / "east" / "evict-result.json").read_text())
    assert evicted["counts"]["evicted"] == 1, evicted["counts"]  # the run did act, with the executing token
    rollout = {"min_success_time": 1, "gate_interval": 1, "progress_deadline": 180, "run_id": "secrets-1"}
    tune = {"tune_spec_defaults": BASE_SPEC, "tune_wait_sleep": 1}
    rollout_args = ("-e", json.dumps({"descheduler_fleet_rollout": rollout}))
    processes.append(step(kube, tmp_path, "tune", tokens["configuring"], tune, *rollout_args))
    assert get_kd(kube)["spec"]["profiles"] == BASE_SPEC["profiles"]
    left_on_cluster = {
        "rollout record": kube.get("ConfigMap", OPERATOR_NAMESPACE, "descheduler-fleet-last-good"),
        "KubeDescheduler": get_kd(kube),
        "change Lease": kube.get(
            "Lease", "kube-system", "descheduler-fleet-change", api_version="coordination.k8s.io/v1"
        ),
        "evict Lease": kube.list("Lease", "shop", api_version="coordination.k8s.io/v1"),
    }
    assert left_on_cluster["rollout record"] is not None and left_on_cluster["evict Lease"]

    secrets = {
        **{f"the {job} token": token for job, token in tokens.items()},
        **PLANTED_ENV_ALL,
        **{f"run store {key}": value for key, value in PLANTED_STORE.items()},
    }
    outputs: dict[str, str] = {}
    for index, process in enumerate(processes):
        outputs[f"stdout of step {index}"], outputs[f"stderr of step {index}"] = process.stdout, process.stderr
    # the reports, plans, fleet summaries and the evict journal
    outputs.update({str(path): path.read_text(errors="replace") for path in reports.rglob("*") if path.is_file()})
    outputs.update({name: json.dumps(obj) for name, obj in left_on_cluster.items()})
    stored = stored_objects(s3)
    assert any("/runs/secrets-1/" in key for key in stored), list(stored)  # the run store holds the run
    outputs.update(stored)
    leaks = [
        f"{name} in {where}" for name, value in secrets.items() for where, text in outputs.items() if value in text
    ]
    assert leaks == []
