"""Which plan the evict role executes (issue #46): a plan source the user gives is used, never passed over for another
plan of the same cluster found on the way, and two given together, or a variable the chosen source would ignore, fail
before any cluster call, naming both. Real ansible-playbook runs of playbooks/evict.yml on the test's API server (its
ReplicaSet controller and kubelet stand-in make the pods); the eviction requests are recorded at the fault proxy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import eviction_recorder, namespace_object, node, plan_of, ready_replicas, replicaset, sealed
from playbook import REPO, run_playbook, run_tasks

pytestmark = pytest.mark.faults

PLAYBOOK = REPO / "playbooks" / "evict.yml"
NAMESPACE = "source"


@pytest.fixture
def cluster(kube: Any, tmp_path: Path) -> dict[str, Any]:
    """One inventory host (c1) with 3 web pods; the dry run's report (plan.json under the report directory) plans
    all three, the reviewed plan file only the first."""
    kube.load([namespace_object(NAMESPACE), *(node(f"worker-{i}") for i in range(1, 4))])
    kube.create(replicaset(NAMESPACE, "web", 3))
    pods = ready_replicas(kube, NAMESPACE, "web", 3)
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": {"c1": {"descheduler_fleet_connection": connection}}}}))
    reports = tmp_path / "reports"
    (reports / "c1").mkdir(parents=True)
    (reports / "c1" / "plan.json").write_text(json.dumps(sealed(kube, plan_of(pods))))
    reviewed = tmp_path / "reviewed-plan.json"
    reviewed.write_text(json.dumps(sealed(kube, plan_of(pods[:1]))))
    return {"inventory": inventory, "reports": reports, "reviewed": reviewed, "pods": pods}


def play(cluster: dict[str, Any], tmp_path: Path, *args: str, **variables: Any) -> Any:
    extra = tmp_path / "extra-vars.json"
    extra.write_text(json.dumps({"evict_report_dir": str(cluster["reports"]), "evict_poll_interval": 0.1, **variables}))
    return run_playbook(PLAYBOOK, "-i", str(cluster["inventory"]), "-e", f"@{extra}", *args)


def test_the_plan_file_set_is_executed_not_another_plan_of_the_cluster(
    kube: Any, cluster: dict[str, Any], tmp_path: Path
) -> None:
    recorder = eviction_recorder(kube)
    process = play(cluster, tmp_path, "--check", evict_plan_file=str(cluster["reviewed"]))
    assert process.returncode == 0, process.stdout[-5000:]
    assert "c1: 1 eviction(s) planned" in process.stdout and f"(plan from {cluster['reviewed']})" in process.stdout
    assert [r.name for r in recorder.requests] == [cluster["pods"][0]["metadata"]["name"]]
    assert all(r.dry_run for r in recorder.requests)


CONFLICTS = [
    pytest.param(
        lambda c, t: {"descheduler_fleet_run_store": {"path": str(t / "store")}},
        [
            "Two plan sources for c1: evict_plan_file (",
            "and descheduler_fleet_run_store (run default)",
            "Set evict_plan_source to file or store to choose, or unset the other",
        ],
        id="file-and-run-store",
    ),
    pytest.param(
        lambda c, t: {"dry_run_plans": {"c1": {"ok": True, "plan_file": str(c["reports"] / "c1" / "plan.json")}}},
        [
            "Two plan sources for c1: evict_plan_file (",
            "and dry_run_plans[c1]",
            "Set evict_plan_source to file or stats to choose",
        ],
        id="file-and-published-plan",
    ),
    pytest.param(
        lambda c, t: {"evict_plan_source": "report"},
        [
            "evict_plan_file is set (",
            "but evict_plan_source is report, which does not read it",
            "Set evict_plan_source to file (or auto) to execute that file, or unset evict_plan_file",
        ],
        id="file-and-report-source",
    ),
    pytest.param(
        lambda c, t: {
            "evict_policy": {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": []}
        },
        [
            "evict_policy set, but the plan comes from file (evict_plan_source is auto)",
            "Set evict_plan_source=compute to plan with them, or unset them",
        ],
        id="policy-not-read",
    ),
]


@pytest.mark.parametrize(("variables", "expected"), CONFLICTS)
def test_two_plan_sources_or_an_ignored_variable_fail_before_any_eviction(
    kube: Any, cluster: dict[str, Any], tmp_path: Path, variables: Any, expected: list[str]
) -> None:
    recorder = eviction_recorder(kube)
    process = play(
        cluster, tmp_path, evict_confirm=True, evict_plan_file=str(cluster["reviewed"]), **variables(cluster, tmp_path)
    )
    assert process.returncode != 0
    text = " ".join(process.stdout.split())
    for part in expected:
        assert part in text, text[-3000:]
    assert recorder.requests == []
    assert sorted(p.name for p in cluster["reports"].rglob("*") if p.is_file()) == ["plan.json"]  # nothing written
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").rglob("*.json"))


def test_a_missing_plan_file_is_named_without_asking_to_set_it(
    kube: Any, cluster: dict[str, Any], tmp_path: Path
) -> None:
    recorder = eviction_recorder(kube)
    missing = tmp_path / "no-such-plan.json"
    process = play(cluster, tmp_path, evict_confirm=True, evict_plan_file=str(missing))
    assert process.returncode != 0
    text = " ".join(process.stdout.split())
    assert f"evict_plan_file: {missing} does not exist on this controller" in text, text[-3000:]
    assert "Give the path of the reviewed plan.json" in text and "set evict_plan_file" not in text
    assert recorder.requests == []
    assert sorted(p.name for p in cluster["reports"].rglob("*") if p.is_file()) == ["plan.json"]


def test_an_unknown_run_id_or_cluster_of_the_run_store_fails_naming_the_closest(
    kube: Any, cluster: dict[str, Any], tmp_path: Path
) -> None:
    """The run store holds run run-1 with the plan of cluster c-1 (an inventory host since renamed c1): a misspelt run
    id, and a cluster the run never planned, fail naming the closest existing one; nothing is evicted or written."""
    store = {"path": str(tmp_path / "store")}
    saved, _results = run_tasks(
        tmp_path,
        [
            {
                "descheduler.fleet.run_store": {
                    "operation": "save_plan",
                    "run_store": store,
                    "run_id": "run-1",
                    "cluster": "c-1",
                    "slice": "s1",
                    "result": {"ok": True, "error": None},
                    "plan_file": str(cluster["reviewed"]),
                }
            }
        ],
    )
    assert saved.returncode == 0, saved.stdout[-3000:]
    stored = sorted(p.relative_to(tmp_path / "store") for p in (tmp_path / "store").rglob("*") if p.is_file())
    recorder = eviction_recorder(kube)

    process = play(
        cluster, tmp_path, evict_confirm=True, descheduler_fleet_run_store=store, descheduler_fleet_run_id="run-l"
    )
    assert process.returncode != 0
    assert "run_id: 'run-l' is no run in the run store" in process.stdout, process.stdout[-3000:]
    assert "did you mean 'run-1'?" in process.stdout and "give the run id the dry run used" in process.stdout

    process = play(
        cluster, tmp_path, evict_confirm=True, descheduler_fleet_run_store=store, descheduler_fleet_run_id="run-1"
    )
    assert process.returncode != 0
    assert "cluster: 'c1' has no plan in run run-1" in process.stdout, process.stdout[-3000:]
    assert "did you mean 'c-1'?" in process.stdout and "give the inventory host name" in process.stdout

    reported, results = run_tasks(
        tmp_path,
        [
            {
                "descheduler.fleet.fleet_report": {
                    "run_store": store,
                    "run_id": "run-l",
                    "report_dir": str(tmp_path / "fleet"),
                },
                "register": "report",
                "ignore_errors": True,
            }
        ],
    )
    assert results["report"]["failed"] is True and results["report"]["field"] == "run_id", results["report"]
    assert "did you mean 'run-1'?" in results["report"]["msg"]
    assert not (tmp_path / "fleet").exists()  # no fleet summary of a run that does not exist

    assert recorder.requests == []
    assert sorted(p.relative_to(tmp_path / "store") for p in (tmp_path / "store").rglob("*") if p.is_file()) == stored
    assert sorted(p.name for p in cluster["reports"].rglob("*") if p.is_file()) == ["plan.json"]
