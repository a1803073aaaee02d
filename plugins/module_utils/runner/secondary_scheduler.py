"""The flow of one call of the secondary_scheduler module: the client, the configuration to deploy (built from the
``trimaran`` options or given whole), install or uninstall, and the result with every step."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.olm import OlmRequest
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.operator import run_session
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler import lifecycle
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.config import (
    Trimaran,
    trimaran_config,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.names import SSO_OLM

_ARGS = "scheduler_config.profiles[0].pluginConfig[0].args"
# Errors in a configuration built from the trimaran options name the option the user wrote.
TRIMARAN_FIELDS = {
    f"{_ARGS}.targetUtilization": "trimaran.target_utilization",
    f"{_ARGS}.defaultRequests.cpu": "trimaran.default_requests_cpu",
    f"{_ARGS}.defaultRequestsMultiplier": "trimaran.default_requests_multiplier",
    f"{_ARGS}.metricProvider.type": "trimaran.metric_provider.type",
    f"{_ARGS}.metricProvider.address": "trimaran.metric_provider.address",
    f"{_ARGS}.watcherAddress": "trimaran.watcher_address",
    "scheduler_config.profiles[0].schedulerName": "scheduler_name",
}


def run_secondary_scheduler(params: Mapping[str, Any], check_mode: bool = False, want_diff: bool = False,
                            created_labels: Optional[dict[str, str]] = None,
                            left: Optional[dict[str, Optional[str]]] = None) -> dict:
    """The module's result; a failure after the first write comes back with the actions done so far. A rollout's
    change gives ``created_labels`` (its id, on what it creates) and ``left``, which gets the marker of each object
    written as the call left it (operator/objects.py), for its rollback."""
    api_client, identity = connect_to_intended_cluster(params)
    require_rights(api_client, "secondary_scheduler")
    session = ClusterSession(api_client, check_mode=check_mode, want_diff=want_diff, created_labels=created_labels)
    result: dict[str, Any] = {"state": params["state"], "check_mode": check_mode,
                              "cluster_identity": identity.as_dict()}
    try:
        return run_session(session, lambda: dispatch(session, params), result)
    finally:
        if left is not None:
            left.update(session.left)


def dispatch(session: ClusterSession, params: Mapping[str, Any]) -> dict:
    waiter = Waiter(timeout=float(params["wait_timeout"]), interval=float(params["wait_sleep"]))
    if params["state"] == "absent":
        return lifecycle.uninstall(session, params["config_map_name"], bool(params["wait"]), waiter)
    return lifecycle.install(session, lifecycle.SchedulerRequest(
        olm=OlmRequest(channel=params["channel"], source=params["source"], source_namespace=params["source_namespace"],
                       starting_csv=params.get("starting_csv"), install_plan_approval=params["install_plan_approval"],
                       wait=bool(params["wait"]), waiter=waiter, target=SSO_OLM),
        config=desired_config(params), config_map=params["config_map_name"],
        scheduler_image=params.get("scheduler_image"), log_level=params["log_level"],
        check_metric_provider=bool(params["check_metric_provider"]), wait=bool(params["wait"]), waiter=waiter,
        field_aliases=None if params.get("scheduler_config") else TRIMARAN_FIELDS))


def desired_config(params: Mapping[str, Any]) -> dict:
    if params.get("scheduler_config"):
        return dict(params["scheduler_config"])
    given = {key: value for key, value in (params.get("trimaran") or {}).items() if value is not None}
    return trimaran_config(Trimaran(scheduler_name=params["scheduler_name"], **given))
