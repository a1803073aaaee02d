"""Run real ansible-playbook processes against the collection (as a user would), and read what they returned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from callback_plugins.registered_results import RESULTS_FACT, RESULTS_TASK

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS = REPO / "build" / "collections"
CALLBACK_PLUGINS = Path(__file__).resolve().parent / "callback_plugins"


def ansible_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "PYTHONPATH": str(COLLECTIONS),
    })
    env.update(extra or {})
    return env


def executable(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def run_playbook(playbook: Path, *args: str, env: dict[str, str] | None = None,
                 timeout: int = 600) -> subprocess.CompletedProcess:
    command = [executable("ansible-playbook"), str(playbook), *args]
    return subprocess.run(command, capture_output=True, text=True, env=ansible_env(env), timeout=timeout,
                          cwd=str(REPO), check=False)


def results_callback_env(results_file: Path) -> dict[str, str]:
    """What enables callback_plugins/registered_results.py and tells it where to write."""
    return {"ANSIBLE_CALLBACK_PLUGINS": str(CALLBACK_PLUGINS), "ANSIBLE_CALLBACKS_ENABLED": "registered_results",
            "DESCHEDULER_FLEET_TEST_RESULTS": str(results_file)}


def run_tasks(tmp_path: Path, tasks: list[dict], *, check: bool = False, env: dict[str, str] | None = None,
              hosts: str = "localhost") -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """Run tasks on localhost; every task may `register`; returns the process and the registered results."""
    results_file = tmp_path / "results.json"
    results_file.unlink(missing_ok=True)
    registered = [t["register"] for t in tasks if "register" in t]
    dump = {  # written to results_file by callback_plugins/registered_results.py
        "name": RESULTS_TASK,
        "ansible.builtin.set_fact": {
            RESULTS_FACT: "{{ {" + ", ".join(f"'{r}': {r} | default(None)" for r in registered) + "} | to_json }}",
        },
        "check_mode": False,
    }
    play = [{"hosts": hosts, "connection": "local", "gather_facts": False,
             "tasks": [{"block": tasks, "always": [dump]}]}]
    playbook = tmp_path / "playbook.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    args = ["-i", "localhost,"] + (["--check"] if check else [])
    process = run_playbook(playbook, *args, env={**results_callback_env(results_file), **(env or {})})
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    return process, results
