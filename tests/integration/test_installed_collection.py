"""The collection as users get it: the tarball ansible-galaxy builds, installed into an empty collections path.

Everything here runs from that installed copy with an environment that cannot see this checkout (no PYTHONPATH, a
collections path holding only the installed collection, a scratch working directory): the dry-run demo, ansible-doc
for every module and role entry point, and the execution environment's dependency introspection.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from playbook import REPO, executable, run_playbook

GALAXY = yaml.safe_load((REPO / "galaxy.yml").read_text())
# Every cluster of the example fleet but large-generated, whose snapshot `make demo` writes (the others are bundled).
DEMO_LIMIT = "all:!large-generated"
DEMO_INVENTORY = yaml.safe_load((REPO / "examples" / "inventory.yml").read_text())
DEMO_CLUSTERS = sorted(set(DEMO_INVENTORY["clusters"]["hosts"]) - {"large-generated"})


def run(command: list[str], env: dict[str, str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(cwd), timeout=timeout,
                          check=False)


def isolated_env(collections: Path, home: Path) -> dict[str, str]:
    """An environment in which the only descheduler.fleet is the installed one."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("ANSIBLE_") and key != "PYTHONPATH"}
    env.update({
        "HOME": str(home),
        "ANSIBLE_HOME": str(home / ".ansible"),
        "ANSIBLE_COLLECTIONS_PATH": str(collections),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,  # the Python with the kubernetes client
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
    })
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("installed")
    home = work / "home"
    home.mkdir()
    env = isolated_env(work / "collections", home)
    built = run([executable("ansible-galaxy"), "collection", "build", "--output-path", str(work / "dist"), str(REPO)],
                env, work)
    assert built.returncode == 0, built.stdout + built.stderr
    tarball = work / "dist" / f"descheduler-fleet-{GALAXY['version']}.tar.gz"
    assert tarball.is_file(), built.stdout
    done = run([executable("ansible-galaxy"), "collection", "install", str(tarball), "-p", str(work / "collections")],
               env, work)
    assert done.returncode == 0, done.stdout + done.stderr
    root = work / "collections" / "ansible_collections" / "descheduler" / "fleet"
    return {"work": work, "env": env, "tarball": tarball, "root": root}


def test_tarball_holds_the_collection_and_nothing_else(installed: dict[str, Any]) -> None:
    with tarfile.open(installed["tarball"]) as archive:
        names = set(archive.getnames())
    for needed in ("MANIFEST.json", "README.md", "requirements.txt", "bindep.txt", "meta/runtime.yml",
                   "meta/execution-environment.yml", "CHANGELOG.md", "changelogs/changelog.yaml",
                   "plugins/modules/plan.py", "roles/dry_run/meta/argument_specs.yml", "playbooks/dry_run.yml",
                   "examples/inventory.yml", "examples/snapshots/plain-k8s.yaml"):
        assert needed in names, needed
    tops = {name.split("/")[0] for name in names}
    for absent in ("tests", "build", "benchmarks", ".ci", ".venv", ".git", "Makefile", "execution-environment.yml",
                   "requirements-dev.txt"):
        assert absent not in tops, absent
    assert not [n for n in names if n.startswith(("examples/out", "changelogs/fragments")) or "__pycache__" in n]
    manifest = json.loads((installed["root"] / "MANIFEST.json").read_text())
    assert manifest["collection_info"]["version"] == GALAXY["version"]


def demo(installed: dict[str, Any], *extra: str) -> subprocess.CompletedProcess:
    root: Path = installed["root"]
    return run([executable("ansible-playbook"), "-i", str(root / "examples" / "inventory.yml"),
                "descheduler.fleet.dry_run", "-l", DEMO_LIMIT, *extra], installed["env"], installed["work"])


def test_demo_runs_from_the_installed_collection_like_from_the_checkout(installed: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    process = demo(installed, "-e", f"dry_run_report_dir={tmp_path / 'installed'}",
                   "-e", "dry_run_fail_on_cluster_error=true")
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-2000:]
    # the roles and modules that ran are the installed ones: the only descheduler.fleet Ansible can find
    listed = run([executable("ansible-galaxy"), "collection", "list", "descheduler.fleet"], installed["env"],
                 installed["work"]).stdout
    assert [line for line in listed.splitlines() if line.startswith("# ")] == \
        [f"# {installed['work'] / 'collections' / 'ansible_collections'}"]
    checkout = run_playbook(REPO / "playbooks" / "dry_run.yml", "-i", str(REPO / "examples" / "inventory.yml"),
                            "-l", DEMO_LIMIT, "-e", f"dry_run_report_dir={tmp_path / 'checkout'}")
    assert checkout.returncode == 0, checkout.stdout[-4000:]
    for cluster in DEMO_CLUSTERS:
        ours = json.loads((tmp_path / "installed" / cluster / "plan.json").read_text())
        theirs = json.loads((tmp_path / "checkout" / cluster / "plan.json").read_text())
        assert ours["evictions"] == theirs["evictions"], cluster
    summary = json.loads((tmp_path / "installed" / "fleet-summary.json").read_text())
    assert (summary["clusters_ok"], summary["clusters_failed"]) == (len(DEMO_CLUSTERS), 0)
    assert summary["evictions_total"] > 0


def test_old_variable_names_are_refused_by_name(installed: dict[str, Any], tmp_path: Path) -> None:
    process = demo(installed, "-e", f"dry_run_report_dir={tmp_path}", "-e", "descheduler_kubeconfig=/somewhere")
    assert process.returncode != 0
    assert "descheduler_kubeconfig: variable name(s) from before descheduler.fleet 0.2.0" in process.stdout
    # refused before planning anything: every cluster is in the summary as failed, with the reason, and none planned
    summary = json.loads((tmp_path / "fleet-summary.json").read_text())
    assert summary["clusters_ok"] == 0 and summary["clusters_failed"] == len(summary["clusters"]) > 0
    assert all("descheduler_kubeconfig: variable name(s) from before" in row["error"] for row in summary["clusters"])
    assert not any(path.is_dir() for path in tmp_path.iterdir())


def test_ansible_doc_renders_every_module_and_role(installed: dict[str, Any]) -> None:
    root: Path = installed["root"]
    modules = sorted(p.stem for p in (root / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
    roles = sorted(p.name for p in (root / "roles").iterdir() if (p / "meta" / "argument_specs.yml").exists())
    assert {"plan", "evict"} <= set(modules) and {"dry_run", "evict", "install", "tune", "uninstall"} <= set(roles)
    for module in modules:
        shown = run([executable("ansible-doc"), "--json", f"descheduler.fleet.{module}"], installed["env"],
                    installed["work"])
        assert shown.returncode == 0, shown.stderr
        doc = json.loads(shown.stdout)[f"descheduler.fleet.{module}"]
        assert doc["doc"]["short_description"] and doc["examples"] and doc["return"], module
    for role in roles:
        spec = yaml.safe_load((root / "roles" / role / "meta" / "argument_specs.yml").read_text())
        shown = run([executable("ansible-doc"), "-t", "role", f"descheduler.fleet.{role}"], installed["env"],
                    installed["work"])
        assert shown.returncode == 0, shown.stderr
        for option in spec["argument_specs"]["main"]["options"]:
            assert option in shown.stdout, (role, option)


def requirement_names(lines: list[str]) -> list[str]:
    names = []
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            names.append(re.split(r"[<>=!~ \[;]", line, maxsplit=1)[0].lower())
    return names


def test_execution_environment_takes_exactly_the_collections_requirements(installed: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    from ansible_builder._target_scripts.introspect import EXCLUDE_REQUIREMENTS

    shown = run([executable("ansible-builder"), "introspect", str(installed["work"] / "collections")],
                installed["env"], installed["work"])
    assert shown.returncode == 0, shown.stderr
    found = yaml.safe_load(shown.stdout)
    wanted = [line for line in (REPO / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    # ansible-builder leaves out what an image always has (PyYAML comes with ansible-core); the rest is ours
    names = requirement_names(wanted)
    expected = [w for w, name in zip(wanted, names, strict=True) if name not in EXCLUDE_REQUIREMENTS]
    assert [line.split("#")[0].strip() for line in found["python"]] == expected
    assert found["system"] == requirement_names((REPO / "bindep.txt").read_text().splitlines()) == []

    context = tmp_path / "context"
    (tmp_path / "build" / "dist").mkdir(parents=True)
    (tmp_path / "build" / "dist" / "descheduler-fleet.tar.gz").write_bytes(installed["tarball"].read_bytes())
    (tmp_path / "execution-environment.yml").write_text((REPO / "execution-environment.yml").read_text())
    created = run([executable("ansible-builder"), "create", "--file", "execution-environment.yml", "--context",
                   str(context), "--output-filename", "Containerfile"], installed["env"], tmp_path)
    assert created.returncode == 0, created.stdout + created.stderr
    assert (context / "_build" / "collections" / "descheduler-fleet.tar.gz").read_bytes() == \
        installed["tarball"].read_bytes()
    assert "ansible-galaxy" in (context / "Containerfile").read_text()


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-")[0].split("."))


def test_galaxy_version_is_the_newest_release_or_the_next_one_in_development() -> None:
    """galaxy.yml says X.Y.Z once X.Y.Z is released (antsibull-changelog release), X.Y.Z-devN while it is coming."""
    changes = yaml.safe_load((REPO / "changelogs" / "changelog.yaml").read_text())
    newest = max(changes["releases"], key=release_key)
    version = str(GALAXY["version"])
    assert re.fullmatch(r"\d+\.\d+\.\d+(-dev\d+)?", version), version
    if "-dev" in version:
        assert release_key(version) > release_key(newest)
    else:
        assert version == newest
    assert f"v{newest}".replace(".", "\\.") in (REPO / "CHANGELOG.md").read_text()


def test_the_demo_what_if_runs_from_the_installed_collection(installed: dict[str, Any], tmp_path: Path) -> None:
    """`make demo`'s what-if: the example inventory and examples/whatif-candidates.yml, through the installed role."""
    root: Path = installed["root"]
    candidates = root / "examples" / "whatif-candidates.yml"
    process = run([executable("ansible-playbook"), "-i", str(root / "examples" / "inventory.yml"),
                   "descheduler.fleet.whatif", "-l", DEMO_LIMIT, "-e", f"@{candidates}",
                   "-e", f"whatif_report_dir={tmp_path}"], installed["env"], installed["work"])
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-2000:]
    fleet = json.loads((tmp_path / "whatif-fleet.json").read_text())
    assert fleet["clusters"] and all(row["ok"] and row["best"] for row in fleet["clusters"])
    for row in fleet["clusters"]:
        assert [c["name"] for c in row["candidates"]] == ["lifecycle-medium", "lifecycle-high",
                                                          "affinity-and-lifecycle"]
        assert (tmp_path / row["cluster"] / "whatif.html").exists()
