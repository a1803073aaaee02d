"""What every role checks on an inventory host before it talks to the host's cluster (descheduler.fleet.preflight),
through the playbooks a user runs, against the suite's real control plane: a misspelt variable is refused with the
name it was probably meant to be, a host that names no cluster is refused unless the default kubeconfig is chosen on
purpose, a host pinned to another cluster's kube-system UID is refused before anything is read or written, and the
playbooks find the kubernetes client without an interpreter setting of their own."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml
from evict_helpers import node
from playbook import REPO, run_playbook

POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "duplicates", "pluginConfig": [{"name": "DefaultEvictor", "args": {}}, {"name": "RemoveDuplicates"}],
    "plugins": {"balance": {"enabled": ["RemoveDuplicates"]}}}]}


def write_inventory(tmp_path: Path, hosts: dict[str, dict[str, Any]], **group_vars: Any) -> Path:
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"clusters": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "dry_run_report_dir": str(tmp_path / "out"),
        "whatif_report_dir": str(tmp_path / "whatif"),
        "dry_run_policy": POLICY, **group_vars}}}))
    return path


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def kube_system_uid(kube: Any) -> str:
    return kube.get("Namespace", None, "kube-system")["metadata"]["uid"]


def fleet_summary(tmp_path: Path) -> dict[str, dict[str, Any]]:
    summary = json.loads((tmp_path / "out" / "fleet-summary.json").read_text())
    return {row["cluster"]: row for row in summary["clusters"]}


def test_a_misspelt_variable_stops_that_host_with_the_name_it_meant(kube: Any, tmp_path: Path) -> None:
    kube.load([node("worker-1"), node("worker-2")])  # a cluster the good host can plan a cycle of
    inventory = write_inventory(tmp_path, {
        "good": {"descheduler_fleet_connection": connection(kube)},
        "typo": {"descheduler_fleet_conection": connection(kube)},
        "role-typo": {"descheduler_fleet_connection": connection(kube), "dry_run_snapshots": "/srv/snap.yaml"},
    })
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory))
    assert process.returncode != 0
    assert ("typo: unknown variable(s) for role descheduler.fleet.dry_run: descheduler_fleet_conection (did you mean "
            "descheduler_fleet_connection?)") in process.stdout
    assert ("role-typo: unknown variable(s) for role descheduler.fleet.dry_run: dry_run_snapshots (did you mean "
            "dry_run_snapshot?)") in process.stdout
    rows = fleet_summary(tmp_path)
    assert rows["good"]["status"] == "ok"
    assert rows["typo"]["status"] == rows["role-typo"]["status"] == "failed", "the refused hosts are in the summary"
    assert "descheduler_fleet_conection (did you mean descheduler_fleet_connection?)" in rows["typo"]["error"]
    assert "dry_run_snapshots (did you mean dry_run_snapshot?)" in rows["role-typo"]["error"]
    assert not (tmp_path / "out" / "typo").exists() and not (tmp_path / "out" / "role-typo").exists()

    # the evict role refuses the same host before it computes or executes anything (check mode included)
    process = run_playbook(REPO / "playbooks/evict.yml", "-i", str(inventory), "--check", "--limit", "typo",
                           "-e", "evict_plan_source=compute")
    assert process.returncode != 0
    assert "typo: unknown variable(s) for role descheduler.fleet.evict: descheduler_fleet_conection" in process.stdout


def test_a_host_that_names_no_cluster_is_refused_unless_the_default_kubeconfig_is_chosen(
        kube: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    config = yaml.safe_load(Path(kube.kubeconfig).read_text())
    config["current-context"] = kube.context
    (home / ".kube" / "config").write_text(yaml.safe_dump(config))  # the default kubeconfig reaches the cluster
    environment = {"HOME": str(home), "KUBECONFIG": ""}

    inventory = write_inventory(tmp_path, {"nameless": {}})
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(inventory), env=environment)
    assert process.returncode != 0
    assert "nameless: this inventory host names no cluster" in process.stdout
    assert "descheduler_fleet_use_default_kubeconfig: true" in process.stdout
    assert not (tmp_path / "out" / "nameless").exists()

    chosen = write_inventory(tmp_path, {"nameless": {"descheduler_fleet_use_default_kubeconfig": True}})
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(chosen), env=environment)
    assert process.returncode == 0, process.stdout[-3000:]
    plan = json.loads((tmp_path / "out" / "nameless" / "plan.json").read_text())
    assert plan["cluster_identity"]["uid"] == kube_system_uid(kube)


def test_a_host_pinned_to_another_cluster_is_refused_by_every_role(kube: Any, tmp_path: Path) -> None:
    other = "00000000-0000-4000-8000-000000000000"
    pinned = {"descheduler_fleet_connection": connection(kube), "descheduler_fleet_cluster_uid": other}
    inventory = write_inventory(tmp_path, {"pinned": pinned})
    expected = (f"pinned: descheduler_fleet_cluster_uid: this is not the intended cluster. Expected kube-system UID "
                f"{other}, but the cluster reached is kube-system UID {kube_system_uid(kube)}")
    for playbook, extra in (("dry_run.yml", ()), ("evict.yml", ("--check", "-e", "evict_plan_source=compute")),
                            ("install.yml", ()), ("uninstall.yml", ()), ("tune.yml", ()),
                            ("secondary_scheduler.yml", ()), ("whatif.yml", ())):
        process = run_playbook(REPO / "playbooks" / playbook, "-i", str(inventory), *extra)
        assert process.returncode != 0, playbook
        assert expected in process.stdout, (playbook, process.stdout[-3000:])
    assert kube.get("Namespace", None, "openshift-kube-descheduler-operator") is None, "nothing was installed"
    assert kube.get("Namespace", None, "kube-descheduler") is None

    right = write_inventory(tmp_path, {"pinned": {**pinned, "descheduler_fleet_cluster_uid": kube_system_uid(kube)}})
    process = run_playbook(REPO / "playbooks/dry_run.yml", "-i", str(right))
    assert process.returncode == 0, process.stdout[-3000:]


def test_the_playbooks_find_the_kubernetes_client_without_an_interpreter_setting(kube: Any, tmp_path: Path) -> None:
    """The README's venv runs ansible-playbook; interpreter discovery alone would pick a system Python without the
    kubernetes client. Every role runs its modules with the Python that runs Ansible."""
    inventory = write_inventory(tmp_path, {"c1": {"descheduler_fleet_connection": connection(kube)}})
    variables = tmp_path / "evict-vars.json"
    variables.write_text(json.dumps({"evict_plan_source": "compute", "evict_policy": POLICY,
                                     "evict_report_dir": str(tmp_path / "out")}))
    process = run_playbook(REPO / "playbooks/evict.yml", "-i", str(inventory), "--check", "-e", f"@{variables}",
                           env={"ANSIBLE_PYTHON_INTERPRETER": "auto_silent", "PATH": _path_without_the_venv()})
    assert process.returncode == 0, process.stdout[-3000:]
    assert "is required" not in process.stdout
    assert json.loads((tmp_path / "out" / "c1" / "evict-result.json").read_text())["check_mode"] is True


def _path_without_the_venv() -> str:
    venv_bin = str(Path(sys.executable).parent)
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin)


def test_preflight_takes_the_connection_of_the_cluster_group_s_module_defaults(kube: Any, tmp_path: Path) -> None:
    """preflight is in the `descheduler.fleet.cluster` action group (README): the connection a play sets once for the
    group names the cluster it checks, here against the host's pinned kube-system UID."""
    role = tmp_path / "roles" / "checks"
    (role / "meta").mkdir(parents=True)
    (role / "tasks").mkdir()
    (role / "meta" / "argument_specs.yml").write_text(yaml.safe_dump({"argument_specs": {"main": {"options": {}}}}))
    (role / "tasks" / "main.yml").write_text(yaml.safe_dump([{
        "name": "Check", "descheduler.fleet.preflight": {"role": "checks"}, "register": "checked"},
        {"name": "Show", "ansible.builtin.debug": {"msg": "pinned uid {{ checked.cluster_identity.uid }}"}}]))
    play = {"name": "Checks", "hosts": "localhost", "connection": "local", "gather_facts": False,
            "vars": {"descheduler_fleet_cluster_uid": kube_system_uid(kube)}, "roles": ["checks"]}
    grouped, bare = tmp_path / "grouped.yml", tmp_path / "bare.yml"
    defaults = {"group/descheduler.fleet.cluster": connection(kube)}
    grouped.write_text(yaml.safe_dump([{**play, "module_defaults": defaults}]))
    bare.write_text(yaml.safe_dump([play]))
    environment = {"ANSIBLE_ROLES_PATH": str(tmp_path / "roles"), "KUBECONFIG": ""}

    process = run_playbook(grouped, env=environment)
    assert process.returncode == 0, process.stdout[-3000:]
    assert f"pinned uid {kube_system_uid(kube)}" in process.stdout
    process = run_playbook(bare, env=environment)
    assert process.returncode != 0
    assert "this inventory host names no cluster" in process.stdout
