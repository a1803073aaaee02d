"""Which logged Predictive cycles the gate judges: not those the operand ran before its view of the cluster was
complete, and which cycles' evictions are left out with them.

In ``--dry-run`` the descheduler copies what its informers see into a sandbox client through event handlers
(upstream ``pkg/descheduler/kubeclientsandbox.go``) and starts its first cycle once the real informers report synced
(``bootstrapDescheduler`` in ``descheduler.go``), not once every copy has reached the sandbox's own informers. On a
large cluster the first cycle after the start runs on part of the pods: on 150,001 pods it logged 1,842 evictions,
the next cycle 5,728 on the same objects (#47). So the first cycles after the operand's container started are left
out (``skip_initial``).

A cycle's place after the start is counted, in log order, among the cycles that closed after the container started
(``container_started``, which the info module adds to the parsed log). The log is that container's (a restart starts
a new one); when its head was cut (``tailLines``) the count is a lower bound, so a cycle may be left out that was not
among the first, never judged one that was. klog stamps carry no year: a stamp is taken in the year of the start, or
the next when that would put it more than a day before the start (a log running across New Year). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Mapping, Optional

# A stamp this far before the container start is read as next year's (klog prints no year); a smaller difference is
# clock skew between the node's kubelet and the container, or an earlier container's line.
_YEAR_WRAP = timedelta(days=1)


@dataclass
class CycleChoice:
    """Every completed cycle with whether it is judged and why; the indices whose evictions are left out."""

    cycles: list[dict[str, Any]] = field(default_factory=list)
    judged: list[Mapping[str, Any]] = field(default_factory=list)
    early_indices: set[int] = field(default_factory=set)  # cycles left out as initial (or of an earlier run)
    early_count: int = 0  # how many completed cycles were left out as initial (or of an earlier run)


def parse_start(value: Any) -> Optional[datetime]:
    """The RFC 3339 ``startedAt`` of a container status, or None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def klog_time(stamp: Any, started: datetime) -> Optional[datetime]:
    """A klog ``MMDD hh:mm:ss.uuuuuu`` stamp (UTC, the operand's clock) placed in the year of ``started``."""
    for year in (started.year, started.year + 1):
        try:
            moment = datetime.strptime(f"{year}{stamp}", "%Y%m%d %H:%M:%S.%f").replace(tzinfo=UTC)
        except (TypeError, ValueError):
            return None
        if moment >= started - _YEAR_WRAP:
            return moment
    return moment


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def choose_cycles(log: Mapping[str, Any], *, skip_initial: int, last: Optional[int]) -> CycleChoice:
    """Each completed cycle of the parsed ``log`` judged or left out, with why; ``last``: judge at most the last this
    many of those that may be judged."""
    started = parse_start(log.get("container_started"))
    since = (f"the operand's container started ({log['container_started']})" if started
             else "the log's first cycle (the container's start time is not known)")
    choice = CycleChoice()
    candidates: list[dict[str, Any]] = []
    position = 0
    for cycle in [c for c in log.get("cycles") or [] if isinstance(c, Mapping)]:
        entry = {"index": cycle.get("index"), "time": cycle.get("time"), "logged": logged_total(cycle),
                 "used": False, "within": None}
        choice.cycles.append(entry)
        closed = klog_time(cycle.get("time"), started) if started else None
        if started and closed is not None and closed < started:
            entry["why"] = f"left out: it closed before {since}, in an earlier run of the operand"
        else:
            position += 1
            if position > skip_initial:
                entry["why"] = f"compared: the {_ordinal(position)} cycle since {since}"
                candidates.append(entry)
                continue
            entry["why"] = (f"left out: the {_ordinal(position)} cycle since {since} (skip_initial_cycles "
                            f"{skip_initial}); the descheduler may have started it before its dry-run copy of the "
                            "cluster was complete")
        choice.early_indices.add(entry["index"])
    choice.early_count = len(choice.early_indices)
    if log.get("cycle_in_progress") and position + 1 <= skip_initial:
        choice.early_indices.add(len(choice.cycles) + 1)
    kept = candidates[-last:] if last else candidates
    kept_ids = {id(entry) for entry in kept}
    for entry in candidates:
        if id(entry) in kept_ids:
            entry["used"] = True
        else:
            entry["why"] = f"left out: older than the last {last} cycle(s) compared (the cycles option)"
    choice.judged = kept
    return choice


def judged_evictions(log: Mapping[str, Any], choice: CycleChoice) -> tuple[list[Mapping[str, Any]], int]:
    """The logged evictions to judge (each logged in at least one cycle not left out as initial) and how many were
    left out (logged only in such cycles)."""
    judged, left_out = [], 0
    for entry in [e for e in log.get("evictions") or [] if isinstance(e, Mapping)]:
        indices = set(entry.get("cycle_indices") or [])
        if indices and indices <= choice.early_indices:
            left_out += 1
        else:
            judged.append(entry)
    return judged, left_out


def logged_total(cycle: Mapping[str, Any]) -> int:
    total = cycle.get("total_evicted")
    return int(total if total is not None else cycle.get("unique_evictions") or 0)
