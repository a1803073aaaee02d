"""The rollout's options, checked once before any cluster is touched: budgets (a count or a percent of a group or
of the fleet), durations (seconds or a Go duration such as ``5m``) and the health gates.

The names and meanings follow Open Cluster Management's rollout strategy (``maxConcurrency``, ``maxFailures``,
``progressDeadline``, ``minSuccessTime``, ``mandatoryDecisionGroups``); see docs/rolling-out.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import parse_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.expected_evictions import (
    ExpectedEvictions,
    expected_evictions,
)

_BUDGET = re.compile(r"^\s*(\d+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Budget:
    """A number of clusters: ``count`` as given, or ``percent`` of a total."""

    count: Optional[int] = None
    percent: Optional[int] = None

    def of(self, total: int, at_least_one: bool = False) -> int:
        """The number for a total of ``total`` clusters (a percent rounds down; concurrency is at least one)."""
        value = self.count if self.count is not None else math.floor(total * (self.percent or 0) / 100)
        return max(value, 1) if at_least_one else value

    def __str__(self) -> str:
        return f"{self.percent}%" if self.percent is not None else str(self.count)


def parse_budget(value: Any, field: str) -> Budget:
    """``3`` or ``"3"``: three clusters; ``"25%"``: a quarter of them (0 to 100)."""
    match = _BUDGET.match(str(value)) if not isinstance(value, bool) and value is not None else None
    if match is None:
        raise RolloutError(f"{field}: {value!r} is not a number of clusters; give a count (2) or a percent ('25%')",
                           field, value)
    number = int(match.group(1))
    if match.group(2):
        if number > 100:
            raise RolloutError(f"{field}: {value!r} is over 100%; give a percent from 0% to 100%", field, value)
        return Budget(percent=number)
    return Budget(count=number)


def parse_seconds(value: Any, field: str) -> float:
    """Seconds as a number, or a Go duration (``90s``, ``5m``, ``1h30m``); never negative."""
    try:
        seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else \
            parse_go_duration(str(value).strip())
    except ValueError as error:
        raise RolloutError(f"{field}: {value!r} is not a duration ({error}); give seconds (300) or a Go duration "
                           "('5m')", field, value) from error
    if seconds < 0:
        raise RolloutError(f"{field}: {value!r} is negative; give 0 or more", field, value)
    return seconds


@dataclass(frozen=True)
class GateOptions:
    """What the soak checks on each cluster of a group (docs/rolling-out.md, "Health gates")."""

    operand: bool = True  # the operand available and not Degraded
    workloads: bool = True  # no workload further below its PDB or its desired ready replicas than before the change
    workload_tolerance: int = 0  # pods a workload may lose beyond its shortfall before the change
    max_evictions_per_minute: int = 0  # the operand's logged evictions in any minute; 0: not checked
    expected_evictions: ExpectedEvictions = ExpectedEvictions()  # the logged evictions against a plan per cluster


@dataclass(frozen=True)
class RolloutOptions:
    max_concurrency: Budget
    max_failures: Budget  # per group (a mandatory group tolerates none)
    max_failures_total: Budget  # over the fleet
    progress_deadline: float  # seconds a cluster has to take the change and run it
    min_success_time: float  # the soak after each group, seconds
    gate_interval: float  # seconds between two gate polls during the soak
    rollback: bool
    gates: GateOptions
    run_id: str
    lock_timeout: float = 0.0  # seconds to wait for another change (or an evict run) on a cluster; 0: fail at once
    on_interrupted: str = "fail"  # what to do first with a cluster whose record shows an unfinished change
    interrupt_rollback: bool = True  # on SIGINT/SIGTERM, roll back the clusters mid-change or mid-soak
    interrupt_grace: float = 120.0  # seconds those rollbacks have, from the cancel


ON_INTERRUPTED = ("fail", "rollback", "resume")


def _on_interrupted(value: Any) -> str:
    if value not in ON_INTERRUPTED:
        raise RolloutError(f"on_interrupted: {value!r} is not one of {', '.join(ON_INTERRUPTED)}; give fail (stop and "
                           "show the record), rollback (put its last good configuration back first) or resume (keep "
                           "what runs, with the recorded last good configuration to go back to)", "on_interrupted",
                           value)
    return value


def _int_at_least(value: Any, field: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise RolloutError(f"{field}: {value!r} is not a whole number of {low} or more", field, value)
    return value


def gate_options(gates: Optional[Mapping[str, Any]]) -> GateOptions:
    gates = gates or {}
    return GateOptions(
        operand=bool(_given(gates, "operand", True)),
        workloads=bool(_given(gates, "workloads", True)),
        workload_tolerance=_int_at_least(_given(gates, "workload_tolerance", 0), "gates.workload_tolerance", 0),
        max_evictions_per_minute=_int_at_least(_given(gates, "max_evictions_per_minute", 0),
                                               "gates.max_evictions_per_minute", 0),
        expected_evictions=expected_evictions(gates.get("expected_evictions")),
    )


def _given(params: Mapping[str, Any], key: str, default: Any) -> Any:
    """The option, or its default when unset (Ansible passes None for an option left out)."""
    value = params.get(key)
    return default if value is None else value


def rollout_options(params: Mapping[str, Any]) -> RolloutOptions:
    """The options of the rollout module, checked; a RolloutError names the first wrong one."""
    interval = parse_seconds(_given(params, "gate_interval", 5), "gate_interval")
    if interval <= 0:
        raise RolloutError(f"gate_interval: {params.get('gate_interval')!r} must be more than 0", "gate_interval",
                           params.get("gate_interval"))
    deadline = parse_seconds(_given(params, "progress_deadline", "10m"), "progress_deadline")
    if deadline <= 0:
        raise RolloutError(f"progress_deadline: {params.get('progress_deadline')!r} must be more than 0",
                           "progress_deadline", params.get("progress_deadline"))
    return RolloutOptions(
        max_concurrency=parse_budget(_given(params, "max_concurrency", "100%"), "max_concurrency"),
        max_failures=parse_budget(_given(params, "max_failures", 0), "max_failures"),
        max_failures_total=parse_budget(_given(params, "max_failures_total", 0), "max_failures_total"),
        progress_deadline=deadline,
        min_success_time=parse_seconds(_given(params, "min_success_time", "1m"), "min_success_time"),
        gate_interval=interval,
        rollback=bool(_given(params, "rollback", True)),
        gates=gate_options(params.get("gates")),
        run_id=str(params.get("run_id") or ""),
        lock_timeout=parse_seconds(_given(params, "lock_timeout", 0), "lock_timeout"),
        on_interrupted=_on_interrupted(_given(params, "on_interrupted", "fail")),
        interrupt_rollback=bool(_given(params, "interrupt_rollback", True)),
        interrupt_grace=parse_seconds(_given(params, "interrupt_grace", "2m"), "interrupt_grace"),
    )
