"""The flow one call of the evict module follows: read the input, check the plan's age, execute, write reports."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import (
    ExecutorInputError,
    options_from_params,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import (
    Target,
    check_plan_age,
    load_plan_file,
    targets_from_plan,
    targets_from_pods,
)


def run_evict(params: Mapping[str, Any], check_mode: bool) -> dict:
    options = options_from_params(params, check_mode)
    plan, targets, source = _input(params)
    age = check_plan_age(plan, params.get("max_plan_age")) if plan is not None else None
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import build_api_client
    from ansible_collections.descheduler.fleet.plugins.module_utils.executor.run import execute

    api_client = build_api_client(params)
    try:
        result = execute(api_client, targets, options)
    finally:
        api_client.close()
    result["input"] = {"source": source, "targets": len(targets),
                       "plan_now": (plan or {}).get("now"), "plan_age_seconds": round(age, 1) if age else age}
    if params.get("cluster_name"):
        result["cluster"] = params["cluster_name"]
    if params.get("report_dir"):
        from ansible_collections.descheduler.fleet.plugins.module_utils.executor.report import write_evict_report

        result["report_files"] = write_evict_report(result, params["report_dir"], params.get("cluster_name"))
    return result


def _input(params: Mapping[str, Any]) -> tuple[Optional[dict], list[Target], str]:
    given = [name for name in ("plan", "plan_file", "pods") if params.get(name) is not None]
    if len(given) != 1:
        raise ExecutorInputError("give exactly one of plan (the plan module's result), plan_file (its plan.json) or "
                                 f"pods (a list of namespace/name), got {', '.join(given) or 'none'}")
    if params.get("pods") is not None:
        return None, targets_from_pods(params["pods"]), "pods"
    if params.get("plan_file"):
        plan = load_plan_file(params["plan_file"])
        return plan, targets_from_plan(plan), f"plan_file {params['plan_file']}"
    return dict(params["plan"]), targets_from_plan(params["plan"]), "plan"
