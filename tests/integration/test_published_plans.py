"""What the dry_run role publishes with set_stats (the artifact AWX stores with the job and hands to the next
workflow node): per cluster its summary and a reference to the full plan, never the eviction list; the evict role
then executes the plan that reference names, and refuses a reference it cannot trust. Real ansible-runner and
ansible-playbook runs against the test's API server (its ReplicaSet controller and kubelet stand-in make the pods)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import ansible_runner
import yaml
from evict_helpers import (
    namespace_object,
    node,
    pods_of,
    ready_replicas,
    replicaset,
    sealed,
    wait_until_pods_are_older_than,
)
from playbook import REPO, ansible_env, run_playbook

NAMESPACE = "published"
RUN_TIMEOUT = 600
POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "aged", "pluginConfig": [{"name": "PodLifeTime", "args": {
        "maxPodLifeTimeSeconds": 1, "namespaces": {"include": [NAMESPACE]}}}],
    "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}


def write_inventory(path: Path, kube: Any, **group_vars: Any) -> Path:
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    path.write_text(yaml.safe_dump({"clusters": {
        "hosts": {"c1": {"ansible_connection": "local", "descheduler_fleet_connection": connection}},
        "vars": group_vars}}))
    return path


def dry_run_artifacts(tmp_path: Path, kube: Any, reports: Path) -> dict[str, Any]:
    """Run playbooks/dry_run.yml as AWX runs a job (ansible-runner); returns the job's artifacts (its set_stats)."""
    data_dir = tmp_path / "dry-run-job"
    data_dir.mkdir()
    inventory = write_inventory(data_dir / "inventory.yml", kube, dry_run_policy=POLICY,
                                dry_run_report_dir=str(reports), dry_run_compare_previous=False)
    env = ansible_env({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    runner = ansible_runner.run(private_data_dir=str(data_dir), project_dir=str(REPO / "playbooks"),
                                playbook="dry_run.yml", inventory=str(inventory), envvars=env, quiet=True,
                                timeout=RUN_TIMEOUT)
    assert runner.rc == 0, runner.stdout.read()[-4000:]
    stats = [event["event_data"].get("artifact_data") or {} for event in runner.events
             if event.get("event") == "playbook_on_stats"]
    assert stats, "the job ended without its stats event"
    return stats[0]


def evict_check_mode(tmp_path: Path, kube: Any, published: dict[str, Any], name: str) -> Any:
    """The evict job in check mode, fed only the published artifact, with a report directory of its own (so the
    plan can come from nowhere but the artifact's reference)."""
    extra = tmp_path / f"{name}-vars.json"
    extra.write_text(json.dumps({"dry_run_plans": published, "evict_plan_source": "stats",
                                 "evict_report_dir": str(tmp_path / name), "evict_poll_interval": 0.1}))
    inventory = write_inventory(tmp_path / f"{name}-inventory.yml", kube)
    return run_playbook(REPO / "playbooks" / "evict.yml", "-i", str(inventory), "-e", f"@{extra}", "--check")


def test_the_dry_run_publishes_a_summary_and_a_reference_that_the_evict_role_executes(
        kube: Any, tmp_path: Path) -> None:
    kube.load([namespace_object(NAMESPACE), *(node(f"worker-{i}") for i in range(1, 4))])
    kube.create(replicaset(NAMESPACE, "web", 3))
    pods = ready_replicas(kube, NAMESPACE, "web", 3)
    wait_until_pods_are_older_than(pods, 1)  # maxPodLifeTimeSeconds

    reports = tmp_path / "reports"
    entry = dry_run_artifacts(tmp_path, kube, reports)["dry_run_plans"]["c1"]
    assert "evictions" not in entry, "set_stats carries the summary and a reference, never the eviction list"
    plan_file = Path(entry["plan_file"])
    assert plan_file == reports / "c1" / "plan.json"
    plan = json.loads(plan_file.read_text())
    per_object = ("by_node", "by_owner", "by_namespace")  # they grow with the cluster: the plan file holds them
    assert entry["summary"] == {k: v for k, v in plan["summary"].items() if k not in per_object}
    assert entry["summary"]["total"] == 3 and entry["now"] == plan["now"]
    assert {e["name"] for e in plan["evictions"]} == {p["metadata"]["name"] for p in pods}
    # the seal of the plan reviewed, without its per-eviction digests (they grow with the plan)
    assert entry["seal"] == {k: v for k, v in plan["seal"].items() if k != "entries"}
    assert entry["seal"]["evictions"] == 3 and len(entry["seal"]["digest"]) == 64

    before = {p["metadata"]["uid"] for p in pods_of(kube, NAMESPACE)}
    process = evict_check_mode(tmp_path, kube, {"c1": entry}, "evict")
    assert process.returncode == 0, process.stdout[-5000:]
    assert "c1: 3 eviction(s) planned" in process.stdout
    [result] = json.loads((tmp_path / "evict" / "fleet-evict-result.json").read_text())["clusters"]
    assert (result["plan_source"], result["counts"]["would_evict"]) == ("stats", 3)
    assert {p["metadata"]["uid"] for p in pods_of(kube, NAMESPACE)} == before, "check mode changes nothing"

    # another dry run replaced the file: not the plan that was reviewed and published
    plan_file.write_text(json.dumps({**plan, "now": "2026-01-01T00:00:00Z"}))
    process = evict_check_mode(tmp_path, kube, {"c1": entry}, "replaced")
    assert process.returncode != 0
    assert "the file was replaced" in process.stdout and "c1: 3 eviction(s) planned" not in process.stdout

    # replaced by a plan of the same now, one eviction left out and sealed again: not the seal published
    fewer = {k: v for k, v in plan.items() if k != "seal"}
    fewer["evictions"] = plan["evictions"][:2]
    resealed = sealed(kube, fewer)
    plan_file.write_text(json.dumps(resealed))
    process = evict_check_mode(tmp_path, kube, {"c1": entry}, "resealed")
    assert process.returncode != 0
    assert (f"holds the plan sealed {resealed['seal']['digest']}, but the published plan of c1 (dry_run_plans) is "
            f"sealed {entry['seal']['digest']}") in " ".join(process.stdout.split())
    assert "c1: 2 eviction(s) planned" not in process.stdout
    assert {p["metadata"]["uid"] for p in pods_of(kube, NAMESPACE)} == before

    # the job runs where the dry run's reports are not
    process = evict_check_mode(tmp_path, kube, {"c1": {**entry, "plan_file": str(tmp_path / "elsewhere.json")}},
                               "missing")
    assert process.returncode != 0
    assert "does not exist on this controller" in process.stdout
