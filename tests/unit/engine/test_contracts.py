"""The written contracts hold: every registered plugin (descheduler, scheduler) and metrics source implements the
methods of the extension points it claims, every name the policy accepts is registered, and the walkthroughs in
docs/extending/ name the registration lines and files that exist."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import (
    PROTOCOLS,
    BuildContext,
    EvictorPlugin,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics_source import UsageClient
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import REGISTRY
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.nodeutilization_metrics import (
    SOURCES,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import PROVIDER_SOURCES, load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler import interface
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    DEFAULT_FILTERS,
    DEFAULT_SCORES,
    load_profiles,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.registry import (
    REGISTRY as SCHEDULER_REGISTRY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[3]
POINTS = ("deschedule", "balance", "filter", "preevictionfilter")


# args each plugin accepts (the others accept {})
ARGS = {
    "LowNodeUtilization": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}},
    "HighNodeUtilization": {"thresholds": {"cpu": 20}},
    "RemovePodsViolatingNodeAffinity": {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]},
    "RemovePodsHavingTooManyRestarts": {"podRestartThreshold": 3},
    "PodLifeTime": {"maxPodLifeTimeSeconds": 60},
    "LoadAware": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}},
}


def _profile(name: str, point: str) -> dict:
    return {"name": "p", "pluginConfig": [{"name": name, "args": ARGS.get(name, {})}],
            "plugins": {point: {"enabled": [name]}}}


def _built(name: str):
    """The plugin object a profile enabling ``name`` at its filter points gets."""
    loaded = load_policy({"profiles": [{"name": "p", "pluginConfig": [{"name": name, "args": ARGS.get(name, {})}]}]},
                         {})
    return REGISTRY[name].new(loaded.profiles[0].args[name], BuildContext(Snapshot([]), 0.0, loaded.profiles[0]))


def _parameters(function) -> list[str]:
    return [p for p in inspect.signature(function).parameters if p != "self"]


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_plugin_implements_the_points_it_claims(name):
    registration = REGISTRY[name]
    assert registration.extension_points and set(registration.extension_points) <= set(POINTS)
    for point in registration.extension_points:
        protocol, method = PROTOCOLS[point]
        if point in ("deschedule", "balance"):
            plugin = registration.plugin
        else:
            plugin = _built(name)
            assert isinstance(plugin, EvictorPlugin)
        assert isinstance(plugin, protocol), f"{name} claims {point} but has no {method}"
        assert _parameters(getattr(plugin, method)) == _parameters(getattr(protocol, method))
    for point in set(POINTS) - set(registration.extension_points):
        with pytest.raises(PolicyError, match=f"does not implement the {point} extension point"):
            load_policy({"profiles": [_profile(name, point)]}, {})


@pytest.mark.parametrize("point", POINTS)
def test_the_policy_accepts_exactly_the_registered_plugins_at_their_points(point):
    accepted = []
    for name in [*REGISTRY, "Example", "defaultevictor", "RemovePodsViolatingTopologySpreadConstraints"]:
        try:
            load_policy({"profiles": [_profile(name, point)]}, {})
        except PolicyError as error:
            assert "unknown plugin" in str(error) or "does not implement" in str(error)
            continue
        accepted.append(name)
    assert accepted == [name for name in REGISTRY if REGISTRY[name].implements(point)]


def test_an_unknown_plugin_names_the_field_the_value_and_the_known_plugins():
    with pytest.raises(PolicyError) as error:
        load_policy({"profiles": [_profile("Exampel", "deschedule")]}, {})
    assert error.value.field == "policy.profiles[0].pluginConfig[0].name"
    assert "'Exampel'" in str(error.value) and "known plugins: " + ", ".join(sorted(REGISTRY)) in str(error.value)


@pytest.mark.parametrize("name", list(SCHEDULER_REGISTRY))
def test_every_registered_scheduler_plugin_implements_the_points_it_claims(name):
    registration = SCHEDULER_REGISTRY[name]
    plugin = registration.new({}, f"pluginConfig.{name}", {})
    assert plugin.name == name
    for point in registration.extension_points:
        for protocol in interface.PROTOCOLS[point]:
            assert isinstance(plugin, protocol), f"{name} claims {point}"
    if registration.implements(interface.SCORE):
        assert isinstance(plugin, (interface.NormalizeScore, interface.NormalizeNodeScores))
    else:
        assert not hasattr(plugin, "score")
    assert registration.implements(interface.FILTER) == hasattr(plugin, "filter")


def test_every_default_scheduler_plugin_is_registered_at_its_points():
    assert all(SCHEDULER_REGISTRY[name].implements(interface.FILTER) for name in DEFAULT_FILTERS)
    assert all(SCHEDULER_REGISTRY[name].implements(interface.SCORE) for name in DEFAULT_SCORES)
    profile = load_profiles(None)["default-scheduler"]
    assert [p.name for p in profile.filters] == list(DEFAULT_FILTERS)
    assert {p.name: w for p, w in profile.scorers} == DEFAULT_SCORES


def test_every_metrics_source_the_policy_accepts_is_registered():
    assert set(PROVIDER_SOURCES) < set(SOURCES)
    for name in SOURCES:
        source = SOURCES[name]
        assert _parameters(source.new) == ["handle", "args", "resources"]
        assert "cpu" in source.resources(["cpu"]) or source.resources(["cpu"]) == ["MetricResource"]
    assert all(isinstance(cls, type) for cls in (UsageClient,))


DOCS = {
    "add-a-descheduler-plugin.md": "plugins/module_utils/engine/plugins/__init__.py",
    "add-a-scheduler-plugin.md": "plugins/module_utils/engine/scheduler/registry.py",
    "add-a-metrics-source.md": "plugins/module_utils/engine/plugins/nodeutilization_metrics.py",
}


def _example_names(text: str) -> set[str]:
    """What the walkthrough's worked example defines (it is new code, not in the collection): its classes,
    functions, constants and plugin NAME."""
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    names = set(re.findall(r"^(?:class|def) (\w+)", code, re.M)) | set(re.findall(r"^(\w+) = ", code, re.M))
    names |= set(re.findall(r'^NAME = "(\w+)"', code, re.M))
    # the contract's own names (every plugin defines them) are not the example's
    return names - {"NAME", "ARG_FIELDS", "LABEL", "validate", "set_defaults", "deschedule", "balance", "new",
                    "filter", "pre_eviction_filter", "pre_score", "score", "normalize", "node", "pod", "__init__"}


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_the_walkthroughs_name_files_and_registration_lines_that_exist(doc):
    text = (ROOT / "docs" / "extending" / doc).read_text(encoding="utf-8")
    example = _example_names(text)
    lowered = {name.lower() for name in example}
    for path in set(re.findall(r"`((?:plugins|tests|docs)/[\w/.-]+\.(?:py|md))`", text)):
        if Path(path).stem not in lowered:  # the worked example's own file is new
            assert (ROOT / path).exists(), f"{doc} names {path}"
    registry = (ROOT / DOCS[doc]).read_text(encoding="utf-8")
    lines = re.findall(r"^ *((?:registry|SOURCES)\.register\(.*)$", text, re.M)
    existing = [line for line in lines if not any(re.search(rf"\b{name}\b", line, re.I) for name in lowered)]
    assert existing and len(existing) < len(lines), f"{doc} shows a registered plugin's line and the example's"
    for line in existing:
        assert line in registry, f"{doc}: {line!r} is not in {DOCS[doc]}"
