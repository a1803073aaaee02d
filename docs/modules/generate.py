"""Write docs/modules/<name>.md, one Markdown page per module and role, from what ansible-doc reports.

Run by `make docs` (ansible-doc must find the collection: the Makefile sets ANSIBLE_COLLECTIONS_PATH). Markdown rather
than antsibull-docs' RST because RST pages made of raw HTML tables do not render where people read this repository;
the Ansible markup (O(), C(), M(), ...) is converted by antsibull-docs-parser, the library antsibull-docs uses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from antsibull_docs_parser import dom
from antsibull_docs_parser.md import to_md
from antsibull_docs_parser.parser import Context, parse

COLLECTION = "descheduler.fleet"
OUT = Path(__file__).resolve().parent


def ansible_doc(*args: str) -> dict[str, Any]:
    ansible_doc_cmd = str(Path(sys.executable).parent / "ansible-doc")
    shown = subprocess.run([ansible_doc_cmd, "--json", *args], capture_output=True, text=True, check=False)
    if shown.returncode != 0:
        sys.exit(f"ansible-doc {' '.join(args)} failed:\n{shown.stderr}")
    return json.loads(shown.stdout)


def markup(text: str | list[str] | None, plugin: str, kind: str, entrypoint: str | None = None) -> str:
    """Ansible doc markup as Markdown, one paragraph per list item."""
    if not text:
        return ""
    context = Context(current_plugin=dom.PluginIdentifier(fqcn=plugin, type=kind), role_entrypoint=entrypoint)
    return to_md(parse(text, context), current_plugin=context.current_plugin)


def cell(text: str) -> str:
    """Markdown that fits one table cell."""
    return text.replace("|", "\\|").replace("\n\n", "<br>").replace("\n", " ")


def option_rows(options: dict[str, Any], plugin: str, kind: str, entrypoint: str | None, depth: int = 0) -> list[str]:
    rows = []
    for name in sorted(options):
        spec = options[name]
        kind_text = spec.get("type", "str") + (f" of {spec['elements']}" if spec.get("elements") else "")
        facts = [kind_text]
        if spec.get("required"):
            facts.append("**required**")
        if spec.get("default") not in (None, "", [], {}):
            facts.append(f"default: `{json.dumps(spec['default'])}`")
        if spec.get("choices"):
            choices = spec["choices"] if isinstance(spec["choices"], list) else list(spec["choices"])
            facts.append("choices: " + ", ".join(f"`{c}`" for c in choices))
        if spec.get("aliases"):
            facts.append("aliases: " + ", ".join(spec["aliases"]))
        label = ("&nbsp;&nbsp;" * depth) + ("↳ " if depth else "") + f"`{name}`"
        description = markup(spec.get("description"), plugin, kind, entrypoint)
        rows.append(f"| {label} | {cell(', '.join(facts))} | {cell(description)} |")
        rows += option_rows(spec.get("suboptions") or spec.get("options") or {}, plugin, kind, entrypoint, depth + 1)
    return rows


def return_rows(values: dict[str, Any], plugin: str, depth: int = 0) -> list[str]:
    rows = []
    for name in sorted(values):
        spec = values[name]
        label = ("&nbsp;&nbsp;" * depth) + ("↳ " if depth else "") + f"`{name}`"
        facts = f"{spec.get('type', '')}, returned {spec.get('returned', 'always')}"
        rows.append(f"| {label} | {cell(facts)} | {cell(markup(spec.get('description'), plugin, 'module'))} |")
        rows += return_rows(spec.get("contains") or {}, plugin, depth + 1)
    return rows


def module_page(name: str) -> str:
    fqcn = f"{COLLECTION}.{name}"
    data = ansible_doc(fqcn)[fqcn]
    doc = data["doc"]
    lines = [f"# {fqcn} (module)", "", markup(doc["short_description"], fqcn, "module"), "",
             f"Added in {COLLECTION} {doc.get('version_added', '?')}.", "", "## Synopsis", "",
             markup(doc.get("description"), fqcn, "module"), ""]
    if doc.get("requirements"):
        lines += ["## Requirements", "", *[f"- {markup(r, fqcn, 'module')}" for r in doc["requirements"]], ""]
    lines += ["## Parameters", "", "| Parameter | Type | Description |", "|---|---|---|",
              *option_rows(doc.get("options") or {}, fqcn, "module", None), ""]
    for heading, key in (("Notes", "notes"), ("See also", "seealso")):
        if doc.get(key):
            items = doc[key] if key == "notes" else [s.get("description") or s.get("module") for s in doc[key]]
            lines += [f"## {heading}", "", *[f"- {markup(item, fqcn, 'module')}" for item in items], ""]
    lines += ["## Examples", "", "```yaml", (data.get("examples") or "").strip(), "```", ""]
    if data.get("return"):
        lines += ["## Return values", "", "| Key | Type | Description |", "|---|---|---|",
                  *return_rows(data["return"], fqcn), ""]
    return "\n".join(lines)


def role_page(name: str) -> str:
    fqcn = f"{COLLECTION}.{name}"
    data = ansible_doc("-t", "role", fqcn)[fqcn]
    lines = [f"# {fqcn} (role)", ""]
    for entrypoint, spec in sorted(data["entry_points"].items()):
        lines += [f"## Entry point `{entrypoint}`: {markup(spec.get('short_description'), fqcn, 'role', entrypoint)}",
                  "", markup(spec.get("description"), fqcn, "role", entrypoint), "",
                  "| Variable | Type | Description |", "|---|---|---|",
                  *option_rows(spec.get("options") or {}, fqcn, "role", entrypoint), ""]
    return "\n".join(lines)


def main() -> None:
    root = OUT.parents[1]
    modules = sorted(p.stem for p in (root / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
    roles = sorted(p.name for p in (root / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())
    # every page is rendered before any file is touched: a module whose documentation does not parse stops the run
    # with the pages as they were
    index = ["# descheduler.fleet reference", "",
             "Generated by `make docs` from the modules' documentation and the roles' argument specs.", "",
             "## Modules", ""]
    pages = {}
    for name in modules:
        pages[f"{name}.md"] = module_page(name)
        index.append(f"- [{COLLECTION}.{name}]({name}.md)")
    index += ["", "## Roles", ""]
    for name in roles:
        pages[f"{name}_role.md"] = role_page(name)
        index.append(f"- [{COLLECTION}.{name}]({name}_role.md)")
    pages["README.md"] = "\n".join(index) + "\n"
    for old in OUT.glob("*.md"):
        if old.name not in pages:
            old.unlink()  # the page of a module or role that no longer exists
    for file_name, text in pages.items():
        (OUT / file_name).write_text(text)
    print(f"wrote {len(modules)} module and {len(roles)} role pages to {OUT}")


if __name__ == "__main__":
    main()
