"""What to evict: the evictions of a plan (dict or plan.json) or a list of pods, as ``Target`` objects."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import parse_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.options import ExecutorInputError


@dataclass(frozen=True)
class Target:
    """One planned eviction. ``uid``/``node``/``owner`` are what the plan saw; unset for a bare pod list."""

    namespace: str
    name: str
    uid: Optional[str] = None
    node: Optional[str] = None
    owner: Optional[Mapping[str, str]] = None  # {kind, name}
    order: int = 0
    plugin: Optional[str] = None
    profile: Optional[str] = None
    reason: Optional[str] = None

    @property
    def key(self) -> str:
        """The journal key: the UID when known (names are reused by StatefulSets), else namespace/name."""
        return self.uid or f"{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}"

    def eviction_reason(self) -> Optional[str]:
        """The ``reason`` annotation of the Eviction, as the descheduler writes it."""
        if not self.plugin:
            return self.reason
        source = f"{self.profile}/{self.plugin}" if self.profile else self.plugin
        return f"triggered by {source}: {self.reason}" if self.reason else f"triggered by {source}"

    def as_dict(self) -> dict:
        return {"namespace": self.namespace, "name": self.name, "uid": self.uid, "node": self.node,
                "owner": dict(self.owner) if self.owner else None, "order": self.order, "plugin": self.plugin,
                "profile": self.profile, "reason": self.reason}


def load_plan_file(path: str) -> dict:
    if not os.path.isfile(path):
        raise ExecutorInputError(f"plan_file: {path!r} does not exist; give the plan.json written by the plan module "
                                 "(report_dir) or the dry_run role")
    with open(path, encoding="utf-8") as handle:
        try:
            document = json.load(handle)
        except ValueError as exc:
            raise ExecutorInputError(f"plan_file: {path!r} is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ExecutorInputError(f"plan_file: {path!r} does not hold a plan (a JSON object with evictions)")
    return document


def targets_from_plan(plan: Mapping[str, Any]) -> list[Target]:
    evictions = plan.get("evictions")
    if not isinstance(evictions, list):
        raise ExecutorInputError("plan: no 'evictions' list; pass the result of the plan module or its plan.json")
    targets = [_plan_target(entry, index) for index, entry in enumerate(evictions, start=1)]
    return _unique(sorted(targets, key=lambda target: target.order))


def targets_from_pods(pods: Iterable[Mapping[str, Any]]) -> list[Target]:
    targets = []
    for index, pod in enumerate(pods, start=1):
        if not isinstance(pod, Mapping) or not pod.get("namespace") or not pod.get("name"):
            raise ExecutorInputError(f"pods[{index - 1}]: each pod needs namespace and name, got {pod!r}")
        targets.append(Target(namespace=str(pod["namespace"]), name=str(pod["name"]), uid=pod.get("uid") or None,
                              node=pod.get("node") or None, order=index))
    return _unique(targets)


def check_plan_age(plan: Mapping[str, Any], max_age: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """The plan's age in seconds (from its ``now``); raises when older than ``max_age`` (a Go duration or seconds)."""
    planned_at = plan_time(plan)
    if planned_at is None:
        if max_age:
            raise ExecutorInputError("max_plan_age is set but the plan has no 'now' time; recompute the plan")
        return None
    age = (time.time() if now is None else now) - planned_at
    if max_age:
        limit = duration_seconds(max_age, "max_plan_age")
        if age > limit:
            raise ExecutorInputError(
                f"the plan is {_human(age)} old (computed for {plan.get('now')}), more than max_plan_age "
                f"{max_age}: the cluster has changed since; compute a new plan of the live cluster and review it "
                "(a plan made for a fixed now, as the demo inventory's dry_run_now, ages like any other)")
    return age


def duration_seconds(value: Any, option: str) -> float:
    text = str(value).strip()
    try:
        return float(text) if text.replace(".", "", 1).isdigit() else parse_go_duration(text)
    except ValueError as exc:
        raise ExecutorInputError(f"{option}: {exc}") from exc


def _plan_target(entry: Any, index: int) -> Target:
    if not isinstance(entry, Mapping) or not entry.get("namespace") or not entry.get("name"):
        raise ExecutorInputError(f"plan.evictions[{index - 1}]: needs namespace and name, got {entry!r}")
    owner = entry.get("owner") if isinstance(entry.get("owner"), Mapping) else None
    return Target(namespace=str(entry["namespace"]), name=str(entry["name"]), uid=entry.get("uid") or None,
                  node=entry.get("node") or None, owner=dict(owner) if owner else None,
                  order=int(entry.get("order") or index), plugin=entry.get("plugin"), profile=entry.get("profile"),
                  reason=entry.get("reason"))


def _unique(targets: list[Target]) -> list[Target]:
    """A pod listed twice is evicted once."""
    seen: set[str] = set()
    unique = []
    for target in targets:
        if target.key not in seen and target.label not in seen:
            seen.update((target.key, target.label))
            unique.append(target)
    return unique


def plan_time(plan: Mapping[str, Any]) -> Optional[float]:
    text = plan.get("now")
    if not text:
        return None
    try:
        parsed = datetime.strptime(str(text).replace("Z", "+00:00"), "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        try:
            parsed = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
        except ValueError as exc:
            raise ExecutorInputError(f"plan.now: {text!r} is not an RFC 3339 time") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _human(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:.0f}s"
