"""The dry run → evict workflow as AWX runs it with job slicing: N slice jobs in parallel, each through
ansible-runner (AWX's engine) on the pared-down inventory AWX gives it, sharing nothing but the run store.

AWX slices an inventory by host name: slice k of N gets the enabled hosts ordered by name at k-1, k-1+N, ...
(awx/main/models/inventory.py, Inventory.get_script_data), with every group variable. Its slices' set_stats
artifacts are not merged, so each slice publishes only its clusters; the plans reach the evict step and the fleet
report through the store. Here: real clusters (several control planes), a real S3 server (gofakes3) and a directory
store, the real roles.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import ansible_runner
import pytest
import yaml
from evict_helpers import namespace_object, node, pods_of, ready_replicas, replicaset, wait_until_pods_are_older_than
from playbook import REPO, ansible_env, run_tasks
from s3server import BUCKET, S3Server

SLICES = 3
CLUSTERS = 4  # slices of 2, 1 and 1 hosts: slice 1 holds hosts 1 and 4
REPLICAS = 2
AGED_OUT = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "aged", "pluginConfig": [{"name": "PodLifeTime", "args": {
        "maxPodLifeTimeSeconds": 1, "namespaces": {"include": ["shop"]}}}],
    "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}}]}
FAST_EVICT = {"evict_confirm": True, "evict_poll_interval": 0.1, "evict_retry_delay": 0.2, "evict_timeout": 120,
              "evict_replacement_timeout": 120, "evict_max_unavailable": "100%"}
RUN_TIMEOUT = 900


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with S3Server(tmp_path_factory.mktemp("s3server")) as server:
        yield server


# --- AWX's slicing and ansible-runner ---------------------------------------------------------------------------------


def awx_slice(hosts: dict[str, dict], number: int, count: int) -> dict[str, dict]:
    """The hosts of slice ``number`` (1-based) of ``count``, as AWX picks them: by name, every count-th from
    number-1."""
    names = sorted(hosts)[number - 1::count]
    return {name: hosts[name] for name in names}


def write_inventory(path: Path, hosts: dict[str, dict], group_vars: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"clusters": {"hosts": hosts, "vars": group_vars}}))
    return path


def run_sliced(tmp_path: Path, playbook: str, hosts: dict[str, dict], group_vars: dict[str, Any],
               count: int = SLICES) -> list[Any]:
    """Run ``playbook`` as ``count`` AWX slice jobs at once through ansible-runner; returns each slice's runner."""
    env = ansible_env({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    started = []
    for number in range(1, count + 1):
        data_dir = tmp_path / f"{Path(playbook).stem}-slice{number}"
        data_dir.mkdir()
        inventory = write_inventory(data_dir / "inventory.yml", awx_slice(hosts, number, count), group_vars)
        started.append(ansible_runner.run_async(
            private_data_dir=str(data_dir), project_dir=str(REPO / "playbooks"), playbook=playbook,
            inventory=str(inventory), envvars=env, ident=f"slice{number}", quiet=True, timeout=RUN_TIMEOUT))
    for thread, _runner in started:
        thread.join(RUN_TIMEOUT + 60)
    return [runner for _thread, runner in started]


def artifacts(runner: Any) -> dict[str, Any]:
    """The set_stats data of a slice job, from its playbook_on_stats event (what AWX stores as the job's
    artifacts)."""
    for event in runner.events:
        if event.get("event") == "playbook_on_stats":
            return event["event_data"].get("artifact_data") or {}
    return {}


def output(runner: Any) -> str:
    return runner.stdout.read()[-4000:]


# --- the clusters -----------------------------------------------------------------------------------------------------


def shop(kube: Any) -> list[dict[str, Any]]:
    kube.load([namespace_object("shop"), node("worker-1"), node("worker-2")])
    kube.create(replicaset("shop", "web", REPLICAS))
    return ready_replicas(kube, "shop", "web", REPLICAS)


def kube_system_uid(kube: Any) -> str:
    return kube.get("Namespace", None, "kube-system")["metadata"]["uid"]


def fleet_hosts(clusters: list[Any]) -> dict[str, dict]:
    return {f"cluster-{index}": {"ansible_connection": "local", "descheduler_fleet_connection": {
        "kubeconfig": str(kube.kubeconfig), "context": kube.context}}
        for index, kube in enumerate(clusters, start=1)}


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """A fleet summary without what differs between two runs of the same plans: the time each was planned and the
    link to the cluster's own report (each slice job writes its reports in its own directory)."""
    rows = sorted(({k: v for k, v in row.items() if k not in ("now", "report")} for row in summary["clusters"]),
                  key=lambda row: row["cluster"])
    return {**summary, "clusters": rows}


def fleet_report_of(tmp_path: Path, store: dict[str, Any], run_id: str) -> tuple[Any, dict[str, Any]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return run_tasks(tmp_path, [{"descheduler.fleet.fleet_report": {
        "run_store": store, "run_id": run_id, "report_dir": str(tmp_path / "fleet")},
        "register": "report", "ignore_errors": True}])


# --- the tests --------------------------------------------------------------------------------------------------------


def test_a_sliced_dry_run_and_evict_lose_no_cluster_and_give_the_unsliced_summary(
        fleet_clusters: Any, s3_server: S3Server, tmp_path: Path) -> None:
    clusters = fleet_clusters(CLUSTERS)
    pods = [pod for kube in clusters for pod in shop(kube)]
    wait_until_pods_are_older_than(pods, 1)
    hosts = fleet_hosts(clusters)
    uids = {name: kube_system_uid(kube) for name, kube in zip(hosts, clusters, strict=True)}
    common = {"dry_run_policy": AGED_OUT, "dry_run_compare_previous": False}

    # the unsliced run, with a directory store: the reference summary
    directory = {"path": str(tmp_path / "shared-store")}
    unsliced = tmp_path / "unsliced"
    unsliced.mkdir()
    [whole] = run_sliced(unsliced, "dry_run.yml", hosts, {
        **common, "dry_run_report_dir": str(unsliced / "reports"), "descheduler_fleet_run_store": directory,
        "descheduler_fleet_run_id": "unsliced"}, count=1)
    assert whole.rc == 0, output(whole)
    reference = json.loads((unsliced / "reports" / "fleet-summary.json").read_text())
    assert reference["clusters_ok"] == CLUSTERS and reference["evictions_total"] == CLUSTERS * REPLICAS

    # the same dry run as 3 AWX slices in parallel, into the S3 store; each slice reports in its own directory
    store = s3_server.run_store(prefix="fleet")
    runners = run_sliced(tmp_path, "dry_run.yml", hosts, {
        **common, "dry_run_report_dir": "{{ inventory_dir }}/reports",
        "descheduler_fleet_run_store": store, "descheduler_fleet_run_id": "sliced-1"})
    published: dict[str, Any] = {}
    for number, runner in enumerate(runners, start=1):
        assert runner.rc == 0, output(runner)
        plans = artifacts(runner)["dry_run_plans"]
        assert sorted(plans) == sorted(awx_slice(hosts, number, SLICES)), "a slice publishes only its clusters"
        published.update(plans)
    assert sorted(published) == sorted(hosts)
    for name, entry in published.items():
        assert "evictions" not in entry, "set_stats carries the summary and a reference, never the eviction list"
        assert entry["summary"]["total"] == REPLICAS and entry["run_id"] == "sliced-1"
        assert entry["plan_ref"].startswith(f"s3://{BUCKET}/fleet/runs/sliced-1/clusters/{name}/{uids[name]}/")

    # one object per cluster in the bucket, none lost, none twice
    keys = [item["Key"] for item in s3_server.client().list_objects_v2(
        Bucket=BUCKET, Prefix="fleet/runs/sliced-1/")["Contents"]]
    summaries = sorted(key.split("/")[4] for key in keys if key.endswith("/summary.json"))
    assert summaries == sorted(hosts)

    # one fleet summary of the sliced run, from the store: the unsliced run's
    _process, results = fleet_report_of(tmp_path / "report-sliced", store, "sliced-1")
    report = results["report"]
    assert not report.get("failed"), report.get("msg")
    assert report["run"]["planned_twice"] == [] and report["run"]["clusters"] == CLUSTERS
    assert comparable(report["fleet"]) == comparable(reference)
    _process, results = fleet_report_of(tmp_path / "report-unsliced", directory, "unsliced")
    assert comparable(results["report"]["fleet"]) == comparable(reference)

    # the evict step, sliced too, takes each cluster's plan from the store and stores its result beside it
    before = {name: {p["metadata"]["uid"] for p in pods_of(kube, "shop", "web")} for name, kube in
              zip(hosts, clusters, strict=True)}
    evict_dir = tmp_path / "evict"
    evict_dir.mkdir()
    runners = run_sliced(evict_dir, "evict.yml", hosts, {
        **FAST_EVICT, "evict_report_dir": "{{ inventory_dir }}/evict-reports",
        "descheduler_fleet_run_store": store, "descheduler_fleet_run_id": "sliced-1"})
    for runner in runners:
        assert runner.rc == 0, output(runner)
    for name, kube in zip(hosts, clusters, strict=True):
        after = {p["metadata"]["uid"] for p in ready_replicas(kube, "shop", "web", REPLICAS)}
        assert not after & before[name], f"{name}: every planned pod was evicted and replaced"

    _process, results = fleet_report_of(tmp_path / "report-after-evict", store, "sliced-1")
    evicted = {item["cluster"]: item["result"] for item in results["report"]["run"]["evict_results"]}
    assert sorted(evicted) == sorted(hosts)
    assert all(result["ok"] and result["counts"]["evicted"] == REPLICAS for result in evicted.values())
    assert all(result["plan_source"].startswith(f"s3://{BUCKET}/fleet/runs/sliced-1/") for result in evicted.values())


def test_a_cluster_planned_by_two_slices_is_reported_and_not_evicted(kube: Any, tmp_path: Path) -> None:
    pods = shop(kube)
    wait_until_pods_are_older_than(pods, 1)
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    # two inventory names for one cluster: AWX puts them in different slices
    hosts = {name: {"ansible_connection": "local", "descheduler_fleet_connection": connection}
             for name in ("prod", "prod-again")}
    store = {"path": str(tmp_path / "shared-store")}
    group_vars = {"dry_run_policy": AGED_OUT, "dry_run_compare_previous": False,
                  "dry_run_report_dir": "{{ inventory_dir }}/reports",
                  "descheduler_fleet_run_store": store, "descheduler_fleet_run_id": "twice"}
    for runner in run_sliced(tmp_path, "dry_run.yml", hosts, group_vars, count=2):
        assert runner.rc == 0, output(runner)

    _process, results = fleet_report_of(tmp_path / "report", store, "twice")
    report = results["report"]
    assert report["failed"] is True and "planned twice: prod, prod-again" in report["msg"]
    [group] = report["run"]["planned_twice"]
    assert group["by"] == "uid" and group["value"] == kube_system_uid(kube)
    rows = {row["cluster"]: row for row in report["fleet"]["clusters"]}
    assert rows["prod"]["status"] == rows["prod-again"]["status"] == "failed"
    assert "also planned as prod-again" in rows["prod"]["error"]
    assert (tmp_path / "report" / "fleet" / "fleet-summary.md").exists(), "the summary is written all the same"

    before = {p["metadata"]["uid"] for p in pods_of(kube, "shop", "web")}
    evict_dir = tmp_path / "evict"
    evict_dir.mkdir()
    for runner in run_sliced(evict_dir, "evict.yml", hosts, {**FAST_EVICT, **group_vars}, count=2):
        assert runner.rc != 0
        assert "planned twice in run twice" in output(runner)
    assert {p["metadata"]["uid"] for p in pods_of(kube, "shop", "web")} == before, "nothing was evicted"


def test_the_s3_store_refuses_a_missing_bucket_before_anything_is_written(s3_server: S3Server,
                                                                          tmp_path: Path) -> None:
    missing = {**s3_server.run_store(), "bucket": "no-such-bucket"}
    _process, results = run_tasks(tmp_path, [{"descheduler.fleet.run_store": {
        "operation": "check", "run_store": missing, "run_id": "r1", "cluster": "east"},
        "register": "checked", "ignore_errors": True}])
    checked = results["checked"]
    assert checked["failed"] is True and checked["field"] == "run_store.bucket"
    assert "cannot reach s3://no-such-bucket/" in checked["msg"] and "Check the bucket exists" in checked["msg"]


def test_the_fleet_report_playbook_fails_after_its_summary_when_a_cluster_failed(tmp_path: Path) -> None:
    """A run whose store holds a cluster whose dry run failed (saved as the dry_run role saves it):
    playbooks/fleet_report.yml shows the summary, then ends non-zero naming the failure; run again, the same."""
    from playbook import run_playbook

    store = {"path": str(tmp_path / "store")}
    failed = {"cluster": "broken", "ok": False, "error": "the API server did not answer", "report_dir": None,
              "plan": None}
    process, _results = run_tasks(tmp_path, [{"descheduler.fleet.run_store": {
        "operation": "save_plan", "run_store": store, "run_id": "one-failed", "cluster": "broken", "slice": "s1",
        "result": failed, "expected_cluster_uid": "2f0c4b1e-8d52-4c55-9d8e-3f1f6d2b7a10"}}])
    assert process.returncode == 0, process.stdout[-4000:]

    for attempt in range(2):
        report_dir = tmp_path / f"report-{attempt}"
        process = run_playbook(REPO / "playbooks" / "fleet_report.yml", "-e", json.dumps({
            "descheduler_fleet_run_store": store, "descheduler_fleet_run_id": "one-failed",
            "fleet_report_dir": str(report_dir)}))
        text = process.stdout + process.stderr
        assert process.returncode != 0, text[-4000:]
        summary = text.index("clusters failed: 1")
        assert text.index("1 cluster(s) of run one-failed failed; see", summary) > summary
        assert (report_dir / "fleet-summary.md").exists()
