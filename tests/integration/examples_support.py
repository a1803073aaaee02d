"""The documentation's examples as tests (test_examples.py): every task of every module's EXAMPLES block, read from
the module's source, run by a real ansible-playbook.

What is changed in an example, and nothing else (`localize`):
- connection details: every `kubeconfig` and `context` in a `descheduler.fleet` task's options (at any depth, e.g. in
  a rollout's `connection`) become the test cluster's, and the play sets them for the modules that take none (the
  `group/descheduler.fleet.cluster` `module_defaults` the README shows);
- absolute file paths (`/srv/reports/prod`, `/tmp/plans/prod`) move under the test's directory, which is also the
  play's working directory and the playbook's, so relative paths and `lookup('file', ...)` resolve there.

An example may use what an earlier task of its block registered or wrote: the test runs those tasks first, as a
user copying the block would (`prerequisites`: the registered names it mentions, plus `NEEDS` for files).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from callback_plugins.registered_results import RESULTS_FACT, RESULTS_TASK
from playbook import REPO, ansible_env, executable, results_callback_env

MODULES = REPO / "plugins" / "modules"
COLLECTION = "descheduler.fleet."
TARGET = "example_under_test"  # the register of the example when it has none of its own


@dataclass(frozen=True)
class Example:
    module: str  # the module whose EXAMPLES hold it
    name: str  # the task's name
    index: int  # its place in the block
    block: tuple[dict[str, Any], ...]  # the whole block, as documented

    @property
    def task(self) -> dict[str, Any]:
        return self.block[self.index]

    @property
    def test_id(self) -> str:
        return f"{self.module}:{self.name}"


def examples_of(module_file: Path) -> list[Example]:
    """The tasks of a module's EXAMPLES, read from its source without importing it."""
    tree = ast.parse(module_file.read_text())
    text = next(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets)
    )
    block = tuple(yaml.safe_load(text))
    module = module_file.stem
    for task in block:
        assert task.get("name"), f"an example of {module} has no name: {task}"
    return [Example(module, task["name"], index, block) for index, task in enumerate(block)]


def all_examples() -> list[Example]:
    return [
        example
        for module in sorted(MODULES.glob("*.py"))
        if module.name != "__init__.py"
        for example in examples_of(module)
    ]


def prerequisites(example: Example, needs: dict[tuple[str, str], tuple[str, ...]]) -> list[int]:
    """The earlier tasks of the block the example depends on, in block order: those whose registered result it
    mentions (and theirs), and those `needs` names (files they write)."""
    wanted: set[int] = set()
    pending = [example.index]
    while pending:
        index = pending.pop()
        task = example.block[index]
        text = " ".join(expressions(task))
        named = needs.get((example.module, task["name"]), ())
        for earlier in range(index):
            other = example.block[earlier]
            mentioned = other.get("register") and re.search(rf"\b{re.escape(other['register'])}\b", text)
            if (mentioned or other["name"] in named) and earlier not in wanted:
                wanted.add(earlier)
                pending.append(earlier)
    return sorted(wanted)


def expressions(value: Any, bare: bool = False) -> list[str]:
    """The Jinja2 expressions of a task: in `{{ }}`, and the bare ones of `when` and a debug's `var`."""
    if isinstance(value, dict):
        return [e for key, item in value.items() for e in expressions(item, key in ("when", "var"))]
    if isinstance(value, list):
        return [e for item in value for e in expressions(item, bare)]
    if isinstance(value, str):
        return [value] if bare else re.findall(r"{{(.*?)}}", value, re.S)
    return []


def module_of(task: dict[str, Any]) -> str:
    return next(key for key in task if "." in key)


def localize(task: dict[str, Any], root: Path, connection: dict[str, str]) -> dict[str, Any]:
    """The task with the test's connection details and paths (module docstring); everything else as written."""
    module = module_of(task)
    if not module.startswith(COLLECTION):
        return task
    return {**task, module: _localized(task[module], root, connection)}


def _localized(value: Any, root: Path, connection: dict[str, str]) -> Any:
    if isinstance(value, dict):
        out = {key: _localized(item, root, connection) for key, item in value.items()}
        return {**out, **{key: connection[key] for key in ("kubeconfig", "context") if key in out}}
    if isinstance(value, list):
        return [_localized(item, root, connection) for item in value]
    if isinstance(value, str) and value.startswith("/"):
        return str(root / value.lstrip("/"))
    return value


def run_example(
    example: Example,
    root: Path,
    connection: dict[str, str],
    *,
    needs: dict[tuple[str, str], tuple[str, ...]],
    play_vars: dict[str, Any] | None = None,
    in_role: str | None = None,
    timeout: int = 900,
) -> tuple[subprocess.CompletedProcess, dict[str, Any] | None]:
    """Run the example (after its prerequisites) in `root`; the process and the example's registered result (None
    when it was not reached)."""
    tasks = [localize(example.block[i], root, connection) for i in prerequisites(example, needs)]
    target = localize(example.task, root, connection)
    register = target.setdefault("register", TARGET)
    tasks.append(target)
    registered = sorted({t["register"] for t in tasks if "register" in t})
    if in_role:  # an example written as a task of a role runs in a role of that name, with that role's options
        tasks = write_role(root, in_role, tasks)
    dump = {
        "name": RESULTS_TASK,
        "check_mode": False,
        "ansible.builtin.set_fact": {
            RESULTS_FACT: "{{ {" + ", ".join(f"'{r}': {r} | default(None)" for r in registered) + "} | to_json }}"
        },
    }
    play = [
        {
            "hosts": "localhost",
            "connection": "local",
            "gather_facts": False,
            "vars": play_vars or {},
            "module_defaults": {"group/descheduler.fleet.cluster": dict(connection)},
            "tasks": [{"block": tasks, "always": [dump]}],
        }
    ]
    playbook = root / "example.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    results_file = root / "results.json"
    results_file.unlink(missing_ok=True)
    process = subprocess.run(
        [executable("ansible-playbook"), str(playbook), "-i", "localhost,"],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(root),
        check=False,
        env=ansible_env(results_callback_env(results_file)),
    )
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    return process, results.get(register)


def write_role(root: Path, role: str, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A role `role` next to the playbook holding the tasks, with the collection role's options and defaults; the
    play's task that runs it."""
    directory = root / "roles" / role
    for part in ("meta", "defaults"):
        shutil.copytree(REPO / "roles" / role / part, directory / part, dirs_exist_ok=True)
    (directory / "tasks").mkdir(parents=True, exist_ok=True)
    (directory / "tasks" / "main.yml").write_text(yaml.safe_dump(tasks, sort_keys=False))
    return [{"name": f"Run the role {role}", "ansible.builtin.include_role": {"name": role}}]
