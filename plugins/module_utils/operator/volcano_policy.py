"""The Volcano descheduler's policy, checked on its own and against the Volcano scheduler that places the evicted pods
(reference peers.md §1; volcano-sh/volcano docs/design/usage-based-scheduling.md).

Pure functions, no cluster access:

- ``load_aware_problems``: the ``LoadAware`` args as Volcano's ``ValidateLoadAwareUtilizationArgs`` checks them, plus
  what it lets through silently (no metrics source: the plugin then evicts nothing).
- ``pairing_problems``: whether the scheduler can act on what the descheduler does: ``LoadAware`` needs the
  scheduler's ``usage`` plugin reading the same metrics source (else the evicted pod is placed by requests and may go
  straight back to the hot node), ``HighNodeUtilization`` needs ``binpack`` (else the pods evicted from the
  underused nodes spread out again).

Every problem names the field, the value found and the fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Union

try:  # PyYAML is an ansible-core dependency; ansible-test's import sanity loads modules without it
    import yaml
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]

SCHEDULER_CONF_KEY = "volcano-scheduler.conf"  # the key of ConfigMap volcano-system/volcano-scheduler-configmap
LOAD_AWARE = "LoadAware"
HIGH_NODE_UTILIZATION = "HighNodeUtilization"
DESCHEDULER_METRICS_TYPES = ("prometheus", "prometheus_adaptor")
SCHEDULER_METRICS_TYPES = ("prometheus", "prometheus_adaptor", "elasticsearch")
SCHEDULER_DEFAULT_METRICS_TYPE = "prometheus"  # the scheduler's default when metrics.type is left out
# The scheduler's usage plugin names memory "mem"; the descheduler's thresholds name it "memory".
USAGE_THRESHOLD_KEYS = {"cpu": "cpu", "memory": "mem"}


@dataclass(frozen=True)
class Problem:
    field: str
    message: str
    severity: str = "error"  # error | warning

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class SchedulerConfigError(ValueError):
    """The scheduler configuration given cannot be read."""


# ---- reading the policy ---------------------------------------------------------------------------------------------

def enabled_plugins(profile: dict, extension_point: str) -> list[str]:
    plugins = ((profile.get("plugins") or {}).get(extension_point) or {}).get("enabled") or []
    return [str(name) for name in plugins]


def plugin_args(profile: dict, name: str) -> tuple[int, dict]:
    """The index of the plugin's pluginConfig entry (-1 when absent) and its args."""
    for index, entry in enumerate(profile.get("pluginConfig") or []):
        if isinstance(entry, dict) and entry.get("name") == name:
            return index, entry.get("args") or {}
    return -1, {}


def _args_field(profile_index: int, config_index: int, name: str) -> str:
    if config_index < 0:
        return f"volcano.policy.profiles[{profile_index}].pluginConfig (no {name} entry)"
    return f"volcano.policy.profiles[{profile_index}].pluginConfig[{config_index}].args"


# ---- LoadAware on its own -------------------------------------------------------------------------------------------

def load_aware_problems(policy: dict) -> list[Problem]:
    problems: list[Problem] = []
    for p_index, profile in enumerate(policy.get("profiles") or []):
        if LOAD_AWARE not in enabled_plugins(profile, "balance"):
            continue
        c_index, args = plugin_args(profile, LOAD_AWARE)
        base = _args_field(p_index, c_index, LOAD_AWARE)
        problems += _threshold_problems(base, args)
        problems += _metrics_problems(base, args.get("metrics") or {})
        include = (args.get("evictableNamespaces") or {}).get("include")
        if include:
            problems.append(Problem(f"{base}.evictableNamespaces.include", f"invalid value {include!r}: LoadAware "
                                    "only accepts evictableNamespaces.exclude; list the namespaces to leave alone "
                                    "under exclude instead"))
    return problems


def _threshold_problems(base: str, args: dict) -> list[Problem]:
    low, high = args.get("thresholds") or {}, args.get("targetThresholds") or {}
    problems: list[Problem] = []
    for name, values in (("thresholds", low), ("targetThresholds", high)):
        if not values:
            problems.append(Problem(f"{base}.{name}", "missing: LoadAware needs both thresholds and "
                                    "targetThresholds, for example {cpu: 30, memory: 30} and "
                                    "{cpu: 80, memory: 85}"))
        for resource, value in values.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 100:
                problems.append(Problem(f"{base}.{name}.{resource}", f"invalid value {value!r}: a percentage from "
                                        "0 to 100 is required"))
    if low and high and set(low) != set(high):
        problems.append(Problem(f"{base}.targetThresholds", f"names {sorted(high)} but thresholds names "
                                f"{sorted(low)}: both must name the same resources"))
    if args.get("useDeviationThresholds"):
        return problems
    for resource in sorted(set(low) & set(high)):
        low_value, high_value = low[resource], high[resource]
        if _is_number(low_value) and _is_number(high_value) and high_value <= low_value:
            problems.append(Problem(
                f"{base}.targetThresholds.{resource}", f"invalid value {high_value!r}: it must be above "
                f"thresholds.{resource} ({low_value!r}), or no node is ever between underused and overused; raise "
                f"targetThresholds.{resource} or lower thresholds.{resource}"))
    return problems


def _metrics_problems(base: str, metrics: dict) -> list[Problem]:
    kind, address = metrics.get("type"), metrics.get("address")
    if not kind:
        return [Problem(f"{base}.metrics.type", "not set: without a metrics source LoadAware reads no usage and "
                        f"evicts nothing; set metrics.type to one of {', '.join(DESCHEDULER_METRICS_TYPES)} (and "
                        "metrics.address for prometheus)", severity="warning")]
    if kind not in DESCHEDULER_METRICS_TYPES:
        return [Problem(f"{base}.metrics.type", f"invalid value {kind!r}: one of "
                        f"{', '.join(DESCHEDULER_METRICS_TYPES)} is required")]
    if kind == "prometheus" and not address:
        return [Problem(f"{base}.metrics.address", "not set: metrics.type prometheus needs the Prometheus URL, for "
                        "example http://prometheus-k8s.monitoring:9090")]
    return []


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---- the scheduler's configuration ----------------------------------------------------------------------------------

def parse_scheduler_config(given: Union[str, dict, None]) -> Optional[dict]:
    """The Volcano scheduler configuration (``actions``, ``tiers``, ``metrics``) from what the user has at hand: the
    text of ``volcano-scheduler.conf`` (YAML), the ConfigMap or its ``data``, or the CCE Volcano add-on's JSON (its
    ``default_scheduler_conf``, at the top or under ``custom``)."""
    if given is None or given == "" or given == {}:
        return None
    document = _load_text(given) if isinstance(given, str) else given
    if not isinstance(document, dict):
        raise SchedulerConfigError(f"volcano_scheduler_config: a mapping or YAML/JSON text is required, got "
                                   f"{type(document).__name__}")
    for candidate in _candidates(document):
        if isinstance(candidate, str):
            candidate = _load_text(candidate)
        if isinstance(candidate, dict) and "tiers" in candidate:
            return candidate
    raise SchedulerConfigError(
        "volcano_scheduler_config: no scheduler configuration found (a mapping with 'tiers'); give the content of "
        f"'{SCHEDULER_CONF_KEY}' from ConfigMap volcano-system/volcano-scheduler-configmap, that ConfigMap, or the CCE "
        "Volcano add-on JSON with default_scheduler_conf")


def _candidates(document: dict) -> list[Any]:
    data = document.get("data") if isinstance(document.get("data"), dict) else {}
    custom = document.get("custom") if isinstance(document.get("custom"), dict) else {}
    return [document, data.get(SCHEDULER_CONF_KEY), document.get(SCHEDULER_CONF_KEY),
            document.get("default_scheduler_conf"), custom.get("default_scheduler_conf")]


def _load_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SchedulerConfigError(f"volcano_scheduler_config: neither JSON nor YAML ({error})") from error


def scheduler_plugins(config: dict) -> dict[str, tuple[str, dict]]:
    """Plugin name -> (its field, its entry), across the tiers."""
    found: dict[str, tuple[str, dict]] = {}
    for t_index, tier in enumerate(config.get("tiers") or []):
        for p_index, plugin in enumerate((tier or {}).get("plugins") or []):
            if isinstance(plugin, dict) and plugin.get("name"):
                found.setdefault(str(plugin["name"]), (f"tiers[{t_index}].plugins[{p_index}]", plugin))
    return found


def _normalized_type(kind: Optional[str]) -> str:
    kind = (kind or SCHEDULER_DEFAULT_METRICS_TYPE).strip()
    return "prometheus_adaptor" if kind == "prometheus_adapt" else kind  # both spellings appear in Volcano's docs


def _normalized_address(address: Optional[str]) -> str:
    return (address or "").strip().rstrip("/").lower()


# ---- the pairing ----------------------------------------------------------------------------------------------------

def pairing_problems(policy: dict, scheduler_config: dict) -> list[Problem]:
    plugins = scheduler_plugins(scheduler_config)
    problems: list[Problem] = []
    for p_index, profile in enumerate(policy.get("profiles") or []):
        balance = enabled_plugins(profile, "balance")
        if LOAD_AWARE in balance:
            problems += _load_aware_pairing(p_index, profile, plugins, scheduler_config)
        if HIGH_NODE_UTILIZATION in balance and "binpack" not in plugins:
            problems.append(Problem(
                "volcano_scheduler_config.tiers", f"no 'binpack' plugin, but volcano.policy.profiles[{p_index}] "
                "enables HighNodeUtilization: the pods it evicts from underused nodes would be spread out again "
                "instead of packed; add '- name: binpack' to a tier of the scheduler configuration"))
    return problems


def _load_aware_pairing(p_index: int, profile: dict, plugins: dict[str, tuple[str, dict]],
                        scheduler_config: dict) -> list[Problem]:
    c_index, args = plugin_args(profile, LOAD_AWARE)
    base = _args_field(p_index, c_index, LOAD_AWARE)
    if "usage" not in plugins:
        return [Problem("volcano_scheduler_config.tiers", f"no 'usage' plugin, but volcano.policy.profiles[{p_index}] "
                        "enables LoadAware: the scheduler would place evicted pods by their requests, not by node "
                        "usage, and may put them back on the node they were evicted from; add '- name: usage' to a "
                        "tier of the scheduler configuration, with a 'metrics' section")]
    problems = _same_metrics_source(base, args.get("metrics") or {}, scheduler_config.get("metrics"))
    field, usage = plugins["usage"]
    problems += _usage_threshold_warnings(base, args, f"volcano_scheduler_config.{field}", usage)
    return problems


def _same_metrics_source(base: str, ours: dict, theirs: Any) -> list[Problem]:
    if not isinstance(theirs, dict) or not theirs:
        return [Problem("volcano_scheduler_config.metrics", "missing: the usage plugin reads no node usage without a "
                        "metrics section; add metrics: {type: ..., address: ...} matching the descheduler's "
                        f"{base}.metrics")]
    their_type = _normalized_type(theirs.get("type"))
    if their_type not in SCHEDULER_METRICS_TYPES:
        return [Problem("volcano_scheduler_config.metrics.type", f"invalid value {theirs.get('type')!r}: one of "
                        f"{', '.join(SCHEDULER_METRICS_TYPES)} is required")]
    our_type = ours.get("type")
    if not our_type:
        return [Problem(f"{base}.metrics.type", f"not set, while the scheduler's usage plugin reads {their_type}"
                        f"{' at ' + theirs['address'] if theirs.get('address') else ''}; set the descheduler's metrics "
                        "to the same source so both judge node load alike")]
    if _normalized_type(our_type) != their_type:
        return [Problem(f"{base}.metrics.type", f"invalid value {our_type!r}: the scheduler's usage plugin reads "
                        f"{their_type} (volcano_scheduler_config.metrics.type); use the same metrics source, or the "
                        "scheduler and the descheduler disagree about which nodes are hot")]
    if their_type != "prometheus_adaptor" and _normalized_address(ours.get("address")) != _normalized_address(
            theirs.get("address")):
        return [Problem(f"{base}.metrics.address", f"invalid value {ours.get('address')!r}: the scheduler's usage "
                        f"plugin reads {theirs.get('address')!r} (volcano_scheduler_config.metrics.address); use the "
                        "same address")]
    return []


def _usage_threshold_warnings(base: str, args: dict, usage_field: str, usage: dict) -> list[Problem]:
    """The scheduler still places pods on a node up to its usage threshold; above the descheduler's target the
    descheduler evicts them again: a pod can bounce between the two."""
    thresholds = ((usage.get("arguments") or {}).get("thresholds") or {})
    targets = args.get("targetThresholds") or {}
    problems = []
    for ours, theirs in USAGE_THRESHOLD_KEYS.items():
        limit, target = thresholds.get(theirs), targets.get(ours)
        if _is_number(limit) and _is_number(target) and limit > target:
            problems.append(Problem(
                f"{usage_field}.arguments.thresholds.{theirs}", f"{limit!r} is above the descheduler's "
                f"targetThresholds.{ours} ({target!r}): the scheduler may place evicted pods on nodes the descheduler "
                f"treats as overused, and evict them again; set it to {target} or lower", severity="warning"))
    return problems


def split(problems: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings)."""
    return ([p for p in problems if p.severity == "error"], [p for p in problems if p.severity == "warning"])
