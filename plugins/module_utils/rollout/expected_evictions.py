"""The ``expected_evictions`` gate: the evictions the operand logged since the change stay within what the plan of
that cluster predicted - no pod the plan never evicts (planned, or seen in one of its sampled cycles), no cycle
total above the plan's range beyond ``count_tolerance``.

The comparison is the Predictive->Automatic promotion's (promotion/gate.py), run on the log of a soak in progress.
Each plan is read, and checked to be the named cluster's, before anything is changed: it must be keyed by a cluster of
the rollout, a plan names its cluster (``cluster``, from the plan module's ``cluster_name``) and records its identity
(the kube-system UID), which is compared with every planned cluster reachable before the first group changes (and
again before the change is applied to it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import (
    ClusterIdentity,
    ClusterIdentityError,
    check_same_cluster,
    read_cluster_identity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorInputError
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import load_plan_file
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import parse_descheduler_log
from ansible_collections.descheduler.fleet.plugins.module_utils.promotion.gate import compare_predictive_log
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError

FIELD = "gates.expected_evictions"


@dataclass(frozen=True)
class ExpectedEvictions:
    """The plan of each checked cluster (by its name in ``clusters``) and the tolerances; no plans: not checked."""

    plans: Mapping[str, dict] = field(default_factory=dict)
    max_unexpected: int = 0  # logged evictions the plan does not find possible that are tolerated
    count_tolerance: int = 0  # how far above the plan's evictions per cycle a logged cycle total may be


def _whole(value: Any, name: str) -> int:
    value = 0 if value is None else value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RolloutError(f"{FIELD}.{name}: {value!r} is not a whole number of 0 or more", f"{FIELD}.{name}", value)
    return value


def _load_plan(cluster: str, path: Any) -> dict:
    where = f"{FIELD}.plans.{cluster}"
    if not os.path.isfile(str(path)):
        raise RolloutError(f"{where}: {path!r} does not exist; give the plan.json the plan module (report_dir) or the "
                           f"dry_run role wrote for {cluster!r}; nothing was changed", where, path)
    try:
        plan = load_plan_file(str(path))
    except ExecutorInputError as error:
        raise RolloutError(f"{where}: {error.user_message()}; nothing was changed", where, path) from error
    if not isinstance(plan.get("evictions"), list):
        raise RolloutError(f"{where}: {path!r} holds no 'evictions' list; give the plan.json the plan module or the "
                           "dry_run role wrote for this cluster", where, path)
    named = plan.get("cluster")
    if named and named != cluster:
        raise RolloutError(f"{where}: {path!r} is the plan of cluster {named!r}, not {cluster!r}; give the plan made "
                           f"on {cluster!r} (the dry_run role writes one per cluster)", where, path)
    return plan


def expected_evictions(option: Optional[Mapping[str, Any]]) -> ExpectedEvictions:
    """The gate's option, checked and its plan files read (a RolloutError names the first wrong one)."""
    option = option or {}
    plans = option.get("plans") or {}
    if not isinstance(plans, Mapping):
        raise RolloutError(f"{FIELD}.plans: {plans!r} is not a mapping; give each cluster's name and its plan.json "
                           "path", f"{FIELD}.plans", plans)
    return ExpectedEvictions(
        plans={str(name): _load_plan(str(name), path) for name, path in plans.items()},
        max_unexpected=_whole(option.get("max_unexpected"), "max_unexpected"),
        count_tolerance=_whole(option.get("count_tolerance"), "count_tolerance"),
    )


def check_plans_name_clusters(gate: ExpectedEvictions, clusters: Iterable[str]) -> None:
    """Raise when a plan is keyed by a name that is no cluster of the rollout (its gate would silently never run)."""
    known = list(clusters)
    for name in gate.plans:
        if name not in known:
            where = f"{FIELD}.plans.{name}"
            raise RolloutError(f"{where}: {name!r} is not a cluster of this rollout (its clusters: "
                               f"{', '.join(known) or 'none'}); key each plan by the name of the cluster it was made "
                               "on (its inventory host), or drop it; nothing was changed", where, name)


def check_plan_identity(plan: Mapping[str, Any], reached: ClusterIdentity, cluster: str) -> None:
    """Raise when the plan recorded another cluster's identity than ``reached`` (the cluster named ``cluster``)."""
    where = f"{FIELD}.plans.{cluster}"
    try:
        check_same_cluster(plan.get("cluster_identity"), reached, where,
                           f"Give {where} the plan made on this cluster.")
    except ClusterIdentityError as error:
        raise RolloutError(error.user_message(), where, (plan.get("cluster_identity") or {}).get("uid")) from error


def check_plan_cluster(api_client: Any, plan: Mapping[str, Any], cluster: str) -> None:
    """Read the identity of the cluster reached and check the plan against it (``check_plan_identity``)."""
    check_plan_identity(plan, read_cluster_identity(api_client), cluster)


def log_since(now: Optional[datetime] = None) -> str:
    """The RFC 3339 time the pod log API's ``sinceTime`` takes (whole seconds, rounded down: a line logged in the
    second of the change is read, not lost)."""
    return (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def unexpected_eviction_breaches(plan: Mapping[str, Any], log_lines: list[str],
                                 gate: ExpectedEvictions) -> list[str]:
    """A sentence per reason the logged evictions fall outside the plan's (none while they agree)."""
    verdict = compare_predictive_log(plan, parse_descheduler_log(log_lines), max_unexpected=gate.max_unexpected,
                                     count_tolerance=gate.count_tolerance, require_cycle=False,
                                     check_minimum=False, skip_initial_cycles=0)
    return [f"evictions outside the plan: {reason}" for reason in verdict["reasons"]]
