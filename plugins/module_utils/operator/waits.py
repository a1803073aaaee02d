"""The lifecycle's waits on objects it wrote: a Deployment rolled out, objects gone. One poll loop
(cluster/wait.py) and one rule per kind; each records a ``wait`` action and a timeout says what it last saw."""

from __future__ import annotations

from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import (
    Readiness,
    Waiter,
    deployment_readiness,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError, WaitTimeout
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref


def deployment_facts(deployment: Optional[dict]) -> Optional[dict]:
    """The replica counts a user checks first (None: no Deployment)."""
    if deployment is None:
        return None
    status = deployment.get("status") or {}
    return {"name": deployment["metadata"]["name"], "replicas": status.get("replicas", 0),
            "available_replicas": status.get("availableReplicas", 0),
            "updated_replicas": status.get("updatedReplicas", 0)}


def wait_rolled_out(session: ClusterSession, ref: Ref, waiter: Waiter, hint: str) -> dict:
    """Until the Deployment ``ref`` is rolled out (``kubectl rollout status``); its last state on a timeout, with
    ``hint`` on where to look. A Deployment past its progress deadline fails at once. Returns the Deployment."""

    def observe() -> tuple[Optional[dict], Readiness]:
        deployment = session.read(ref)
        state = deployment_readiness(deployment)
        if state.failed:
            raise LifecycleError(f"{ref} {state.message}", deployment_status=(deployment or {}).get("status") or {})
        return deployment, state

    def timed_out(last: tuple[Optional[dict], Readiness]) -> WaitTimeout:
        deployment, state = last
        status = (deployment or {}).get("status") or {}
        seen = ("not created" if deployment is None else f"{state.message}: replicas {status.get('replicas', 0)}, "
                f"updated {status.get('updatedReplicas', 0)}, available {status.get('availableReplicas', 0)}")
        return WaitTimeout(f"{ref} did not roll out within {waiter.timeout:g}s ({seen}); {hint}",
                           deployment_status=status)

    waited = waiter.until(observe, lambda last: last[1].ready, timed_out)
    session.record("wait", str(ref), "wait", False, f"rolled out after {waited.seconds:g}s", seconds=waited.seconds)
    return waited.value[0] or {}


def wait_gone(session: ClusterSession, step: str, refs: list[Ref], waiter: Waiter) -> None:
    """Until none of ``refs`` can be read any more (deleted, finalizers done)."""

    def observe() -> list[Ref]:
        return [ref for ref in refs if session.read(ref) is not None]

    def timed_out(remaining: list[Ref]) -> WaitTimeout:
        return WaitTimeout(f"{', '.join(str(r) for r in remaining)} still present after {waiter.timeout:g}s "
                           f"(waiting for {step} to go)", still_present=[str(r) for r in remaining])

    waited = waiter.until(observe, lambda remaining: not remaining, timed_out)
    session.record(step, ", ".join(str(ref) for ref in refs), "wait", False, f"gone after {waited.seconds:g}s",
                   seconds=waited.seconds)
