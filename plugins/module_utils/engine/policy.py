"""DeschedulerPolicy (descheduler/v1alpha2): decode, validate, default — in upstream's order.

1. The top level is decoded non-strictly (unknown keys dropped, reported as warnings); plugin args strictly.
2. Each plugin's validator runs on its args before defaults; 3. defaults; 4. DefaultEvictor inserted per profile
with priorityThreshold resolved to a value; 5. every enabled plugin must exist, implement the extension point and
have a pluginConfig entry. Plugins are looked up in the registry (engine/plugins/__init__.py), never by module name.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

from ansible_collections.descheduler.fleet.plugins.module_utils.engine import evictor as default_evictor
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import parse_selector_string
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import REGISTRY
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.nodeutilization_metrics import (
    REQUESTS,
    SOURCES,
)

API_VERSION = "descheduler/v1alpha2"
ADDON_POLICY_KEY = "deschedulerPolicy"  # where the Huawei CCE Volcano add-on configuration holds the policy
TOP_LEVEL_FIELDS = (
    "apiVersion", "kind", "profiles", "nodeSelector", "maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace",
    "maxNoOfPodsToEvictTotal", "evictionFailureEventNotification", "gracePeriodSeconds", "metricsCollector",
    "metricsProviders", "prometheus",
)
EXTENSION_POINTS = ("presort", "sort", "deschedule", "balance", "filter", "preevictionfilter")
MAX_PRIORITY_THRESHOLD = 2_000_000_000
MIN_INT32 = -(2**31)
# metricsProviders[].source: the registered metrics sources that read actual usage
PROVIDER_SOURCES = tuple(name for name in SOURCES if name != REQUESTS)


@dataclass
class Profile:
    name: str
    args: dict[str, dict] = field(default_factory=dict)
    deschedule: list[str] = field(default_factory=list)
    balance: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    pre_eviction_filters: list[str] = field(default_factory=list)
    priority_threshold: int = MAX_PRIORITY_THRESHOLD


@dataclass
class Policy:
    profiles: list[Profile]
    node_selector: str = ""
    max_total: Optional[int] = None
    max_per_node: Optional[int] = None
    max_per_namespace: Optional[int] = None
    metrics_providers: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    document: dict = field(default_factory=dict)
    # "volcano": the Volcano descheduler runs it (upstream v0.27.1's plugins plus LoadAware): see volcano_flavor
    flavor: str = "upstream"


def load_policy(document: Any, priority_classes: Mapping[str, int]) -> Policy:
    if not isinstance(document, Mapping):
        raise PolicyError("policy", document, "expected a DeschedulerPolicy mapping")
    addon = ADDON_POLICY_KEY in document and "profiles" not in document
    document, warnings = unwrap_addon_policy(document)
    _check_header(document)
    warnings += [f"policy.{key}: unknown field ignored (upstream decodes the top level non-strictly)"
                 for key in document if key not in TOP_LEVEL_FIELDS and key != "strategies"]
    limits = {key: _limit(document, key) for key in
              ("maxNoOfPodsToEvictTotal", "maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace")}
    node_selector = document.get("nodeSelector") or ""
    if not isinstance(node_selector, str):
        raise PolicyError("policy.nodeSelector", node_selector,
                          "expected a label selector string such as 'a=b,c in (x)'")
    try:
        parse_selector_string(node_selector, "policy.nodeSelector")
    except ValueError as exc:
        raise PolicyError("policy.nodeSelector", node_selector, str(exc)) from exc
    providers = _metrics_providers(document)
    raw_profiles = document.get("profiles") or []
    if not isinstance(raw_profiles, list):
        raise PolicyError("policy.profiles", raw_profiles, "expected a list of profiles")
    profiles = [_load_profile(p, f"policy.profiles[{i}]", priority_classes, warnings)
                for i, p in enumerate(raw_profiles)]
    # upstream's validateDeschedulerConfiguration has no uniqueness check: profiles of the same name run by index
    # (the operator renders two "LongLifecycle" for LongLifecycle with DevPreviewLongLifecycle)
    flavor = "volcano" if addon or any(LOAD_AWARE in p.balance for p in profiles) else "upstream"
    if flavor == "volcano":
        _validate_volcano(profiles)
    return Policy(
        profiles=profiles,
        node_selector=node_selector,
        max_total=limits["maxNoOfPodsToEvictTotal"],
        max_per_node=limits["maxNoOfPodsToEvictPerNode"],
        max_per_namespace=limits["maxNoOfPodsToEvictPerNamespace"],
        metrics_providers=providers,
        warnings=warnings,
        document=_render(document, profiles),
        flavor=flavor,
    )


LOAD_AWARE = "LoadAware"


def _validate_volcano(profiles: list[Profile]) -> None:
    """A policy that the Volcano descheduler runs (the CCE add-on's, or one balancing with LoadAware) is decoded by
    upstream v0.27.1's plugins: each plugin's ``validate_volcano`` refuses what that version does not know."""
    for index, profile in enumerate(profiles):
        for name, args in profile.args.items():
            check = REGISTRY[name].validate_volcano
            if check is not None:
                check(args, f"policy.profiles[{index}].pluginConfig[{name}].args")


def unwrap_addon_policy(document: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """The DeschedulerPolicy inside a Huawei CCE Volcano add-on configuration (its ``deschedulerPolicy``, a mapping
    or YAML/JSON text, usually without apiVersion/kind), or the document itself when it is a plain policy."""
    if ADDON_POLICY_KEY not in document or "profiles" in document:
        return document, []
    inner = document[ADDON_POLICY_KEY]
    if isinstance(inner, str):
        import yaml  # imported when used: importing the engine must not need PyYAML (ansible-test import sanity)

        try:
            inner = yaml.safe_load(inner)
        except yaml.YAMLError as exc:
            raise PolicyError(f"policy.{ADDON_POLICY_KEY}", inner[:80], f"not valid YAML/JSON: {exc}") from exc
    if not isinstance(inner, Mapping):
        raise PolicyError(f"policy.{ADDON_POLICY_KEY}", inner, "expected the add-on's DeschedulerPolicy "
                          "(a mapping with profiles)")
    warnings = []
    enabled = document.get("descheduler_enable")
    if enabled is not None and str(enabled).lower() != "true":
        warnings.append(f"policy.descheduler_enable is {enabled!r}: the CCE add-on runs no descheduler; the plan "
                        "shows what it would do once enabled")
    return {"apiVersion": API_VERSION, "kind": "DeschedulerPolicy", **inner}, warnings


def _check_header(document: Mapping[str, Any]) -> None:
    api_version = document.get("apiVersion")
    if "strategies" in document or api_version == "descheduler/v1alpha1":
        raise PolicyError("policy.apiVersion", api_version or "descheduler/v1alpha1",
                          "the v1alpha1 'strategies' format was removed upstream; write a descheduler/v1alpha2 "
                          "DeschedulerPolicy with profiles, pluginConfig and plugins")
    if api_version not in (None, API_VERSION):
        raise PolicyError("policy.apiVersion", api_version, f"must be {API_VERSION}")
    kind = document.get("kind")
    if kind not in (None, "DeschedulerPolicy"):
        raise PolicyError("policy.kind", kind, "must be DeschedulerPolicy")


def _limit(document: Mapping[str, Any], key: str) -> Optional[int]:
    value = document.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PolicyError(f"policy.{key}", value, "expected a non-negative integer (unset means no limit)")
    return value


def _metrics_providers(document: Mapping[str, Any]) -> list[dict]:
    providers = document.get("metricsProviders") or []
    if not isinstance(providers, list):
        raise PolicyError("policy.metricsProviders", providers, "expected a list")
    seen: set[str] = set()
    for index, provider in enumerate(providers):
        where = f"policy.metricsProviders[{index}]"
        source = (provider or {}).get("source")
        if source not in PROVIDER_SOURCES:
            raise PolicyError(f"{where}.source", source, f"must be {' or '.join(PROVIDER_SOURCES)}")
        if source in seen:
            raise PolicyError(f"{where}.source", source, "each metrics source can be configured only once")
        seen.add(source)
        if source == "KubernetesMetrics" and ((document.get("metricsCollector") or {}).get("enabled")):
            raise PolicyError(where, provider, "KubernetesMetrics cannot be combined with metricsCollector.enabled")
        if source == "Prometheus":
            _check_prometheus(provider.get("prometheus") or {}, f"{where}.prometheus")
    return list(providers)


def _check_prometheus(prometheus: Mapping[str, Any], where: str) -> None:
    url = str(prometheus.get("url") or "")
    # upstream only needs url.Parse to succeed; we also want http(s), which the Prometheus client needs anyway
    if not url.startswith(("http://", "https://")) or not _port_parses(url):
        raise PolicyError(f"{where}.url", url, "a Prometheus provider needs a valid http(s) URL")
    if prometheus.get("authToken") is not None:
        secret = prometheus["authToken"].get("secretReference")
        if secret is None:
            raise PolicyError(f"{where}.authToken.secretReference", secret,
                              "an authToken needs a secretReference with name and namespace")
        if not (secret.get("name") and secret.get("namespace")):
            raise PolicyError(f"{where}.authToken.secretReference", secret, "needs both name and namespace")


def _port_parses(url: str) -> bool:
    try:
        port = urlsplit(url).port  # raises on ":-80" and the like, as Go's url.Parse does
    except ValueError:
        return False
    return port is None or port >= 0


def _load_profile(raw: Any, where: str, priority_classes: Mapping[str, int], warnings: list[str]) -> Profile:
    if not isinstance(raw, Mapping):
        raise PolicyError(where, raw, "expected a profile mapping with name, pluginConfig and plugins")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise PolicyError(f"{where}.name", name, "every profile needs a non-empty name")
    args = _plugin_configs(raw.get("pluginConfig") or [], f"{where}.pluginConfig", warnings)
    points = _plugin_sets(raw.get("plugins") or {}, f"{where}.plugins", warnings)
    profile = Profile(name=name, args=args, deschedule=points["deschedule"], balance=points["balance"],
                      filters=points["filter"], pre_eviction_filters=points["preevictionfilter"])
    _insert_default_evictor(profile, priority_classes, f"{where}")
    _add_balance_filters(profile)
    _check_enabled(profile, where)
    return profile


def _plugin_configs(configs: Any, where: str, warnings: list[str]) -> dict[str, dict]:
    if not isinstance(configs, list):
        raise PolicyError(where, configs, "expected a list of {name, args}")
    result: dict[str, dict] = {}
    for index, config in enumerate(configs):
        entry = f"{where}[{index}]"
        name = (config or {}).get("name") if isinstance(config, Mapping) else None
        registration = REGISTRY.lookup(name, f"{entry}.name")
        args = config.get("args")
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise PolicyError(f"{entry}.args", args, "expected a mapping of plugin arguments")
        args = copy.deepcopy(dict(args))
        # upstream validates every entry, duplicates included, but builds the plugin from the first one
        registration.validate(args, f"{entry}.args")
        if registration.config_warnings is not None:
            warnings += registration.config_warnings(args, f"{entry}.args")
        args = registration.set_defaults(args)
        if name in result:
            warnings.append(f"{entry}: second pluginConfig for {name} ignored")
            continue
        result[name] = args
    return result


def _plugin_sets(plugins: Any, where: str, warnings: list[str]) -> dict[str, list[str]]:
    if not isinstance(plugins, Mapping):
        raise PolicyError(where, plugins, "expected a mapping of extension points")
    result: dict[str, list[str]] = {}
    for point in EXTENSION_POINTS:
        plugin_set = plugins.get(point) or {}
        if not isinstance(plugin_set, Mapping):
            raise PolicyError(f"{where}.{point}", plugin_set, "expected {enabled: [...], disabled: [...]}")
        enabled = plugin_set.get("enabled") or []
        if not isinstance(enabled, list) or not all(isinstance(n, str) for n in enabled):
            raise PolicyError(f"{where}.{point}.enabled", enabled, "expected a list of plugin names")
        result[point] = list(enabled)
    for key in plugins:
        if key not in EXTENSION_POINTS:
            warnings.append(f"{where}.{key}: unknown extension point ignored (upstream matches the JSON tags "
                            "presort, sort, deschedule, balance, filter, preevictionfilter case-sensitively)")
    return result


def _insert_default_evictor(profile: Profile, priority_classes: Mapping[str, int], where: str) -> None:
    if default_evictor.NAME not in profile.filters:
        profile.filters.insert(0, default_evictor.NAME)
    if default_evictor.NAME not in profile.pre_eviction_filters:
        profile.pre_eviction_filters.insert(0, default_evictor.NAME)
    if default_evictor.NAME not in profile.args:
        profile.args = {default_evictor.NAME: {}, **profile.args}
    args = profile.args[default_evictor.NAME]
    threshold = args.get("priorityThreshold") or {}
    if threshold.get("name"):
        name = threshold["name"]
        if name not in priority_classes:
            raise PolicyError(f"{where}.pluginConfig[DefaultEvictor].args.priorityThreshold.name", name,
                              "no PriorityClass of that name in the cluster; known: "
                              + ", ".join(sorted(priority_classes)))
        value = priority_classes[name]
    elif threshold.get("value") is not None:
        value = threshold["value"]
    else:
        value = MAX_PRIORITY_THRESHOLD
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_INT32 <= value <= MAX_PRIORITY_THRESHOLD:
        raise PolicyError(f"{where}.pluginConfig[DefaultEvictor].args.priorityThreshold", threshold,
                          f"priority threshold must be an int32 ≤ {MAX_PRIORITY_THRESHOLD}")
    args["priorityThreshold"] = {"value": value}
    profile.priority_threshold = value


def _add_balance_filters(profile: Profile) -> None:
    """Volcano's descheduler appends LoadAware to preEvictionFilter of each profile enabling it for balance."""
    for name in profile.balance:
        registration = REGISTRY.get(name)
        if registration is not None and registration.pre_eviction_filter_with_balance \
                and name not in profile.pre_eviction_filters:
            profile.pre_eviction_filters.append(name)


def _check_enabled(profile: Profile, where: str) -> None:
    points = (("deschedule", profile.deschedule), ("balance", profile.balance), ("filter", profile.filters),
              ("preevictionfilter", profile.pre_eviction_filters))
    for point, names in points:
        for name in names:
            registration = REGISTRY.lookup(name, f"{where}.plugins.{point}.enabled")
            if not registration.implements(point):
                raise PolicyError(f"{where}.plugins.{point}.enabled", name,
                                  f"plugin {name} does not implement the {point} extension point")
            if name not in profile.args:
                raise PolicyError(f"{where}.plugins.{point}.enabled", name,
                                  f"plugin {name} is enabled but has no pluginConfig entry; add "
                                  f"{{name: {name}, args: {{...}}}} to the profile's pluginConfig "
                                  "(upstream refuses to start without it)")


def _render(document: Mapping[str, Any], profiles: list[Profile]) -> dict:
    """The effective policy as plain data, for the plan's record of what was simulated."""
    rendered = {k: copy.deepcopy(v) for k, v in document.items() if k in TOP_LEVEL_FIELDS and k != "profiles"}
    rendered.setdefault("apiVersion", API_VERSION)
    rendered.setdefault("kind", "DeschedulerPolicy")
    rendered["profiles"] = [
        {
            "name": p.name,
            "pluginConfig": [{"name": n, "args": a} for n, a in p.args.items()],
            "plugins": {
                "deschedule": {"enabled": p.deschedule},
                "balance": {"enabled": p.balance},
                "filter": {"enabled": p.filters},
                "preevictionfilter": {"enabled": p.pre_eviction_filters},
            },
        }
        for p in profiles
    ]
    return rendered
