"""The layers of plugins/, read from every import in the code (imports inside functions included).

A package may import only from packages in lower layers: the error root at the bottom, then the cluster I/O and the
pure engine (neither knows the other), the domain packages, one runner per module, and the modules and action
plugins on top. Files import each other without cycles, and never from inside a function (such an import is how a
cycle hides). docs/architecture.md draws the same picture; a new package must be placed here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
COLLECTION = "ansible_collections.descheduler.fleet.plugins"

# Bottom first. A package imports only from rows above its own (never from its own row but itself).
LAYERS: list[set[str]] = [
    {"errors"},  # the root of every user-facing error
    {"files", "module_errors"},  # the atomic file writer; the one reporting wrapper of the modules
    {"cluster", "engine", "store"},  # all cluster I/O; the pure planning engine (no Ansible, no network); the run store
    {"report"},  # plans and results as Markdown and HTML (Jinja2 templates)
    {"executor", "operator", "inventory", "promotion"},
    {"secondary_scheduler"},  # installs its operator through operator/
    {"kubedescheduler"},  # the operator's spec, rendered policy, rollout and log
    {"whatif"},  # candidates side by side, on plans of either policy kind
    {"rollout"},  # a change across the fleet by decision groups: soak, health gates, rollback
    {"module_support", "runner"},  # shared module plumbing; one runner per module
    {"modules", "action", "doc_fragments"},
]


def _unit(module: str) -> str:
    """The package (or top-level file) of module_utils a module belongs to; modules/action/doc_fragments whole."""
    parts = module.split(".")
    return parts[1] if parts[0] == "module_utils" else parts[0]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PLUGINS).with_suffix("").parts).removesuffix(".__init__")


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The collection modules an import statement names (relative ones resolved), without the collection prefix."""
    if isinstance(node, ast.Import):
        yield from (alias.name[len(COLLECTION) + 1:] for alias in node.names if alias.name.startswith(COLLECTION))
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            target = ".".join(base + ([node.module] if node.module else []))
        elif (node.module or "").startswith(COLLECTION):
            target = node.module[len(COLLECTION) + 1:] if node.module != COLLECTION else ""
        else:
            return
        if target:
            yield target


def _imports() -> list[tuple[str, str, int, bool]]:
    """(importing module, imported module, line, inside a function) for every import of the collection; for
    "from package import name", name when it is a submodule."""
    modules = {_module_name(path) for path in PLUGINS.rglob("*.py")}
    found = []
    for path in sorted(PLUGINS.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function: set[int] = set()
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(id(node) for node in ast.walk(function))
        for node in ast.walk(tree):
            for target in _imported(node, module, path.name == "__init__.py"):
                submodules = [f"{target}.{alias.name}" for alias in getattr(node, "names", [])
                              if isinstance(node, ast.ImportFrom) and f"{target}.{alias.name}" in modules]
                for imported in submodules or [target]:
                    found.append((module, imported, node.lineno, id(node) in in_function))
    return found


def _rank(unit: str) -> int:
    for rank, layer in enumerate(LAYERS):
        if unit in layer:
            return rank
    raise AssertionError(f"package {unit!r} is in no layer: add it to LAYERS in {__file__} (and docs/architecture.md)")


def test_every_package_is_placed_in_a_layer() -> None:
    units = {_unit(_module_name(path)) for path in PLUGINS.rglob("*.py") if path.name != "__init__.py"}
    for unit in sorted(units):
        _rank(unit)


def test_packages_import_only_from_lower_layers() -> None:
    wrong = [f"plugins/{source.replace('.', '/')}.py:{line} imports {target} ({_unit(source)} may not depend on "
             f"{_unit(target)})"
             for source, target, line, _inside in _imports()
             if _unit(source) != _unit(target) and _rank(_unit(target)) >= _rank(_unit(source))]
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_the_engine_and_the_cluster_layer_import_nothing_above_the_error_root() -> None:
    allowed = {"engine": {"engine", "errors"}, "cluster": {"cluster", "errors"}}
    wrong = [f"{source}:{line} imports {target}" for source, target, line, _inside in _imports()
             if _unit(source) in allowed and _unit(target) not in allowed[_unit(source)]]
    assert not wrong, "\n".join(wrong)


def test_no_import_of_the_collection_inside_a_function() -> None:
    inside = [f"plugins/{source.replace('.', '/')}.py:{line} imports {target} inside a function"
              for source, target, line, is_inside in _imports() if is_inside]
    assert not inside, "move these imports to the top of the file (one inside a function hides a cycle):\n" + \
        "\n".join(inside)


def test_files_import_each_other_without_cycles() -> None:
    modules = {_module_name(path) for path in PLUGINS.rglob("*.py")}
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for source, target, _line, _inside in _imports():
        if target in modules:
            graph[source].add(target)
    cycles = [sorted(component) for component in _strongly_connected(graph) if len(component) > 1]
    assert not cycles, "files that import each other in a cycle:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph has hundreds of files)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def test_the_layering_check_sees_a_cycle_and_a_function_level_import(tmp_path: Path) -> None:
    """The checks above must be able to fail: a made-up pair of files that import each other, one from inside a
    function, is found by the same functions."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert sorted(map(sorted, (c for c in _strongly_connected(graph) if len(c) > 1))) == [["a", "b"]]
    source = f"def f():\n    from {COLLECTION}.module_utils.engine import plan\n"
    node = ast.parse(source).body[0].body[0]
    assert list(_imported(node, "module_utils.cluster.x", False)) == ["module_utils.engine"]
