"""Every module's documented options, doc fragments applied, are its argument spec: same names, types, defaults,
choices, elements, required and aliases, suboptions included. And each shared option group's doc fragment documents
exactly its spec in module_utils/cluster/args.py, so a shared default is written there and in its fragment only."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import args
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import RUN_STORE_ARG_SPEC

COLLECTION = "ansible_collections.descheduler.fleet.plugins"
MODULES = sorted(path.stem for path in (Path(__file__).resolve().parents[2] / "plugins" / "modules").glob("*.py")
                 if path.stem != "__init__")
# Modules whose argument spec lives in their action plugin (the module file only documents it).
ACTION_SPECS = {"preflight"}

# Each shared group and the fragment that documents it.
GROUPS = {
    "connection": args.CONNECTION_ARG_SPEC,
    "cluster_identity": args.IDENTITY_ARG_SPEC,
    "prometheus": args.PROMETHEUS_ARG_SPEC,
    "wait": args.WAIT_ARG_SPEC,
    "olm": args.OLM_ARG_SPEC,
    "report": args.REPORT_ARG_SPEC,
    "field_validation": args.FIELD_VALIDATION_ARG_SPEC,
    "listing": args.LISTING_ARG_SPEC,
    "run_store": RUN_STORE_ARG_SPEC,
    "change_lock": args.CHANGE_LOCK_ARG_SPEC,
}


def fragment_doc(name: str) -> dict:
    """A doc fragment's YAML, by the name extends_documentation_fragment gives (``ns.coll.name[.var]`` or builtin)."""
    prefix = "descheduler.fleet."
    package = f"{COLLECTION}.doc_fragments" if name.startswith(prefix) else "ansible.plugins.doc_fragments"
    parts = name.removeprefix(prefix).split(".")
    variable = parts[1].upper() if len(parts) > 1 else "DOCUMENTATION"
    fragment = importlib.import_module(f"{package}.{parts[0]}").ModuleDocFragment
    return yaml.safe_load(getattr(fragment, variable))


def documented_options(doc: dict) -> dict:
    """The module's options with its fragments merged as ansible-doc does: the module's keys win per option."""
    options = dict(doc.get("options") or {})
    for name in doc.get("extends_documentation_fragment") or []:
        for option, fragment_spec in (fragment_doc(name).get("options") or {}).items():
            options[option] = {**fragment_spec, **options.get(option, {})}
    return options


def module_spec(name: str) -> tuple[dict, dict]:
    module = importlib.import_module(f"{COLLECTION}.modules.{name}")
    doc = yaml.safe_load(module.DOCUMENTATION)
    owner = importlib.import_module(f"{COLLECTION}.action.{name}") if name in ACTION_SPECS else module
    return documented_options(doc), owner.ARGUMENT_SPEC


def facts(spec: dict, documented: bool) -> dict[str, Any]:
    """What the documentation and the argument spec must agree on, with the defaults each leaves implicit."""
    return {
        "type": spec.get("type", "str"),
        "default": spec.get("default"),
        "choices": spec.get("choices"),
        "elements": spec.get("elements"),
        "required": bool(spec.get("required", False)),
        "aliases": sorted(spec.get("aliases") or []),
        "suboptions": sorted((spec.get("suboptions") if documented else spec.get("options")) or {}),
    }


def disagreements(documented: dict, declared: dict, path: str = "") -> list[str]:
    found = [f"{path}{name}: declared in the argument spec, not documented"
             for name in sorted(set(declared) - set(documented))]
    found += [f"{path}{name}: documented, not in the argument spec"
              for name in sorted(set(documented) - set(declared))]
    for name in sorted(set(documented) & set(declared)):
        doc_facts, spec_facts = facts(documented[name], True), facts(declared[name], False)
        found += [f"{path}{name}: {key} is {doc_facts[key]!r} in the documentation, {spec_facts[key]!r} in the spec"
                  for key in doc_facts if doc_facts[key] != spec_facts[key]]
        found += disagreements(documented[name].get("suboptions") or {}, declared[name].get("options") or {},
                               f"{path}{name}.")
    return found


@pytest.mark.parametrize("name", MODULES)
def test_documentation_is_the_argument_spec(name: str) -> None:
    documented, declared = module_spec(name)
    assert disagreements(documented, declared) == []


@pytest.mark.parametrize("fragment", sorted(GROUPS))
def test_fragment_documents_its_group(fragment: str) -> None:
    documented = fragment_doc(f"descheduler.fleet.{fragment}")["options"]
    assert disagreements(documented, GROUPS[fragment]) == []


def test_every_option_fragment_has_its_group() -> None:
    fragments = {path.stem for path in (Path(__file__).resolve().parents[2] / "plugins" / "doc_fragments").glob("*.py")
                 if "options" in fragment_doc(f"descheduler.fleet.{path.stem}")}
    assert fragments == set(GROUPS)


@pytest.mark.parametrize("name", sorted(set(MODULES) - ACTION_SPECS))
def test_module_takes_each_fragment_group_whole(name: str) -> None:
    """A module documenting a group through its fragment declares the group's options as the group does."""
    module = importlib.import_module(f"{COLLECTION}.modules.{name}")
    used = [item.removeprefix("descheduler.fleet.")
            for item in yaml.safe_load(module.DOCUMENTATION).get("extends_documentation_fragment") or []]
    for group in (GROUPS[fragment] for fragment in used if fragment in GROUPS):
        assert {option: module.ARGUMENT_SPEC[option] for option in group} == group


def test_shared_wait_default_is_the_forgiving_one() -> None:
    # kubedescheduler waited 300 s, operator and secondary_scheduler 600 s; the three now share one default.
    for name in ("kubedescheduler", "operator", "secondary_scheduler"):
        documented, declared = module_spec(name)
        assert documented["wait_timeout"]["default"] == declared["wait_timeout"]["default"] == 600


def test_argument_spec_refuses_an_option_declared_twice() -> None:
    with pytest.raises(ValueError, match="wait_timeout"):
        argument_spec(args.WAIT_ARG_SPEC, wait_timeout={"type": "int", "default": 300})
    with pytest.raises(ValueError, match="channel"):
        argument_spec(args.OLM_ARG_SPEC, {"channel": {"type": "str"}})
    assert argument_spec(args.REPORT_ARG_SPEC, page_size={"type": "int"}) == {**args.REPORT_ARG_SPEC,
                                                                              "page_size": {"type": "int"}}
