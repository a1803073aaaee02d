"""Scheduler profiles (the default one, or a KubeSchedulerConfiguration's) and one scheduling cycle: filters in
order, the number of feasible nodes upstream looks for, scores normalized and weighted, ties kept.

Plugins are built from the registry (scheduler/registry.py) and called through the methods of their extension
points (scheduler/interface.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP, Unresolvable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.interface import FILTER, SCORE
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
    DEFAULT_SCHEDULER,
    SchedPod,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.registry import REGISTRY

# apis/config/v1/default_plugins.go, in filter order; score weights of the default profile
DEFAULT_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                   "NodeResourcesFit", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity")
DEFAULT_SCORES = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                  "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
# default plugins the snapshot cannot feed: they filter nothing / score every node alike here
NOT_MODELED = {
    "VolumeRestrictions": "volumes are not modeled", "NodeVolumeLimits": "volumes are not modeled",
    "EBSLimits": "volumes are not modeled", "GCEPDLimits": "volumes are not modeled",
    "AzureDiskLimits": "volumes are not modeled", "DynamicResources": "resource claims are not modeled",
    "SchedulingGates": "replacement pods carry no scheduling gates", "PrioritySort": "queue order only",
    "DefaultPreemption": "preemption is not simulated", "DefaultBinder": "binding only",
    "NodeResourcesLeastAllocated": "removed upstream", "NodeDeclaredFeatures": "not modeled",
}
MIN_FEASIBLE_NODES = 100
MIN_FEASIBLE_PERCENTAGE = 5
EXTENSION_POINTS = ("multiPoint", "preFilter", "filter", "preScore", "score")


class Profile:
    """One scheduler profile: filter plugins in order and (plugin, weight) scorers."""

    def __init__(self, scheduler_name: str, filters: list, scorers: list, percentage: Optional[int],
                 notes: list[str]) -> None:
        self.scheduler_name = scheduler_name
        self.filters = filters
        self.scorers = scorers
        self.percentage = percentage
        self.notes = notes

    def describe(self) -> dict:
        return {"scheduler_name": self.scheduler_name, "filters": [p.name for p in self.filters],
                "scores": {p.name: w for p, w in self.scorers}, "not_modeled": self.notes}


def _plugin_config(profile: Mapping[str, Any], field: str) -> dict[str, Mapping[str, Any]]:
    configs: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(profile.get("pluginConfig") or []):
        if not isinstance(entry, Mapping) or not entry.get("name"):
            raise PolicyError(f"{field}.pluginConfig[{i}]", entry, "each entry needs a name and args")
        configs[str(entry["name"])] = entry.get("args") or {}
    return configs


def build_plugin(name: str, args: Mapping[str, Any], field: str, extra: Mapping[str, Any]) -> Any:
    """The registered plugin's object for one profile, or None when the preview does not model it."""
    registration = REGISTRY.get(name)
    return None if registration is None else registration.new(args, field, extra)


def _set(plugins: Mapping[str, Any], point: str) -> tuple[list[str], list[tuple[str, Optional[int]]]]:
    block = plugins.get(point) or {}
    disabled = [str(p.get("name")) for p in block.get("disabled") or []]
    enabled = [(str(p.get("name")), p.get("weight")) for p in block.get("enabled") or []]
    return disabled, enabled


def _merge(profile: Mapping[str, Any], field: str) -> tuple[list[str], dict[str, int]]:
    """mergePlugins: defaults, then each extension point's disabled (``*`` = all defaults) and enabled."""
    filters = list(DEFAULT_FILTERS)
    scores = dict(DEFAULT_SCORES)
    plugins = profile.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise PolicyError(f"{field}.plugins", plugins, "a mapping of extension points (multiPoint, filter, score)")
    for point in EXTENSION_POINTS:
        disabled, enabled = _set(plugins, point)
        if "*" in disabled:
            if point in ("multiPoint", "filter", "preFilter"):
                filters = []
            if point in ("multiPoint", "score", "preScore"):
                scores = {}
        for name in disabled:
            if point in ("multiPoint", "filter") and name in filters:
                filters.remove(name)
            if point in ("multiPoint", "score"):
                scores.pop(name, None)
        for name, weight in enabled:
            if weight is not None and (not isinstance(weight, int) or isinstance(weight, bool) or weight < 0):
                raise PolicyError(f"{field}.plugins.{point}.enabled.{name}.weight", weight, "a positive integer")
            is_filter = name in DEFAULT_FILTERS
            is_score = name in DEFAULT_SCORES or name in ("TargetLoadPacking", "LoadVariationRiskBalancing")
            if point in ("multiPoint", "filter") and is_filter and name not in filters:
                filters.append(name)
            if point in ("multiPoint", "score") and (is_score or not is_filter):
                scores[name] = weight or scores.get(name) or 1
    return filters, scores


def build_profile(profile: Mapping[str, Any], field: str, global_percentage: Optional[int],
                  extra: Mapping[str, Any]) -> Profile:
    configs = _plugin_config(profile, field)
    filter_names, score_weights = _merge(profile, field)
    instances: dict[str, Any] = {}
    notes: list[str] = []

    def instance(name: str) -> Any:
        if name not in instances:
            instances[name] = build_plugin(name, configs.get(name, {}), f"{field}.pluginConfig.{name}", extra)
            if instances[name] is None:
                notes.append(f"{name}: {NOT_MODELED.get(name, 'not a plugin this preview models')}")
        return instances[name]

    filters = [p for p in (instance(n) for n in filter_names) if p is not None and REGISTRY[p.name].implements(FILTER)]
    notes += [f"{p.name}: {p.note}" for p in filters if getattr(p, "note", None)]
    scorers = [(p, w) for p, w in ((instance(n), w) for n, w in score_weights.items())
               if p is not None and REGISTRY[p.name].implements(SCORE)]
    percentage = profile.get("percentageOfNodesToScore", global_percentage)
    if percentage is not None and (not isinstance(percentage, int) or not 0 <= percentage <= 100):
        raise PolicyError(f"{field}.percentageOfNodesToScore", percentage, "an integer 0..100")
    return Profile(str(profile.get("schedulerName") or DEFAULT_SCHEDULER), filters, scorers, percentage, notes)


def load_profiles(config: Optional[Mapping[str, Any]], extra: Optional[Mapping[str, Any]] = None
                  ) -> dict[str, Profile]:
    """Profiles by schedulerName: the given KubeSchedulerConfiguration's, plus the default scheduler."""
    extra = extra or {}
    profiles: dict[str, Profile] = {}
    if config:
        if not isinstance(config, Mapping):
            raise PolicyError("scheduler_config", config, "a KubeSchedulerConfiguration mapping")
        kind = config.get("kind")
        if kind not in (None, "KubeSchedulerConfiguration"):
            raise PolicyError("scheduler_config.kind", kind, "KubeSchedulerConfiguration")
        percentage = config.get("percentageOfNodesToScore")
        raw_profiles = config.get("profiles") or [{}]
        if not isinstance(raw_profiles, list):
            raise PolicyError("scheduler_config.profiles", raw_profiles, "a list of profiles")
        for i, raw in enumerate(raw_profiles):
            if not isinstance(raw, Mapping):
                raise PolicyError(f"scheduler_config.profiles[{i}]", raw, "a profile mapping")
            profile = build_profile(raw, f"scheduler_config.profiles[{i}]", percentage, extra)
            profiles[profile.scheduler_name] = profile
    if DEFAULT_SCHEDULER not in profiles:
        profiles[DEFAULT_SCHEDULER] = build_profile({}, "default profile", None, extra)
    return profiles


def num_feasible_nodes_to_find(percentage: Optional[int], all_nodes: int) -> int:
    """schedule_one.go numFeasibleNodesToFind: big clusters are only searched until this many nodes fit."""
    if all_nodes < MIN_FEASIBLE_NODES:
        return all_nodes
    if not percentage:
        percentage = max(50 - all_nodes // 125, MIN_FEASIBLE_PERCENTAGE)
    found = all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES)


class Decision:
    __slots__ = ("node", "tied", "reason", "rejected_by", "evaluated")

    def __init__(self, node: Optional[str], tied: list[str], reason: str, rejected_by: dict[str, int],
                 evaluated: int) -> None:
        self.node = node
        self.tied = tied
        self.reason = reason
        self.rejected_by = rejected_by
        self.evaluated = evaluated


def fit_error(total: int, histogram: Counter) -> str:
    """FitError.Error(): '0/N nodes are available: <count reason>, … .' (reasons sorted as strings)."""
    reasons = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return f"0/{total} nodes are available: {', '.join(reasons)}."


class StaticCache:
    """Results of the plugins that read only the pod spec and node spec (taints, labels, cordon), per pod shape."""

    def __init__(self) -> None:
        self.entries: dict[tuple, list[Optional[tuple[str, tuple[str, ...]]]]] = {}


def _static_signature(pod: SchedPod) -> tuple:
    model = pod.model
    return (repr(model.tolerations), tuple(sorted(model.node_selector.items())), repr(model.required_node_terms))


def schedule(profile: Profile, pod: SchedPod, cluster: Cluster, cache: StaticCache) -> Decision:
    nodes = cluster.nodes
    total = len(nodes)
    if total == 0:
        return Decision(None, [], "no nodes available to schedule pods", {}, 0)
    static_plugins = [p for p in profile.filters if getattr(p, "static", False)]
    dynamic = []
    for plugin in profile.filters:
        if getattr(plugin, "static", False):
            continue
        state = plugin.pre_filter(pod, cluster)
        if isinstance(state, Unresolvable):  # no node is looked at, the start index stays
            return Decision(None, [], f"0/{total} nodes are available: {state.message}.", {plugin.name: total}, 0)
        if state is not SKIP:
            dynamic.append((plugin, state))
    failures = static_results(static_plugins, pod, cluster, cache)
    # without score plugins the scheduler takes the first feasible node it finds
    wanted = num_feasible_nodes_to_find(profile.percentage, total) if profile.scorers else 1
    histogram: Counter = Counter()
    rejected_by: Counter = Counter()
    feasible: list[NodeInfo] = []
    processed = 0
    start = cluster.next_start % total
    for offset in range(total):
        node = nodes[(start + offset) % total]
        processed += 1
        failure = failures[node.index]
        if failure is None:
            for plugin, state in dynamic:
                reasons = plugin.filter(pod, state, node)
                if reasons:
                    failure = (plugin.name, reasons)
                    break
        if failure is None:
            feasible.append(node)
            if len(feasible) >= wanted:
                break
        else:
            rejected_by[failure[0]] += 1
            histogram.update(failure[1])
    cluster.next_start = (start + processed) % total
    if not feasible:
        return Decision(None, [], fit_error(total, histogram), dict(sorted(rejected_by.items())), processed)
    if len(feasible) == 1:
        return Decision(feasible[0].name, [feasible[0].name], "the only feasible node", dict(rejected_by), processed)
    totals = _score(profile, pod, cluster, feasible)
    best = max(totals)
    tied = sorted(n.name for n, s in zip(feasible, totals, strict=True) if s == best)
    reason = f"highest score {best} of {len(feasible)} feasible nodes"
    return Decision(tied[0], tied, reason, dict(sorted(rejected_by.items())), processed)


def static_results(plugins: list, pod: SchedPod, cluster: Cluster, cache: StaticCache
                   ) -> list[Optional[tuple[str, tuple[str, ...]]]]:
    """Per node (scheduler order) the first static filter that rejects the pod and its reasons, or None."""
    # keyed by the plugins too: two profiles may run different static filters
    signature = (tuple(p.name for p in plugins), _static_signature(pod))
    results = cache.entries.get(signature)
    if results is None:
        results = []
        for node in cluster.nodes:
            failure = None
            for plugin in plugins:
                reasons = plugin.filter(pod, None, node)
                if reasons:
                    failure = (plugin.name, reasons)
                    break
            results.append(failure)
        cache.entries[signature] = results
    return results


def plugin_scores(plugin: Any, pod: SchedPod, cluster: Cluster, feasible: list[NodeInfo]) -> Any:
    """One plugin's PreScore, Score and NormalizeScore over the feasible nodes (unweighted); SKIP when it skips."""
    state = plugin.pre_score(pod, cluster, feasible)
    if state is SKIP:
        return SKIP
    if hasattr(plugin, "score_many"):  # one call for all nodes: the per-node call is most of the cost
        scores = plugin.score_many(pod, state, feasible)
    else:
        scores = [plugin.score(pod, state, node) for node in feasible]
    if hasattr(plugin, "normalize_nodes"):
        plugin.normalize_nodes(state, feasible, scores)
    else:
        plugin.normalize(state, scores)
    return scores


def score_nodes(profile: Profile, pod: SchedPod, cluster: Cluster, feasible: list[NodeInfo]
                ) -> dict[str, list[int]]:
    """Each plugin's normalized, weighted scores over the feasible nodes (for explanations and tests)."""
    result = {}
    for plugin, weight in profile.scorers:
        scores = plugin_scores(plugin, pod, cluster, feasible)
        if scores is not SKIP:
            result[plugin.name] = [s * weight for s in scores]
    return result


def _score(profile: Profile, pod: SchedPod, cluster: Cluster, feasible: list[NodeInfo]) -> list[int]:
    totals = [0] * len(feasible)
    for scores in score_nodes(profile, pod, cluster, feasible).values():
        for i, score in enumerate(scores):
            totals[i] += score
    return totals
