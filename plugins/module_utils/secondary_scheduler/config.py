"""The secondary scheduler's KubeSchedulerConfiguration: built from the Trimaran options, or taken as given, and checked
before anything is written (reference peers.md §4.1-4.4; kubernetes-sigs/scheduler-plugins apis/config).

kube-scheduler refuses a configuration with an unknown plugin or bad args at start: the operator would then roll out
a scheduler pod that crash-loops, and every pod asking for that scheduler stays Pending. Checking here turns that
into an error that names the field, the value and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import urlparse

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import parse_quantity
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
TARGET_LOAD_PACKING = "TargetLoadPacking"
LOAD_VARIATION_RISK_BALANCING = "LoadVariationRiskBalancing"
TRIMARAN_PLUGINS = (TARGET_LOAD_PACKING, LOAD_VARIATION_RISK_BALANCING)
METRIC_PROVIDER_TYPES = ("KubernetesMetricsServer", "Prometheus", "SignalFx")
PROVIDERS_NEEDING_ADDRESS = ("Prometheus", "SignalFx")

EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                    "permit", "preBind", "bind", "postBind")
# Plugin -> the extension points it implements: kube-scheduler's in-tree plugins (1.31) and the scheduler-plugins
# ones a secondary scheduler image carries. ``multiPoint`` takes any of them.
PLUGINS: dict[str, tuple[str, ...]] = {
    "PrioritySort": ("queueSort",),
    "SchedulingGates": ("preEnqueue",),
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodeName": ("filter",),
    "NodePorts": ("preFilter", "filter"),
    "NodeUnschedulable": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "ImageLocality": ("score",),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "VolumeZone": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    "DynamicResources": ("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"),
    "DefaultPreemption": ("postFilter",),
    "DefaultBinder": ("bind",),
    # kubernetes-sigs/scheduler-plugins
    TARGET_LOAD_PACKING: ("score",),
    LOAD_VARIATION_RISK_BALANCING: ("score",),
    "LowRiskOverCommitment": ("preScore", "score"),
    "Coscheduling": ("preEnqueue", "queueSort", "preFilter", "postFilter", "permit", "reserve"),
    "CapacityScheduling": ("preFilter", "postFilter", "reserve"),
    "NodeResourcesAllocatable": ("score",),
    "NodeResourceTopologyMatch": ("filter", "score", "reserve", "preBind"),
    "PreemptionToleration": ("postFilter",),
    "TopologicalSort": ("queueSort",),
    "NetworkOverhead": ("preFilter", "filter", "score"),
    "SySched": ("preScore", "score"),
    "PodState": ("score",),
    "QOSSort": ("queueSort",),
    "Peaks": ("score",),
}


class ConfigError(FleetError, ValueError):
    """The configuration cannot run; ``field`` is where, ``value`` what was found."""

    def __init__(self, field: str, value: Any, fix: str) -> None:
        super().__init__(f"{field}: invalid value {value!r}: {fix}")
        self.field = field
        self.value = value


@dataclass
class Trimaran:
    """The module's ``trimaran`` options: one TargetLoadPacking profile."""

    scheduler_name: str
    target_utilization: Any = 40
    default_requests_cpu: Any = "1000m"
    default_requests_multiplier: Any = "1.5"
    metric_provider: Optional[dict] = None  # {type, address, token, insecure_skip_verify}
    watcher_address: Optional[str] = None


# ---- building -------------------------------------------------------------------------------------------------------

def trimaran_config(options: Trimaran) -> dict:
    """A profile scoring with TargetLoadPacking only: the resource-based scores are off, as in the operator's
    TargetLoadPacking example, so the load-aware score decides where pods land."""
    args: dict[str, Any] = {
        "targetUtilization": options.target_utilization,
        "defaultRequests": {"cpu": options.default_requests_cpu},
        "defaultRequestsMultiplier": options.default_requests_multiplier,
    }
    if options.watcher_address:
        args["watcherAddress"] = options.watcher_address
    provider = {key: value for key, value in (options.metric_provider or {}).items() if value is not None}
    if provider:
        args["metricProvider"] = {_CAMEL.get(key, key): value for key, value in provider.items()}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "leaderElection": {"leaderElect": False},
        "profiles": [{
            "schedulerName": options.scheduler_name,
            "plugins": {"score": {
                "enabled": [{"name": TARGET_LOAD_PACKING}],
                "disabled": [{"name": "NodeResourcesBalancedAllocation"}, {"name": "NodeResourcesFit"}],
            }},
            "pluginConfig": [{"name": TARGET_LOAD_PACKING, "args": args}],
        }],
    }


_CAMEL = {"insecure_skip_verify": "insecureSkipVerify"}


# ---- checking -------------------------------------------------------------------------------------------------------

def validate(config: Any, field: str = "scheduler_config") -> list[str]:
    """Raise ConfigError for the first problem; returns warnings (what runs but is probably not meant)."""
    if not isinstance(config, dict):
        raise ConfigError(field, config, "a KubeSchedulerConfiguration mapping is required")
    if config.get("apiVersion") != API_VERSION:
        raise ConfigError(f"{field}.apiVersion", config.get("apiVersion"),
                          f"use {API_VERSION} (v1beta2 and v1beta3 are gone from kube-scheduler 1.29 on)")
    if config.get("kind") != KIND:
        raise ConfigError(f"{field}.kind", config.get("kind"), f"use {KIND}")
    profiles = config.get("profiles")
    if not isinstance(profiles, list) or not profiles:
        raise ConfigError(f"{field}.profiles", profiles, "at least one profile with a schedulerName is required")
    warnings: list[str] = []
    seen: set[str] = set()
    for index, profile in enumerate(profiles):
        warnings += _validate_profile(profile, f"{field}.profiles[{index}]", seen)
    return warnings


def _validate_profile(profile: Any, field: str, seen: set[str]) -> list[str]:
    if not isinstance(profile, dict):
        raise ConfigError(field, profile, "a profile mapping is required")
    name = profile.get("schedulerName")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{field}.schedulerName", name, "name the scheduler; pods opt in with spec.schedulerName")
    if name == "default-scheduler":
        raise ConfigError(f"{field}.schedulerName", name, "a secondary scheduler must not take the default "
                          "scheduler's name: both would bind the same pods; use for example secondary-scheduler")
    if name in seen:
        raise ConfigError(f"{field}.schedulerName", name, "each profile needs its own schedulerName")
    seen.add(name)
    enabled = _validate_plugins(profile.get("plugins") or {}, f"{field}.plugins")
    return _validate_plugin_config(profile.get("pluginConfig") or [], f"{field}.pluginConfig", enabled)


def _validate_plugins(plugins: Any, field: str) -> set[str]:
    if not isinstance(plugins, dict):
        raise ConfigError(field, plugins, "a mapping of extension point -> {enabled, disabled} is required")
    enabled: set[str] = set()
    for point, spec in plugins.items():
        if point != "multiPoint" and point not in EXTENSION_POINTS:
            raise ConfigError(f"{field}.{point}", point, "unknown extension point; known: multiPoint, "
                              + ", ".join(EXTENSION_POINTS))
        for kind in ("enabled", "disabled"):
            for index, entry in enumerate((spec or {}).get(kind) or []):
                plugin = entry.get("name") if isinstance(entry, dict) else None
                where = f"{field}.{point}.{kind}[{index}].name"
                if kind == "disabled" and plugin == "*":
                    continue
                _check_plugin(where, plugin, point)
                if kind == "enabled":
                    enabled.add(str(plugin))
                    _check_weight(f"{field}.{point}.{kind}[{index}].weight", entry.get("weight"), point)
    return enabled


def _check_plugin(field: str, plugin: Any, point: str) -> None:
    if plugin not in PLUGINS:
        raise ConfigError(field, plugin, "unknown plugin; known plugins"
                          + (f" at {point}: " if point != "multiPoint" else ": ")
                          + ", ".join(sorted(p for p, points in PLUGINS.items()
                                             if point == "multiPoint" or point in points)))
    if point != "multiPoint" and point not in PLUGINS[plugin]:
        raise ConfigError(field, plugin, f"{plugin} does not implement {point}; it implements "
                          + ", ".join(PLUGINS[plugin]))


def _check_weight(field: str, weight: Any, point: str) -> None:
    if weight is None:
        return
    if point not in ("score", "multiPoint"):
        raise ConfigError(field, weight, "a weight only applies to score plugins")
    if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
        raise ConfigError(field, weight, "an integer from 1 to 100 is required")


def _validate_plugin_config(entries: Any, field: str, enabled: set[str]) -> list[str]:
    if not isinstance(entries, list):
        raise ConfigError(field, entries, "a list of {name, args} is required")
    warnings: list[str] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in PLUGINS:
            raise ConfigError(f"{field}[{index}].name", name, "unknown plugin; known: " + ", ".join(sorted(PLUGINS)))
        if name in names:
            raise ConfigError(f"{field}[{index}].name", name, "one pluginConfig entry per plugin")
        names.add(name)
        if name not in enabled:
            warnings.append(f"{field}[{index}]: args for {name}, which this profile does not enable: unused")
        args = entry.get("args") or {}
        if not isinstance(args, dict):
            raise ConfigError(f"{field}[{index}].args", args, "a mapping is required")
        if name in TRIMARAN_PLUGINS:
            _validate_trimaran(args, f"{field}[{index}].args", name)
    return warnings


def _validate_trimaran(args: dict, field: str, plugin: str) -> None:
    _validate_metric_source(args, field)
    if plugin == TARGET_LOAD_PACKING:
        _validate_target_load_packing(args, field)
    else:
        for key in ("safeVarianceMargin", "safeVarianceSensitivity"):
            value = args.get(key)
            if value is not None and (not _is_number(value) or value < 0):
                raise ConfigError(f"{field}.{key}", value, "a number of 0 or more is required")


def _validate_metric_source(args: dict, field: str) -> None:
    watcher = args.get("watcherAddress")
    if watcher:
        _check_url(f"{field}.watcherAddress", watcher, "the load-watcher service URL, e.g. http://load-watcher:2020")
        return  # with a watcher, the metric provider is the watcher's business
    provider = args.get("metricProvider") or {}
    if not isinstance(provider, dict):
        raise ConfigError(f"{field}.metricProvider", provider, "a mapping {type, address, token} is required")
    kind = provider.get("type") or "KubernetesMetricsServer"
    if kind not in METRIC_PROVIDER_TYPES:
        raise ConfigError(f"{field}.metricProvider.type", kind, "one of " + ", ".join(METRIC_PROVIDER_TYPES))
    if kind in PROVIDERS_NEEDING_ADDRESS:
        if not provider.get("address"):
            raise ConfigError(f"{field}.metricProvider.address", provider.get("address"),
                              f"metricProvider type {kind} needs its address (for Prometheus on OpenShift "
                              "https://prometheus-k8s.openshift-monitoring.svc:9091), or set watcherAddress")
        _check_url(f"{field}.metricProvider.address", provider["address"], "an http(s) URL is required")


def _validate_target_load_packing(args: dict, field: str) -> None:
    target = args.get("targetUtilization")
    # The score divides by targetUtilization (P <= T branch): 0 cannot work; above 100 means nothing.
    if target is not None and (not isinstance(target, int) or isinstance(target, bool) or not 0 < target <= 100):
        raise ConfigError(f"{field}.targetUtilization", target, "an integer percentage above 0 and at most 100 "
                          "is required (the CPU utilization nodes are packed up to, e.g. 70)")
    requests = args.get("defaultRequests")
    if requests is not None:
        _check_default_requests(f"{field}.defaultRequests", requests)
    multiplier = args.get("defaultRequestsMultiplier")
    if multiplier is not None:
        if not isinstance(multiplier, str):
            raise ConfigError(f"{field}.defaultRequestsMultiplier", multiplier, "a string is required (the "
                              "scheduler decodes it as a string): quote it, e.g. \"1.5\"")
        try:
            number = float(multiplier)
        except ValueError:
            number = -1.0
        if number <= 0:
            raise ConfigError(f"{field}.defaultRequestsMultiplier", multiplier, "a positive number as a string "
                              "is required, e.g. \"1.5\"")


def _check_default_requests(field: str, requests: Any) -> None:
    if not isinstance(requests, dict):
        raise ConfigError(field, requests, "a mapping of resource -> quantity is required, e.g. {cpu: 1000m}")
    for resource, quantity in requests.items():
        try:
            parsed = parse_quantity(quantity)
        except (ValueError, TypeError, ArithmeticError):
            parsed = -1
        if parsed <= 0:
            raise ConfigError(f"{field}.{resource}", quantity, "a positive Kubernetes quantity is required, "
                              "e.g. 1000m or 1")


def _check_url(field: str, value: Any, fix: str) -> None:
    parsed = urlparse(str(value))
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(field, value, fix)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def metric_sources(config: dict) -> list[tuple[str, dict]]:
    """(field, Trimaran args) of every Trimaran plugin configured, to check the metric source is reachable."""
    found = []
    for p_index, profile in enumerate(config.get("profiles") or []):
        for c_index, entry in enumerate(profile.get("pluginConfig") or []):
            if isinstance(entry, dict) and entry.get("name") in TRIMARAN_PLUGINS:
                found.append((f"scheduler_config.profiles[{p_index}].pluginConfig[{c_index}].args",
                              entry.get("args") or {}))
    return found
