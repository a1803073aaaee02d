"""Threshold search: the LowNodeUtilization or HighNodeUtilization thresholds of a DeschedulerPolicy, tried over a
grid, and the Pareto front of (evictions, final spread) among them.

Each grid point is a whole candidate policy (the base with that plugin's thresholds replaced for every resource
given), so every point of the front is reproduced by planning its policy. A point the Kube Descheduler Operator can
express names the KubeDescheduler spec that renders the same thresholds: a complete spec (interval, mode,
managementState) that plan and kubedescheduler take as is. The operator's profile brings more than the thresholds
(LifecycleAndUtilization also runs PodLifeTime and the restarts plugin), so that spec is planned as a candidate of
its own (``operator_candidates``) and its figures are shown beside the point.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEVIATION_PRESETS,
    HIGH_NODE_UTILIZATION_PRESETS,
    LOW_NODE_UTILIZATION_PRESETS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import exclusion_reasons, final_spread

SEARCHABLE = ("LowNodeUtilization", "HighNodeUtilization")
REQUEST_RESOURCES = ["cpu", "memory", "pods"]
METRIC_RESOURCE = "MetricResource"  # the measured usage the operator's KubeVirt profile thresholds
# What a suggested KubeDescheduler spec holds besides its profile: the operator scales the operand to 0 without an
# interval (3600 s, as the operator's samples); Predictive first, as docs/choosing-a-policy.md step 5 promotes it.
OPERATOR_SPEC_BASE = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600}
OPERATOR_SUFFIX = "-operator"


class ThresholdSearchError(FleetError, ValueError):
    """A search that cannot be built from the options (names the option and the fix)."""


def threshold_candidates(search: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One candidate per grid point (as the whatif runner plans them), named after its thresholds, with ``thresholds``
    recording the point and ``operator_spec`` its KubeDescheduler equivalent (None when the operator has none)."""
    plugin = search.get("plugin") or "LowNodeUtilization"
    if plugin not in SEARCHABLE:
        raise ThresholdSearchError(f"threshold_search.plugin: {plugin!r}; use one of {', '.join(SEARCHABLE)}")
    base = search.get("policy")
    args = _plugin_args(base, plugin)
    resources = list(search.get("resources") or ["cpu", "memory", "pods"])
    lows = sorted({float(v) for v in search.get("low") or []})
    highs = sorted({float(v) for v in search.get("high") or []}) if plugin == "LowNodeUtilization" else [None]
    if not lows or not highs:
        raise ThresholdSearchError("threshold_search.low (and high, for LowNodeUtilization): give the percentages to "
                                   "try, for example low: [10, 20, 30], high: [50, 60, 70]")
    points = [(low, high) for low in lows for high in highs if high is None or low < high]
    if not points:
        raise ThresholdSearchError("threshold_search: every low is at or above every high; a node class needs "
                                   "low < high")
    return [_candidate(base, plugin, args, resources, low, high) for low, high in points]


def _plugin_args(policy: Any, plugin: str) -> Mapping[str, Any]:
    if not isinstance(policy, Mapping) or policy.get("kind") != "DeschedulerPolicy":
        raise ThresholdSearchError("threshold_search.policy: give the DeschedulerPolicy whose thresholds are searched "
                                   "(kind DeschedulerPolicy)")
    for profile in policy.get("profiles") or []:
        for config in (profile or {}).get("pluginConfig") or []:
            if (config or {}).get("name") == plugin:
                return config.get("args") or {}
    raise ThresholdSearchError(f"threshold_search.policy: no profile configures {plugin} (pluginConfig); add it "
                               "with the args the search starts from")


def _number(value: float) -> Any:
    return int(value) if float(value).is_integer() else value


def _candidate(base: Mapping[str, Any], plugin: str, args: Mapping[str, Any], resources: list[str], low: float,
               high: Optional[float]) -> dict[str, Any]:
    policy = copy.deepcopy(dict(base))
    for profile in policy.get("profiles") or []:
        for config in profile.get("pluginConfig") or []:
            if config.get("name") == plugin:
                config["args"] = {**(config.get("args") or {}),
                                  "thresholds": {r: _number(low) for r in resources}}
                if high is not None:
                    config["args"]["targetThresholds"] = {r: _number(high) for r in resources}
    name = f"{plugin}-{_number(low)}" + ("" if high is None else f"-{_number(high)}")
    thresholds = {"low": _number(low), "high": None if high is None else _number(high), "resources": resources}
    return {"name": name, "policy": policy, "kind": "DeschedulerPolicy", "thresholds": thresholds,
            "operator_spec": operator_equivalent(plugin, args, resources, low, high)}


def operator_equivalent(plugin: str, args: Mapping[str, Any], resources: list[str], low: float,
                        high: Optional[float]) -> Optional[dict[str, Any]]:
    """The complete KubeDescheduler spec with which the operator renders these thresholds, None when it cannot. The
    operator sets its presets only (kubedescheduler/policy.py): CompactAndScale's HighNodeUtilization and
    LifecycleAndUtilization's LowNodeUtilization on cpu, memory and pods together (static thresholds), the
    KubeVirt profile's LowNodeUtilization on MetricResource (deviation or static)."""
    deviation = bool(args.get("useDeviationThresholds"))
    if plugin == "HighNodeUtilization":
        preset = _preset(HIGH_NODE_UTILIZATION_PRESETS, low) if sorted(resources) == REQUEST_RESOURCES else None
        return _spec("CompactAndScale", "devHighNodeUtilizationThresholds", preset)
    if sorted(resources) == REQUEST_RESOURCES and not deviation:
        return _spec("LifecycleAndUtilization", "devLowNodeUtilizationThresholds",
                     _preset(LOW_NODE_UTILIZATION_PRESETS, (low, high)))
    if resources == [METRIC_RESOURCE]:
        presets, customization = ((DEVIATION_PRESETS, "devDeviationThresholds") if deviation
                                  else (LOW_NODE_UTILIZATION_PRESETS, "devLowNodeUtilizationThresholds"))
        return _spec("KubeVirtRelieveAndMigrate", customization, _preset(presets, (low, high)))
    return None


def _spec(profile: str, customization: str, preset: Optional[str]) -> Optional[dict[str, Any]]:
    if preset is None:
        return None
    return {**OPERATOR_SPEC_BASE, "profiles": [profile], "profileCustomizations": {customization: preset}}


def operator_candidates(searched: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point's operator equivalent as a candidate of its own (a KubeDescheduler), named ``<point>-operator``."""
    return [{"name": point["name"] + OPERATOR_SUFFIX, "policy": point["operator_spec"], "kind": "KubeDescheduler",
             "operator_equivalent_of": point["name"]} for point in searched if point["operator_spec"]]


def enabled_plugins(policy: Mapping[str, Any]) -> set[str]:
    """The plugins a DeschedulerPolicy enables at any extension point."""
    return {name for profile in policy.get("profiles") or [] for point in ((profile or {}).get("plugins") or {})
            .values() for name in ((point or {}).get("enabled") or [])}


def added_evictions(point_policy: Mapping[str, Any], equivalent: Mapping[str, Any]) -> dict[str, int]:
    """The evictions of the operator equivalent by the plugins its profile adds to the point's policy."""
    own = enabled_plugins(point_policy)
    return {plugin: count for plugin, count in (equivalent.get("by_plugin") or {}).items() if plugin not in own}


def _preset(presets: Mapping[str, Any], value: Any) -> Optional[str]:
    return next((name for name, preset in presets.items() if name and preset == value), None)


def pareto_front(candidates: list[dict[str, Any]], resource: str) -> list[str]:
    """The names of the candidates no other beats on both evictions and final spread (fewer or equal on both,
    fewer on one), in the order of evictions. Candidates no objective may choose (figures.exclusion_reasons) and
    those without a spread are left out."""
    scored = [(c["name"], c["evictions"], final_spread(c, resource)) for c in candidates if not exclusion_reasons(c)]
    scored = [item for item in scored if item[2] is not None]
    front = [item for item in scored if not any(_dominates(other, item) for other in scored)]
    seen: set[tuple[int, float]] = set()
    kept = []
    for name, evictions, spread in sorted(front, key=lambda item: (item[1], item[2])):
        if (evictions, spread) not in seen:  # equal points: the first listed stands for them
            seen.add((evictions, spread))
            kept.append(name)
    return kept


def _dominates(one: tuple[str, int, float], other: tuple[str, int, float]) -> bool:
    return one[1] <= other[1] and one[2] <= other[2] and (one[1] < other[1] or one[2] < other[2])
