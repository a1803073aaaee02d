"""One rollout across the fleet, group after group: change, soak, gate, roll back, halt.

For each decision group in order: change its clusters, at most ``max_concurrency`` at a time, each within its
``progress_deadline`` (a cluster that does not take the change and run it in time has failed); stop starting
clusters once the group's failures exceed ``max_failures`` (none for a mandatory group) or the fleet's exceed
``max_failures_total``. Failed clusters go back to their last good configuration. Over a budget, the rollout halts:
later groups are not touched. Otherwise the changed clusters soak for ``min_success_time`` while their gates are
polled every ``gate_interval``; a breach rolls the breaching clusters back and halts the rollout; a passed soak
records the new configuration as the last good one, and the next group starts. Earlier groups are kept. A halted
group's clusters that took the change were not soaked to the end: each says ``soak: unsoaked``, in the result and in
its record, whose configuration stays the one before the change.

What a change is (read the current configuration, apply the new one and wait, restore an old one) comes from a
``Change`` (runner/rollout.py has the KubeDescheduler's, runner/rollout_secondary_scheduler.py the secondary
scheduler's, runner/rollout_operator.py the operator's); the connections from ``connect``. Before the first group,
the expected evictions gate's plans are checked against the rollout's clusters: each keyed by one of them, and made
on the cluster each reachable one is.

Each cluster's change is a transaction (transaction.py): its change Lease is held from before the first write until
its group's soak and rollbacks are over, every step is written to its record first, and an unfinished change an
earlier run left is resolved before this one (``on_interrupted``). A cancel (SIGINT/SIGTERM, the playbook gone, the
Lease lost) starts no more clusters, rolls back those mid-change or mid-soak within ``interrupt_grace``, and marks
the ones it could not ``interrupted``.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Callable, Optional, Protocol

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.access import MissingRights
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import (
    connect_to_intended_cluster,
    read_cluster_identity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Clock, Sleeper, Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import Cancellation
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.expected_evictions import (
    check_plan_identity,
    check_plans_name_clusters,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.gates import ClusterGates
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.groups import DecisionGroup
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import RolloutOptions
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.record import (
    APPLIED,
    INTENDED,
    INTERRUPTED,
    ROLLED_BACK_STATE,
    ROLLING_BACK,
    SOAKING,
    UNSOAKED,
    VERIFIED,
    record_value,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.transaction import (
    HeldLeases,
    check_mode_holder,
    earlier_record,
    how_to_resolve,
    journal,
    recorded_last_good,
    roll_back_earlier,
)

# Cluster statuses, in the result.
SUCCEEDED, FAILED, ROLLED_BACK, ROLLBACK_FAILED, NOT_STARTED, INTERRUPTED_STATUS = (
    "succeeded", "failed", "rolled_back", "rollback_failed", "not_started", "interrupted")


@dataclass
class Target:
    """One cluster: its connection options (``expected_cluster_uid`` included), the change's input, and why it may
    not take part (it failed its checks before the rollout: counted as a failure of its group, never touched)."""

    name: str
    params: dict[str, Any]
    desired: dict[str, Any]
    blocked: Optional[str] = None


class Change(Protocol):
    """What the rollout changes on a cluster."""

    namespace: str  # where the last-good record lives
    record_key: str  # its key in the record
    job: str  # the job (cluster/rights.py) whose module makes the change: its rights are checked first

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        """The configuration the cluster (``target``) runs now; None when there is none."""

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        """Make the change and wait (at most ``timeout`` seconds) until the cluster runs it: ``changed``,
        ``changes``, ``diff`` (one, or a list), ``msg``; raise a FleetError when it does not."""

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        """Put ``last_good`` back (None: remove what the rollout created) and wait for it: ``changed``, ``msg``,
        and ``left_in_place``: why each object modified by someone else since the change was left as it is."""

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        """What is wrong with what was changed on ``target`` (the operand gate): empty when it runs as it should."""


@dataclass
class Outcome:
    cluster: str
    group: str
    status: str = NOT_STARTED
    changed: bool = False
    changes: list = field(default_factory=list)
    error: Optional[str] = None
    breaches: list = field(default_factory=list)
    last_good: Optional[dict] = None  # {"present", "spec"} as recorded before the change
    rollback: Optional[dict] = None
    seconds: Optional[float] = None
    msg: Optional[str] = None
    diff: Optional[dict] = None
    soak: Optional[str] = None  # verified, or unsoaked: changed in a group that halted before its soak passed
    resolved: Optional[str] = None  # what was done first with an unfinished change of an earlier run

    @property
    def failed(self) -> bool:
        return self.status in (FAILED, ROLLED_BACK, ROLLBACK_FAILED, INTERRUPTED_STATUS)


Connect = Callable[[dict], Any]


def _connect(params: dict) -> Any:
    return connect_to_intended_cluster(params)[0]


def _unreachable(got: Any) -> bool:
    """The API server was not reached (status 0: refused, reset, timed out): worth another try."""
    return isinstance(got, ClusterApiError) and got.status == 0


class Rollout:
    def __init__(self, options: RolloutOptions, groups: list[DecisionGroup], targets: dict[str, Target],
                 change: Change, *, check_mode: bool = False, connect: Connect = _connect,
                 clock: Clock = time.monotonic, sleeper: Optional[Sleeper] = None,
                 cancellation: Optional[Cancellation] = None, holder: Optional[dict] = None,
                 check_rights: Optional[Callable[[Any], None]] = None) -> None:
        self.options, self.groups, self.targets, self.change = options, groups, targets, change
        self.check_rights = check_rights  # raises MissingRights naming what the user lacks on a cluster
        self.rights_checked: set[str] = set()
        self.cancellation = cancellation or Cancellation()
        self.check_mode, self.connect, self.clock = check_mode, connect, clock
        self.sleeper = sleeper or self.cancellation.event.wait  # a cancel ends a soak's wait at once
        self.change_id = uuid.uuid4().hex[:12]  # this call's own: two runs may share a run_id
        self.leases = HeldLeases(connect, holder or {}, self.change_id,
                                 lambda reason: self.cancellation.cancel(reason, code="lease_lost"))
        self.cancelled_at: Optional[float] = None
        self.cancellation.on_cancel(self._note_cancel)  # the grace counts from the cancel, not from when it is seen
        self._retry_sleep: Sleeper = sleeper or time.sleep  # not the soak's: a cancel must not end a retry's pause
        self.outcomes = {name: Outcome(name, group.name) for group in groups for name in group.clusters}
        self.gates = {name: ClusterGates(options.gates, partial(change.operand_breaches, target=targets[name]),
                                         cluster=name)
                      for name in self.outcomes}
        self.group_reports: list[dict[str, Any]] = []
        self.halt_reason: Optional[str] = None

    # ---- one cluster ----------------------------------------------------------------------------------------------

    def _change_one(self, name: str) -> None:
        outcome, target = self.outcomes[name], self.targets[name]
        if target.blocked:
            outcome.status, outcome.error = FAILED, target.blocked
            return
        if self.cancellation.is_set():
            return  # not started
        start = self.clock()
        try:
            self._check_rights_of(name)  # unreachable before the first group: checked before its first write
            if not self.check_mode:
                self.leases.take(name, target.params, self.options.lock_timeout, self.cancellation.is_set)
            api_client = self.connect(target.params)
            try:
                if self.check_mode:
                    check_mode_holder(api_client, self.leases.holder, self.change_id)
                last_good = self._resolve_earlier(api_client, name)
                if last_good is None:
                    last_good = record_value(self.change.current(api_client, target))
                if self.cancellation.is_set():
                    return  # cancelled before its first write: not started, nothing to undo
                if not self.check_mode:
                    self.gates[name].take_baseline(api_client)
                    self._journal(name, INTENDED, last_good, api_client, intended=target.desired)
                outcome.last_good = last_good  # only now: a failure before it changed nothing to undo
            finally:
                api_client.close()
            result = self.change.apply(target, self.options.progress_deadline, self.check_mode)
            if not self.check_mode:
                self._journal(name, APPLIED, last_good, intended=target.desired)
        except FleetError as error:
            outcome.status, outcome.error = FAILED, self._failure_text(error, start)
        else:
            outcome.status, outcome.changed = SUCCEEDED, bool(result.get("changed"))
            outcome.changes, outcome.msg = result.get("changes") or [], result.get("msg")
            outcome.diff = result.get("diff")
        outcome.seconds = round(self.clock() - start, 1)

    def _resolve_earlier(self, api_client: Any, name: str) -> Optional[dict]:
        """An earlier change that did not finish, resolved per ``on_interrupted`` before anything else: its
        recorded last good configuration (what this change goes back to), or None when there is none."""
        record = earlier_record(api_client, self.change.namespace, self.change.record_key)
        if record is None:
            return None
        how = how_to_resolve(record, self.options.on_interrupted, self.change.namespace)
        last_good = recorded_last_good(record)
        outcome = self.outcomes[name]
        outcome.resolved = (f"{how}: the record showed {record.get('state')} "
                            f"(run {record.get('run_id')!r}, {record.get('at')})")
        if how == "rollback" and not self.check_mode:
            roll_back_earlier(self.change, self.targets[name], last_good, self.options.progress_deadline,
                              lambda state: self._journal(name, state, last_good, api_client))
        return last_good

    def _journal(self, name: str, state: str, last_good: dict, api_client: Any = None,
                 intended: Optional[dict] = None) -> None:
        """The record's next step, written before it is taken."""
        client = api_client or self.connect(self.targets[name].params)
        try:
            journal(client, self.change.namespace, self.change.record_key, last_good, state,
                    run_id=self.options.run_id, change_id=self.change_id, intended=intended)
        finally:
            if api_client is None:
                client.close()

    def _failure_text(self, error: FleetError, start: float) -> str:
        text = error.user_message()
        if self.clock() - start >= self.options.progress_deadline:
            return f"progress deadline ({self.options.progress_deadline:g}s) exceeded: {text}"
        return text

    def _roll_back(self, name: str) -> None:
        """Back to the configuration recorded before the change, then the operand gate once more (the workloads
        may take longer to recover than the operand: they are the next run's baseline, not a rollback failure).
        An API server that cannot be reached (restarting) is tried again every ``gate_interval`` until ``timeout``.
        In a cancelled run, a rollback starting after the cancel has what is left of ``interrupt_grace``, and one that
        did not finish leaves the cluster ``interrupted``."""
        outcome = self.outcomes[name]
        if not self.options.rollback or self.check_mode or outcome.last_good is None:
            return  # nothing was recorded, so nothing was changed
        timeout = self._rollback_time()
        if timeout > 0:
            waiter = Waiter(timeout=timeout, interval=self.options.gate_interval, clock=self.clock,
                            sleep=self._retry_sleep)
            deadline = self.clock() + timeout
            got = waiter.poll(lambda: self._restore(name, max(deadline - self.clock(), 1.0)),
                              lambda got: not _unreachable(got)).value
        else:
            got = RolloutError(f"{self.halt_reason or 'cancelled'}: interrupt_grace "
                               f"({self.options.interrupt_grace:g}s) was over before its rollback could start",
                               "interrupt_grace", self.options.interrupt_grace)
        if isinstance(got, FleetError):
            outcome.status = ROLLBACK_FAILED
            outcome.rollback = {"ok": False, "changed": None, "error": got.user_message()}
        else:
            result, found = got
            after = self.gates[name].new_since_the_change(found)  # not what was wrong before the change too
            left = result.get("left_in_place") or []  # not as the change left it: someone else's now, not ours to undo
            outcome.status = ROLLED_BACK if not after and not left else ROLLBACK_FAILED
            if outcome.status == ROLLED_BACK:  # else the record keeps saying rolling-back: the next run resolves it
                self._journal_quietly(name, ROLLED_BACK_STATE, outcome.last_good)
            outcome.rollback = {"ok": not after and not left, "changed": bool(result.get("changed")),
                                "msg": result.get("msg"), "breaches_after": after, "left_in_place": left,
                                "as_before_the_change": [breach for breach in found if breach not in after]}
        if outcome.status == ROLLBACK_FAILED and self.cancellation.is_set():
            outcome.status = INTERRUPTED_STATUS  # cancelled before its rollback finished: the record says so
            self._journal_quietly(name, INTERRUPTED, outcome.last_good)

    def _rollback_time(self) -> float:
        """``progress_deadline``; after a cancel, no more than what is left of ``interrupt_grace``."""
        if self.cancelled_at is None:
            return self.options.progress_deadline
        left = self.cancelled_at + self.options.interrupt_grace - self.clock()
        return min(self.options.progress_deadline, max(left, 0.0))

    def _restore(self, name: str, timeout: float) -> Any:
        """One attempt at the rollback: ``(restore's result, what the operand gate finds after it)``, or the
        FleetError that stopped it."""
        outcome, target = self.outcomes[name], self.targets[name]
        try:
            self._journal(name, ROLLING_BACK, outcome.last_good)
            last_good = outcome.last_good["spec"] if outcome.last_good["present"] else None
            result = self.change.restore(target, last_good, timeout)
            api_client = self.connect(target.params)
            try:
                found = self.change.operand_breaches(api_client, target) if self.options.gates.operand else []
            finally:
                api_client.close()
        except FleetError as error:
            return error
        return result, found

    def _note_cancel(self) -> None:
        if self.cancelled_at is None:
            self.cancelled_at = self.clock()

    def _journal_quietly(self, name: str, state: str, last_good: dict) -> None:
        """A step written after the cluster acted: when the record cannot be written, the result says so."""
        try:
            self._journal(name, state, last_good)
        except FleetError as error:
            self.outcomes[name].msg = f"the record could not be updated to {state}: {error.user_message()}"

    def _interrupt(self, group: DecisionGroup) -> None:
        """Cancelled: roll back the group's clusters mid-change or mid-soak within the grace period (from the
        cancel); mark those it cannot ``interrupted``, in the record too."""
        if self.cancelled_at is None:
            self.cancelled_at = self.clock()
        self.halt_reason = self.cancellation.reason or "cancelled"
        for name in group.clusters:
            outcome = self.outcomes[name]
            if outcome.last_good is None or outcome.status in (ROLLED_BACK, ROLLBACK_FAILED, NOT_STARTED):
                continue
            outcome.error = f"{self.halt_reason} (mid-change or mid-soak)"
            if self.options.interrupt_rollback and self.options.rollback and self._rollback_time() > 0:
                outcome.status = FAILED
                self._roll_back(name)
                if outcome.status == ROLLED_BACK:
                    continue
            if outcome.status != INTERRUPTED_STATUS:  # _roll_back marks the one it could not finish
                outcome.status = INTERRUPTED_STATUS
                self._journal_quietly(name, INTERRUPTED, outcome.last_good)

    # ---- one group ------------------------------------------------------------------------------------------------

    def _failures(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome.failed)

    def _change_group(self, group: DecisionGroup, allowed: int, allowed_total: int) -> list[str]:
        """Change the group's clusters, ``max_concurrency`` at a time; the clusters not started, if any."""
        limit = self.options.max_concurrency.of(len(group.clusters), at_least_one=True)
        pending, in_flight = list(group.clusters), {}  # type: list[str], dict[Future, str]
        with ThreadPoolExecutor(max_workers=limit) as pool:
            while pending or in_flight:
                over = (self._group_failures(group) > allowed or self._failures() > allowed_total
                        or self.cancellation.is_set())
                while pending and len(in_flight) < limit and not over:
                    name = pending.pop(0)
                    in_flight[pool.submit(self._change_one, name)] = name
                if not in_flight:
                    break
                finished, _running = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in finished:
                    in_flight.pop(future)
                    future.result()  # a bug of ours surfaces here, with its traceback
        return pending

    def _group_failures(self, group: DecisionGroup) -> int:
        return sum(1 for name in group.clusters if self.outcomes[name].failed)

    def _soak(self, group: DecisionGroup) -> dict[str, list[str]]:
        """Poll the gates of the group's changed clusters for ``min_success_time``; the breaches, by cluster."""
        soaking = [name for name in group.clusters if self.outcomes[name].status == SUCCEEDED
                   and (self.outcomes[name].changed or self.outcomes[name].resolved)]  # resumed: not yet soaked
        if self.check_mode or not soaking:
            return {}
        for name in soaking:
            self._journal(name, SOAKING, self.outcomes[name].last_good)
        start = self.clock()

        def observe() -> tuple[float, dict[str, list[str]]]:
            breaches = {name: self._breaches(name) for name in soaking}
            return self.clock() - start, {name: found for name, found in breaches.items() if found}

        def done(observed: tuple[float, dict[str, list[str]]]) -> bool:
            return (bool(observed[1]) or observed[0] >= self.options.min_success_time
                    or self.cancellation.is_set())

        waiter = Waiter(timeout=self.options.min_success_time + self.options.gate_interval,
                        interval=self.options.gate_interval, clock=self.clock, sleep=self.sleeper)
        breached = waiter.until(observe, done, lambda observed: AssertionError("the soak outlived its deadline"))
        return breached.value[1]

    def _breaches(self, name: str) -> list[str]:
        try:
            api_client = self.connect(self.targets[name].params)
            try:
                return self.gates[name].breaches(api_client)
            finally:
                api_client.close()
        except FleetError as error:
            return [f"the gates cannot be read: {error.user_message()}"]

    def _record_verified(self, group: DecisionGroup) -> None:
        for name in group.clusters:
            if self.outcomes[name].status != SUCCEEDED or self.check_mode:
                continue
            self.outcomes[name].soak = VERIFIED
            api_client = self.connect(self.targets[name].params)
            try:
                self._journal(name, VERIFIED, record_value(self.change.current(api_client, self.targets[name])),
                              api_client)
            finally:
                api_client.close()

    def _record_unsoaked(self, group: DecisionGroup) -> None:
        """The group halted: its clusters that took the change keep it unsoaked. Each says so, and so do its record
        (which keeps the configuration from before the change as the last good one) and the halt reason."""
        unsoaked = []
        for name in group.clusters:
            outcome = self.outcomes[name]
            if outcome.status != SUCCEEDED or not outcome.changed or self.check_mode:
                continue
            outcome.soak = UNSOAKED
            unsoaked.append(name)
            try:
                self._journal(name, UNSOAKED, outcome.last_good or record_value(None))
            except FleetError as error:
                if not (isinstance(error, ClusterApiError) and error.status == 404):  # 404: no namespace, no record
                    outcome.msg = f"{outcome.msg or ''}; the record could not say unsoaked: {error.user_message()}"
        if unsoaked:
            self.halt_reason = f"{self.halt_reason}; changed but unsoaked: {', '.join(unsoaked)}"

    def _run_group(self, group: DecisionGroup) -> dict[str, Any]:
        allowed = 0 if group.mandatory else self.options.max_failures.of(len(group.clusters))
        allowed_total = self.options.max_failures_total.of(len(self.outcomes))
        report: dict[str, Any] = {"name": group.name, "clusters": list(group.clusters), "mandatory": group.mandatory,
                                  "allowed_failures": allowed, "breaches": {}}
        not_started = self._change_group(group, allowed, allowed_total)
        if self.cancellation.is_set():
            self._interrupt(group)
            return {**report, "status": INTERRUPTED_STATUS, "failures": self._group_failures(group)}
        failed = [name for name in group.clusters if self.outcomes[name].status == FAILED]
        for name in failed:
            self._roll_back(name)
        failures = self._group_failures(group)
        if failures > allowed or self._failures() > allowed_total:
            which = "its" if failures > allowed else "the fleet's"
            budget = allowed if failures > allowed else allowed_total
            self.halt_reason = (f"group {group.name}: {failures} cluster(s) failed ({', '.join(failed)}), over "
                                f"{which} max failures ({budget}{', a mandatory group' if group.mandatory else ''})"
                                + (f"; {len(not_started)} not started" if not_started else ""))
            self._record_unsoaked(group)
            return {**report, "status": FAILED, "failures": failures}
        soak_start = self.clock()
        breaches = self._soak(group)
        report["soak_seconds"] = round(self.clock() - soak_start, 1)
        if self.cancellation.is_set():
            self._interrupt(group)
            return {**report, "status": INTERRUPTED_STATUS, "failures": self._group_failures(group)}
        if breaches:
            for name, found in breaches.items():
                self.outcomes[name].breaches = found
                self.outcomes[name].status = FAILED
                self.outcomes[name].error = "health gate breached during the soak: " + "; ".join(found)
                self._roll_back(name)
            self.halt_reason = f"group {group.name}: health gate breached on " + "; ".join(
                f"{name}: {'; '.join(found)}" for name, found in breaches.items())
            self._record_unsoaked(group)
            return {**report, "status": FAILED, "failures": self._group_failures(group), "breaches": breaches}
        self._record_verified(group)
        return {**report, "status": SUCCEEDED, "failures": failures}

    # ---- the fleet ------------------------------------------------------------------------------------------------

    def _check_plans(self) -> None:
        """Before the first group: every plan is keyed by a cluster of the rollout and made on the cluster it is
        keyed by (each reachable one; an unreachable cluster fails in its group, its plan checked again if it is
        reached then). A wrong plan fails the whole rollout here, with nothing changed."""
        gate = self.options.gates.expected_evictions
        check_plans_name_clusters(gate, self.targets)
        for name, plan in gate.plans.items():
            target = self.targets[name]
            if target.blocked:
                continue
            try:
                api_client = self.connect(target.params)
                try:
                    reached = read_cluster_identity(api_client)
                finally:
                    api_client.close()
            except FleetError:
                continue
            check_plan_identity(plan, reached, name)

    def _check_rights_of(self, name: str) -> None:
        if self.check_rights is None or name in self.rights_checked:
            return
        api_client = self.connect(self.targets[name].params)
        try:
            self.check_rights(api_client)
        finally:
            api_client.close()
        self.rights_checked.add(name)

    def _check_rights(self) -> None:
        """Before the first group: the user of every reachable cluster has each right the change needs; one that
        lacks any fails the whole rollout here, naming each cluster and what it lacks, with nothing changed (an
        unreachable cluster is checked when its group reaches it)."""
        lacking: list[str] = []
        for name, target in self.targets.items():
            if target.blocked:
                continue
            try:
                self._check_rights_of(name)
            except MissingRights as error:
                lacking.append(f"{name}: {error.user_message()}")
            except FleetError:
                continue
        if lacking:
            raise MissingRights(f"{len(lacking)} cluster(s) of the rollout lack rights, nothing was changed on any: "
                                + " | ".join(lacking), lacking)

    def run(self) -> dict[str, Any]:
        self._check_rights()
        self._check_plans()
        for group in self.groups:
            if self.halt_reason is not None:
                self.group_reports.append({"name": group.name, "clusters": list(group.clusters),
                                           "mandatory": group.mandatory, "status": NOT_STARTED})
                continue
            try:
                self.group_reports.append(self._run_group(group))
            finally:
                self.leases.release(list(group.clusters))  # its soak and rollbacks are over
        return self.result()

    def result(self) -> dict[str, Any]:
        outcomes = [asdict(outcome) for outcome in self.outcomes.values()]
        counts = {status: sum(1 for o in outcomes if o["status"] == status)
                  for status in (SUCCEEDED, FAILED, ROLLED_BACK, ROLLBACK_FAILED, NOT_STARTED, INTERRUPTED_STATUS)}
        changed = sum(1 for o in outcomes if o["status"] == SUCCEEDED and o["changed"])
        summary = {**counts, "changed": changed, "unchanged": counts[SUCCEEDED] - changed, "total": len(outcomes),
                   "unsoaked": sum(1 for o in outcomes if o["soak"] == UNSOAKED)}
        return {
            "changed": any(o["changed"] or (o["rollback"] or {}).get("changed") for o in outcomes),
            "halted": self.halt_reason is not None,
            "cancelled": self.cancellation.is_set(),
            "halt_reason": self.halt_reason,
            "groups": self.group_reports,
            "clusters": {o["cluster"]: {key: value for key, value in o.items() if key != "diff"} for o in outcomes},
            "summary": summary,
            # a Change gives one diff, or a list of them (one per object it changed), for each cluster
            "diff": [d for o in outcomes for d in (o["diff"] if isinstance(o["diff"], list) else [o["diff"]]) if d],
            "msg": self._message(summary),
        }

    def _message(self, summary: dict[str, int]) -> str:
        head = (f"rollout {'halted' if self.halt_reason else 'done'}: {summary['changed']} changed, "
                f"{summary['unchanged']} unchanged, {summary[FAILED]} failed, {summary[ROLLED_BACK]} rolled back, "
                f"{summary[ROLLBACK_FAILED]} rollback failed, {summary[INTERRUPTED_STATUS]} interrupted, "
                f"{summary[NOT_STARTED]} not started "
                f"(of {summary['total']})" + (f"; {summary['unsoaked']} changed but unsoaked (the rollout halted "
                                              "before their soak passed)" if summary["unsoaked"] else ""))
        return f"{head}. {self.halt_reason}" if self.halt_reason else head
