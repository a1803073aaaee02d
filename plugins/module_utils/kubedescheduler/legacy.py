"""Translate a legacy ``KubeDescheduler`` (``operator.openshift.io/v1beta1``, OKD/OCP 4.4–4.8) into the nearest v1 spec,
with a report of exactly what maps, what changes meaning and what cannot be expressed.

What the legacy operator did, from openshift/cluster-kube-descheduler-operator ``release-4.4``…``release-4.8``
(``pkg/operator/target_config_reconciler.go``, ``pkg/apis/descheduler/v1beta1/types_descheduler.go``, README):

- 4.4–4.6: ``spec.strategies`` (``name`` + string ``params``) became a descheduler/v1alpha1 policy for the operand
  (sigs.k8s.io/descheduler v0.19 in 4.6). Strategy and param names were compared case-insensitively; the short names
  ``duplicates``, ``interpodantiaffinity``, ``nodeaffinity``, ``nodetaints`` were accepted. Namespaces
  (``IncludeNamespaces``/``ExcludeNamespaces``, comma-separated) were read for every strategy but RemoveDuplicates and
  LowNodeUtilization; ``ThresholdPriority``/``ThresholdPriorityClassName`` for all. No namespace was protected by
  default, pods with PVCs were evictable (v0.19 had no ``ignorePvcPods``) and no ``--dry-run`` was passed unless set
  in ``spec.flags``, which were appended to the operand's arguments. ``spec.image`` chose the operand image.
- LowNodeUtilization read ``CPUThreshold``, ``MemoryThreshold``, ``PodsThreshold``, the three ``*TargetThreshold``
  and ``nodes``. The documented ``NumberOfNodes`` never matched (the code compared the lower-cased name with
  ``"numberOfNodes"``), so it was ignored. A resource left out counted as 100 % in both maps (descheduler v0.19).
- RemovePodsHavingTooManyRestarts read ``PodRestartThreshold`` and ``IncludingInitContainers`` (a threshold below 1
  made the descheduler skip the strategy); PodLifeTime read ``MaxPodLifeTimeSeconds`` (unset: skipped).
- 4.7–4.8: ``profiles`` replaced strategies ("Setting it will not do anything"): with profiles, strategies are
  reported as ignored and the profiles are kept.

v1 (``main``) fixes much of this per profile: RemovePodsHavingTooManyRestarts at 100 restarts with init containers,
the node affinity type, one namespace list and one priority threshold for every profile, protected namespaces always
excluded, and LowNodeUtilization thresholds as Low (10/30), Medium (20/50) or High (40/70) presets.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import format_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    LOW_NODE_UTILIZATION_PRESETS,
    PROFILES,
)

MAPS = "maps"
CHANGES_MEANING = "changes-meaning"
CANNOT_EXPRESS = "cannot-express"
IGNORED = "ignored"  # the legacy operator itself did not use it: nothing is lost

LEGACY_API_VERSION = "operator.openshift.io/v1beta1"
V1_API_VERSION = "operator.openshift.io/v1"

# Legacy strategy names (lower-cased, as the 4.6 operator compared them) -> descheduler strategy.
STRATEGY_ALIASES = {
    "duplicates": "RemoveDuplicates",
    "removeduplicates": "RemoveDuplicates",
    "interpodantiaffinity": "RemovePodsViolatingInterPodAntiAffinity",
    "removepodsviolatinginterpodantiaffinity": "RemovePodsViolatingInterPodAntiAffinity",
    "lownodeutilization": "LowNodeUtilization",
    "nodeaffinity": "RemovePodsViolatingNodeAffinity",
    "removepodsviolatingnodeaffinity": "RemovePodsViolatingNodeAffinity",
    "nodetaints": "RemovePodsViolatingNodeTaints",
    "removepodsviolatingnodetaints": "RemovePodsViolatingNodeTaints",
    "removepodshavingtoomanyrestarts": "RemovePodsHavingTooManyRestarts",
    "podlifetime": "PodLifeTime",
}
AFFINITY_STRATEGIES = (
    "RemovePodsViolatingInterPodAntiAffinity",
    "RemovePodsViolatingNodeTaints",
    "RemovePodsViolatingNodeAffinity",
)
LIFECYCLE_STRATEGIES = ("PodLifeTime", "RemovePodsHavingTooManyRestarts", "LowNodeUtilization")
# Strategies whose namespaces the legacy operator passed on (generateNamespaces).
NAMESPACED_STRATEGIES = AFFINITY_STRATEGIES + ("RemovePodsHavingTooManyRestarts", "PodLifeTime")
COMMON_PARAMS = ("thresholdpriority", "thresholdpriorityclassname", "includenamespaces", "excludenamespaces")
LOW_NODE_PARAMS = {
    "cputhreshold": ("thresholds", "cpu"),
    "memorythreshold": ("thresholds", "memory"),
    "podsthreshold": ("thresholds", "pods"),
    "cputargetthreshold": ("targetThresholds", "cpu"),
    "memorytargetthreshold": ("targetThresholds", "memory"),
    "podstargetthreshold": ("targetThresholds", "pods"),
}
RESOURCES = ("cpu", "memory", "pods")
FULL_PERCENT = 100  # descheduler v0.19: a resource left out of the thresholds counts as 100 %
V1_RESTART_THRESHOLD = 100
PRESET_ORDER = ("Low", "Medium", "High")
VERBOSITY_LEVELS = ((2, "Normal"), (4, "Debug"), (6, "Trace"), (8, "TraceAll"))
PROTECTED_NOTE = "kube-system, hypershift, openshift and every openshift-* namespace"


@dataclass
class TranslationEntry:
    """One legacy setting and what became of it in v1."""

    outcome: str  # maps | changes-meaning | cannot-express | ignored
    source: str  # where it was in the legacy spec
    value: Any
    target: Optional[str]  # the v1 field it went to, if any
    note: str


@dataclass
class _Strategy:
    name: str  # descheduler strategy name
    source: str  # "spec.strategies[2] (lownodeutilization)"
    params: dict[str, tuple[str, str]]  # lower-cased name -> (name as written, value as string)

    def param_source(self, key: str) -> str:
        return f"{self.source} params.{self.params[key][0]}"


class LegacyTranslationError(ValueError):
    """The input is not a KubeDescheduler v1beta1 spec or object."""


class _Translation:
    def __init__(self) -> None:
        self.entries: list[TranslationEntry] = []
        self.spec: dict[str, Any] = {}
        self.profiles: set[str] = set()

    def record(self, outcome: str, source: str, value: Any, target: Optional[str], note: str) -> None:
        self.entries.append(TranslationEntry(outcome, source, value, target, note))

    def customization(self, name: str, value: Any) -> None:
        self.spec.setdefault("profileCustomizations", {})[name] = value

    def report(self, legacy_spec: dict) -> dict[str, Any]:
        profiles = [p for p in PROFILES if p in self.profiles]
        if profiles:
            self.spec["profiles"] = profiles
        by_outcome = {outcome: [asdict(e) for e in self.entries if e.outcome == outcome]
                      for outcome in (MAPS, CHANGES_MEANING, CANNOT_EXPRESS, IGNORED)}
        summary = (f"{len(by_outcome[MAPS])} setting(s) map exactly, {len(by_outcome[CHANGES_MEANING])} change "
                   f"meaning, {len(by_outcome[CANNOT_EXPRESS])} cannot be expressed in v1, "
                   f"{len(by_outcome[IGNORED])} were ignored by the legacy operator too")
        return {
            "source_api_version": LEGACY_API_VERSION,
            "api_version": V1_API_VERSION,
            "legacy_spec": legacy_spec,
            "spec": self.spec,
            "maps": by_outcome[MAPS],
            "changes_meaning": by_outcome[CHANGES_MEANING],
            "cannot_express": by_outcome[CANNOT_EXPRESS],
            "ignored": by_outcome[IGNORED],
            "summary": summary,
        }


# --- input -------------------------------------------------------------------------------------------------------


def _legacy_spec(legacy: Any, translation: _Translation) -> dict:
    """The spec of a v1beta1 object, or the spec itself."""
    if not isinstance(legacy, dict):
        raise LegacyTranslationError(f"legacy_spec must be a KubeDescheduler v1beta1 spec or object, got {legacy!r}")
    if not any(key in legacy for key in ("apiVersion", "kind", "metadata")):
        return legacy
    api_version = legacy.get("apiVersion")
    if api_version not in (None, LEGACY_API_VERSION):
        raise LegacyTranslationError(f"legacy_spec has apiVersion {api_version!r}; give an {LEGACY_API_VERSION} "
                                     "object (a v1 spec goes in the spec option instead)")
    name = (legacy.get("metadata") or {}).get("name")
    if name and name != "cluster":
        translation.record(CHANGES_MEANING, "metadata.name", name, "metadata.name",
                           f'the v1 operator only reads the KubeDescheduler named "cluster" (4.4 documented "{name}")')
    spec = legacy.get("spec")
    if not isinstance(spec, dict):
        raise LegacyTranslationError("legacy_spec is an object without a spec mapping")
    return spec


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _as_int(value: str) -> Optional[int]:
    try:
        return int(value.strip())
    except (ValueError, AttributeError):
        return None


def _as_bool(value: str) -> Optional[bool]:
    # Go strconv.ParseBool
    lowered = value.strip()
    if lowered in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if lowered in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _namespace_list(value: str) -> list[str]:
    # the legacy operator split on "," without trimming; trim, as a user would expect
    return [item.strip() for item in value.split(",") if item.strip()]


# --- simple fields -----------------------------------------------------------------------------------------------


def _translate_plain_fields(spec: dict, translation: _Translation) -> None:
    interval = spec.get("deschedulingIntervalSeconds")
    if interval is None:
        translation.record(CANNOT_EXPRESS, "spec.deschedulingIntervalSeconds", None, "spec.deschedulingIntervalSeconds",
                           "not set: the legacy operator refused to run without it and v1 requires it too; set "
                           "deschedulingIntervalSeconds (e.g. 3600)")
    else:
        translation.spec["deschedulingIntervalSeconds"] = interval
        translation.record(MAPS, "spec.deschedulingIntervalSeconds", interval, "spec.deschedulingIntervalSeconds",
                           "same meaning: seconds between descheduling cycles")
    # without managementState the v1 operator degrades and scales the descheduler to 0: a translation is Managed
    translation.spec["managementState"] = "Managed"
    for name in ("managementState", "logLevel", "operatorLogLevel"):
        if spec.get(name) is not None:
            translation.spec[name] = spec[name]
            translation.record(MAPS, f"spec.{name}", spec[name], f"spec.{name}", "same OperatorSpec field")
    for name in ("observedConfig", "unsupportedConfigOverrides"):
        if spec.get(name):
            translation.record(IGNORED, f"spec.{name}", spec[name], None,
                               "owned by the operator (observedConfig) or unsupported; not carried over")
    if spec.get("image"):
        translation.record(CANNOT_EXPRESS, "spec.image", spec["image"], None,
                           "v1 has no image field: the operator runs the descheduler image of its own release "
                           "(RELATED_IMAGE_OPERAND_IMAGE); pick the version through the operator's channel/CSV")


# --- flags -------------------------------------------------------------------------------------------------------


def _flag_parts(flag: str) -> tuple[str, Optional[str]]:
    name, sep, value = flag.strip().partition("=")
    return name.lstrip("-").lower(), (value if sep else None)


def _translate_verbosity(source: str, value: Optional[str], translation: _Translation) -> None:
    level = _as_int(value or "")
    if level is None:
        translation.record(CANNOT_EXPRESS, source, value, None, "not a number; the operand would have refused it")
        return
    nearest = min(VERBOSITY_LEVELS, key=lambda item: (abs(item[0] - level), item[0]))
    translation.spec["logLevel"] = nearest[1]
    outcome = MAPS if nearest[0] == level else CHANGES_MEANING
    translation.record(outcome, source, value, "spec.logLevel",
                       f"v1 sets the operand's -v from logLevel: {nearest[1]} is -v={nearest[0]}")


def _translate_flag(index: int, flag: Any, translation: _Translation) -> Optional[bool]:
    """Record one flag; returns the dry-run setting it implies, if any."""
    source = f"spec.flags[{index}]"
    name, value = _flag_parts(_text(flag))
    if name == "dry-run":
        dry_run = True if value is None else _as_bool(value)
        if dry_run is None:
            translation.record(CANNOT_EXPRESS, source, flag, None, "not a boolean; the operand would have refused it")
            return None
        mode = "Predictive" if dry_run else "Automatic"
        translation.record(MAPS, source, flag, "spec.mode", f"{mode}: v1 adds --dry-run=true for Predictive only")
        return dry_run
    if name in ("v", "verbosity"):
        _translate_verbosity(source, value, translation)
    elif name == "evict-local-storage-pods" and _as_bool(value or "true"):
        translation.profiles.add("EvictPodsWithLocalStorage")
        translation.record(MAPS, source, flag, "spec.profiles", "EvictPodsWithLocalStorage makes pods with local "
                           "storage evictable in every profile")
    elif name == "max-pods-to-evict-per-node" and _as_int(value or "") is not None:
        translation.spec.setdefault("evictionLimits", {})["node"] = _as_int(value or "")
        translation.record(MAPS, source, flag, "spec.evictionLimits.node", "same per-node limit per cycle")
    elif name == "descheduling-interval":
        translation.record(CANNOT_EXPRESS, source, flag, "spec.deschedulingIntervalSeconds",
                           "the v1 operator sets --descheduling-interval from deschedulingIntervalSeconds only")
    else:
        translation.record(CANNOT_EXPRESS, source, flag, None, "v1 passes no extra flags to the descheduler")
    return None


def _translate_flags(spec: dict, translation: _Translation) -> None:
    flags = spec.get("flags") or []
    if not isinstance(flags, list):
        flags = [flags]
    dry_run = None
    for index, flag in enumerate(flags):
        implied = _translate_flag(index, flag, translation)
        dry_run = implied if implied is not None else dry_run
    if dry_run is None:
        translation.spec["mode"] = "Automatic"
        translation.record(MAPS, "spec.flags (no --dry-run)", None, "spec.mode",
                           "Automatic: the legacy descheduler evicted for real. Set mode Predictive first if you want "
                           "to review the v1 profiles' evictions before they happen")
    else:
        translation.spec["mode"] = "Predictive" if dry_run else "Automatic"


# --- strategies --------------------------------------------------------------------------------------------------


def _collect_strategies(spec: dict, translation: _Translation) -> dict[str, _Strategy]:
    strategies: dict[str, _Strategy] = {}
    for index, item in enumerate(spec.get("strategies") or []):
        raw_name = _text((item or {}).get("name") if isinstance(item, dict) else item)
        source = f"spec.strategies[{index}] ({raw_name})"
        name = STRATEGY_ALIASES.get(raw_name.lower())
        if name is None:
            translation.record(CANNOT_EXPRESS, source, raw_name, None,
                               "unknown strategy: the legacy operator refused it; v1 profiles cannot run it")
            continue
        if name in strategies:
            translation.record(IGNORED, strategies[name].source, name, None,
                               f"listed again as {source}; the legacy operator kept the last one")
        params: dict[str, tuple[str, str]] = {}
        for param in (item.get("params") or []) if isinstance(item, dict) else []:
            if isinstance(param, dict) and param.get("name"):
                params[_text(param["name"]).lower()] = (_text(param["name"]), _text(param.get("value")))
        strategies[name] = _Strategy(name, source, params)
    return strategies


def _also_enabled(profile: str, plugins: tuple[str, ...], wanted: dict[str, _Strategy]) -> str:
    extra = [p for p in plugins if p not in wanted]
    return f"; {profile} also runs {', '.join(extra)}" if extra else ""


def _translate_affinity(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    wanted = {name: s for name, s in strategies.items() if name in AFFINITY_STRATEGIES}
    if not wanted:
        return
    translation.profiles.add("AffinityAndTaints")
    extra = _also_enabled("AffinityAndTaints", AFFINITY_STRATEGIES, wanted)
    for name, strategy in wanted.items():
        note = f"profile AffinityAndTaints runs {name}{extra}"
        if name == "RemovePodsViolatingNodeAffinity":
            note += " (node affinity type requiredDuringSchedulingIgnoredDuringExecution, as before)"
        translation.record(CHANGES_MEANING if extra else MAPS, strategy.source, name, "spec.profiles", note)
        if "nodeaffinitytype" in strategy.params:
            value = strategy.params["nodeaffinitytype"][1]
            translation.record(IGNORED, strategy.param_source("nodeaffinitytype"), value, None,
                               "the legacy operator always used requiredDuringSchedulingIgnoredDuringExecution; "
                               "so does v1")
        _ignore_unknown_params(strategy, ("nodeaffinitytype",), translation)


def _translate_duplicates(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    strategy = strategies.get("RemoveDuplicates")
    if strategy is None:
        return
    translation.profiles.add("TopologyAndDuplicates")
    translation.record(CHANGES_MEANING, strategy.source, strategy.name, "spec.profiles",
                       "profile TopologyAndDuplicates runs RemoveDuplicates and also "
                       "RemovePodsViolatingTopologySpreadConstraint (DoNotSchedule constraints)")
    if "excludeownerkinds" in strategy.params:
        translation.record(CANNOT_EXPRESS, strategy.param_source("excludeownerkinds"),
                           strategy.params["excludeownerkinds"][1], None,
                           "v1 cannot exclude owner kinds: RemoveDuplicates considers every owner kind")
    for key in ("includenamespaces", "excludenamespaces"):
        if key in strategy.params:
            translation.record(IGNORED, strategy.param_source(key), strategy.params[key][1], None,
                               "the legacy operator did not pass namespaces to RemoveDuplicates")
    _ignore_unknown_params(strategy, ("excludeownerkinds",), translation)


def _ignore_unknown_params(strategy: _Strategy, known: tuple[str, ...], translation: _Translation) -> None:
    for key in strategy.params:
        if key not in known and key not in COMMON_PARAMS:
            translation.record(IGNORED, strategy.param_source(key), strategy.params[key][1], None,
                               f"not a parameter the legacy operator read for {strategy.name}")


def _translate_lifecycle(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    wanted = {name: s for name, s in strategies.items() if name in LIFECYCLE_STRATEGIES}
    if not wanted:
        return
    profile = "LifecycleAndUtilization" if "PodLifeTime" in wanted else "LongLifecycle"
    plugins = LIFECYCLE_STRATEGIES if profile == "LifecycleAndUtilization" else LIFECYCLE_STRATEGIES[1:]
    translation.profiles.add(profile)
    extra = _also_enabled(profile, plugins, wanted)
    for name, strategy in wanted.items():
        translation.record(CHANGES_MEANING if extra else MAPS, strategy.source, name, "spec.profiles",
                           f"profile {profile} runs {name}{extra}")
    if "PodLifeTime" in wanted:
        _translate_pod_lifetime(wanted["PodLifeTime"], translation)
    if "RemovePodsHavingTooManyRestarts" in wanted:
        _translate_restarts(wanted["RemovePodsHavingTooManyRestarts"], translation)
    if "LowNodeUtilization" in wanted:
        _translate_low_node_utilization(wanted["LowNodeUtilization"], translation)


def _translate_pod_lifetime(strategy: _Strategy, translation: _Translation) -> None:
    target = "spec.profileCustomizations.podLifetime"
    if "maxpodlifetimeseconds" not in strategy.params:
        translation.record(CHANGES_MEANING, f"{strategy.source} params.MaxPodLifeTimeSeconds", None, target,
                           "not set: the legacy descheduler skipped PodLifeTime; v1 evicts pods older than 24h")
    else:
        value = strategy.params["maxpodlifetimeseconds"][1]
        seconds = _as_int(value)
        if seconds is None or seconds < 0:
            translation.record(CANNOT_EXPRESS, strategy.param_source("maxpodlifetimeseconds"), value, target,
                               "not a number of seconds: the legacy operator refused it; v1 defaults to 24h")
        else:
            translation.customization("podLifetime", format_go_duration(seconds * 1_000_000_000))
            translation.record(MAPS, strategy.param_source("maxpodlifetimeseconds"), value, target,
                               f"same lifetime, as a duration ({format_go_duration(seconds * 1_000_000_000)})")
    _ignore_unknown_params(strategy, ("maxpodlifetimeseconds",), translation)


def _translate_restarts(strategy: _Strategy, translation: _Translation) -> None:
    threshold_source = f"{strategy.source} params.PodRestartThreshold"
    if "podrestartthreshold" in strategy.params:
        threshold_source = strategy.param_source("podrestartthreshold")
    value = strategy.params.get("podrestartthreshold", ("", None))[1]
    threshold = _as_int(value) if value is not None else None
    if threshold == V1_RESTART_THRESHOLD:
        translation.record(MAPS, threshold_source, value, None, "v1 evicts at 100 restarts, the same threshold")
    elif threshold is None or threshold < 1:
        translation.record(CHANGES_MEANING, threshold_source, value, None,
                           "not set (or below 1): the legacy descheduler skipped the strategy; v1 evicts pods with "
                           "100 restarts or more")
    else:
        direction = "fewer" if threshold < V1_RESTART_THRESHOLD else "more"
        translation.record(CANNOT_EXPRESS, threshold_source, value, None,
                           f"v1 fixes the threshold at {V1_RESTART_THRESHOLD} restarts, so {direction} pods are "
                           f"evicted than with {threshold}")
    init_source = f"{strategy.source} params.IncludingInitContainers"
    if "includinginitcontainers" in strategy.params:
        init_source = strategy.param_source("includinginitcontainers")
    init_value = strategy.params.get("includinginitcontainers", ("", None))[1]
    if init_value is not None and _as_bool(init_value):
        translation.record(MAPS, init_source, init_value, None, "v1 always counts init container restarts")
    else:
        translation.record(CHANGES_MEANING, init_source, init_value, None,
                           "v1 always counts init container restarts too (the legacy default was not to)")
    _ignore_unknown_params(strategy, ("podrestartthreshold", "includinginitcontainers"), translation)


def _legacy_thresholds(strategy: _Strategy, translation: _Translation) -> dict[str, dict[str, int]]:
    maps: dict[str, dict[str, int]] = {"thresholds": {}, "targetThresholds": {}}
    for key, (group, resource) in LOW_NODE_PARAMS.items():
        if key not in strategy.params:
            continue
        number = _as_int(strategy.params[key][1])
        if number is None:
            translation.record(CANNOT_EXPRESS, strategy.param_source(key), strategy.params[key][1], None,
                               "not a number: the legacy operator refused the whole spec")
            continue
        maps[group][resource] = number
    return maps


def _nearest_preset(maps: dict[str, dict[str, int]]) -> tuple[str, bool]:
    """The v1 preset closest to the legacy thresholds (resources left out count as 100 %), and whether it is exact."""
    def distance(preset: str) -> int:
        low, high = LOW_NODE_UTILIZATION_PRESETS[preset]
        return sum(abs(maps["thresholds"].get(r, FULL_PERCENT) - low)
                   + abs(maps["targetThresholds"].get(r, FULL_PERCENT) - high) for r in RESOURCES)

    # ties go to Medium, the default, then Low (evicts less)
    best = min(PRESET_ORDER, key=lambda preset: (distance(preset), preset != "Medium", PRESET_ORDER.index(preset)))
    return best, distance(best) == 0


def _translate_low_node_utilization(strategy: _Strategy, translation: _Translation) -> None:
    maps = _legacy_thresholds(strategy, translation)
    preset, exact = _nearest_preset(maps)
    low, high = LOW_NODE_UTILIZATION_PRESETS[preset]
    if preset != "Medium":
        translation.customization("devLowNodeUtilizationThresholds", preset)
    target = "spec.profileCustomizations.devLowNodeUtilizationThresholds"
    given = [key for key in LOW_NODE_PARAMS if key in strategy.params]
    note = (f"nearest v1 preset {preset}: thresholds {low}% and targetThresholds {high}% for cpu, memory and pods"
            + ("" if exact else f" (legacy thresholds {maps['thresholds'] or '{}'}, targetThresholds "
               f"{maps['targetThresholds'] or '{}'}; resources left out counted as 100%)"))
    for key in given or [None]:
        source = strategy.param_source(key) if key else f"{strategy.source} params (no thresholds)"
        value = strategy.params[key][1] if key else None
        translation.record(MAPS if exact else CHANGES_MEANING, source, value, target, note)
    if "nodes" in strategy.params:
        translation.record(CANNOT_EXPRESS, strategy.param_source("nodes"), strategy.params["nodes"][1], None,
                           "v1 has no numberOfNodes: LowNodeUtilization runs whatever the number of underutilized "
                           "nodes")
    if "numberofnodes" in strategy.params:
        translation.record(IGNORED, strategy.param_source("numberofnodes"), strategy.params["numberofnodes"][1], None,
                           'the legacy operator compared it with "numberOfNodes" after lower-casing, so it never '
                           "applied (and v1 has no numberOfNodes either)")
    for key in ("includenamespaces", "excludenamespaces"):
        if key in strategy.params:
            translation.record(IGNORED, strategy.param_source(key), strategy.params[key][1], None,
                               "the legacy operator did not pass namespaces to LowNodeUtilization")
    _ignore_unknown_params(strategy, tuple(LOW_NODE_PARAMS) + ("nodes", "numberofnodes"), translation)


# --- settings shared by every profile in v1 ----------------------------------------------------------------------


def _namespace_settings(strategies: dict[str, _Strategy], key: str) -> dict[str, list[str]]:
    return {name: _namespace_list(s.params[key][1]) for name, s in strategies.items()
            if name in NAMESPACED_STRATEGIES and key in s.params and _namespace_list(s.params[key][1])}


def _union(lists: list[list[str]]) -> list[str]:
    merged: list[str] = []
    for items in lists:
        merged += [item for item in items if item not in merged]
    return merged


def _translate_namespaces(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    included = _namespace_settings(strategies, "includenamespaces")
    excluded = _namespace_settings(strategies, "excludenamespaces")
    filterable = [name for name in strategies if name in NAMESPACED_STRATEGIES]
    if included:
        _apply_namespace_list(strategies, included, "includenamespaces", "included", filterable, translation)
        for name, items in excluded.items():
            translation.record(CANNOT_EXPRESS, strategies[name].param_source("excludenamespaces"), ",".join(items),
                               None, "v1 forbids included and excluded namespaces together; the included list "
                               "(the narrower choice) was kept")
    elif excluded:
        _apply_namespace_list(strategies, excluded, "excludenamespaces", "excluded", filterable, translation)
    if strategies:
        translation.record(CHANGES_MEANING, "spec.strategies", None, "spec.profileCustomizations.namespaces",
                           f"v1 never evicts from the protected namespaces ({PROTECTED_NOTE}); the 4.4–4.6 operator "
                           "did not protect them")


def _apply_namespace_list(strategies: dict[str, _Strategy], lists: dict[str, list[str]], key: str, field: str,
                          filterable: list[str], translation: _Translation) -> None:
    merged = _union(list(lists.values()))
    translation.customization("namespaces", {field: merged})
    uniform = all(items == merged for items in lists.values()) and set(lists) == set(filterable)
    for name, items in lists.items():
        note = f"v1 has one namespaces.{field} list for every profile: {merged}"
        if not uniform:
            note += " (legacy lists differed per strategy, or some strategies had none)"
        translation.record(MAPS if uniform else CHANGES_MEANING, strategies[name].param_source(key), ",".join(items),
                           f"spec.profileCustomizations.namespaces.{field}", note)


def _priority_settings(strategies: dict[str, _Strategy], translation: _Translation) -> tuple[dict, dict]:
    values: dict[str, int] = {}
    classes: dict[str, str] = {}
    for name, strategy in strategies.items():
        value = strategy.params.get("thresholdpriority", ("", None))[1]
        class_name = strategy.params.get("thresholdpriorityclassname", ("", ""))[1]
        if value is not None and class_name:
            translation.record(CANNOT_EXPRESS, strategy.param_source("thresholdpriority"),
                               {"thresholdPriority": value, "thresholdPriorityClassName": class_name}, None,
                               "both set: the legacy operator refused this strategy (cannot set both)")
            continue
        if value is not None:
            number = _as_int(value)
            if number is None:
                translation.record(CANNOT_EXPRESS, strategy.param_source("thresholdpriority"), value, None,
                                   "not a number: the legacy operator refused the whole spec")
            else:
                values[name] = number
        elif class_name:
            classes[name] = class_name
    return values, classes


def _translate_priority(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    values, classes = _priority_settings(strategies, translation)
    every = set(strategies)
    if values:
        chosen = min(values.values())  # the lowest threshold protects the most pods
        translation.customization("thresholdPriority", chosen)
        uniform = set(values) == every and len(set(values.values())) == 1 and not classes
        for name in values:
            note = f"v1 has one priority threshold for every profile: {chosen}"
            if not uniform:
                note += " (the lowest legacy value, which protects the most pods)"
            translation.record(MAPS if uniform else CHANGES_MEANING, strategies[name].param_source("thresholdpriority"),
                               strategies[name].params["thresholdpriority"][1],
                               "spec.profileCustomizations.thresholdPriority", note)
        for name, class_name in classes.items():
            translation.record(CANNOT_EXPRESS, strategies[name].param_source("thresholdpriorityclassname"), class_name,
                               None, f"v1 takes either thresholdPriority or thresholdPriorityClassName; kept "
                               f"thresholdPriority {chosen}")
        return
    if not classes:
        return
    chosen_class = next(iter(classes.values()))
    translation.customization("thresholdPriorityClassName", chosen_class)
    uniform = set(classes) == every and len(set(classes.values())) == 1
    for name, class_name in classes.items():
        source = strategies[name].param_source("thresholdpriorityclassname")
        if class_name != chosen_class:
            translation.record(CANNOT_EXPRESS, source, class_name, None,
                               f"v1 has one priority class threshold for every profile; kept {chosen_class!r}")
            continue
        note = "v1 has one priority class threshold for every profile"
        translation.record(MAPS if uniform else CHANGES_MEANING, source, class_name,
                           "spec.profileCustomizations.thresholdPriorityClassName",
                           note + ("" if uniform else " (some legacy strategies had none or another)"))


def _translate_pvc_default(strategies: dict[str, _Strategy], translation: _Translation) -> None:
    if not strategies:
        return
    translation.profiles.add("EvictPodsWithPVC")
    translation.record(MAPS, "spec.strategies", None, "spec.profiles",
                       "EvictPodsWithPVC: the legacy descheduler (v0.19) evicted pods with PersistentVolumeClaims; "
                       "v1 profiles skip them unless EvictPodsWithPVC is set. Remove it to protect those pods")


def _translate_strategies(spec: dict, translation: _Translation) -> None:
    if spec.get("profiles"):
        for profile in spec["profiles"]:
            translation.profiles.add(profile)
        translation.record(MAPS, "spec.profiles", spec["profiles"], "spec.profiles", "same profiles (4.7/4.8)")
        for index, item in enumerate(spec.get("strategies") or []):
            translation.record(IGNORED, f"spec.strategies[{index}]", item, None,
                               "the 4.7/4.8 operator ignored strategies once profiles existed")
        return
    strategies = _collect_strategies(spec, translation)
    _translate_affinity(strategies, translation)
    _translate_duplicates(strategies, translation)
    _translate_lifecycle(strategies, translation)
    _translate_namespaces(strategies, translation)
    _translate_priority(strategies, translation)
    _translate_pvc_default(strategies, translation)


def translate_legacy_spec(legacy: Any) -> dict[str, Any]:
    """The nearest v1 spec for a v1beta1 KubeDescheduler spec (or whole object), and the report.

    Returns ``spec`` (v1, to validate and apply), ``maps`` (same meaning), ``changes_meaning`` (kept, but behaves
    differently), ``cannot_express`` (lost), ``ignored`` (the legacy operator did not use it either) and ``summary``.
    Each entry has ``source`` (legacy field), ``value``, ``target`` (v1 field) and ``note``.
    """
    translation = _Translation()
    spec = _legacy_spec(legacy, translation)
    _translate_plain_fields(spec, translation)
    _translate_flags(spec, translation)
    _translate_strategies(spec, translation)
    return translation.report(spec)
