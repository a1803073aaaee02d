"""The flow one call of the evict module follows: read the input, check the plan's age, check the cluster (it answers,
it is the plan's, the user may evict), take the run's locks, execute (cancelled by a signal or the end of the
playbook), release the locks, write reports."""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.access import Permission, denied
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.change_lease import refuse_during_a_change
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import (
    ClusterIdentity,
    check_same_cluster,
    connect_to_intended_cluster,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import ClusterLease, LeaseSettings
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import server_clock
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import (
    LEASE_LOST,
    Cancellation,
    cancel_on_signals_and_parent_exit,
    controller_command,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.journal import recorded_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import (
    ExecutorInputError,
    ExecutorOptions,
    options_from_params,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.plan_checks import (
    Selection,
    check_identity_recorded,
    check_not_from_the_future,
    check_seal,
    check_uids,
    select_targets,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.report import write_evict_report
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.run import execute
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.runlock import (
    Holder,
    RunLock,
    lock_path,
    this_holder,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import (
    Target,
    check_plan_age,
    load_plan_file,
    plan_time,
    targets_from_plan,
    targets_from_pods,
)

MIN_LEASE_SECONDS = 10


def run_evict(params: Mapping[str, Any], check_mode: bool) -> dict:
    options = options_from_params(params, check_mode)
    lock_timeout = _lock_timeout(params.get("lock_timeout"))
    lease_params = _lease_params(params.get("lease"))
    plan, targets, source = _input(params)
    seal = _check_plan(plan, targets, source, params) if plan is not None else None
    targets, selection = select_targets(targets, params.get("select"), params.get("exclude"))
    age = check_plan_age(plan, params.get("max_plan_age")) if plan is not None else None
    cancellation = Cancellation()
    with cancel_on_signals_and_parent_exit(cancellation):
        holder = this_holder(playbook=controller_command())
        api_client, identity = connect_to_intended_cluster(params)
        try:
            if plan is not None:
                _check_plan_time(api_client, plan, source)
            require_rights(api_client, "evict", (lease_params or {}).get("namespace"))
            _preflight(api_client, identity, plan, source, targets, options)
            result = _execute_alone(api_client, targets, options, cancellation, holder, lock_timeout, lease_params,
                                    identity)
        finally:
            api_client.close()
    result["cluster_identity"] = identity.as_dict()
    result["input"] = _input_summary(plan, source, targets, age, seal, selection)
    if params.get("cluster_name"):
        result["cluster"] = params["cluster_name"]
    if params.get("report_dir"):
        result["report_files"] = write_evict_report(result, params["report_dir"], params.get("cluster_name"),
                                                    template_dir=params.get("report_template_dir"))
    return result


def _check_plan(plan: dict, targets: list[Target], source: str, params: Mapping[str, Any]) -> str:
    """Before the cluster is contacted: the plan is the one sealed when written, it records its cluster (or the user
    opted in and pinned one), and its pods are known by UID. Returns the seal's digest."""
    digest = check_seal(plan, source)
    check_identity_recorded(plan, source, bool(params.get("allow_plan_without_identity")),
                            params.get("expected_cluster_uid"))
    check_uids(targets, source)
    return digest


def _check_plan_time(api_client: Any, plan: dict, source: str) -> None:
    """The plan is not dated after the cluster's clock (the control node's when the API server sends no Date)."""
    clock = server_clock(api_client)
    clock_name = "the cluster's clock (its API server's Date)"
    if clock is None:
        clock, clock_name = time.time(), "the control node's clock"
    check_not_from_the_future(plan_time(plan), plan.get("now"), clock, clock_name, source)


def _input_summary(plan: Optional[dict], source: str, targets: list[Target], age: Optional[float],
                   seal: Optional[str], selection: Selection) -> dict:
    return {"source": source, "targets": len(targets), "plan_now": (plan or {}).get("now"),
            "plan_age_seconds": round(age, 1) if age else age,
            "plan_cluster_identity": (plan or {}).get("cluster_identity"), "plan_seal": seal,
            "selection": selection.as_dict()}


def _preflight(api_client: Any, identity: ClusterIdentity, plan: Optional[dict], source: str,
               targets: list[Target], options: ExecutorOptions) -> None:
    """Before the first eviction (check mode too), after the connection reached the cluster the inventory pins
    (``connect_to_intended_cluster``): it is the one the plan and the journal were made on, and the user may evict
    in every namespace of the plan. Raises with what was found; nothing has been done then."""
    check_same_cluster((plan or {}).get("cluster_identity"), identity, source,
                       "Plan this cluster and execute that plan, or point the connection at the plan's cluster.")
    if options.journal:
        check_same_cluster(recorded_cluster(options.journal), identity, f"the journal {options.journal}",
                           "Give each cluster its own journal (for example one per inventory host).")
    permissions = [Permission("create", "pods", subresource="eviction", namespace=namespace)
                   for namespace in sorted({target.namespace for target in targets})]
    missing = denied(api_client, permissions)
    if missing:
        raise ExecutorInputError(f"the user of this connection may not evict pods on {identity.server}: it lacks "
                                 f"{'; '.join(missing)}. Grant create on pods/eviction in those namespaces (and get, "
                                 "list on pods); nothing was evicted")


def _execute_alone(api_client: Any, targets: list[Target], options: ExecutorOptions, cancellation: Cancellation,
                   holder: Holder, lock_timeout: float, lease_params: Optional[dict],
                   identity: ClusterIdentity) -> dict:
    """Execute holding the journal's lock and, when asked, the cluster's Lease: the journal is read only once both
    are held, so a run that waited sees everything the previous one did. Check mode changes nothing and takes
    neither."""
    with ExitStack() as held:
        run_lock = None
        if options.journal and not options.check_mode:
            run_lock = held.enter_context(RunLock(lock_path(options.journal), holder, lock_timeout,
                                                  cancelled=cancellation.is_set).acquire())
        lease = None
        if lease_params and not options.check_mode:
            lease = _take_lease(api_client, lease_params, holder, lock_timeout, cancellation)
            held.callback(lease.release)
            lease.start_renewing(lambda reason: cancellation.cancel(reason, code=LEASE_LOST))
        if not options.check_mode:  # after our own Lease: a change starting now sees it (cluster/change_lease.py)
            refuse_during_a_change(api_client, lease.identity if lease else _identity(holder), holder.as_dict())
        result = execute(api_client, targets, options, cancellation=cancellation, cluster=identity.as_dict())
    result["lock"] = run_lock.as_dict() if run_lock else None
    result["lease"] = lease.as_dict() if lease else None
    return result


def _take_lease(api_client: Any, lease_params: dict, holder: Holder, lock_timeout: float,
                cancellation: Cancellation) -> Any:
    lease = ClusterLease(api_client, LeaseSettings(**lease_params), _identity(holder), holder.as_dict())
    return lease.acquire(lock_timeout, cancelled=cancellation.is_set)


def _identity(holder: Holder) -> str:
    return f"{holder.host}/pid-{holder.pid}/{uuid.uuid4().hex[:8]}"


def _lock_timeout(value: Any) -> float:
    if value is None:
        return 0.0
    if float(value) < 0:
        raise ExecutorInputError(f"lock_timeout: must be 0 (fail at once when another run holds the journal or the "
                                 f"Lease) or a number of seconds to wait, got {value}")
    return float(value)


def _lease_params(value: Any) -> Optional[dict]:
    """The ``lease`` option, validated: None when no Lease is asked for."""
    if not value:
        return None
    namespace = value.get("namespace")
    if not namespace:
        raise ExecutorInputError("lease.namespace: name the namespace of the Lease (for example kube-system, or the "
                                 "namespace the descheduler runs in); it must exist and the user needs get, create "
                                 "and update on leases there")
    duration = int(value.get("duration") if value.get("duration") is not None else 60)
    renew_deadline = float(value.get("renew_deadline") if value.get("renew_deadline") is not None
                           else duration * 2 / 3)
    if duration < MIN_LEASE_SECONDS:
        raise ExecutorInputError(f"lease.duration: must be at least {MIN_LEASE_SECONDS} seconds, got {duration}")
    if not 0 < renew_deadline < duration:
        raise ExecutorInputError(f"lease.renew_deadline: must be more than 0 and less than lease.duration "
                                 f"({duration}), so the run stops before its Lease can expire; got {renew_deadline:g}")
    settings = {"namespace": namespace, "duration": duration, "renew_deadline": renew_deadline}
    if value.get("name"):
        settings["name"] = value["name"]
    return settings


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
    # the plan given as a value: named by where the caller took it from (the evict role: a file, a run store key)
    origin = f"the plan from {params['plan_origin']}" if params.get("plan_origin") else "the plan option"
    return dict(params["plan"]), targets_from_plan(params["plan"]), origin
