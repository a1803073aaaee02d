"""The rollout module: one change rolled across the fleet by decision groups, with soak, gates and rollback.

Order of one call: the options checked (rollout/options.py), the clusters' decision groups (rollout/groups.py), then
rollout/controller.py drives the groups, calling back into the ``Change`` of the option ``kind`` for each cluster:
read what it runs (the last good configuration), apply the new one with the runner of its module and wait for the
operator to roll it out, or put the old one back. ``kubedescheduler``: this file's ``KubeDeschedulerChange`` (the
``cluster`` KubeDescheduler's spec); ``secondary_scheduler``: runner/rollout_secondary_scheduler.py (the scheduler's
configuration); ``operator``: runner/rollout_operator.py (the descheduler installed, upgraded or removed).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rollout_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import (
    Cancellation,
    cancel_on_signals_and_parent_exit,
    controller_command,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.runlock import this_holder
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import OPERATOR_NAMESPACE
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.spec import comparable, desired_spec
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Rollout, Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.gates import operand_breaches
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.groups import decision_groups
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import parse_budget, rollout_options
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.kubedescheduler import (
    read_kubedescheduler,
    run_kubedescheduler,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_operator import (
    OPTION_DEFAULTS as OPERATOR_OPTIONS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_operator import (
    OperatorChange,
    operator_options,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_secondary_scheduler import (
    OPTION_DEFAULTS as SCHEDULER_OPTIONS,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_secondary_scheduler import (
    SecondarySchedulerChange,
    scheduler_options,
)

KUBEDESCHEDULER_RECORD_KEY = "kubedescheduler.json"


class KubeDeschedulerChange:
    """The ``cluster`` KubeDescheduler's spec, changed and restored through the kubedescheduler module's runner."""

    namespace = OPERATOR_NAMESPACE
    record_key = KUBEDESCHEDULER_RECORD_KEY
    job = "configuring"  # the kubedescheduler module's (cluster/rights.py)

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.validation = {"field_validation": params.get("field_validation") or "Strict",
                           "fail_on_warnings": bool(params.get("fail_on_warnings"))}
        self.wait_sleep = float(params.get("wait_sleep") or 5)
        self.written: dict[str, Optional[dict]] = {}  # by cluster: the spec the change wrote (None: it deleted it)

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        existing = read_kubedescheduler(api_client)
        return comparable(existing.get("spec") or {}) if existing is not None else None

    def _run(self, target: Target, options: dict[str, Any], timeout: float, check_mode: bool,
             restoring: bool = False) -> dict[str, Any]:
        params = {**target.params, **options, "wait": True, "wait_timeout": timeout, "wait_sleep": self.wait_sleep}
        return run_kubedescheduler(params, check_mode, restoring=restoring)

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        state = target.desired.get("state") or "present"
        options = {**self.validation, "state": state, "spec": target.desired.get("spec") if state == "present"
                   else None}
        if not check_mode:  # before the write: a failed wait must not lose what the change wrote
            self.written[target.name] = comparable(desired_spec(options)[0]) if state == "present" else None
        result = self._run(target, options, timeout, check_mode)
        diff = result.get("diff")
        if diff:  # name the cluster in --diff output: one diff per cluster
            diff = {**diff, "before_header": f"{target.name}: {diff.get('before_header')}",
                    "after_header": f"{target.name}: {diff.get('after_header')}"}
        return {**result, "diff": diff if result.get("changed") else None}

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        modified = self._modified_since(target)
        if modified:  # someone else's spec now: not the change's to take back
            return {"changed": False, "left_in_place": [modified], "msg": modified}
        # The old spec ran on this cluster: warnings about it are no reason to leave the new one in place.
        if last_good is None:
            return self._run(target, {"state": "absent"}, timeout, check_mode=False)
        # Written back exactly as it was, a spec without managementState (an older operator's, or a user's) included:
        # the rule that refuses one is for the specs users give.
        options = {"state": "present", "spec": last_good, "field_validation": "Ignore", "fail_on_warnings": False}
        result = self._run(target, options, timeout, check_mode=False, restoring=True)
        if "managementState" not in last_good:
            result["msg"] = (f"{result.get('msg')}; the spec restored has no managementState, as before the change: "
                             "the operator degrades on it and scales the descheduler to 0 again (set managementState: "
                             "Managed to run it)")
        return result

    def _modified_since(self, target: Target) -> Optional[str]:
        """Why the ``cluster`` KubeDescheduler is no longer as the change wrote it (its spec, without the fields the
        operator writes itself), or None; None too when the change ran in another process."""
        if target.name not in self.written:
            return None
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            existing = read_kubedescheduler(api_client)
        finally:
            api_client.close()
        now, wrote = comparable(existing.get("spec") or {}) if existing else None, self.written[target.name]
        if now == wrote:
            return None
        what = "created again" if wrote is None else ("deleted" if now is None else "modified")
        return (f"KubeDescheduler {OPERATOR_NAMESPACE}/cluster was {what} by someone else since the change (its spec "
                "is not the one the change left); left as it is")

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        """The operand gate: the descheduler rolled out and no Degraded condition (rollout/gates.py)."""
        return operand_breaches(api_client)


KUBEDESCHEDULER, SECONDARY_SCHEDULER, OPERATOR = "kubedescheduler", "secondary_scheduler", "operator"
KIND_OPTIONS = {SECONDARY_SCHEDULER: "secondary_scheduler", OPERATOR: "operator"}  # each kind's clusters[] option
KIND_MODULE_OPTIONS = {SECONDARY_SCHEDULER: tuple(SCHEDULER_OPTIONS), OPERATOR: tuple(OPERATOR_OPTIONS)}


def _refuse_other_kinds_options(kind: str, cluster: Mapping[str, Any], index: int) -> None:
    """The options of another kind than the rollout's are a mistake (they would be ignored)."""
    for other, option in KIND_OPTIONS.items():
        if other != kind and cluster.get(option) is not None:
            own = KIND_OPTIONS.get(kind, "spec")
            raise RolloutError(f"clusters[{index}].{option}: only for kind {other} (kind is {kind}); give this "
                               f"kind's options as clusters[].{own}", f"clusters[{index}].{option}",
                               cluster.get(option))


def _desired(kind: str, cluster: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The change's input for one cluster, checked before any cluster is touched."""
    _refuse_other_kinds_options(kind, cluster, index)
    if kind != KUBEDESCHEDULER and cluster.get("spec") is not None:
        raise RolloutError(f"clusters[{index}].spec: a KubeDescheduler spec, but kind is {kind}; give the "
                           f"{kind} options as clusters[].{KIND_OPTIONS[kind]}", f"clusters[{index}].spec",
                           cluster.get("spec"))
    if kind == OPERATOR:
        given = {"state": cluster.get("state"), **(cluster.get("operator") or {})}
        return operator_options(given, f"clusters[{index}].operator")
    if kind == SECONDARY_SCHEDULER:
        given = {"state": cluster.get("state"), **(cluster.get("secondary_scheduler") or {})}
        return scheduler_options(given, f"clusters[{index}].secondary_scheduler")
    return {"state": cluster.get("state") or "present", "spec": cluster.get("spec")}


def _change(kind: str, params: Mapping[str, Any]) -> Any:
    if kind == SECONDARY_SCHEDULER:
        return SecondarySchedulerChange(params)
    if kind == OPERATOR:
        return OperatorChange(params)
    if kind == KUBEDESCHEDULER:
        return KubeDeschedulerChange(params)
    raise RolloutError(f"kind: {kind!r} is not kubedescheduler, secondary_scheduler or operator", "kind", kind)


def _targets(clusters: list[Mapping[str, Any]], kind: str = KUBEDESCHEDULER) -> dict[str, Target]:
    targets: dict[str, Target] = {}
    for index, cluster in enumerate(clusters):
        name = cluster.get("name")
        if not name or name in targets:
            raise RolloutError(f"clusters[{index}].name: {name!r} is {'missing' if not name else 'given twice'}; "
                               "give each cluster a unique name (its inventory host)", f"clusters[{index}].name", name)
        connection = {key: value for key, value in (cluster.get("connection") or {}).items() if value is not None}
        params = {**connection, "expected_cluster_uid": cluster.get("expected_cluster_uid")}
        targets[name] = Target(name, params, _desired(kind, cluster, index), cluster.get("blocked") or None)
    return targets


def run_rollout(params: Mapping[str, Any], check_mode: bool) -> dict[str, Any]:
    """One call of the rollout module."""
    kind = params.get("kind") or KUBEDESCHEDULER
    change = _change(kind, params)
    options = rollout_options(params)
    targets = _targets(params.get("clusters") or [], kind)
    per_group = params.get("clusters_per_group")
    groups = decision_groups(
        list(targets), assigned={c["name"]: c.get("group") for c in params.get("clusters") or []},
        groups=params.get("groups") or [], mandatory_groups=params.get("mandatory_groups") or [],
        inventory_groups=params.get("inventory_groups") or {},
        clusters_per_group=parse_budget(per_group, "clusters_per_group") if per_group not in (None, "") else None)
    holder = this_holder(controller_command()).as_dict()
    with cancel_on_signals_and_parent_exit(Cancellation()) as cancellation:
        return Rollout(options, groups, targets, change, check_mode=check_mode, cancellation=cancellation,
                       holder=holder, check_rights=partial(require_rollout_rights, job_name=change.job,
                                                           record_namespace=change.namespace)).run()


def change_of_module(kind: str, params: Mapping[str, Any]) -> Any:
    """The ``Change`` of a module call of ``kind``, where its record is, without reading the call's options (they
    are checked by the module itself, under its own names, when it runs)."""
    return _change(kind, params)


def module_change(kind: str, params: Mapping[str, Any], intended: Optional[Mapping[str, Any]]) -> tuple[Any, Target]:
    """The ``Change`` a module call of ``kind`` (kubedescheduler, operator, secondary_scheduler) makes, with this
    cluster as its Target: what resolves an unfinished change of an earlier rollout before the call (its record's
    ``intended`` is what that change was given; else the call's own options)."""
    change = _change(kind, params)
    if intended is None:
        given = {"state": params.get("state"), **{key: params.get(key) for key in
                                                  (KIND_MODULE_OPTIONS.get(kind) or ("spec",))}}
        intended = _desired(kind, {KIND_OPTIONS[kind]: given, "state": params.get("state")} if kind in KIND_OPTIONS
                            else given, 0)
    return change, Target("this cluster", dict(params), dict(intended))
