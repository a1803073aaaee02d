"""The dry_run role over a small fleet of snapshot clusters, one of them broken, through ansible-playbook."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from playbook import REPO, run_playbook

sys.path.insert(0, str(REPO / "examples"))
from generate_cluster import build_cluster  # noqa: E402

NOW = "2026-11-22T12:00:00Z"


def inventory(tmp_path: Path) -> Path:
    hosts = {
        "plain": {"dry_run_snapshot": str(REPO / "examples/snapshots/plain-k8s.yaml"),
                  "dry_run_policy_file": str(REPO / "examples/policies/plain-k8s-policy.yaml")},
        "openshift": {"dry_run_snapshot": str(REPO / "examples/snapshots/openshift-prod.yaml"),
                      "dry_run_kubedescheduler_file":
                          str(REPO / "examples/policies/openshift-kubedescheduler.yaml")},
        "broken": {"dry_run_snapshot": str(tmp_path / "does-not-exist.yaml"),
                   "dry_run_policy_file": str(REPO / "examples/policies/plain-k8s-policy.yaml")},
    }
    for variables in hosts.values():
        variables["ansible_connection"] = "local"
    document = {"clusters": {"hosts": hosts, "vars": {"dry_run_report_dir": str(tmp_path / "out"),
                                                      "dry_run_now": NOW}}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_failing_cluster_is_marked_and_does_not_stop_the_others(tmp_path: Path) -> None:
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory(tmp_path)))
    assert process.returncode != 0, "a cluster failed: the playbook (an AWX job) must not end green"
    assert "broken: the dry run failed: snapshot: file" in process.stdout
    out = tmp_path / "out"
    summary = json.loads((out / "fleet-summary.json").read_text())
    rows = {row["cluster"]: row for row in summary["clusters"]}
    assert rows["broken"]["status"] == "failed"
    assert "does-not-exist.yaml" in rows["broken"]["error"]
    for name in ("plain", "openshift"):
        assert rows[name]["status"] == "ok"
        plan = json.loads((out / name / "plan.json").read_text())
        assert rows[name]["evictions"] == plan["summary"]["total"] == len(plan["evictions"]) > 0
        assert (out / name / "plan.html").exists() and (out / name / "plan.md").exists()
    assert not (out / "broken").exists()
    assert (summary["clusters_ok"], summary["clusters_failed"]) == (2, 1)
    markdown = (out / "fleet-summary.md").read_text()
    assert "broken" in markdown and "failed" in markdown


def test_the_failure_can_be_only_reported_when_asked(tmp_path: Path) -> None:
    """... and the reports can come from the team's own templates (dry_run_report_template_dir)."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "plan.md").write_text("# our plan: {{ plan.summary.total }} evictions\n")
    (templates / "fleet.md").write_text("# our fleet: failed {{ failed_names | join(',') }}\n")
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory(tmp_path)),
                           "-e", "dry_run_fail_on_cluster_error=false",
                           "-e", f"dry_run_report_template_dir={templates}")
    assert process.returncode == 0, process.stdout[-3000:]
    assert "Clusters failed: 1" in process.stdout
    out = tmp_path / "out"
    summary = json.loads((out / "fleet-summary.json").read_text())
    assert (summary["clusters_ok"], summary["clusters_failed"]) == (2, 1)
    assert (out / "fleet-summary.md").read_text() == "# our fleet: failed broken\n"
    plan = json.loads((out / "plain" / "plan.json").read_text())
    assert (out / "plain" / "plan.md").read_text() == f"# our plan: {plan['summary']['total']} evictions\n"
    assert "<html" in (out / "plain" / "plan.html").read_text().lower(), "the HTML stays the shipped one"


def test_protected_openshift_namespaces_are_spared(tmp_path: Path) -> None:
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory(tmp_path)), "--limit", "openshift")
    assert process.returncode == 0, process.stdout[-3000:]
    plan = json.loads((tmp_path / "out" / "openshift" / "plan.json").read_text())
    assert not [e for e in plan["evictions"] if e["namespace"].startswith("openshift-")]
    assert {"AffinityAndTaints", "TopologyAndDuplicates", "LifecycleAndUtilization"} == set(
        plan["summary"]["by_profile"])


def test_the_eviction_list_stays_in_the_plan_file_not_in_the_controller(tmp_path: Path) -> None:
    """The role asks the plan module for the counts only: the eviction list is in plan.json, never in a task result
    (what -v shows is what the controller holds for each host)."""
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory(tmp_path)), "--limit", "plain", "-v")
    assert process.returncode == 0, process.stdout[-3000:]
    plan = json.loads((tmp_path / "out" / "plain" / "plan.json").read_text())
    assert plan["evictions"] and plan["evictions"][0]["uid"]
    assert f'"total": {plan["summary"]["total"]}' in process.stdout, "-v shows the plan task's result"
    assert plan["evictions"][0]["uid"] not in process.stdout
    assert '"evictions": [' not in process.stdout


def test_samples_and_placement_reach_the_plan(tmp_path: Path) -> None:
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory(tmp_path)), "--limit", "plain",
                           "-e", "dry_run_samples=4", "-e", "dry_run_seed=3", "-e", "dry_run_placement=true")
    assert process.returncode == 0, process.stdout[-3000:]
    plan = json.loads((tmp_path / "out" / "plain" / "plan.json").read_text())
    assert plan["sampling"]["samples"] == 4 and plan["sampling"]["seed"] == 3
    assert all(0 < e["frequency"] <= 1 for e in plan["evictions"])
    assert all("placement" in e for e in plan["evictions"])


def test_a_cluster_whose_cycle_would_be_skipped_fails_when_asked(tmp_path: Path) -> None:
    """An empty snapshot plans 0 evictions because the descheduler skips the cycle: with dry_run_fail_on that
    cluster fails (its report and the summary still written), the others do not."""
    empty = tmp_path / "empty.yaml"
    empty.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": []}))
    document = yaml.safe_load(inventory(tmp_path).read_text())
    hosts = document["clusters"]["hosts"]
    hosts["broken"]["dry_run_snapshot"] = str(empty)
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document))
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(tmp_path / "inventory.yml"), "--limit",
                           "plain,broken", "-e", json.dumps({"dry_run_fail_on": ["cycle_skipped"]}))
    assert process.returncode != 0, process.stdout[-3000:]
    summary = json.loads((tmp_path / "out" / "fleet-summary.json").read_text())
    rows = {row["cluster"]: row for row in summary["clusters"]}
    assert rows["plain"]["status"] == "ok"
    assert rows["broken"]["status"] == "failed"
    assert "the plan met fail_on (cycle_skipped): the descheduler skips this cycle" in rows["broken"]["error"]
    assert (tmp_path / "out" / "broken" / "plan.json").exists()


def test_a_second_run_says_what_changed_since_the_first(tmp_path: Path) -> None:
    """The same cluster planned twice, its snapshot changed in between: each cluster's result and the fleet summary
    say which evictions are new, gone or moved since the previous run's plan.json, which the second run replaces."""
    snapshot = tmp_path / "cluster.json"
    document = {"clusters": {"hosts": {"grown": {"ansible_connection": "local", "dry_run_snapshot": str(snapshot),
                                                 "dry_run_policy_file": str(REPO / "examples/policies/"
                                                                            "plain-k8s-policy.yaml")}},
                             "vars": {"dry_run_report_dir": str(tmp_path / "out"), "dry_run_now": NOW}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document))
    plans = []
    for nodes in (6, 9):  # the cluster changes between the runs (a bigger one from the same seed)
        snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                        "items": build_cluster(nodes, 8, seed=3, now=NOW)}))
        process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(tmp_path / "inventory.yml"))
        assert process.returncode == 0, process.stdout[-3000:]
        plans.append(json.loads((tmp_path / "out" / "grown" / "plan.json").read_text()))
    first, second = plans
    assert first["since_previous"] is None, "nothing to compare on the first run"
    changes = second["since_previous"]
    pods = {f"{e['namespace']}/{e['name']}" for e in first["evictions"]}, \
        {f"{e['namespace']}/{e['name']}" for e in second["evictions"]}
    assert changes["new"] == sorted(pods[1] - pods[0]) and changes["gone"] == sorted(pods[0] - pods[1])
    assert (changes["evictions_before"], changes["evictions_after"]) == (len(first["evictions"]),
                                                                         len(second["evictions"]))
    assert changes["previous_now"] == first["now"]
    summary = (tmp_path / "out" / "fleet-summary.md").read_text()
    assert (f"- **grown** (since {first['now']}): {len(changes['new'])} new, {len(changes['gone'])} gone, "
            f"{len(changes['moved'])} moved to another plugin") in summary
