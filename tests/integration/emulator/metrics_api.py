"""metrics.k8s.io/v1beta1 in the emulator: NodeMetrics and PodMetrics, read-only as metrics-server serves them.

`serve_metrics_api(emulator)` registers the two types; seed them with `emulator.load([...])`. A real kube-apiserver
serves this group only through an aggregated APIService (metrics-server), which the suite's control plane does not
run, so tests of the live metrics API are marked `needs_emulator`.
"""

from __future__ import annotations

from typing import Any

from .resources import ResourceType

READ_VERBS = ("get", "list")


def serve_metrics_api(emulator: Any) -> None:
    emulator.register_type(ResourceType("metrics.k8s.io", "v1beta1", "NodeMetrics", "nodes", False, verbs=READ_VERBS))
    emulator.register_type(ResourceType("metrics.k8s.io", "v1beta1", "PodMetrics", "pods", True, verbs=READ_VERBS))
