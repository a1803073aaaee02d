"""One pod's way through a run, as a small state machine:

    resume check -> freshness -> (VM decision) -> wait for a slot -> freshness again -> request (429: back off and
    retry until the per-pod timeout) -> evicted: wait for the replacement | evacuation: track the migration -> outcome

Every exit goes through ``_finish``, which writes the outcome to the journal; the slot is released in ``run``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import eviction as api
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import STOPPED, TIMED_OUT, Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.executor import kubevirt
from ansible_collections.descheduler.fleet.plugins.module_utils.executor import result as outcome
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import Cancellation
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.journal import (
    ACCEPTED,
    MIGRATION_STARTED,
    OUTCOME,
    REQUESTED,
    Journal,
    PodHistory,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.limits import (
    Admission,
    Gate,
    Slot,
    SlotRequest,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import (
    ExecutorOptions,
    allowed_unavailable,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.replacements import (
    OwnerRef,
    ReplacementTracker,
    is_terminating,
    owner_of,
    pod_uid,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import Target


def _ignore(_message: str) -> None:
    return None


def _nothing() -> None:
    """The default failure hook."""


@dataclass
class RunContext:
    """What the workers of one run share."""

    api_client: Any
    options: ExecutorOptions
    gate: Gate
    journal: Journal
    tracker: ReplacementTracker
    kubevirt: kubevirt.ClusterKubeVirt
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    on_failure: Callable[[], None] = field(default=_nothing)
    on_unreachable: Callable[[str], None] = field(default=_ignore)  # the API server stopped answering
    cancellation: Cancellation = field(default_factory=Cancellation)


class _Finished(Exception):
    """Internal: the pod's outcome is set; unwind to ``run``."""


class PodWorker:
    def __init__(self, context: RunContext, target: Target) -> None:
        self.ctx = context
        self.options = context.options
        self.target = target
        self.result = outcome.PodResult(target=target)
        self.slot: Optional[Slot] = None
        self.started = context.clock()
        self.requested_at: Optional[float] = None
        self.requested_since: Optional[str] = None  # wall-clock time of the first request (to count migrations)

    # ---- driver -----------------------------------------------------------------------------------------------------

    def run(self) -> outcome.PodResult:
        try:
            self._run()
        except _Finished:
            pass
        except ClusterApiError as error:
            self._finish_quietly(outcome.FAILED, error=error.describe())
            if error.status == 0:  # not reached: every other pod would fail the same way
                self.ctx.on_unreachable(error.describe())
        except Exception as exc:  # a bug for one pod must not abandon the others mid-eviction
            self._finish_quietly(outcome.FAILED, error=f"internal error: {type(exc).__name__}: {exc}")
        finally:
            if self.slot is not None:
                self.ctx.gate.release(self.slot)
        return self.result

    def _run(self) -> None:
        history = self.ctx.journal.history.get(self.target.key)
        if history is not None and history.done:
            self._finish(outcome.SKIPPED, "already_done", f"already {history.outcome['status']} by an earlier run "
                         f"(journal, {history.outcome.get('time')})", journal=False)
        pod = api.get_pod(self.ctx.api_client, self.target.namespace, self.target.name)
        if history is not None and history.interrupted:
            self._resume(history, pod)
        pod = self._fresh(pod)
        self._record_pod(pod)
        decision = self._vm_decision(pod)
        owner = owner_of(pod, self.target.namespace, self.target.owner)
        self.result.owner = owner.key if owner else None
        self._take_slot(owner, decision)
        pod = self._fresh(api.get_pod(self.ctx.api_client, self.target.namespace, self.target.name))
        before = self._pods_before(owner, decision)
        answer = self._request(pod, decision)
        self._handle(answer, pod, owner, decision, before)

    # ---- outcome ----------------------------------------------------------------------------------------------------

    def _finish(self, status: str, reason_code: Optional[str] = None, reason: Optional[str] = None, *,
                error: Optional[str] = None, journal: bool = True) -> None:
        self._set_outcome(status, reason_code, reason, error, journal)
        raise _Finished()

    def _finish_quietly(self, status: str, *, error: str) -> None:
        self._set_outcome(status, None, None, error, journal=True)

    def _set_outcome(self, status: str, reason_code: Optional[str], reason: Optional[str], error: Optional[str],
                     journal: bool) -> None:
        result = self.result
        result.status, result.reason_code, result.reason, result.error = status, reason_code, reason, error
        result.duration_seconds = self.ctx.clock() - (self.requested_at or self.started)
        if journal and not self.options.check_mode:
            self.ctx.journal.record_pod(OUTCOME, self.target, status=status, reason_code=reason_code, reason=reason,
                                        error=error, pod_uid=result.uid, source_node=result.node)
        if status == outcome.FAILED:
            self.ctx.on_failure()

    def _record_pod(self, pod: dict) -> None:
        self.result.uid = pod_uid(pod)
        self.result.node = (pod.get("spec") or {}).get("nodeName") or None

    # ---- resume -----------------------------------------------------------------------------------------------------

    def _resume(self, history: PodHistory, pod: Optional[dict]) -> None:
        """An earlier run announced an eviction of this pod and stopped before recording its outcome. Never evict
        twice: find out from the cluster what became of it."""
        self.result.resumed = True
        expected_uid = history.details.get("uid") or self.target.uid
        vmi_name = history.details.get("vmi") or (kubevirt.vmi_name_of(pod) if pod else None)
        if vmi_name:
            self._resume_vm(history, pod, vmi_name)
        if pod is None or (expected_uid and pod_uid(pod) != expected_uid):
            self._finish(outcome.EVICTED, "confirmed_on_resume", "the eviction requested by an interrupted run went "
                         "through: the pod is gone")
        if is_terminating(pod):
            self._record_pod(pod)
            self._finish(outcome.EVICTED, "confirmed_on_resume", "the eviction requested by an interrupted run went "
                         "through: the pod is terminating")
        if history.progress == ACCEPTED:
            self._finish(outcome.SKIPPED, "journal_inconsistent", "the journal records this eviction as accepted but "
                         "the pod still runs; not evicting it a second time")
        self.result.resumed = False  # the request never took effect: an ordinary turn follows

    def _resume_vm(self, history: PodHistory, pod: Optional[dict], vmi_name: str) -> None:
        source = history.details.get("source_node") or history.node or self.target.node or ""
        vmi = api.get_vmi(self.ctx.api_client, self.target.namespace, vmi_name)
        state = kubevirt.migration_state(vmi, source)
        if state == "done":
            self.result.node = source
            self.result.migration = {"vmi": vmi_name, "source_node": source,
                                     "target_node": (vmi or {}).get("status", {}).get("nodeName")}
            self._finish(outcome.MIGRATED, "confirmed_on_resume", "the migration started by an interrupted run "
                         "completed")
        if state == "marked":
            self.result.node = source
            request = SlotRequest(source, self.target.namespace, f"{self.target.namespace}/VirtualMachineInstance/"
                                  f"{vmi_name}", migration=True)
            self.ctx.gate.commit(self._acquire(request))
            self.result.changed = False
            self._track_migration(vmi_name, source)
        if pod is not None and not is_terminating(pod):
            self.result.resumed = False  # the VM was never marked: an ordinary turn follows

    # ---- freshness and classification -------------------------------------------------------------------------------

    def _fresh(self, pod: Optional[dict]) -> dict:
        """The pod, if the plan still describes it: same UID, same node, not on its way out."""
        target = self.target
        if pod is None:
            self._finish(outcome.SKIPPED, "stale_gone", "stale: the pod no longer exists")
            raise AssertionError("unreachable")  # _finish raises
        uid = pod_uid(pod)
        if target.uid and uid != target.uid:
            self._finish(outcome.SKIPPED, "stale_replaced", f"stale: the pod was replaced (UID {target.uid} in the "
                         f"plan, {uid} now)")
        if self.result.uid and uid != self.result.uid:
            self._finish(outcome.SKIPPED, "stale_replaced", "stale: the pod was replaced while waiting for its turn")
        if is_terminating(pod):
            self._finish(outcome.SKIPPED, "stale_terminating", "stale: the pod is already terminating")
        node = (pod.get("spec") or {}).get("nodeName") or None
        if target.node and node != target.node:
            self._finish(outcome.SKIPPED, "stale_moved", f"stale: the pod runs on {node or 'no node'}, the plan saw "
                         f"it on {target.node}")
        return pod

    def _vm_decision(self, pod: dict) -> Optional[kubevirt.VmDecision]:
        vmi_name = kubevirt.vmi_name_of(pod)
        if not vmi_name:
            return None
        vmi = api.get_vmi(self.ctx.api_client, self.target.namespace, vmi_name)
        if vmi is None:
            return None  # an orphaned launcher pod: KubeVirt's webhook lets its eviction through like any pod's
        decision = kubevirt.decide(vmi_name, vmi, self.ctx.kubevirt.config(), self.options.kubevirt.allow_vm_restart)
        self.result.vm = decision.as_dict()
        if decision.action == kubevirt.SKIP:
            code = "vm_not_migratable" if "LiveMigrate:" in (decision.reason or "") else (
                "vm_external" if decision.strategy == kubevirt.EXTERNAL else "vm_restart_not_allowed")
            self._finish(outcome.SKIPPED, code, decision.reason)
        return decision

    # ---- slot -------------------------------------------------------------------------------------------------------

    def _take_slot(self, owner: Optional[OwnerRef], decision: Optional[kubevirt.VmDecision]) -> None:
        migration = decision is not None and decision.action == kubevirt.MIGRATE
        request = SlotRequest(self.result.node, self.target.namespace, owner.key if owner else None, migration)
        check_owner = (owner is not None and owner.replaces_pods and not migration and not self.options.check_mode
                       and self.options.max_unavailable is not None)
        waited_from = self.ctx.clock()

        def ask() -> tuple[Admission, Optional[dict]]:
            availability = self.ctx.tracker.availability(owner) if check_owner and owner else None
            allowance = (allowed_unavailable(self.options.max_unavailable, availability["desired"])
                         if availability else None)
            return self.ctx.gate.acquire(request, self.ctx.stop, availability["unavailable"] if availability else None,
                                         allowance), availability

        waiter = Waiter(self.options.timeout, self.options.poll_interval, clock=self.ctx.clock,
                        sleep=self.ctx.stop.wait)
        polled = waiter.poll(ask, lambda asked: not asked[0].owner_busy, stopped=self.ctx.stop.is_set)
        admission, availability = polled.value
        if polled.ended == STOPPED:
            admission = Admission(skip_reason="not started: the run was stopped")
        elif polled.ended == TIMED_OUT:
            admission = Admission(skip_reason=self._not_recovered(owner, availability))
        self.result.waited_seconds = self.ctx.clock() - waited_from
        self._use(admission)

    def _not_recovered(self, owner: Optional[OwnerRef], availability: Optional[dict]) -> str:
        counts = availability or {"ready": "?", "desired": "?"}
        return (f"workload {owner.key if owner else '?'} did not recover within {self.options.timeout:.0f}s "
                f"({counts['ready']}/{counts['desired']} ready, max_unavailable {self.options.max_unavailable}): "
                "not disrupting more of it")

    def _acquire(self, request: SlotRequest) -> Slot:
        self._use(self.ctx.gate.acquire(request, self.ctx.stop))
        return self._held()

    def _held(self) -> Slot:
        if self.slot is None:
            raise RuntimeError(f"{self.target.label}: no slot held")  # a bug: outcomes need a slot
        return self.slot

    def _use(self, admission: Admission) -> None:
        if admission.slot is None:
            reason = admission.skip_reason or "no slot"
            if "stopped" in reason:
                self._not_started()
            code = "limit_reached" if reason.startswith("limit reached") else "owner_not_recovered"
            self._finish(outcome.SKIPPED, code, reason)
        self.slot = admission.slot

    def _not_started(self) -> None:
        """The run was stopped (cancelled, or the failure budget was used up) before this pod's turn."""
        cancellation = self.ctx.cancellation
        if cancellation.is_set():
            self._finish(outcome.SKIPPED, "cancelled", f"not started: {cancellation.reason}")
        self._finish(outcome.SKIPPED, "run_stopped", "not started: the run was stopped (failure budget exceeded)")

    def _pods_before(self, owner: Optional[OwnerRef], decision: Optional[kubevirt.VmDecision]) -> Optional[set]:
        if (self.options.check_mode or not self.options.wait_for_replacements or owner is None
                or not owner.replaces_pods or decision is not None):
            return None
        return self.ctx.tracker.pods_before(owner)

    # ---- the request ------------------------------------------------------------------------------------------------

    def _request(self, pod: dict, decision: Optional[kubevirt.VmDecision]) -> api.EvictionAnswer:
        """POST the Eviction; a 429 from a PDB is retried with exponential backoff until the per-pod timeout."""
        if not self.ctx.gate.await_request_turn(self.ctx.stop):
            self._not_started()  # the last look before anything is sent: a cancelled run starts nothing
        try:
            self.requested_at = self.ctx.clock()
            self.requested_since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 1))
            if not self.options.check_mode:
                self.ctx.journal.record_pod(REQUESTED, self.target, uid=self.result.uid,
                                            source_node=self.result.node, vmi=decision.vmi if decision else None)
            answer = self._post_eviction()
        finally:
            self.ctx.gate.request_answered()  # the turn ends with the first answer; retries follow retry_delay
        deadline = self.requested_at + self.options.timeout
        delay = self.options.retry_delay
        while answer.outcome == api.BLOCKED and not self.options.check_mode:
            remaining = deadline - self.ctx.clock()
            if remaining <= 0 or self.ctx.stop.is_set():
                break
            self.ctx.stop.wait(min(delay, remaining))
            delay = min(delay * 2, self.options.max_retry_delay)
            answer = self._post_eviction()
        return answer

    def _post_eviction(self) -> api.EvictionAnswer:
        self.result.attempts += 1
        return api.request_eviction(self.ctx.api_client, self.target.namespace, self.target.name,
                                    uid=self.result.uid, grace_period=self.options.grace_period,
                                    dry_run=self.options.check_mode, reason=self.target.eviction_reason())

    def _handle(self, answer: api.EvictionAnswer, pod: dict, owner: Optional[OwnerRef],
                decision: Optional[kubevirt.VmDecision], before: Optional[set]) -> None:
        self.result.http_status, self.result.message = answer.status, answer.message
        if answer.outcome == api.ACCEPTED:
            self._evicted(owner, decision, before)
        if answer.outcome == api.EVACUATION:
            self._evacuating(pod, decision)
        if answer.outcome == api.BLOCKED:
            self._blocked()
        skips = {
            api.REFUSED: ("kubevirt_refused", answer.message),
            api.GONE: ("pod_gone", "the pod disappeared before its eviction (404)"),
            api.REPLACED: ("stale_replaced", "stale: a new pod took the name (the UID precondition failed)"),
        }
        if answer.outcome in skips:
            self._finish(outcome.SKIPPED, *skips[answer.outcome])
        if answer.status == 0:  # the API server was not reached: every other pod would fail the same way
            self.ctx.on_unreachable(answer.message)
        # 500 (several PDBs select the pod) and any other error: a hard failure for this pod, never retried
        self._finish(outcome.FAILED, error=answer.message)

    def _blocked(self) -> None:
        if self.options.check_mode:
            self._finish(outcome.BLOCKED_BY_PDB, "pdb", f"the PodDisruptionBudget would block this now: "
                         f"{self.result.message}")
        waited = self.ctx.clock() - (self.requested_at or self.started)
        stopped = " (the run was stopped)" if self.ctx.stop.is_set() else ""
        self._finish(outcome.BLOCKED_BY_PDB, "pdb", f"still refused after {self.result.attempts} attempts over "
                     f"{waited:.0f}s{stopped}: {self.result.message}")

    def _evicted(self, owner: Optional[OwnerRef], decision: Optional[kubevirt.VmDecision],
                 before: Optional[set]) -> None:
        self.ctx.gate.commit(self._held())
        restart = decision is not None and decision.action == kubevirt.RESTART
        if self.options.check_mode:
            self._finish(outcome.WOULD_EVICT, "vm_restart" if restart else None,
                         "the VM would be restarted" if restart else None)
        self.result.changed = True
        self.ctx.journal.record_pod(ACCEPTED, self.target, uid=self.result.uid)
        self.result.replacement = self._replacement(owner, before)
        self._finish(outcome.EVICTED, "vm_restart" if restart else None,
                     "the VM was stopped by the eviction (allow_vm_restart)" if restart else None)

    def _replacement(self, owner: Optional[OwnerRef], before: Optional[set]) -> dict:
        if not self.options.wait_for_replacements:
            return {"status": "not_waited"}
        if owner is None or not owner.replaces_pods or before is None:
            return {"status": "not_applicable"}
        return self.ctx.tracker.wait(owner, before, self.result.node, self.options.replacement_timeout,
                                     self.options.poll_interval)

    # ---- KubeVirt ---------------------------------------------------------------------------------------------------

    def _evacuating(self, pod: dict, decision: Optional[kubevirt.VmDecision]) -> None:
        self.ctx.gate.commit(self._held())
        vmi_name = decision.vmi if decision else (kubevirt.vmi_name_of(pod) or self.target.name)
        if self.options.check_mode:
            self._finish(outcome.WOULD_MIGRATE, None, "KubeVirt would live-migrate the VM")
        self.result.changed = True
        self.ctx.journal.record_pod(MIGRATION_STARTED, self.target, uid=self.result.uid, vmi=vmi_name,
                                    source_node=self.result.node)
        self._track_migration(vmi_name, self.result.node or "")

    def _track_migration(self, vmi_name: str, source_node: str) -> None:
        """Until the VMI is no longer marked for evacuation and runs elsewhere. A failed migration object is not the
        end: KubeVirt creates another while the mark stays, so only our own deadline ends the wait."""
        started = self.ctx.clock()
        watch = _MigrationWatch(lambda: api.get_vmi(self.ctx.api_client, self.target.namespace, vmi_name),
                                source_node, self.ctx.clock, started, settle_seconds=2 * self.options.poll_interval)
        waiter = Waiter(self.options.kubevirt.migration_timeout, self.options.poll_interval, clock=self.ctx.clock,
                        sleep=self.ctx.sleep)
        polled = waiter.poll(watch.observe, _migration_settled, stopped=self.ctx.cancellation.is_set)
        if polled.ended == STOPPED:
            self._abandon_migration(vmi_name)
        vmi, state, _settled = polled.value
        self._migration_outcome(vmi_name, vmi, state, source_node, started)

    def _abandon_migration(self, vmi_name: str) -> None:
        """A cancelled run stops following a migration; KubeVirt goes on with it. No outcome is journalled, so a
        rerun with the journal finds ``migration_started`` and follows it to its end."""
        self._finish(outcome.SKIPPED, "cancelled", f"the run was cancelled while following the live migration of "
                     f"VMI {vmi_name}: KubeVirt goes on with it, and a rerun with the journal follows it to its end",
                     journal=False)

    def _migration_outcome(self, vmi_name: str, vmi: Optional[dict], state: str, source_node: str,
                           started: float) -> None:
        attempts = kubevirt.migration_attempts(
            api.list_vmi_migrations(self.ctx.api_client, self.target.namespace, vmi_name), self.requested_since)
        status = (vmi or {}).get("status") or {}
        self.result.migration = {"vmi": vmi_name, "source_node": source_node, "target_node": status.get("nodeName"),
                                 "target_pod": (status.get("migrationState") or {}).get("targetPod"),
                                 "seconds": round(self.ctx.clock() - started, 3), **attempts}
        if state == "done":
            self._finish(outcome.MIGRATED)
        if state == "gone":
            self._finish(outcome.FAILED, error=f"VMI {vmi_name} disappeared during its migration (the VM was "
                         "stopped or deleted)")
        if state == "unmarked":
            self._finish(outcome.FAILED, error=f"the evacuation of VMI {vmi_name} was cancelled "
                         f"(status.evacuationNodeName cleared) and it still runs on {source_node}")
        self._finish(outcome.FAILED, error=(
            f"live migration of VMI {vmi_name} not finished after {self.options.kubevirt.migration_timeout:.0f}s "
            f"({attempts['attempts']} attempt(s), {attempts['failed']} failed); KubeVirt keeps retrying while "
            "status.evacuationNodeName is set"))


@dataclass
class _MigrationWatch:
    """Reads a VMI being live-migrated and says where its migration stands. Right after the request the evacuation
    mark may not be visible yet, so "unmarked" counts (``settled``) only once the VMI was seen marked, or after
    ``settle_seconds``."""

    read_vmi: Callable[[], Optional[dict]]
    source_node: str
    clock: Callable[[], float]
    started: float
    settle_seconds: float
    seen_marked: bool = False

    def observe(self) -> tuple[Optional[dict], str, bool]:
        vmi = self.read_vmi()
        state = kubevirt.migration_state(vmi, self.source_node)
        settled = self.seen_marked or self.clock() - self.started > self.settle_seconds
        self.seen_marked = self.seen_marked or state == "marked"
        return vmi, state, settled


def _migration_settled(observed: tuple[Optional[dict], str, bool]) -> bool:
    _vmi, state, settled = observed
    return state in ("done", "gone") or (state == "unmarked" and settled)
