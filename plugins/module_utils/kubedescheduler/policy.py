"""Translate an OpenShift ``KubeDescheduler`` spec (operator.openshift.io/v1) into the DeschedulerPolicy that the
Kube Descheduler Operator writes to ConfigMap ``cluster`` (key ``policy.yaml``). The spec is first validated the way
the API server (CRD schema + CEL) and the operator do: see validation.py (api_server_rules.py, operator_rules.py,
warning_rules.py).

Behaviour follows openshift/cluster-kube-descheduler-operator ``main`` at 945dcaa (CSV 5.4.0):
``pkg/operator/target_config_reconciler.go`` (the *Profile functions, manageConfigMap, setEvictionsLimits,
validateDeschedulerCR), ``pkg/apis/descheduler/v1/types_descheduler.go`` and the rendered expectations in
``pkg/operator/testdata/assets/*.yaml``. This is an independent re-implementation in pure Python (stdlib only).

``render_policy`` returns exactly what ``yaml.safe_load`` gives for the operator's ``policy.yaml``: Go's
``encoding/json`` + ghodss/yaml output, i.e. alphabetically sorted keys, ``podProtections: {}`` in DefaultEvictor,
``{enabled: null, disabled: null}`` for unused extension points and ``priorityThreshold: {name, value}`` with the
unused half empty/null. All of these decode to the upstream defaults; ``compact_policy`` strips them.

Not simulated by the planning engine: the ``KubevirtMigrationAware`` plugin (KubeVirt profiles, main/4.23 only).
It is rendered as the operator renders it (filter + preEvictionFilter, args from the dev*Migration* durations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import SECOND, format_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    DEFAULT_POD_LIFETIME_SECONDS,
    DEFAULT_PROMETHEUS_URL,
    DEVIATION_PRESETS,
    EXTENSION_POINTS,
    HIGH_NODE_UTILIZATION_PRESETS,
    KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE,
    KUBEVIRT_DEFAULT_EVICTIONS_TOTAL,
    KUBEVIRT_DEFAULT_UTILIZATION_PROFILE,
    KUBEVIRT_MIGRATION_ARGS,
    KUBEVIRT_NODE_SELECTOR,
    KUBEVIRT_PROFILES,
    LOW_NODE_UTILIZATION_PRESETS,
    POD_RESTART_THRESHOLD,
    POLICY_API_VERSION,
    POLICY_KIND,
    UINT64_MODULUS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_rules import (
    _duration_or_none,
    _utilization_query,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    _raise_for_errors,
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    _customizations,
    _has_any,
    _is_int,
    _namespace_lists,
    _needs_prometheus,
    _valid_profiles,
    protected_namespaces,
)

# --- rendering ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RenderInputs:
    """What every profile builder needs, resolved once as manageConfigMap does."""

    customizations: Optional[dict]
    included: list[str]
    excluded: list[str]  # protected + user-excluded, or [] when included is set
    protected: list[str]
    ignore_pvc_pods: bool
    evict_local_storage_pods: bool
    profiles: list[str]


def _render_inputs(spec: dict, namespaces: Optional[list[str]]) -> _RenderInputs:
    customizations = _customizations(spec)
    protected = protected_namespaces(namespaces or [])
    included, user_excluded = _namespace_lists(customizations)
    profiles = _valid_profiles(spec)
    return _RenderInputs(
        customizations=customizations,
        included=list(included),
        excluded=[] if included else protected + list(user_excluded),
        protected=protected,
        ignore_pvc_pods="EvictPodsWithPVC" not in profiles,
        evict_local_storage_pods="EvictPodsWithLocalStorage" in profiles,
        profiles=profiles,
    )


def _plugin_sets(**enabled: list[str]) -> dict:
    """All six extension points, as Go marshals them (nil slices become null)."""
    return {point: {"disabled": None, "enabled": enabled.get(point)} for point in EXTENSION_POINTS}


def _plugin_config(name: str, args: dict) -> dict:
    return {"args": args, "name": name}


def _namespace_filter(inputs: _RenderInputs) -> Optional[dict]:
    selection = {}
    if inputs.included:
        selection["include"] = list(inputs.included)
    if inputs.excluded:
        selection["exclude"] = list(inputs.excluded)
    return selection or None


def _with_namespaces(args: dict, inputs: _RenderInputs) -> dict:
    selection = _namespace_filter(inputs)
    if selection is not None:
        args["namespaces"] = selection
    return args


def _low_node_utilization_evictable(inputs: _RenderInputs) -> Optional[dict]:
    # LowNodeUtilization has no include support: with `included` it falls back to the protected list.
    if inputs.excluded:
        return {"exclude": list(inputs.excluded)}
    if inputs.included:
        return {"exclude": list(inputs.protected)}
    return None


def _priority_threshold(customizations: Optional[dict]) -> Optional[dict]:
    custom = customizations or {}
    value = custom.get("thresholdPriority")
    class_name = custom.get("thresholdPriorityClassName") or ""
    if value is None and class_name == "":
        return None
    return {"name": class_name, "value": value}


def _default_evictor(inputs: _RenderInputs) -> dict:
    args: dict = {"podProtections": {}}
    if inputs.ignore_pvc_pods:
        args["ignorePvcPods"] = True
    if inputs.evict_local_storage_pods:
        args["evictLocalStoragePods"] = True
    threshold = _priority_threshold(inputs.customizations)
    if threshold is not None:
        args["priorityThreshold"] = threshold
    return _plugin_config("DefaultEvictor", args)


def _profile(name: str, plugin_configs: list[dict], plugins: dict) -> dict:
    return {"name": name, "pluginConfig": plugin_configs, "plugins": plugins}


def _affinity_and_taints(inputs: _RenderInputs) -> dict:
    deschedule = [
        "RemovePodsViolatingInterPodAntiAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
    ]
    configs = [
        _plugin_config(deschedule[0], _with_namespaces({}, inputs)),
        _plugin_config(deschedule[1], _with_namespaces({}, inputs)),
        _plugin_config(
            deschedule[2],
            _with_namespaces({"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}, inputs),
        ),
        _default_evictor(inputs),
    ]
    return _profile("AffinityAndTaints", configs, _plugin_sets(deschedule=deschedule, filter=["DefaultEvictor"]))


def _topology_and_duplicates(inputs: _RenderInputs, soft: bool) -> dict:
    balance = ["RemovePodsViolatingTopologySpreadConstraint", "RemoveDuplicates"]
    constraints = ["DoNotSchedule", "ScheduleAnyway"] if soft else ["DoNotSchedule"]
    configs = [
        _plugin_config(balance[0], _with_namespaces({"constraints": constraints}, inputs)),
        _plugin_config(balance[1], _with_namespaces({}, inputs)),
        _default_evictor(inputs),
    ]
    name = "SoftTopologyAndDuplicates" if soft else "TopologyAndDuplicates"
    return _profile(name, configs, _plugin_sets(balance=balance, filter=["DefaultEvictor"]))


def _metrics_utilization(query: str) -> dict:
    prometheus = {"query": query} if query else {}
    return {"prometheus": prometheus, "source": "Prometheus"}


def _threshold_maps(resources: list[str], low: int, high: int) -> dict:
    return {"thresholds": {r: low for r in resources}, "targetThresholds": {r: high for r in resources}}


def _lifecycle_low_node_utilization(inputs: _RenderInputs) -> dict:
    custom = inputs.customizations or {}
    preset = custom.get("devLowNodeUtilizationThresholds")
    low, high = LOW_NODE_UTILIZATION_PRESETS[preset] if preset is not None else LOW_NODE_UTILIZATION_PRESETS[""]
    resources = ["cpu", "memory", "pods"]
    args: dict = {}
    utilization_profile = custom.get("devActualUtilizationProfile") or ""
    if utilization_profile:
        args["metricsUtilization"] = _metrics_utilization(_utilization_query(utilization_profile) or "")
        resources = ["MetricResource"]
    args.update(_threshold_maps(resources, low, high))
    evictable = _low_node_utilization_evictable(inputs)
    if evictable is not None:
        args["evictableNamespaces"] = evictable
    return _plugin_config("LowNodeUtilization", args)


def _pod_lifetime_seconds(customizations: Optional[dict]) -> int:
    nanoseconds = _duration_or_none((customizations or {}).get("podLifetime"))
    # Go: uint(Duration.Seconds()) truncates toward zero; negative values are refused by validation.
    return DEFAULT_POD_LIFETIME_SECONDS if nanoseconds is None else nanoseconds // SECOND


def _lifecycle_and_utilization(inputs: _RenderInputs, with_pod_lifetime: bool) -> dict:
    restarts_args = {"includingInitContainers": True, "podRestartThreshold": POD_RESTART_THRESHOLD}
    configs = [
        _plugin_config("RemovePodsHavingTooManyRestarts", _with_namespaces(restarts_args, inputs)),
        _lifecycle_low_node_utilization(inputs),
        _default_evictor(inputs),
    ]
    deschedule = ["RemovePodsHavingTooManyRestarts"]
    if with_pod_lifetime:
        lifetime_args = {"maxPodLifeTimeSeconds": _pod_lifetime_seconds(inputs.customizations)}
        configs.insert(0, _plugin_config("PodLifeTime", _with_namespaces(lifetime_args, inputs)))
        deschedule.insert(0, "PodLifeTime")
    name = "LifecycleAndUtilization" if with_pod_lifetime else "LongLifecycle"
    plugins = _plugin_sets(deschedule=deschedule, balance=["LowNodeUtilization"], filter=["DefaultEvictor"])
    return _profile(name, configs, plugins)


def _compact_and_scale(inputs: _RenderInputs) -> dict:
    preset = (inputs.customizations or {}).get("devHighNodeUtilizationThresholds")
    threshold = HIGH_NODE_UTILIZATION_PRESETS[preset if preset is not None else ""]
    args: dict = {"thresholds": {"cpu": threshold, "memory": threshold, "pods": threshold}}
    # HighNodeUtilization has no include support, and with `included` the operator sets no filter at all.
    if inputs.excluded:
        args["evictableNamespaces"] = {"exclude": list(inputs.excluded)}
    configs = [_plugin_config("HighNodeUtilization", args), _default_evictor(inputs)]
    plugins = _plugin_sets(balance=["HighNodeUtilization"], filter=["DefaultEvictor"])
    return _profile("CompactAndScale", configs, plugins)


def _kubevirt_thresholds(customizations: Optional[dict]) -> tuple[bool, int, int]:
    """(useDeviationThresholds, low, high): deviation presets win, then static presets, else AsymmetricLow."""
    custom = customizations or {}
    deviation = custom.get("devDeviationThresholds")
    low_preset = custom.get("devLowNodeUtilizationThresholds")
    if deviation is not None:
        return (deviation != "", *DEVIATION_PRESETS[deviation])
    if low_preset is not None:
        # The operator quirk: "" keeps deviation mode on but takes the static Medium numbers (20/50).
        return (low_preset == "", *LOW_NODE_UTILIZATION_PRESETS[low_preset])
    return (True, *DEVIATION_PRESETS["AsymmetricLow"])


def _kubevirt_migration_aware_args(customizations: Optional[dict]) -> dict:
    custom = customizations or {}
    args = {}
    for spec_name, arg_name in KUBEVIRT_MIGRATION_ARGS:
        nanoseconds = _duration_or_none(custom.get(spec_name))
        if nanoseconds is not None:
            args[arg_name] = format_go_duration(nanoseconds)
    return args


def _kubevirt_relieve_and_migrate(inputs: _RenderInputs) -> dict:
    custom = inputs.customizations or {}
    use_deviation, low, high = _kubevirt_thresholds(inputs.customizations)
    utilization_profile = custom.get("devActualUtilizationProfile") or KUBEVIRT_DEFAULT_UTILIZATION_PROFILE
    args: dict = {
        "evictionLimits": {"node": KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE},
        "metricsUtilization": _metrics_utilization(_utilization_query(utilization_profile) or ""),
    }
    args.update(_threshold_maps(["MetricResource"], low, high))
    if use_deviation:
        args["useDeviationThresholds"] = True
    evictable = _low_node_utilization_evictable(inputs)
    if evictable is not None:
        args["evictableNamespaces"] = evictable
    evictor_args: dict = {"evictLocalStoragePods": True, "noEvictionPolicy": "Mandatory", "podProtections": {}}
    threshold = _priority_threshold(inputs.customizations)
    if threshold is not None:
        evictor_args["priorityThreshold"] = threshold
    configs = [
        _plugin_config("LowNodeUtilization", args),
        _plugin_config("DefaultEvictor", evictor_args),
        _plugin_config("KubevirtMigrationAware", _kubevirt_migration_aware_args(inputs.customizations)),
    ]
    plugins = _plugin_sets(
        balance=["LowNodeUtilization"],
        filter=["DefaultEvictor", "KubevirtMigrationAware"],
        preevictionfilter=["KubevirtMigrationAware"],
    )
    return _profile("KubeVirtRelieveAndMigrate", configs, plugins)


_PROFILE_BUILDERS: dict[str, Callable[[_RenderInputs], dict]] = {
    "AffinityAndTaints": _affinity_and_taints,
    "TopologyAndDuplicates": lambda inputs: _topology_and_duplicates(inputs, soft=False),
    "SoftTopologyAndDuplicates": lambda inputs: _topology_and_duplicates(inputs, soft=True),
    "LifecycleAndUtilization": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=True),
    "LongLifecycle": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=False),
    "DevPreviewLongLifecycle": lambda inputs: _lifecycle_and_utilization(inputs, with_pod_lifetime=False),
    "CompactAndScale": _compact_and_scale,
    "KubeVirtRelieveAndMigrate": _kubevirt_relieve_and_migrate,
    "DevKubeVirtRelieveAndMigrate": _kubevirt_relieve_and_migrate,
}


def _go_uint(value: int) -> int:
    """Go's uint(int32): negative values wrap around (64-bit)."""
    return value % UINT64_MODULUS


def _apply_eviction_limits(policy: dict, spec: dict, profiles: list[str]) -> None:
    if _has_any(profiles, KUBEVIRT_PROFILES):
        policy["maxNoOfPodsToEvictTotal"] = KUBEVIRT_DEFAULT_EVICTIONS_TOTAL
        policy["maxNoOfPodsToEvictPerNode"] = KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE
    limits = spec.get("evictionLimits")
    if not isinstance(limits, dict):
        return
    if _is_int(limits.get("total")):
        policy["maxNoOfPodsToEvictTotal"] = _go_uint(limits["total"])
    if _is_int(limits.get("node")):
        per_node = _go_uint(limits["node"])
        policy["maxNoOfPodsToEvictPerNode"] = per_node
        for profile in policy.get("profiles", []):
            for config in profile["pluginConfig"]:
                if config["name"] == "LowNodeUtilization":
                    config["args"]["evictionLimits"] = {"node": per_node}


def _prometheus_url(url: str) -> str:
    # The operator builds "https://" + route host; accept a bare host as well.
    return url if "://" in url else "https://" + url


def _sorted_keys(value: Any) -> Any:
    """Go's encoding/json sorts map keys; mirror it so yaml.safe_dump(sort_keys=False) matches the ConfigMap."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def render_policy(
    spec: dict,
    *,
    namespaces: Optional[list[str]] = None,
    prometheus_url: str = DEFAULT_PROMETHEUS_URL,
    validate: bool = True,
) -> dict:
    """The DeschedulerPolicy (descheduler/v1alpha2) the operator writes to ConfigMap ``cluster`` key ``policy.yaml``.

    ``namespaces``: names of the namespaces that exist (when the operator pod started); the protected list is
    kube-system, hypershift, openshift + every ``openshift-*`` among them. ``prometheus_url``: ``https://`` + the
    host of route openshift-monitoring/prometheus-k8s (used only when Prometheus metrics are needed).

    Raises KubeDeschedulerError for every error that can be judged from the spec alone (admission rejections,
    operator refusals, a missing interval; not a missing managementState), never for warnings. Profiles keep the
    spec order; EvictPodsWithPVC and EvictPodsWithLocalStorage only change DefaultEvictor; deprecated names are
    emitted under their new names.
    The output equals yaml.safe_load of the operator's policy.yaml (see ``compact_policy`` for a leaner form).
    ``validate=False``: render what the operator would write for a spec whose errors were judged elsewhere (one only
    the operand meets is rendered all the same).
    """
    if validate:
        # managementState does not change the rendering: a preview of a spec without it is the policy it asks for
        _raise_for_errors(validate_kubedescheduler_spec(spec, namespaces=namespaces, management_state_required=False))
    inputs = _render_inputs(spec, namespaces)
    policy: dict = {"apiVersion": POLICY_API_VERSION, "kind": POLICY_KIND}
    if _needs_prometheus(inputs.profiles, inputs.customizations):
        policy["metricsProviders"] = [{"prometheus": {"url": _prometheus_url(prometheus_url)}, "source": "Prometheus"}]
    if _has_any(inputs.profiles, KUBEVIRT_PROFILES):
        policy["nodeSelector"] = KUBEVIRT_NODE_SELECTOR
    rendered = [_PROFILE_BUILDERS[name](inputs) for name in inputs.profiles if name in _PROFILE_BUILDERS]
    if rendered:  # `profiles` is omitempty in v1alpha2
        policy["profiles"] = rendered
    _apply_eviction_limits(policy, spec, inputs.profiles)
    return _sorted_keys(policy)


def compact_policy(policy: Any) -> Any:
    """A copy without the operator's no-op noise: null values, ``podProtections: {}`` and unused extension points.
    Decodes to the same upstream DeschedulerPolicy (``args: {}`` is kept because every pluginConfig needs args)."""
    if isinstance(policy, list):
        return [compact_policy(item) for item in policy]
    if not isinstance(policy, dict):
        return policy
    compacted = {}
    for key, value in policy.items():
        if value is None or (key == "podProtections" and value == {}):
            continue
        value = compact_policy(value)
        if key in EXTENSION_POINTS and value == {}:
            continue
        compacted[key] = value
    return compacted
