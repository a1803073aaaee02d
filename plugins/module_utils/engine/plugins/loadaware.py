"""LoadAware (Balance + PreEvictionFilter) of the Volcano descheduler (volcano-sh/descheduler, Huawei CCE).

Like LowNodeUtilization, but nodes are classified by what they actually use: a node's cpu and memory are
``status.capacity × fraction``, the fraction being the answer of Volcano's Prometheus queries (``metrics.type:
prometheus``) or of the custom metrics ``node_cpu_usage_avg``/``node_memory_usage_avg`` (``prometheus_adaptor``),
while the thresholds are percentages of allocatable. Pods are evicted biggest measured user first.

Usage comes from the engine's metrics input (engine/metrics.py, ``ActualUsage``): Prometheus answers are looked up
by the exact query Volcano sends (``node_queries``/``pod_queries``) and read as Volcano reads them, the first sample
whatever its labels (loadaware_metrics.py); custom metrics by their name, one sample per node labelled ``instance``;
PodMetrics for pods in adaptor mode. A query with no recorded answer is sent live to
``metrics.address`` (or the plan's ``prometheus_url``) when the plan module set up live queries, as Volcano sends it.
What Volcano does when data is missing is kept: a node without an answer counts as 0% used (a warning names it and
why), a pod without metrics sorts last and frees nothing.

Volcano also enables LoadAware as a PreEvictionFilter of every profile that balances with it: with ``nodeFit: true``
a pod of that profile is evicted only if another ready node matching ``nodeSelector`` fits it (requests) and is not
over its LoadAware target on cpu or memory.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import ArgsReader
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import EVICTED, PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import matches, parse_selector_string
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import UsageUnavailable
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import nodeutilization as nu
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.common import (
    LIMITS,
    NODE_LIMIT,
    evict_or_stop,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.loadaware_metrics import (
    VolcanoPanic,
    first_row_value,
    node_amount,
    node_fraction,
    pod_quantity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins.nodeutilization_metrics import (
    actual_usage,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import fits_any_other_node
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import scaled, value

NAME = "LoadAware"
ARG_FIELDS = (
    "useDeviationThresholds", "thresholds", "targetThresholds", "numberOfNodes", "nodeSelector",
    "evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods", "evictFailedBarePods", "labelSelector",
    "priorityThreshold", "nodeFit", "evictableNamespaces", "metrics", "duration",
)
BASIC = ("cpu", "memory", "pods")
PROMETHEUS, ADAPTOR = "prometheus", "prometheus_adaptor"
NODE_CPU_METRIC, NODE_MEMORY_METRIC = "node_cpu_usage_avg", "node_memory_usage_avg"
DEFAULT_DURATION = "2m"
UNDER, OVER, APPROPRIATE = "underutilized", "overutilized", "appropriate"
MAX_NAMED = 5


# --- args ---------------------------------------------------------------------------------------------------------

def validate(args: dict, field: str) -> None:
    """ValidateLoadAwareUtilizationArgs, then the shapes Go's decoding enforces. The metrics block is not checked
    by Volcano (a wrong one makes the plugin do nothing at run time, reported in the plan's warnings)."""
    reader = ArgsReader(args, field, ARG_FIELDS)
    namespaces = reader.mapping("evictableNamespaces")
    if namespaces is not None and namespaces.get("include"):
        raise PolicyError(f"{field}.evictableNamespaces.include", namespaces.get("include"),
                          "only Exclude namespaces can be set, inclusion is not supported "
                          "(list the namespaces to leave alone under evictableNamespaces.exclude)")
    reader.namespaces("evictableNamespaces")
    deviation = reader.boolean("useDeviationThresholds")
    _validate_thresholds(args.get("thresholds"), args.get("targetThresholds"), deviation, field)
    reader.integer("numberOfNodes")
    for key in ("nodeSelector", "duration"):
        reader.string(key)
    for key in ("evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods", "evictFailedBarePods",
                "nodeFit"):
        reader.boolean(key)
    if args.get("labelSelector") is not None:
        reader.label_selector()
    reader.mapping("priorityThreshold")
    metrics = reader.mapping("metrics")
    if metrics is not None:
        sub = ArgsReader(metrics, f"{field}.metrics", ("type", "address"))
        sub.string("type")
        sub.string("address")


def _validate_thresholds(low: Any, high: Any, deviation: bool, field: str) -> None:
    _check_percentages(low, f"{field}.thresholds", "thresholds config is not valid")
    _check_percentages(high, f"{field}.targetThresholds", "targetThresholds config is not valid")
    if len(low) != len(high) or any(resource not in high for resource in low):
        raise PolicyError(f"{field}.targetThresholds", sorted(high),
                          f"thresholds and targetThresholds configured different resources (name the same "
                          f"resources in both; thresholds has {sorted(low)})")
    for resource, percent in low.items():
        if percent > high[resource] and not deviation:
            raise PolicyError(f"{field}.thresholds.{resource}", percent,
                              f"thresholds' {resource} percentage is greater than targetThresholds' "
                              f"({high[resource]:g}); lower it or raise targetThresholds.{resource}")


def _check_percentages(thresholds: Any, where: str, prefix: str) -> None:
    if not isinstance(thresholds, dict) or not thresholds:
        raise PolicyError(where, thresholds, f"{prefix}: no resource threshold is configured "
                                             "(set e.g. {cpu: 30, memory: 30})")
    for resource, percent in thresholds.items():
        if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 <= percent <= 100:
            raise PolicyError(f"{where}.{resource}", percent, f"{prefix}: {resource} threshold not in [0, 100] range")


def set_defaults(args: dict) -> dict:
    if not args.get("duration"):
        args["duration"] = DEFAULT_DURATION
    return args


def node_queries(node_name: str, duration: str = DEFAULT_DURATION) -> tuple[str, str]:
    """The cpu and memory instant queries Volcano sends for one node (answers are fractions 0..1)."""
    cpu = (f'avg_over_time((1 - (avg by (instance) (irate(node_cpu_seconds_total{{mode="idle",instance='
           f'"{node_name}"}}[30s])) * 1))[{duration}:30s])')
    memory = (f'avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node_name}"}}/'
              f'node_memory_MemTotal_bytes{{instance="{node_name}"}}))[{duration}:30s])')
    return cpu, memory


def pod_queries(pod_name: str, duration: str = DEFAULT_DURATION) -> tuple[str, str]:
    """The cpu (cores) and memory (bytes) queries Volcano sends for one pod (by name only, no namespace)."""
    cpu = (f'avg_over_time((( (irate(container_cpu_usage_seconds_total{{pod="{pod_name}",container="",name="" }}'
           f'[30s])) * 1))[{duration}:30s])')
    return cpu, f'container_memory_usage_bytes{{pod="{pod_name}",container="",name=""}}'


# --- usage --------------------------------------------------------------------------------------------------------

class NodeLoad:
    """One node's measured usage (cpu cores, memory bytes, pod count, as exact decimals), pods and thresholds."""

    def __init__(self, node: Node, usage: dict[str, Decimal], pods: list[Pod],
                 pod_metrics: dict[int, dict[str, Decimal]]) -> None:
        self.node = node
        self.usage = usage
        self.pods = pods
        self.pod_metrics = pod_metrics
        self.low: dict[str, Decimal] = {}
        self.high: dict[str, Decimal] = {}

    def sort_key(self) -> int:
        """sortNodesByUsage: memory Value() + cpu MilliValue() + pods, rounded up as Quantity does."""
        return _ceil(self.usage["memory"]) + _ceil(self.usage["cpu"] * 1000) + _ceil(self.usage["pods"])


class CycleLoad:
    """What the profile's LoadAware knows in this cycle: the nodes recorded as over a target, and on what."""

    def __init__(self) -> None:
        self.over: dict[str, set[str]] = {}


def cycle_load(handle: PluginHandle) -> CycleLoad:
    return handle.state.plugin_state.setdefault(f"{handle.profile}/{NAME}", CycleLoad())


def _ceil(amount: Decimal) -> int:
    whole = int(amount)
    return whole + 1 if amount > whole else whole


class UsageSource:
    """Volcano's metrics client for one run: node fractions and pod usage, with what was missing."""

    def __init__(self, handle: PluginHandle, kind: str, duration: str, address: str = "") -> None:
        self.actual = actual_usage(handle)
        self.kind = kind
        self.duration = duration
        self.address = address  # Volcano's metrics.address: where a query nobody recorded is sent live
        self.missing: list[tuple[str, str]] = []  # (what had no data, why)
        self.adaptor: dict[str, dict[str, float]] = {}
        if kind == ADAPTOR:
            self._read_custom_metrics()

    def _read_custom_metrics(self) -> None:
        """NodesMetricsAvg (adaptor): one list per metric; a failing metric ends the reading, as upstream."""
        for resource, metric in (("cpu", NODE_CPU_METRIC), ("memory", NODE_MEMORY_METRIC)):
            try:
                values = self.actual.prometheus_values(metric)
            except UsageUnavailable as exc:
                self.missing.append((f"custom metric {metric}", str(exc)))
                return
            self.adaptor[resource] = values

    def node_fractions(self, node: Node) -> dict[str, float]:
        if self.kind == ADAPTOR:
            return {r: self.adaptor.get(r, {}).get(node.name, 0.0) for r in ("cpu", "memory")}
        fractions = {}
        for resource, query in zip(("cpu", "memory"), node_queries(node.name, self.duration), strict=True):
            text = self._first_value(f"{node.name} {resource}", query)
            fractions[resource], problem = node_fraction(text)
            if problem:
                self.missing.append((f"{node.name} {resource}", f"{problem} (query {query})"))
        return fractions

    def pod_usage(self, pod: Pod) -> Optional[dict[str, Decimal]]:
        """The pod's measured usage, None when it has no metrics entry (adaptor: no PodMetrics). Raises
        VolcanoPanic where Volcano's descheduler would panic reading it."""
        if self.kind == ADAPTOR:
            try:
                usage = self.actual.pod_usage(pod.namespace, pod.name, ("cpu", "memory"))
            except UsageUnavailable:
                return None
            return {"cpu": Decimal(usage.get("cpu", 0)) / 1000, "memory": Decimal(usage.get("memory", 0))}
        found: dict[str, Decimal] = {}
        for resource, query in zip(("cpu", "memory"), pod_queries(pod.name, self.duration), strict=True):
            text = self._first_value(None, query)
            if text is not None:
                found[resource] = pod_quantity(text, f"pod {pod.namespace}/{pod.name} {resource} (query {query})")
        return found  # every pod gets an entry, possibly empty, as upstream

    def _first_value(self, what: Optional[str], query: str) -> Optional[str]:
        """The first sample's value text, whatever its labels, as Volcano reads it (loadaware_metrics); None when
        Volcano finds no data. ``what`` names a node's missing data in the plan's warnings."""
        try:
            samples = self.actual.prometheus_samples(query, self.address)
        except UsageUnavailable as exc:  # no answer, an error answer, not a vector, an undecodable value
            if what:
                self.missing.append((what, str(exc)))
            return None
        if not samples and what:
            self.missing.append((what, f"empty answer to {query}"))
        return first_row_value(samples)


def metrics_problem(args: Mapping[str, Any]) -> Optional[str]:
    """NewMetricsClient's refusal (Volcano then logs it and the plugin does nothing), or None."""
    metrics = args.get("metrics") or {}
    kind = metrics.get("type") or ""
    if not kind:
        return ("Metrics type is empty, the load-aware rescheduling function does not take effect "
                f"(set metrics.type to {PROMETHEUS} or {ADAPTOR})")
    if kind == PROMETHEUS and not metrics.get("address"):
        return ("Metrics address is empty, the load-aware rescheduling function does not take effect "
                "(set metrics.address to the Prometheus URL)")
    if kind not in (PROMETHEUS, ADAPTOR):
        return (f"Data cannot be collected from the {kind} monitoring system. The supported monitoring systems "
                f"are {PROMETHEUS} and {ADAPTOR}.")
    return None


def node_loads(handle: PluginHandle, source: UsageSource) -> list[NodeLoad]:
    """getNodeUsage: node usage = capacity × fraction (Go formats it with %f), pods = non-terminal pod count."""
    loads = []
    for node in handle.order.keys(handle.nodes):  # upstream walks a Go map of nodes
        fractions = source.node_fractions(node)
        pods = handle.pods_on_node(node.name)
        usage = {
            "cpu": node_amount(value(node.capacity.get("cpu", 0)), fractions["cpu"], f"node {node.name} cpu"),
            "memory": node_amount(value(node.capacity.get("memory", 0)), fractions["memory"],
                                  f"node {node.name} memory"),
            "pods": Decimal(len(pods)),
        }
        metrics = {}
        for pod in pods:
            measured = source.pod_usage(pod)
            if measured is not None:
                metrics[pod.index] = measured
        loads.append(NodeLoad(node, usage, pods, metrics))
    return loads


def threshold_amount(node: Node, resource: str, percent: float) -> Decimal:
    """resourceThreshold: int64(pct × 0.01 × allocatable), cpu in millis, in the units usage is kept in."""
    capacity = nu.node_capacity(node, [resource]).get(resource, 0)
    amount = int(float(percent) * 0.01 * float(capacity))
    return Decimal(amount) / 1000 if resource == "cpu" else Decimal(amount)


def set_thresholds(handle: PluginHandle, loads: list[NodeLoad], low: dict[str, float], high: dict[str, float],
                   deviation: bool) -> dict[str, dict[str, float]]:
    """Static: percentages of allocatable. Deviation: around the average of *requests* (Volcano's quirk).
    Returns the percentages applied (low, high and, in deviation mode, average), for the plan."""
    average = _average_requests(handle, list(low)) if deviation else {}
    applied: dict[str, dict[str, float]] = {"low": {}, "high": {}}
    for resource in low:
        if not deviation:
            applied["low"][resource], applied["high"][resource] = low[resource], high[resource]
        elif low[resource] == 0:  # 0 means "ignore this resource": both thresholds at full capacity
            applied["low"][resource] = applied["high"][resource] = 100.0
        else:
            applied["low"][resource] = _clamp(average[resource] - low[resource])
            applied["high"][resource] = _clamp(average[resource] + high[resource])
    for load in loads:
        for resource in low:
            load.low[resource] = threshold_amount(load.node, resource, applied["low"][resource])
            load.high[resource] = threshold_amount(load.node, resource, applied["high"][resource])
    if deviation:
        applied["average"] = {r: round(v, 2) for r, v in average.items()}
    return applied


def _average_requests(handle: PluginHandle, resources: list[str]) -> dict[str, float]:
    totals = dict.fromkeys(resources, 0.0)
    for node in handle.nodes:
        used = _requested(handle, node)
        capacity = nu.node_capacity(node, resources)
        for resource in resources:
            if capacity.get(resource):
                totals[resource] += used.get(resource, 0) / capacity[resource] * 100.0
    return {r: total / len(handle.nodes) for r, total in totals.items()}


def _requested(handle: PluginHandle, node: Node) -> dict[str, int]:
    """NodeUtilization: requests of the node's live non-terminal pods (cpu millis, memory bytes) and their count."""
    totals = handle.state.usage.used.get(node.name, {})
    return {"cpu": scaled("cpu", totals.get("cpu", 0)), "memory": scaled("memory", totals.get("memory", 0)),
            "pods": handle.state.usage.count.get(node.name, 0)}


def _clamp(percent: float) -> float:
    return min(max(percent, 0.0), 100.0)


# --- classification and eviction ------------------------------------------------------------------------------------

def is_low(load: NodeLoad) -> bool:
    return all(load.usage[r] <= load.low[r] for r in BASIC)


def is_above_target(handle: PluginHandle, load: NodeLoad) -> bool:
    """isNodeAboveTargetUtilization: the first resource over target (Go map order) is recorded on the node."""
    for resource in handle.order.keys(BASIC):
        if load.high[resource] < load.usage[resource]:
            cycle_load(handle).over.setdefault(load.node.name, set()).add(resource)
            return True
    return False


def classify(handle: PluginHandle, loads: list[NodeLoad]) -> tuple[list[NodeLoad], list[NodeLoad]]:
    lows, highs = [], []
    for load in loads:
        if not load.node.unschedulable and is_low(load):
            lows.append(load)
            handle.note(load.node.name, UNDER)
        elif is_above_target(handle, load):
            highs.append(load)
            handle.note(load.node.name, OVER)
        else:
            handle.note(load.node.name, APPROPRIATE)
    return lows, highs


def _filled_thresholds(args: Mapping[str, Any], deviation: bool) -> tuple[dict[str, float], dict[str, float]]:
    """cpu, memory and pods missing from the thresholds get 100% (static) or 0 = ignored (deviation)."""
    low = {str(k): float(v) for k, v in args["thresholds"].items()}
    high = {str(k): float(v) for k, v in args["targetThresholds"].items()}
    for resource in BASIC:
        if resource not in low:
            low[resource] = high[resource] = 0.0 if deviation else 100.0
    return low, high


def balance(handle: PluginHandle, args: dict[str, Any]) -> None:
    deviation = bool(args.get("useDeviationThresholds"))
    low, high = _filled_thresholds(args, deviation)
    extended = sorted(r for r in low if r not in BASIC)
    if extended:
        handle.error(f"thresholds name {', '.join(extended)}: LoadAware measures only cpu, memory and pods, and "
                     "Volcano's descheduler crashes on other resources (remove them)")
        return
    problem = metrics_problem(args)
    if problem is not None:
        handle.state.warnings.append(f"profile {handle.profile}: {NAME}: {problem}")
        return
    metrics = args["metrics"]
    source = UsageSource(handle, metrics["type"], str(args.get("duration") or DEFAULT_DURATION),
                         str(metrics.get("address") or ""))
    try:
        loads = node_loads(handle, source)
    except VolcanoPanic as exc:  # the descheduler process dies before this cycle evicts anything
        _warn_missing(handle, source)
        handle.error(str(exc))
        return
    _warn_missing(handle, source)
    applied = set_thresholds(handle, loads, low, high, deviation)
    lows, highs = classify(handle, loads)
    _record_reading(handle, source, loads, applied)
    number_of_nodes = int(args.get("numberOfNodes") or 0)
    if not lows or len(lows) <= number_of_nodes or len(lows) == len(handle.nodes) or not highs:
        return
    available = {r: Decimal(0) for r in BASIC}
    for load in lows:
        for resource in low:
            available[resource] += load.high[resource] - load.usage[resource]
    excluded = frozenset(((args.get("evictableNamespaces") or {}).get("exclude")) or [])
    taints = [load.node.taints for load in lows]
    for load in handle.order.sort(highs, key=lambda item: -item.sort_key()):  # sort.Slice, descending
        removable = [pod for pod in load.pods if handle.filter(pod)]
        if not removable:
            continue
        key = "cpu" if "cpu" in cycle_load(handle).over.get(load.node.name, ()) else "memory"
        ordered = handle.order.sort(removable, key=lambda pod, load=load, key=key: _pod_order(load, pod, key))
        if not _evict_pods(handle, load, ordered, available, taints, excluded):
            return


def _pod_order(load: NodeLoad, pod: Pod, resource: str) -> tuple:
    """Biggest measured user of the key resource first; pods without metrics, then without that resource, last."""
    measured = load.pod_metrics.get(pod.index)
    if measured is None:
        return (2, Decimal(0))
    if resource not in measured:
        return (1, Decimal(0))
    return (0, -measured[resource])


def _keep_going(handle: PluginHandle, load: NodeLoad, available: dict[str, Decimal]) -> bool:
    return is_above_target(handle, load) and all(amount > 0 for amount in available.values())


def _evict_pods(handle: PluginHandle, load: NodeLoad, pods: list[Pod], available: dict[str, Decimal],
                taints: list[list[dict]], excluded: frozenset) -> bool:
    """evictPods. False once the total limit ends the plugin."""
    if not _keep_going(handle, load, available):
        return True
    reason = _reason(load)
    for pod in pods:
        if not nu.may_evict(handle, pod, taints, excluded):
            continue
        result = evict_or_stop(handle, pod, reason)
        if result in LIMITS:
            return result == NODE_LIMIT  # a node limit: next node; the total limit ends the plugin
        if result != EVICTED:
            continue
        _subtract(load, pod, available)
        if not _keep_going(handle, load, available):
            break
    return True


def _subtract(load: NodeLoad, pod: Pod, available: dict[str, Decimal]) -> None:
    """One pod less; cpu and memory only as far as the pod's metrics say (none → nothing freed)."""
    measured = load.pod_metrics.get(pod.index) or {}
    for resource in available:
        amount = Decimal(1) if resource == "pods" else measured.get(resource)
        if amount is None:
            continue
        load.usage[resource] -= amount
        available[resource] -= amount


def _reason(load: NodeLoad) -> str:
    parts = []
    for resource in BASIC:
        if load.usage[resource] > load.high[resource]:
            parts.append(f"{resource} {_show(resource, load.usage[resource])} > target "
                         f"{_show(resource, load.high[resource])}")
    return f"node {load.node.name} measured at " + ", ".join(parts) + " (LoadAware, actual usage)"


def _show(resource: str, amount: Decimal) -> str:
    if resource == "cpu":
        return f"{amount.normalize():f} cores"
    if resource == "memory":
        return f"{int(amount) / 2**30:.2f}Gi"
    return f"{int(amount)} pods"


def _warn_missing(handle: PluginHandle, source: UsageSource) -> None:
    """One warning; entries failing for the same reason (an unreachable Prometheus fails them all) share it."""
    if not source.missing:
        return
    reasons: dict[str, list[str]] = {}
    for what, why in source.missing:
        reasons.setdefault(why, []).append(what)
    parts = []
    for why, where in list(reasons.items())[:MAX_NAMED]:
        more = f" and {len(where) - MAX_NAMED} more" if len(where) > MAX_NAMED else ""
        parts.append(f"{', '.join(where[:MAX_NAMED])}{more} ({why})")
    if len(reasons) > MAX_NAMED:
        parts.append(f"{len(reasons) - MAX_NAMED} more reasons")
    handle.state.warnings.append(
        f"profile {handle.profile}: {NAME}: no usage data for {'; '.join(parts)}: Volcano's descheduler counts such a "
        f"node as 0% used. {_data_hint(source)}")


def _data_hint(source: UsageSource) -> str:
    if source.kind == ADAPTOR:
        return (f"Record the custom metrics {NODE_CPU_METRIC}/{NODE_MEMORY_METRIC} (prometheus_result keyed by "
                "metric name)")
    return ("Make Prometheus answer LoadAware's queries (they select instance=\"<node name>\"), or record the "
            "answers (prometheus_result keyed by query; docs/engine.md lists the queries); a plan of a live cluster, "
            "or with prometheus_url, sends them to metrics.address or prometheus_url")


def prometheus_sources(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(metrics.address, duration) of every LoadAware using Prometheus in a DeschedulerPolicy, each once: where
    Volcano sends its queries and the window they average over."""
    sources: list[tuple[str, str]] = []
    for profile in document.get("profiles") or []:
        for config in (profile or {}).get("pluginConfig") or []:
            args = config.get("args") if isinstance(config, Mapping) and config.get("name") == NAME else None
            if not isinstance(args, Mapping):
                continue
            metrics = args.get("metrics")
            if isinstance(metrics, Mapping) and metrics.get("type") == PROMETHEUS and metrics.get("address"):
                source = (str(metrics["address"]), str(args.get("duration") or DEFAULT_DURATION))
                if source not in sources:
                    sources.append(source)
    return sources


def prometheus_addresses(document: Mapping[str, Any]) -> list[str]:
    """The metrics.address of every LoadAware using Prometheus in a DeschedulerPolicy: where Volcano sends queries."""
    return list(dict.fromkeys(address for address, _duration in prometheus_sources(document)))


def cycle_queries(node_names: Iterable[str], pod_names: Iterable[str], duration: str = DEFAULT_DURATION) -> list[str]:
    """Every query a cycle sends for these nodes and the pods on them (cpu then memory of each), each once."""
    queries = [q for name in node_names for q in node_queries(name, duration)]
    queries += [q for name in pod_names for q in pod_queries(name, duration)]
    return list(dict.fromkeys(queries))


def _record_reading(handle: PluginHandle, source: UsageSource, loads: Iterable[NodeLoad],
                    thresholds: dict[str, dict[str, float]]) -> None:
    """What the plugin measured, in the shape the plan's actual_utilization has (percent of allocatable)."""
    nodes = {}
    for load in sorted(loads, key=lambda item: item.node.name):
        capacity = nu.node_capacity(load.node, list(BASIC))
        nodes[load.node.name] = {
            r: round(float(load.usage[r] * (1000 if r == "cpu" else 1)) / capacity[r] * 100, 2)
            for r in BASIC if capacity.get(r)
        }
    reading: dict[str, Any] = {"mode": "Prometheus" if source.kind == PROMETHEUS else "custom metrics API",
                               "resources": list(BASIC), "thresholds": thresholds, "nodes": nodes}
    if source.kind == PROMETHEUS:
        reading["query"] = ("Volcano LoadAware's per-node queries: " + " and ".join(node_queries("<node>",
                                                                                                 source.duration)))
    source.actual.readings[f"{handle.profile}/{handle.plugin}"] = reading


# --- PreEvictionFilter ----------------------------------------------------------------------------------------------

def new(args: Mapping[str, Any], context: Any) -> LoadAwareFilter:
    """The profile's LoadAware PreEvictionFilter (context: framework.BuildContext)."""
    return LoadAwareFilter(args)


class LoadAwareFilter:
    """LoadAware's PreEvictionFilter, which Volcano enables in each profile balancing with LoadAware."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.args = args
        self.warnings: tuple[str, ...] = ()  # the balance plugin reports missing data

    def pre_eviction_filter(self, handle: PluginHandle, pod: Pod) -> Optional[str]:
        """Why LoadAware's PreEvictionFilter refuses the pod (any plugin of the profile), or None."""
        args = self.args
        if not args.get("nodeFit"):
            return None
        try:
            selector = parse_selector_string(str(args.get("nodeSelector") or ""), "nodeSelector")
        except (PolicyError, ValueError):
            return "LoadAware nodeFit: its nodeSelector does not parse, so no ready node is listed"
        over = cycle_load(handle).over
        candidates = [n for n in handle.state.ready_nodes if matches(selector, n.labels)
                      and not over.get(n.name, set()) & {"cpu", "memory"}]
        if fits_any_other_node(pod, candidates, handle.state.usage):
            return None
        return ("LoadAware nodeFit: no other ready node fits it (selector, taints, requests) and is under its "
                "LoadAware target")
