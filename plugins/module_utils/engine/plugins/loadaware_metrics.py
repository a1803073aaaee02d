"""How Volcano's LoadAware reads a Prometheus answer (volcano-sh/descheduler,
pkg/framework/plugins/loadaware/metrics/metrics_client_prometheus.go, ``NodeMetricsAvg`` and ``PodsMetricsAvg``).

Volcano does not look at the samples' labels. For each query it takes ``res.String()`` (prometheus/common
``model.Vector.String``: one ``<metric> => <value> @[<time>]`` row per sample, in the order Prometheus sent them),
keeps the text before the first newline, splits that row at ``=>``, and takes the first space-separated field after
the first ``=>``: the FIRST sample's value, whatever its labels (``instance`` or not, one series or ten). An empty
vector, an error and a non-vector answer are "no data found": that resource is skipped. The value text is
``strconv.FormatFloat(v, 'f', -1, 64)``; a node reads it with ``strconv.ParseFloat`` (a failure leaves 0), a pod with
``resource.MustParse`` (which panics on ``NaN``, ``+Inf`` or anything not a quantity).

The upstream descheduler reads the same answers differently (every sample must carry ``instance``, see
engine/metrics.py ``PrometheusAnswer.values``); its plugins keep that rule.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.metrics import PrometheusSample, go_parse_float
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import NANO, parse_quantity

METRIC_NAME = "__name__"


class VolcanoPanic(Exception):
    """What makes Volcano's descheduler panic while reading usage (resource.MustParse of a value it cannot parse)."""


def first_row_value(samples: Sequence[PrometheusSample]) -> Optional[str]:
    """The text Volcano takes as the answer's value, or None for "no data found" (an empty vector)."""
    if not samples:
        return None
    first = samples[0]
    row = f"{go_metric_string(first.labels)} => {go_format_float(first.value)}"  # " @[time]" is never reached
    after = row.strip().split("=>")[1]  # a label holding "=>" moves the split into the labels, as in Volcano
    return after.strip().split(" ")[0]


def go_metric_string(labels: Mapping[str, Any]) -> str:
    """prometheus/common model.Metric.String(): name{label="value", ...}, labels sorted, values %q-quoted."""
    name = str(labels.get(METRIC_NAME, ""))
    pairs = sorted(f"{key}={json.dumps(str(value), ensure_ascii=False)}" for key, value in labels.items()
                   if key != METRIC_NAME)
    if not pairs:
        return name or "{}"
    return f"{name}{{{', '.join(pairs)}}}"


def go_format_float(number: float) -> str:
    """strconv.FormatFloat(v, 'f', -1, 64): the shortest digits that read back to v, never an exponent."""
    if math.isnan(number):
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "+Inf" if number > 0 else "-Inf"
    return format(Decimal(repr(number)).normalize(), "f")


def node_fraction(text: Optional[str]) -> tuple[float, Optional[str]]:
    """NodeMetricsAvg: strconv.ParseFloat of the value; a failure logs a warning and leaves 0. Returns the
    fraction and what went wrong (None when nothing did)."""
    if text is None:
        return 0.0, None
    number = go_parse_float(text)
    if number is None:
        return 0.0, f"Volcano cannot convert {text!r} to a float and reads 0"
    return number, None


def node_amount(capacity: int, fraction: float, what: str) -> Decimal:
    """getNodeUtilization: resource.MustParse(fmt.Sprintf("%f", float64(capacity.Value()) * fraction))."""
    product = capacity * fraction
    if not math.isfinite(product):
        raise VolcanoPanic(f"{what}: Volcano's descheduler panics on the usage {go_format_float(product)} "
                           "(resource.MustParse of capacity x the Prometheus fraction); make the query answer a "
                           "finite number")
    return Decimal(f"{product:f}")


def pod_quantity(text: str, what: str) -> Decimal:
    """PodsMetricsAvg: resource.MustParse of the value, as a Decimal (rounded up to nano-units as Quantity does)."""
    try:
        nano = parse_quantity(text)
    except (ValueError, InvalidOperation) as exc:
        raise VolcanoPanic(f"{what}: Volcano's descheduler panics on the value {text!r} (resource.MustParse "
                           "cannot parse it); make the query answer a finite number") from exc
    return Decimal(nano) / NANO
