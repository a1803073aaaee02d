"""What a plan must be before anything of it is executed, checked before the cluster is contacted: the plan that was
sealed when written (engine/plan_seal.py), made on a known cluster, of pods known by UID, and the part of it the
user selected. Then, once the cluster's clock is known, not dated after it. Each refusal names the plan by where it
came from (``origin``: a file path, a run store key), the field, the value and the fix; nothing was evicted then."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan_seal import (
    SEAL_VERSION,
    entry_digest,
    policy_digest,
    seal_digest,
    sealed_fields,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import nearest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorInputError
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import Target

# how far a plan's now may be ahead of the cluster's clock (clocks of the control node, the API server and the
# snapshot's source disagree by seconds; a plan dated minutes ahead was not made of the cluster as it is)
CLOCK_SKEW_SECONDS = 120
REPLAN = (
    "plan the cluster again (the plan module or the dry_run role) and review that plan; to execute part of a "
    "plan, use select or exclude instead of editing it"
)


class PlanRefused(ExecutorInputError):
    """A plan evict does not execute: ``field`` and ``value`` say where it is wrong."""

    def __init__(self, message: str, field: str, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


def check_seal(plan: Mapping[str, Any], origin: str) -> str:
    """Raise unless the plan is the one sealed when it was written; returns the seal's digest."""
    seal = plan.get("seal")
    if not isinstance(seal, Mapping) or not seal.get("digest"):
        raise PlanRefused(
            f"{origin}: the plan has no seal, so evict cannot tell it is the plan that was written and "
            "reviewed (written by a release before plans were sealed, or not by the plan module); "
            f"nothing was evicted. {REPLAN[0].upper()}{REPLAN[1:]}",
            "seal",
            seal,
        )
    if seal.get("version") != SEAL_VERSION:
        raise PlanRefused(
            f"{origin}: seal.version {seal.get('version')!r} is not one this release reads "
            f"({SEAL_VERSION}); nothing was evicted. Execute it with the release that wrote it, or "
            f"{REPLAN}",
            "seal.version",
            seal.get("version"),
        )
    difference = _difference(plan, seal)
    if difference:
        field, value, what = difference
        raise PlanRefused(
            f"{origin}: the plan is not the one sealed when it was written: {what}; nothing was "
            f"evicted. Execute the plan as written, or {REPLAN}",
            field,
            value,
        )
    return str(seal["digest"])


def _difference(plan: Mapping[str, Any], seal: Mapping[str, Any]) -> Optional[tuple[str, Any, str]]:
    """The first sealed field that changed: (field, its value now, the sentence); None when nothing did."""
    evictions = plan.get("evictions") or []
    entries = [entry_digest(entry) for entry in evictions]
    sealed_entries = list(seal.get("entries") or [])
    if len(entries) != seal.get("evictions") or len(sealed_entries) != seal.get("evictions"):
        first = _first_difference(entries, sealed_entries)
        return (
            "evictions",
            len(entries),
            f"evictions has {len(entries)} entries, {seal.get('evictions')} when sealed"
            + (f"; the first that differs is {_entry(evictions, first)}" if first is not None else ""),
        )
    first = _first_difference(entries, sealed_entries)
    if first is not None:
        return (
            f"evictions[{first}]",
            _label(evictions[first]),
            f"{_entry(evictions, first)} is not the entry sealed there (one of its pod, UID, node, owner, order, "
            "plugin, profile or reason changed)",
        )
    policy = policy_digest(plan["policy"]) if plan.get("policy") is not None else seal.get("policy_sha256")
    fields = sealed_fields(plan, policy)
    for name, shown in (("now", "now"), ("cluster_uid", "cluster_identity.uid"), ("policy_sha256", "policy")):
        now, then = fields[name], seal.get(name)
        if now != then:
            what = f"{shown}: its sha256 is" if name == "policy_sha256" else f"{shown} is"
            return shown, now, f"{what} {now!r}, {then!r} when sealed"
    if seal_digest(fields, sealed_entries) != seal.get("digest"):
        return (
            "seal.digest",
            seal.get("digest"),
            "seal.digest does not match the sealed fields (the seal itself was edited)",
        )
    return None


def _first_difference(entries: Sequence[str], sealed: Sequence[str]) -> Optional[int]:
    for index, (now, then) in enumerate(zip(entries, sealed, strict=False)):
        if now != then:
            return index
    return None if len(entries) == len(sealed) else min(len(entries), len(sealed))


def _label(entry: Any) -> str:
    if isinstance(entry, Mapping):
        return f"{entry.get('namespace')}/{entry.get('name')}"
    return repr(entry)


def _entry(evictions: Sequence[Any], index: int) -> str:
    if index < len(evictions):
        return f"evictions[{index}] ({_label(evictions[index])})"
    return f"evictions[{index}] (sealed, now missing)"


def check_identity_recorded(plan: Mapping[str, Any], origin: str, allowed: bool, expected_uid: Optional[str]) -> None:
    """A plan that records no cluster could be executed on any: refused unless the user opts in and pins one."""
    identity = plan.get("cluster_identity")
    if isinstance(identity, Mapping) and identity.get("uid"):
        return
    if not allowed:
        raise PlanRefused(
            f"{origin}: the plan records no cluster_identity, so evict cannot tell which cluster it was made on; "
            "nothing was evicted. Plan the cluster live (or from a snapshot holding its kube-system Namespace) so the "
            "plan records it, or set allow_plan_without_identity: true together with expected_cluster_uid (the "
            "kube-system namespace UID of the cluster this plan is for)",
            "cluster_identity",
            plan.get("cluster_identity"),
        )
    if not expected_uid:
        raise PlanRefused(
            f"{origin}: allow_plan_without_identity is true but expected_cluster_uid is not set; nothing was "
            "evicted. A plan without cluster_identity is executed only on a pinned cluster: set expected_cluster_uid "
            "to the UID of its kube-system namespace (kubectl get namespace kube-system -o "
            "jsonpath='{.metadata.uid}')",
            "expected_cluster_uid",
            expected_uid,
        )


def check_uids(targets: Sequence[Target], origin: str) -> None:
    """Pods of the same name exist on every cluster (StatefulSets, the same workloads): a plan entry is executed
    only on the pod it saw, by UID."""
    nameless = [target for target in targets if not target.uid]
    if nameless:
        first = nameless[0]
        raise PlanRefused(
            f"{origin}: {len(nameless)} of {len(targets)} evictions carry no pod uid (the first: {first.label}), so "
            "they could only be matched by name, which another pod of that name on this or another cluster also "
            "has; nothing was evicted. Plan the live cluster, or a snapshot whose pods keep metadata.uid; to evict "
            "pods by name on purpose, give them as pods",
            f"evictions[{first.order - 1}].uid",
            None,
        )


@dataclass(frozen=True)
class Selection:
    """The part of a plan a run executes: what select and exclude matched."""

    select: list[str]
    exclude: list[str]
    planned: int
    left_out: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "select": self.select,
            "exclude": self.exclude,
            "planned": self.planned,
            "executed": self.planned - len(self.left_out),
            "left_out": self.left_out,
        }


def select_targets(
    targets: list[Target], select: Optional[Sequence[str]], exclude: Optional[Sequence[str]]
) -> tuple[list[Target], Selection]:
    """The targets ``select`` picks (all when unset) less those ``exclude`` names. Each pattern is namespace/name,
    with shell wildcards (``shop/*``, ``*/web-*``), and must match a pod of the plan."""
    chosen_patterns = [_pattern(value, "select", index) for index, value in enumerate(select or [])]
    left_patterns = [_pattern(value, "exclude", index) for index, value in enumerate(exclude or [])]
    labels = [target.label for target in targets]
    for option, patterns in (("select", chosen_patterns), ("exclude", left_patterns)):
        for index, pattern in enumerate(patterns):
            if not fnmatch.filter(labels, pattern):
                raise PlanRefused(
                    f"{option}[{index}]: {pattern!r} matches no pod of the plan"
                    f"{_closest(pattern, labels)}; nothing was evicted. Give namespace/name of planned "
                    "pods (shell wildcards allowed)",
                    f"{option}[{index}]",
                    pattern,
                )
    kept = [
        target
        for target in targets
        if (not chosen_patterns or _matches(target.label, chosen_patterns))
        and not _matches(target.label, left_patterns)
    ]
    kept_labels = {target.label for target in kept}
    selection = Selection(
        chosen_patterns, left_patterns, len(targets), [label for label in labels if label not in kept_labels]
    )
    return kept, selection


def _pattern(value: Any, option: str, index: int) -> str:
    text = str(value or "").strip()
    if text.count("/") != 1 or text.startswith("/") or text.endswith("/"):
        raise PlanRefused(
            f"{option}[{index}]: {value!r} is not namespace/name; nothing was evicted. Give a planned pod as "
            "namespace/name, shell wildcards allowed (shop/web-*, kube-system/*)",
            f"{option}[{index}]",
            value,
        )
    return text


def _matches(label: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(label, pattern) for pattern in patterns)


def _closest(pattern: str, labels: Sequence[str]) -> str:
    close = nearest_name(pattern, labels, cutoff=0.5)
    return f" (the closest planned pod is {close})" if close else ""


def check_not_from_the_future(
    planned_at: Optional[float], plan_now: Any, clock: float, clock_name: str, origin: str
) -> None:
    """A plan dated after ``clock`` (beyond the skew tolerance) describes no state the cluster was in."""
    if planned_at is None or planned_at - clock <= CLOCK_SKEW_SECONDS:
        return
    ahead = planned_at - clock
    raise PlanRefused(
        f"{origin}: the plan's now {plan_now} is {_span(ahead)} after {clock_name} ({_rfc3339(clock)}), more than the "
        f"{CLOCK_SKEW_SECONDS} s clock skew allowed; a plan from the future was not made of the cluster as it is. "
        "Nothing was evicted. Plan the live cluster without a fixed now (the plan module's now, the dry_run role's "
        "dry_run_now) and review that plan, or correct the clock that is wrong",
        "now",
        plan_now,
    )


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"
