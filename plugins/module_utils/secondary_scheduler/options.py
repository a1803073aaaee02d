"""The secondary_scheduler module's own options (connection, identity, OLM and wait options come from cluster/args),
in one place: the module's argument spec, and the rollout's check of a cluster's ``secondary_scheduler`` options."""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.names import (
    DEFAULT_CONFIGMAP,
    DEFAULT_SCHEDULER_NAME,
)

METRIC_PROVIDER_SPEC: dict[str, Any] = dict(
    type=dict(type="str", choices=["KubernetesMetricsServer", "Prometheus", "SignalFx"],
              default="KubernetesMetricsServer"),
    address=dict(type="str"),
    token=dict(type="str", no_log=True),
    insecure_skip_verify=dict(type="bool"),
)

TRIMARAN_SPEC: dict[str, Any] = dict(
    target_utilization=dict(type="int", default=40),
    default_requests_cpu=dict(type="str", default="1000m"),
    default_requests_multiplier=dict(type="str", default="1.5"),
    metric_provider=dict(type="dict", options=METRIC_PROVIDER_SPEC),
    watcher_address=dict(type="str"),
)

SCHEDULER_ARG_SPEC: dict[str, Any] = dict(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    scheduler_image=dict(type="str"),
    scheduler_name=dict(type="str", default=DEFAULT_SCHEDULER_NAME),
    config_map_name=dict(type="str", default=DEFAULT_CONFIGMAP),
    scheduler_config=dict(type="dict"),
    trimaran=dict(type="dict", options=TRIMARAN_SPEC, apply_defaults=True),
    check_metric_provider=dict(type="bool", default=False),
    log_level=dict(type="str", choices=["Normal", "Debug", "Trace", "TraceAll"], default="Normal"),
)
