"""Watching the operator act on a KubeDescheduler change: the operand rolled out with the new generation, or not.

The operator stamps the generation it rendered into the operand's pod template
(``kubedeschedulers.operator.openshift.io/cluster``). A rejection shows one of two ways (reference §1.5):
"scale to 0 + Degraded" (``TargetConfigControllerDegraded=True``, reason = the error, replicas 0), or "log-only"
(nothing changes; the operator logs ``key failed with : <err>``), which only its own log reveals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw, get_text, list_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import (
    Clock,
    Sleeper,
    Waiter,
    deployment_readiness,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import OperandNotReady
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    DEGRADED_CONDITION,
    GENERATION_ANNOTATION,
    KUBEDESCHEDULER_PATH,
    OPERAND_DEPLOYMENT_PATH,
    OPERATOR_LABEL_SELECTOR,
    PODS_PATH,
    POLICY_CONFIGMAP_PATH,
)

DEGRADED_POLLS_TO_FAIL = 2  # a Degraded condition seen twice in a row is the operator's answer, not a stale one
OPERATOR_LOG_TAIL = 300


def degraded_conditions(kubedescheduler: Optional[dict]) -> list[dict]:
    conditions = ((kubedescheduler or {}).get("status") or {}).get("conditions") or []
    return [c for c in conditions if str(c.get("type", "")).endswith("Degraded") and c.get("status") == "True"]


def condition_text(condition: dict) -> str:
    # the operator puts the error in `reason` (scaleDownDeployment) and leaves `message` empty
    parts = [condition.get("reason") or "", condition.get("message") or ""]
    return ": ".join(part for part in parts if part) or "(no reason given)"


def _replicas(deployment: dict) -> int:
    value = (deployment.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def operand_rolled_out(deployment: Optional[dict]) -> bool:
    """The descheduler runs: rolled out as ``kubectl rollout status`` says, and not scaled to 0 (the operator's
    answer to a configuration it refuses: a Deployment of 0 replicas is rolled out but runs nothing)."""
    return deployment is not None and _replicas(deployment) > 0 and deployment_readiness(deployment).ready


def applied_generation(deployment: Optional[dict]) -> Optional[str]:
    template = ((deployment or {}).get("spec") or {}).get("template") or {}
    return ((template.get("metadata") or {}).get("annotations") or {}).get(GENERATION_ANNOTATION)


@dataclass
class OperandState:
    kubedescheduler: Optional[dict]
    deployment: Optional[dict]

    @property
    def degraded(self) -> list[dict]:
        return degraded_conditions(self.kubedescheduler)

    def applied(self, generation: int) -> bool:
        return applied_generation(self.deployment) == str(generation)

    def summary(self) -> dict[str, Any]:
        deployment = self.deployment or {}
        status = deployment.get("status") or {}
        return {
            "deployment": OPERAND_DEPLOYMENT_PATH.rsplit("/", 1)[-1] if self.deployment else None,
            "replicas": _replicas(deployment) if self.deployment else None,
            "ready_replicas": status.get("readyReplicas", 0) if self.deployment else None,
            "updated_replicas": status.get("updatedReplicas", 0) if self.deployment else None,
            "rendered_generation": applied_generation(self.deployment),
            "rolled_out": operand_rolled_out(self.deployment),
            "degraded": [{"type": c.get("type"), "reason": condition_text(c)} for c in self.degraded],
        }


def read_operand_state(api_client: Any) -> OperandState:
    return OperandState(get_raw(api_client, KUBEDESCHEDULER_PATH, kind="KubeDescheduler"),
                        get_raw(api_client, OPERAND_DEPLOYMENT_PATH, kind="Deployment"))


def operator_log_errors(api_client: Any) -> list[str]:
    """The operator's recent "failed with" lines: the only trace of a log-only rejection. Best effort."""
    try:
        pods = list_raw(api_client, PODS_PATH, label_selector=OPERATOR_LABEL_SELECTOR, kind="Pod")[0]
        lines: list[str] = []
        for pod in pods:
            text = get_text(api_client, f"{PODS_PATH}/{pod['metadata']['name']}/log",
                            query=[("tailLines", OPERATOR_LOG_TAIL)], kind="Pod")
            lines += [line for line in text.splitlines() if "failed with" in line]
        return lines[-5:]
    except ClusterApiError:
        return []


def _timeout_error(api_client: Any, state: OperandState, generation: int, timeout: float) -> OperandNotReady:
    details = {"operand": state.summary()}
    if state.degraded:
        # each condition by its own name: a missing managementState degrades ConfigObservationDegraded too
        says = "; ".join(f"{c.get('type') or DEGRADED_CONDITION} says {condition_text(c)!r}" for c in state.degraded)
        return OperandNotReady(
            f"the operator refused generation {generation} of KubeDescheduler cluster: {says}; it scaled the "
            "descheduler to 0. Fix the cause and run again", **details)
    if not state.applied(generation):
        log = operator_log_errors(api_client)
        details["operator_log"] = log
        hint = (f" Its log says: {log[-1]}" if log else
                " It only logs such refusals: check oc logs deploy/descheduler-operator -n "
                "openshift-kube-descheduler-operator")
        return OperandNotReady(
            f"the operator did not roll out generation {generation} of KubeDescheduler cluster within {timeout:g}s "
            f"(the descheduler still runs generation {applied_generation(state.deployment) or 'none'}); it may have "
            f"refused it without a condition (log-only).{hint}", **details)
    readiness = deployment_readiness(state.deployment)
    return OperandNotReady(
        f"Deployment descheduler did not become available within {timeout:g}s with generation {generation} "
        f"({readiness.message}; {state.summary()['ready_replicas']}/{state.summary()['replicas']} ready)", **details)


def wait_for_rollout(api_client: Any, generation: int, *, timeout: float, sleep: float,
                     clock: Clock = time.monotonic, sleeper: Sleeper = time.sleep) -> OperandState:
    """Until the operand runs ``generation`` and no Degraded condition is True; else ``OperandNotReady``. A Degraded
    condition seen twice in a row, or a Deployment past its progress deadline, ends the wait at once."""
    degraded_polls = [0]

    def observe() -> OperandState:
        state = read_operand_state(api_client)
        degraded_polls[0] = degraded_polls[0] + 1 if state.degraded and not state.applied(generation) else 0
        if degraded_polls[0] >= DEGRADED_POLLS_TO_FAIL:
            raise _timeout_error(api_client, state, generation, timeout)
        readiness = deployment_readiness(state.deployment)
        if state.applied(generation) and readiness.failed:
            raise OperandNotReady(f"Deployment descheduler {readiness.message}", operand=state.summary())
        return state

    def done(state: OperandState) -> bool:
        return state.applied(generation) and operand_rolled_out(state.deployment) and not state.degraded

    waiter = Waiter(timeout=timeout, interval=sleep, clock=clock, sleep=sleeper)
    return waiter.until(observe, done, lambda state: _timeout_error(api_client, state, generation, timeout)).value


def wait_for_removal(api_client: Any, *, timeout: float, sleep: float, clock: Clock = time.monotonic,
                     sleeper: Sleeper = time.sleep) -> None:
    """Until garbage collection removed the operand Deployment and the policy ConfigMap."""

    def observe() -> list[str]:
        return [path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1]
                for path in (OPERAND_DEPLOYMENT_PATH, POLICY_CONFIGMAP_PATH) if get_raw(api_client, path) is not None]

    def timed_out(left: list[str]) -> OperandNotReady:
        return OperandNotReady(
            f"KubeDescheduler cluster was deleted but {', '.join(left)} still exist after {timeout:g}s: "
            "kube-controller-manager's garbage collector removes them through their ownerReferences. It resolves "
            "an owner of a kind it learned in the last minute (a CRD installed just before) only at its next "
            "discovery resync, which can take a minute: raise wait_timeout, or check that "
            "kube-controller-manager runs", remaining=left)

    Waiter(timeout=timeout, interval=sleep, clock=clock, sleep=sleeper).until(observe, lambda left: not left, timed_out)


def refused_and_settled(state: OperandState) -> bool:
    """The operator's answer to a spec it refuses (scaleDownDeployment): a Degraded condition, the operand scaled to
    0, its pods gone."""
    deployment = state.deployment
    status = (deployment or {}).get("status") or {}
    return bool(state.degraded) and (deployment is None or (
        _replicas(deployment) == 0 and not status.get("readyReplicas") and not status.get("replicas")
        and status.get("observedGeneration", 0) >= (deployment.get("metadata") or {}).get("generation", 0)))


def wait_for_refusal(api_client: Any, generation: int, *, timeout: float, sleep: float,
                     clock: Clock = time.monotonic, sleeper: Sleeper = time.sleep) -> OperandState:
    """Until the operator has refused ``generation`` as it refuses a spec without managementState: what a restore of
    such a spec leads to, as it did before the change (``refused_and_settled``); else ``OperandNotReady``."""

    def timed_out(state: OperandState) -> OperandNotReady:
        return OperandNotReady(
            f"the operator did not answer generation {generation} of KubeDescheduler cluster (a spec without "
            f"managementState, which it degrades on and scales the descheduler to 0) within {timeout:g}s",
            operand=state.summary())

    waiter = Waiter(timeout=timeout, interval=sleep, clock=clock, sleep=sleeper)
    return waiter.until(lambda: read_operand_state(api_client), refused_and_settled, timed_out).value
