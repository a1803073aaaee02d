"""The flow of one call of the operator module: build the client, install or uninstall one flavor, and return what
was done step by step. Kept apart from the module so the module stays thin and this stays testable."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import olm, uninstall, upstream, volcano
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import (
    UPSTREAM_ARG_SPEC,
    VOLCANO_ARG_SPEC,
    defaults,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession

OLM_ONLY_OPTIONS = ("starting_csv",)


def run_operator(params: Mapping[str, Any], check_mode: bool = False, want_diff: bool = False) -> dict:
    """The module's result. A failure after the first write is returned (``failed``) with the actions done so far,
    so the user sees where the run stopped."""
    api_client, identity = connect_to_intended_cluster(params)
    require_rights(api_client, "operator")
    session = ClusterSession(api_client, check_mode=check_mode, want_diff=want_diff)
    result: dict[str, Any] = {"flavor": params["flavor"], "state": params["state"], "check_mode": check_mode,
                              "cluster_identity": identity.as_dict()}
    return run_session(session, lambda: dispatch(session, params), result)


def run_session(session: ClusterSession, steps: Callable[[], dict], result: dict[str, Any]) -> dict:
    """Run the steps of a lifecycle module and add what they did to ``result``: a failure is returned (``failed``,
    ``msg``) with the actions done so far, every action, the warnings and, in diff mode, the diffs."""
    try:
        result.update(steps())
    except FleetError as error:
        result.update(error.user_details(), failed=True, msg=error.user_message())
    result.update(changed=session.changed, actions=session.actions, warnings=session.warnings)
    if session.want_diff:
        result["diff"] = session.diffs
    return result


def dispatch(session: ClusterSession, params: Mapping[str, Any]) -> dict:
    waiter = Waiter(timeout=float(params["wait_timeout"]), interval=float(params["wait_sleep"]))
    if params["flavor"] == "volcano":
        request = volcano_request(params, waiter)
        return (volcano.uninstall if params["state"] == "absent" else volcano.install)(session, request)
    if params.get("volcano_scheduler_config"):
        session.warnings.append("volcano_scheduler_config only applies to flavor volcano; ignored")
    if params["flavor"] == "upstream":
        for option in OLM_ONLY_OPTIONS:
            if params.get(option):
                session.warnings.append(f"{option} only applies to flavor olm; ignored")
        request = upstream_request(params, waiter)
        if params["state"] == "absent":
            return upstream.uninstall(session, request)
        return upstream.install(session, request)
    if params["state"] == "absent":
        return uninstall.uninstall(session, uninstall.UninstallRequest(
            remove_crd=bool(params.get("remove_crd")), wait=bool(params["wait"]), waiter=waiter))
    return olm.install(session, olm.OlmRequest(
        channel=params["channel"], source=params["source"], source_namespace=params["source_namespace"],
        starting_csv=params.get("starting_csv"), install_plan_approval=params["install_plan_approval"],
        wait=bool(params["wait"]), waiter=waiter))


def upstream_request(params: Mapping[str, Any], waiter: Waiter) -> upstream.UpstreamRequest:
    given = {key: value for key, value in (params.get("upstream") or {}).items() if value is not None}
    options = {**defaults(UPSTREAM_ARG_SPEC), **given}
    return upstream.UpstreamRequest(
        name=options["name"], namespace=options["namespace"], image=options["image"], version=options["version"],
        mode=options["mode"], kind=options["kind"], interval=options["interval"], schedule=options["schedule"],
        policy=options["policy"] or {}, priority_class_name=options["priority_class_name"] or None,
        log_level=int(options["log_level"]), extra_args=list(options["extra_args"] or []),
        wait=bool(params["wait"]), waiter=waiter)


def volcano_request(params: Mapping[str, Any], waiter: Waiter) -> volcano.VolcanoRequest:
    given = {key: value for key, value in (params.get("volcano") or {}).items() if value is not None}
    options = {**defaults(VOLCANO_ARG_SPEC), **given}
    return volcano.VolcanoRequest(
        name=options["name"], namespace=options["namespace"], image=options["image"], version=options["version"],
        mode=options["mode"], interval=options["interval"], policy=options["policy"] or {},
        log_level=int(options["log_level"]), extra_args=list(options["extra_args"] or []),
        scheduler_config=params.get("volcano_scheduler_config"), wait=bool(params["wait"]), waiter=waiter)
