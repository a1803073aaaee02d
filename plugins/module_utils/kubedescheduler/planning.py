"""Planning either policy source: a KubeDescheduler spec is first rendered into the DeschedulerPolicy the operator
would write (kubedescheduler/policy.py), then the engine plans that policy. The engine itself knows only
DeschedulerPolicies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping, Optional, Union

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan, prepare_snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import render_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.spec import spec_of
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    KubeDeschedulerError,
)

POLICY_KINDS = ("DeschedulerPolicy", "KubeDescheduler")


def descheduler_policy(policy: Mapping[str, Any], policy_kind: str, snapshot: Snapshot,
                       prometheus_url: Optional[str] = None,
                       namespaces: Optional[list[str]] = None) -> Mapping[str, Any]:
    """The DeschedulerPolicy to plan: the policy itself, or the one the operator renders from a KubeDescheduler (its
    protected namespaces from ``namespaces``, those the running operator started with, else the snapshot's)."""
    if policy_kind not in POLICY_KINDS:
        raise PolicyError("policy_kind", policy_kind, "must be DeschedulerPolicy or KubeDescheduler")
    if policy_kind == "DeschedulerPolicy":
        return policy
    spec = spec_of(policy)
    if not isinstance(spec, Mapping):
        raise PolicyError("kubedescheduler", spec, "expected a KubeDescheduler spec mapping")
    kwargs: dict[str, Any] = {"namespaces": namespaces if namespaces is not None else (
        sorted(snapshot.namespaces) or sorted({p.namespace for p in snapshot.pods}))}
    if prometheus_url:
        kwargs["prometheus_url"] = prometheus_url
    try:
        return render_policy(dict(spec), **kwargs)
    except KubeDeschedulerError as exc:
        field = str(exc.field)
        raise PolicyError(field if field.startswith("spec") else f"kubedescheduler.{field}", exc.value,
                          str(exc)) from exc


def operator_mode(policy: Optional[Mapping[str, Any]], policy_kind: str) -> Optional[str]:
    """The KubeDescheduler's mode (Predictive or Automatic); None for a DeschedulerPolicy."""
    if policy_kind != "KubeDescheduler" or not isinstance(policy, Mapping):
        return None
    spec = spec_of(policy)
    return spec.get("mode") if isinstance(spec, Mapping) else None


def compute_plan_for_kind(objects: Union[Iterable[Mapping[str, Any]], Snapshot], policy: Mapping[str, Any],
                          now: Union[datetime, str, None] = None, policy_kind: str = "DeschedulerPolicy",
                          prometheus_url: Optional[str] = None, samples: int = 1, seed: Optional[int] = None,
                          placement: Any = None) -> dict:
    """compute_plan for a policy of either kind (the plan's ``policy_source`` says which)."""
    snapshot = prepare_snapshot(objects, placement)
    document = descheduler_policy(policy, policy_kind, snapshot, prometheus_url)
    return compute_plan(snapshot, document, now, samples=samples, seed=seed, placement=placement,
                        policy_source=policy_kind, operator_mode=operator_mode(policy, policy_kind))
