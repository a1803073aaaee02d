"""Actual utilization for the planning engine: recorded or live metrics turned into usage per node and per pod.

Plugins never read metrics objects or Prometheus bodies themselves; they ask an ``ActualUsage`` (reachable as
``handle.state.snapshot.actual``, set by compute_plan) with the calls below, and get numbers in the units upstream
compares (cpu in millis, memory in bytes, ``MetricResource`` as an integer percentage).

Usage interface (for plugins such as LowNodeUtilization or LoadAware):

- ``actual.node_usage(node_name)`` → ``{"cpu": millis, "memory": bytes}`` from NodeMetrics (the
  metrics.k8s.io/v1beta1 ``usage``; several samples of a node fold as upstream's collector averages them), or raises
  ``UsageUnavailable`` with upstream's message when the node has none.
- ``actual.pod_usage(namespace, name, resources)`` → ``{"cpu": millis, "memory": bytes}`` summed over the PodMetrics
  containers, or raises ``UsageUnavailable`` (upstream then skips the pod).
- ``actual.prometheus_values(query, address=None)`` → ``{instance: float}`` the raw sample values of the recorded or
  fetched instant-query answer, read with the upstream descheduler's rule (every sample labelled ``instance``); a
  caller naming the Prometheus ``address`` it queries gets the query sent live through ``actual.live_query`` when
  no answer was recorded. ``actual.prometheus_samples(query, address=None)`` → every sample in the order
  Prometheus sent them, whatever their labels (Volcano's LoadAware reads the first one);
  ``actual.prometheus_usage(query, node_names)`` → ``{node: int(value*100)}`` as upstream's ``MetricResource`` mode
  reads it, raising ``UsageUnavailable`` when a node is missing or a sample is out of [0, 1].
- ``actual.kubernetes_metrics`` is False when no NodeMetrics/PodMetrics were recorded or served at all.
- ``actual.warnings``: stale samples (older than ``STALE_SECONDS`` before ``now``) and the like, for the plan.

Sources: ``ActualUsage.build(metrics_objects, prometheus_results, now)`` where ``metrics_objects`` are NodeMetrics and
PodMetrics objects exactly as the API returns them (a snapshot carries them like any other kind) and
``prometheus_results`` maps a query (or ``None`` for "any query") to the JSON body ``/api/v1/query`` returned.
``attach(snapshot, prometheus_results, now)`` builds one for a snapshot; compute_plan uses the attached one, or
builds one from the snapshot's own metrics objects (``actual_for``). Plugins record what they read in
``actual.readings`` ("profile/plugin" → reading), which becomes the plan's ``actual_utilization``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import (
    milli_value,
    parse_quantity,
    scaled,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import value as unit_value

METRICS_KINDS = frozenset(["NodeMetrics", "PodMetrics"])
METRIC_RESOURCE = "MetricResource"
NODE_RESOURCES = ("cpu", "memory")
# Prometheus answers an instant query with the newest sample within its lookback delta (5 minutes by default):
# a recorded sample older than that before `now` is not what a query at `now` would return.
STALE_SECONDS = 300.0
ANY_QUERY = None
# (query, address) → the JSON body of Prometheus' answer; raises UsageUnavailable when that Prometheus cannot answer
LiveQuery = Callable[[str, str], Any]


class MetricsError(EngineError):
    """Metrics input that cannot be read at all (wrong shape): reported before anything is planned."""


class UsageUnavailable(Exception):
    """Usage that upstream could not get at this point; the message is upstream's, plus what to do about it."""


class PrometheusSample(NamedTuple):
    """One sample of an instant-query answer, as Prometheus' Go client decodes it."""
    labels: Mapping[str, Any]
    raw: str  # the value as Prometheus sent it ("0.42", "NaN", "+Inf")
    value: float  # Go's strconv.ParseFloat of raw: NaN and the infinities included
    timestamp: float


class PrometheusAnswer:
    """One instant-query answer: every sample in the order Prometheus sent them, the values by ``instance`` label
    as the upstream descheduler reads them, and the problems each reader meets.

    ``failure`` is a problem of the query as a whole (an error status, not a vector, a value or timestamp Go cannot
    decode): no reader gets data. ``problem`` is what the upstream descheduler reports: the failure, or a sample
    without ``instance`` or with a NaN value.
    """

    def __init__(self, query: Optional[str], values: dict[str, float], timestamps: dict[str, float],
                 problem: Optional[str] = None, samples: Iterable[PrometheusSample] = (),
                 failure: Optional[str] = None) -> None:
        self.query = query
        self.values = values
        self.timestamps = timestamps
        self.problem = problem or failure
        self.samples = list(samples)
        self.failure = failure


def _failed(query: Optional[str], failure: str) -> PrometheusAnswer:
    return PrometheusAnswer(query, {}, {}, failure=failure)


def parse_prometheus_answer(body: Any, query: Optional[str] = None,
                            where: str = "prometheus_result") -> PrometheusAnswer:
    """Read the JSON body of ``GET /api/v1/query`` (``{status, data: {resultType, result}}``).

    A body that is not a Prometheus answer at all raises MetricsError. Problems met at run time (an error status,
    a matrix, a value that is not a number, and for the upstream descheduler a sample without ``instance``) are kept
    on the answer so the plugin fails as upstream's would, naming the query.
    """
    if not isinstance(body, Mapping) or "status" not in body:
        raise MetricsError(f"{where}: expected the JSON body of a Prometheus /api/v1/query answer "
                           "({status: success, data: {resultType: vector, result: [...]}}), got "
                           f"{_short(body)}")
    if body.get("status") != "success":
        detail = f"{body.get('errorType', 'error')}: {body.get('error', 'no error text')}"
        return _failed(query, f"unable to capture prometheus metrics: {detail}")
    data = body.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("result"), list):
        raise MetricsError(f"{where}.data: expected {{resultType, result: [...]}}, got {_short(data)}")
    result_type = data.get("resultType")
    if result_type != "vector":
        return _failed(query, f'expected query results to be of type "vector", got "{result_type}" instead')
    samples: list[PrometheusSample] = []
    for index, sample in enumerate(data["result"]):
        labels = sample.get("metric") if isinstance(sample, Mapping) else None
        pair = sample.get("value") if isinstance(sample, Mapping) else None
        if not isinstance(labels, Mapping) or not isinstance(pair, list) or len(pair) != 2:
            raise MetricsError(f"{where}.data.result[{index}]: expected {{metric: {{...}}, value: [time, \"v\"]}}, "
                               f"got {_short(sample)}")
        name = labels.get("instance", f"result[{index}]")
        number = go_parse_float(pair[1])
        if number is None:
            return _failed(query, f"unable to capture prometheus metrics: the sample for {name!r} has the "
                                  f"non-numeric value {pair[1]!r}")
        moment = _timestamp(pair[0])
        if moment is None:
            return _failed(query, f"unable to capture prometheus metrics: the sample for {name!r} has the "
                                  f"non-numeric timestamp {pair[0]!r}")
        samples.append(PrometheusSample(labels, str(pair[1]), number, moment))
    values, timestamps, problem = _by_instance(samples)
    return PrometheusAnswer(query, values, timestamps, problem, samples)


def _by_instance(samples: list[PrometheusSample]) -> tuple[dict[str, float], dict[str, float], Optional[str]]:
    """The upstream descheduler's reading (NodeUsageFromPrometheusMetrics): each sample's node is its ``instance``
    label, a sample without one fails the whole answer; a later sample of the same instance replaces an earlier one."""
    values: dict[str, float] = {}
    timestamps: dict[str, float] = {}
    for sample in samples:
        instance = sample.labels.get("instance")
        if instance is None:
            return {}, {}, "the collected metrics sample is missing 'instance' key"
        if math.isnan(sample.value):  # no usable usage
            return {}, {}, (f"unable to capture prometheus metrics: the sample for {instance!r} has the non-numeric "
                            f"value {sample.raw!r}")
        values[str(instance)] = sample.value
        timestamps[str(instance)] = sample.timestamp
    return values, timestamps, None


def _answer_warnings(body: Any) -> list[str]:
    found = body.get("warnings") if isinstance(body, Mapping) else None
    return [str(w) for w in found] if isinstance(found, list) else []


# what Go's strconv.ParseFloat accepts in decimal form (Prometheus never sends the hexadecimal one): a number with an
# optional exponent, inf or infinity with an optional sign, nan without one; any case
_GO_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?inf(?:inity)?|nan", re.IGNORECASE)


def go_parse_float(raw: Any) -> Optional[float]:
    """strconv.ParseFloat(raw, 64) as Prometheus' Go client decodes a sample value ("0.42", "NaN", "+Inf");
    None where Go reports a syntax error (Python's float() also takes spaces and "1_0", which Go refuses). A bare
    JSON number, which only a hand-written answer has, is taken as it is."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    if not isinstance(raw, str) or not _GO_FLOAT.fullmatch(raw):
        return None
    return float(raw)


def _timestamp(raw: Any) -> Optional[float]:
    if isinstance(raw, bool):
        return None
    try:
        return float(raw)
    except (TypeError, ValueError):
        return None


def _go_float(value: float) -> str:
    """A float64 as Go's %v prints it: shortest round-trip digits, no trailing .0 (1.7, 2, 1.203818181818181)."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


class ActualUsage:
    """Actual usage of the cluster at ``now``: NodeMetrics/PodMetrics and Prometheus answers, read once."""

    def __init__(self, node_metrics: dict[str, dict[str, int]], pod_metrics: dict[tuple[str, str], Any],
                 prometheus: dict[Optional[str], PrometheusAnswer], kubernetes_metrics: bool,
                 warnings: list[str]) -> None:
        self._node_metrics = node_metrics  # node → {cpu, memory} in nano-units
        self._pod_metrics = pod_metrics  # (namespace, name) → the PodMetrics object, parsed when first read
        self._prometheus = prometheus
        self.kubernetes_metrics = kubernetes_metrics
        self.warnings = warnings
        self.prometheus_unavailable: Optional[str] = None  # set by a live source that could not be queried
        # sends a query nobody recorded (set by the plan module on a live cluster or with prometheus_url)
        self.live_query: Optional[LiveQuery] = None
        self.metrics_api_problem: Optional[str] = None  # why a live metrics API could not be read
        # which metrics clients upstream would have built from the policy; None = not known, not checked
        self.collector_enabled: Optional[bool] = None
        self.prometheus_configured: Optional[bool] = None
        # what each metrics-mode plugin read, for the plan: "profile/plugin" → {mode, query, nodes, thresholds}
        self.readings: dict[str, dict] = {}

    def use_policy(self, document: Mapping[str, Any]) -> None:
        """Record which clients upstream builds: the metrics collector and a Prometheus client with a URL."""
        providers = [p for p in document.get("metricsProviders") or [] if isinstance(p, Mapping)]
        sources = {p.get("source") for p in providers}
        collector = document.get("metricsCollector") or {}
        self.collector_enabled = "KubernetesMetrics" in sources or bool(collector.get("enabled"))
        self.prometheus_configured = any(p.get("source") == "Prometheus" and (p.get("prometheus") or {}).get("url")
                                         for p in providers)

    @classmethod
    def build(cls, metrics_objects: Iterable[Mapping[str, Any]] = (),
              prometheus_results: Optional[Mapping[Optional[str], Any]] = None,
              now: Optional[float] = None, kubernetes_metrics: Optional[bool] = None) -> ActualUsage:
        warnings: list[str] = []
        nodes: dict[str, dict[str, int]] = {}
        pods: dict[tuple[str, str], Any] = {}
        seen = False
        samples: dict[str, list[tuple[float, int, dict[str, int]]]] = {}
        youngest: dict[str, float] = {}  # node → age of its newest sample
        for obj in metrics_objects:
            seen = True
            kind = obj.get("kind")
            if kind == "PodMetrics":
                # only indexed here: a plan reads the usage of the few pods it evicts (see pod_usage)
                meta = obj.get("metadata") or {}
                pods[(meta.get("namespace") or "default", meta.get("name") or "")] = obj
            elif kind == "NodeMetrics":
                name, usage = _node_metrics(obj)
                moment = _time_or_none(obj.get("timestamp"))
                samples.setdefault(name, []).append((moment if moment is not None else 0.0, len(samples), usage))
                age = _age(warnings, f"NodeMetrics {name}", obj.get("timestamp"), now)
                if age is not None:
                    youngest[name] = min(age, youngest.get(name, age))
        for name, found in samples.items():
            nodes[name] = _collected(found)
        stale = [(age, name) for name, age in youngest.items() if age > STALE_SECONDS]
        if stale:
            oldest, name = max(stale)
            warnings.append(f"NodeMetrics of {len(stale)} node(s) sampled more than {int(STALE_SECONDS)}s before now "
                            f"(oldest: {name}, {int(oldest)}s); record metrics together with the snapshot (or set "
                            "now to when they were taken)")
        answers = {}
        for query, body in (prometheus_results or {}).items():
            where = "prometheus_result" if query is ANY_QUERY else f"prometheus_result[{query!r}]"
            answer = parse_prometheus_answer(body, query, where)
            answers[query] = answer
            _warn_stale_answer(warnings, answer, now)
            label = "any query" if query is ANY_QUERY else repr(query)
            # upstream logs the answer's warnings ("prometheus metrics warnings") and goes on
            warnings.extend(f"Prometheus warning for {label}: {text}" for text in _answer_warnings(body))
        available = seen if kubernetes_metrics is None else kubernetes_metrics
        return cls(nodes, pods, answers, available, warnings)

    def node_usage(self, node_name: str) -> dict[str, int]:
        """The node's cpu (millis) and memory (bytes) as the metrics collector's first sample holds them."""
        usage = self._node_metrics.get(node_name)
        if usage is None:
            raise UsageUnavailable(f'unable to find node "{node_name}" in the collected metrics (record its '
                                   "NodeMetrics next to the snapshot, or check metrics-server serves it)")
        return {r: scaled(r, usage.get(r, 0)) for r in NODE_RESOURCES}

    def pod_usage(self, namespace: str, name: str, resources: Iterable[str]) -> dict[str, int]:
        """Σ over the PodMetrics containers, for the resources asked (pods excluded), in upstream units."""
        recorded = self._pod_metrics.get((namespace, name))
        if recorded is None:
            raise UsageUnavailable(f'unable to get podmetrics for "{namespace}"/"{name}": no PodMetrics recorded')
        wanted = [r for r in resources if r != "pods"]
        totals: dict[str, int] = {}
        for container in recorded.get("containers") or ():
            usage = container.get("usage") or {} if isinstance(container, Mapping) else {}
            for resource in wanted:
                amount = usage.get(resource)
                if amount is None:
                    raise UsageUnavailable(f'pod {namespace}/{name}: container "{container.get("name", "")}" is '
                                           f'missing "{resource}" resource')
                totals[resource] = totals.get(resource, 0) + _quantity(amount, f"PodMetrics {namespace}/{name}")
        return {r: scaled(r, amount) for r, amount in totals.items()}

    def prometheus_answer(self, query: str, address: Optional[str] = None) -> PrometheusAnswer:
        """The answer as the upstream descheduler reads it: raises UsageUnavailable where upstream fails."""
        answer = self._answer(query, address)
        if answer.problem:
            raise UsageUnavailable(f"{answer.problem} (query {query!r})")
        return answer

    def prometheus_values(self, query: str, address: Optional[str] = None) -> dict[str, float]:
        return dict(self.prometheus_answer(query, address).values)

    def prometheus_samples(self, query: str, address: Optional[str] = None) -> list[PrometheusSample]:
        """Every sample of the answer in Prometheus' order, whatever their labels (empty: no data); raises
        UsageUnavailable only when there is no answer or the query failed as a whole."""
        answer = self._answer(query, address)
        if answer.failure:
            raise UsageUnavailable(f"{answer.failure} (query {query!r})")
        return list(answer.samples)

    def _answer(self, query: str, address: Optional[str]) -> PrometheusAnswer:
        answer = self._prometheus.get(query) or self._prometheus.get(ANY_QUERY)
        if answer is None and address and self.live_query is not None:
            answer = self._fetch(query, address)
        if answer is None:
            if self.prometheus_unavailable:
                raise UsageUnavailable(self.prometheus_unavailable)
            raise UsageUnavailable(f"no Prometheus answer for query {query!r}: give prometheus_result (the JSON "
                                   "body /api/v1/query returned) or prometheus_url to query it live")
        return answer

    def _fetch(self, query: str, address: str) -> PrometheusAnswer:
        """Send the query live once; the answer is kept (and read) exactly as a recorded one would be."""
        if self.live_query is None:
            raise MetricsError(f"no live Prometheus to send {query!r} to (record its answer with prometheus_result)")
        body = self.live_query(query, address)
        try:
            answer = parse_prometheus_answer(body, query, f"the live answer to {query!r}")
        except MetricsError as exc:  # not the shape of an answer: this query has no usable data, like a failed one
            raise UsageUnavailable(str(exc)) from exc
        self._prometheus[query] = answer
        self.warnings.extend(f"Prometheus warning for {query!r}: {text}" for text in _answer_warnings(body))
        return answer

    def prometheus_usage(self, query: str, node_names: Iterable[str]) -> dict[str, int]:
        """upstream NodeUsageFromPrometheusMetrics + sync: int64(value*100) per node; every node must be there."""
        answer = self.prometheus_answer(query)
        percents: dict[str, int] = {}
        for instance, value in answer.values.items():
            if value < 0 or value > 1:
                raise UsageUnavailable(f'the collected metrics sample for "{instance}" has value {_go_float(value)} '
                                       f"outside of <0; 1> interval (query {query!r} must return a fraction per "
                                       "node)")
            percents[instance] = int(value * 100)
        for node in node_names:
            if node not in percents:
                known = ", ".join(sorted(percents)[:5]) or "none"
                raise UsageUnavailable(f"unable to find metric entry for {node} (query {query!r} answered for "
                                       f"instances: {known}; its 'instance' label must be the node name)")
        return percents


def _collected(samples: list[tuple[float, int, dict[str, int]]]) -> dict[str, int]:
    """What upstream's metrics collector holds after seeing these samples of one node in time order: the first
    raw, then round(0.9*previous + 0.1*new) each (cpu in millis, memory in bytes). One sample: that sample."""
    ordered = sorted(samples, key=lambda sample: sample[:2])
    held = {"cpu": milli_value(ordered[0][2].get("cpu", 0)), "memory": unit_value(ordered[0][2].get("memory", 0))}
    for _moment, _index, usage in ordered[1:]:
        held["cpu"] = _go_round(0.9 * held["cpu"] + 0.1 * milli_value(usage.get("cpu", 0)))
        held["memory"] = _go_round(0.9 * held["memory"] + 0.1 * unit_value(usage.get("memory", 0)))
    return {"cpu": held["cpu"] * 10**6, "memory": held["memory"] * 10**9}  # back to nano-units


def _go_round(number: float) -> int:
    """math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.floor(abs(number) + 0.5)) * (1 if number >= 0 else -1)


def _time_or_none(text: Any) -> Optional[float]:
    try:
        return parse_time(text) if text else None
    except ValueError:
        return None


def _node_metrics(obj: Mapping[str, Any]) -> tuple[str, dict[str, int]]:
    name = str((obj.get("metadata") or {}).get("name") or "")
    if not name:
        raise MetricsError("NodeMetrics without metadata.name")
    usage = obj.get("usage")
    if not isinstance(usage, Mapping):
        raise MetricsError(f"NodeMetrics {name}: usage is missing (expected {{cpu: ..., memory: ...}})")
    return name, _quantities(usage, f"NodeMetrics {name}.usage")


def _quantity(amount: Any, where: str) -> int:
    try:
        return parse_quantity(amount)
    except ValueError as exc:
        raise MetricsError(f"{where}: {exc}") from exc


def _quantities(usage: Mapping[str, Any], where: str) -> dict[str, int]:
    result = {}
    for resource, amount in usage.items():
        try:
            result[str(resource)] = parse_quantity(amount)
        except ValueError as exc:
            raise MetricsError(f"{where}.{resource}: {exc}") from exc
    return result


def _age(warnings: list[str], what: str, timestamp: Any, now: Optional[float]) -> Optional[float]:
    """Seconds between a sample's timestamp and now (None when either is unknown)."""
    if now is None or not timestamp:
        return None
    try:
        moment = parse_time(timestamp)
    except ValueError:
        warnings.append(f"{what}: timestamp {timestamp!r} is not an RFC3339 time")
        return None
    return None if moment is None else now - moment


def _warn_stale_answer(warnings: list[str], answer: PrometheusAnswer, now: Optional[float]) -> None:
    if now is None or not answer.samples:
        return
    newest = max(sample.timestamp for sample in answer.samples)
    if abs(now - newest) > STALE_SECONDS:
        label = "any query" if answer.query is ANY_QUERY else repr(answer.query)
        warnings.append(f"Prometheus answer for {label} was evaluated {int(now - newest)}s before now; a query at "
                        "now could answer differently (record it with the snapshot, or set now to its time)")


def actual_for(snapshot: Any, now: Optional[float] = None) -> ActualUsage:
    """The snapshot's ActualUsage, built from the metrics objects it carries when nobody attached one."""
    if snapshot.actual is None:
        snapshot.actual = ActualUsage.build(snapshot.metrics_objects, None, now)
    return snapshot.actual


def attach(snapshot: Any, prometheus_results: Optional[Mapping[Optional[str], Any]] = None,
           now: Optional[float] = None, kubernetes_metrics: Optional[bool] = None,
           extra_objects: Iterable[Mapping[str, Any]] = ()) -> ActualUsage:
    """Build the plan's ActualUsage from the snapshot's metrics objects (plus live ones) and Prometheus answers."""
    objects = list(snapshot.metrics_objects) + list(extra_objects)
    snapshot.actual = ActualUsage.build(objects, prometheus_results, now, kubernetes_metrics)
    return snapshot.actual


def describe_actual(snapshot: Any, evictions: Iterable[Mapping[str, Any]] = ()) -> Optional[dict]:
    """The plan's ``actual_utilization``: what each metrics-mode plugin read (None when none did).

    A KubernetesMetrics reading also gets ``after``: each node's usage once the PodMetrics of every pod the cycle
    evicts from it are taken off, as upstream subtracts them. Prometheus answers say nothing about pods: no ``after``.
    """
    actual = snapshot.actual
    if actual is None or not actual.readings:
        return None
    evicted = list(evictions)
    for reading in actual.readings.values():
        if reading.get("mode") == "KubernetesMetrics":
            reading["after"] = _after(snapshot, actual, reading, evicted)
    return {"plugins": actual.readings}


def _after(snapshot: Any, actual: ActualUsage, reading: Mapping[str, Any],
           evictions: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    resources = [r for r in reading.get("resources") or [] if r in ("cpu", "memory", "pods")]
    result = {}
    for name in reading.get("nodes") or {}:
        node = snapshot.nodes.get(name)
        try:
            used: dict[str, int] = dict(actual.node_usage(name))
        except UsageUnavailable:
            continue
        used["pods"] = sum(1 for p in snapshot.pods_by_node.get(name, ()) if not p.terminal)
        for entry in evictions:
            if entry.get("node") != name:
                continue
            used["pods"] -= 1
            try:
                freed = actual.pod_usage(str(entry.get("namespace")), str(entry.get("name")), ("cpu", "memory"))
            except UsageUnavailable:
                continue  # evicted by a plugin reading requests: its actual usage is unknown here
            for resource, amount in freed.items():
                used[resource] -= amount
        capacity = {r: scaled(r, node.allocatable.get(r, 0)) for r in resources} if node is not None else {}
        result[name] = {r: round(used.get(r, 0) / capacity[r] * 100, 2) if capacity.get(r) else 0.0
                        for r in resources}
    return result


def actual_warnings(snapshot: Any) -> list[str]:
    actual = snapshot.actual
    return list(actual.warnings) if actual is not None and actual.readings else []


def metrics_needs(document: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """(needs NodeMetrics/PodMetrics, Prometheus queries) of a DeschedulerPolicy's LowNodeUtilization configs."""
    kubernetes = False
    queries: list[str] = []
    for profile in document.get("profiles") or []:
        for config in (profile or {}).get("pluginConfig") or []:
            metrics = ((config or {}).get("args") or {}).get("metricsUtilization")
            if not isinstance(metrics, Mapping):
                continue
            if metrics.get("metricsServer") or metrics.get("source") == "KubernetesMetrics":
                kubernetes = True
            query = (metrics.get("prometheus") or {}).get("query") if metrics.get("source") == "Prometheus" else None
            if query and query not in queries:
                queries.append(str(query))
    return kubernetes, queries


def provider_url(document: Mapping[str, Any]) -> Optional[str]:
    for provider in document.get("metricsProviders") or []:
        if isinstance(provider, Mapping) and provider.get("source") == "Prometheus":
            return (provider.get("prometheus") or {}).get("url") or None
    return None


def provider_secret(document: Mapping[str, Any]) -> Optional[tuple[str, str]]:
    for provider in document.get("metricsProviders") or []:
        if isinstance(provider, Mapping) and provider.get("source") == "Prometheus":
            secret = ((provider.get("prometheus") or {}).get("authToken") or {}).get("secretReference") or {}
            if secret.get("namespace") and secret.get("name"):
                return str(secret["namespace"]), str(secret["name"])
    return None
