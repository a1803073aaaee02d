"""Read the descheduler's klog text output: the evictions it performed or simulated, per cycle, de-duplicated.

Pure (stdlib only). The lines come from sigs.k8s.io/descheduler as vendored by the Kube Descheduler Operator
(``--logging-format=text``, klog structured logging), e.g.::

    I0627 16:15:45.123456       1 evictions.go:607] "Evicted pod in dry run mode" pod="ns1/web-5d9c7" reason=""
        strategy="PodLifeTime" node="worker-1" profile="LifecycleAndUtilization"
    I0627 16:15:45.200000       1 descheduler.go:252] "Number of evictions/requests" totalEvicted=3 evictionRequests=0
    E0627 16:15:45.150000       1 evictions.go:539] "Error evicting pod" err="maximum number of evicted pods per a
        descheduling cycle reached" limit=5

(each on one line). Lines written before release-4.17 have no ``profile`` key. In Predictive mode (``--dry-run``)
the descheduler restores the "evicted" pods after every cycle, so the same evictions come back each interval: they
are de-duplicated on (pod, strategy, profile, node) and counted once. ``oc logs --timestamps`` prefixes are accepted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

DRY_RUN_EVICTION = "Evicted pod in dry run mode"
EVICTION = "Evicted pod"
CYCLE_TOTALS = "Number of evictions/requests"
EVICTION_ERROR = "Error evicting pod"
SKIPPED_CYCLE = "Skipping descheduling cycle: requires >=2 nodes"

# The three limits EvictPod enforces (vendor/sigs.k8s.io/descheduler/pkg/descheduler/evictions/errors.go).
LIMIT_ERRORS = {
    "maximum number of evicted pods per a descheduling cycle reached": "total",
    "maximum number of evicted pods per node reached": "node",
    "maximum number of evicted pods per namespace reached": "namespace",
}

# klog header: severity, MMDD, hh:mm:ss.uuuuuu, thread id, file:line]
_HEADER = re.compile(
    r"^(?P<severity>[IWEF])(?P<month>\d{2})(?P<day>\d{2}) (?P<time>\d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<thread>\d+) "
    r"(?P<source>[^\s:\]]+:\d+)\] (?P<rest>.*)$"
)
# `oc logs --timestamps` / kubectl puts an RFC 3339 timestamp and a space first.
_KUBELET_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) ")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
               "'": "'"}


@dataclass
class KlogRecord:
    """One structured klog line: ``"message" key=value ...``."""

    severity: str
    timestamp: str  # "MMDD hh:mm:ss.uuuuuu" (klog prints no year)
    source: str
    message: str
    values: dict[str, str] = field(default_factory=dict)


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """A Go double-quoted string starting at ``text[start] == '"'``; returns (value, index after the quote)."""
    chars: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return "".join(chars), index + 1
        if char != "\\" or index + 1 >= len(text):
            chars.append(char)
            index += 1
            continue
        escape = text[index + 1]
        widths = {"x": 2, "u": 4, "U": 8}
        if escape in widths:
            digits = text[index + 2:index + 2 + widths[escape]]
            try:
                chars.append(chr(int(digits, 16)))
            except ValueError:
                chars.append(text[index:index + 2 + widths[escape]])
            index += 2 + widths[escape]
            continue
        chars.append(_GO_ESCAPES.get(escape, "\\" + escape))
        index += 2
    raise ValueError("unterminated quoted string")


def _read_values(text: str, index: int) -> dict[str, str]:
    """``key="quoted" key=bare ...`` after the message; stops at anything else (multi-line values, free text)."""
    values: dict[str, str] = {}
    while index < len(text):
        while index < len(text) and text[index] == " ":
            index += 1
        match = _KEY.match(text, index)
        if match is None or match.end() >= len(text) or text[match.end()] != "=":
            break
        index = match.end() + 1
        if index < len(text) and text[index] == '"':
            value, index = _read_quoted(text, index)
        else:
            end = text.find(" ", index)
            end = len(text) if end < 0 else end
            value, index = text[index:end], end
        values[match.group(0)] = value
    return values


def parse_klog_line(line: str) -> Optional[KlogRecord]:
    """The structured record of one klog text line, or None for anything else (printf-style lines included)."""
    line = _KUBELET_TIMESTAMP.sub("", line.rstrip("\r\n"), count=1)
    header = _HEADER.match(line)
    if header is None or not header.group("rest").startswith('"'):
        return None
    rest = header.group("rest")
    try:
        message, index = _read_quoted(rest, 0)
        values = _read_values(rest, index)
    except ValueError:
        return None
    timestamp = f"{header.group('month')}{header.group('day')} {header.group('time')}"
    return KlogRecord(header.group("severity"), timestamp, header.group("source"), message, values)


def _split_pod(reference: str) -> tuple[str, str]:
    # klog.KObj renders "namespace/name" (just "name" for cluster-scoped objects, never for pods)
    namespace, _sep, name = reference.rpartition("/")
    return namespace, name


def _as_int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class _Eviction:
    pod: str
    namespace: str
    name: str
    strategy: str
    profile: Optional[str]
    node: str
    reason: str
    dry_run: bool
    first_seen: str
    last_seen: str
    times_reported: int = 1
    cycles: set = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod, "namespace": self.namespace, "name": self.name, "strategy": self.strategy,
            "profile": self.profile, "node": self.node, "reason": self.reason, "dry_run": self.dry_run,
            "first_seen": self.first_seen, "last_seen": self.last_seen, "times_reported": self.times_reported,
            "cycles_seen": len(self.cycles),
            # the cycles that logged it, by index (the cycle in progress has the next index)
            "cycle_indices": sorted(self.cycles),
        }


class _LogSummary:
    """Accumulates records in log order; a "Number of evictions/requests" line closes the current cycle."""

    def __init__(self) -> None:
        self.evictions: dict[tuple, _Eviction] = {}
        self.cycles: list[dict[str, Any]] = []
        self.limit_errors: list[dict[str, Any]] = []
        self.eviction_errors: list[dict[str, Any]] = []
        self.skipped_cycles: list[dict[str, Any]] = []
        self.lines_read = 0
        self.records_read = 0
        self.profile_key_seen = False
        self._cycle_reports = 0
        self._cycle_unique: set = set()

    @property
    def cycle(self) -> int:
        return len(self.cycles) + 1

    def add(self, record: KlogRecord) -> None:
        self.records_read += 1
        if record.message in (DRY_RUN_EVICTION, EVICTION):
            self._add_eviction(record)
        elif record.message == CYCLE_TOTALS:
            self._close_cycle(record)
        elif record.message == EVICTION_ERROR:
            self._add_error(record)
        elif record.message == SKIPPED_CYCLE:
            self.skipped_cycles.append({"time": record.timestamp, "nodes_found": _as_int(record.values.get("found"))})

    def _add_eviction(self, record: KlogRecord) -> None:
        values = record.values
        if "pod" not in values:
            return
        self.profile_key_seen = self.profile_key_seen or "profile" in values
        namespace, name = _split_pod(values["pod"])
        dry_run = record.message == DRY_RUN_EVICTION
        key = (values["pod"], values.get("strategy", ""), values.get("profile"), values.get("node", ""), dry_run)
        self._cycle_reports += 1
        self._cycle_unique.add(key)
        known = self.evictions.get(key)
        if known is None:
            self.evictions[key] = _Eviction(
                pod=values["pod"], namespace=namespace, name=name, strategy=values.get("strategy", ""),
                profile=values.get("profile"), node=values.get("node", ""), reason=values.get("reason", ""),
                dry_run=dry_run, first_seen=record.timestamp, last_seen=record.timestamp, cycles={self.cycle},
            )
            return
        known.times_reported += 1
        known.last_seen = record.timestamp
        known.cycles.add(self.cycle)

    def _add_error(self, record: KlogRecord) -> None:
        error = record.values.get("err", "")
        kind = LIMIT_ERRORS.get(error)
        entry = {"time": record.timestamp, "error": error, "cycle": self.cycle, "pod": record.values.get("pod"),
                 "node": record.values.get("node"), "namespace": record.values.get("namespace")}
        if kind is None:
            self.eviction_errors.append({**entry, "reason": record.values.get("reason")})
            return
        self.limit_errors.append({**entry, "limit": kind, "value": _as_int(record.values.get("limit"))})

    def _close_cycle(self, record: KlogRecord) -> None:
        self.cycles.append({
            "index": self.cycle,
            "time": record.timestamp,
            "total_evicted": _as_int(record.values.get("totalEvicted")),
            "eviction_requests": _as_int(record.values.get("evictionRequests")),
            "evictions_reported": self._cycle_reports,
            "unique_evictions": len(self._cycle_unique),
        })
        self._cycle_reports = 0
        self._cycle_unique = set()

    def result(self) -> dict[str, Any]:
        unique = [e.as_dict() for e in self.evictions.values()]
        unique.sort(key=lambda e: (e["namespace"], e["name"], e["strategy"], e["profile"] or "", e["node"]))
        open_cycle = self._cycle_reports > 0
        return {
            "evictions": unique,
            "counts": {
                "total": len(unique),
                "pods": len({e["pod"] for e in unique}),
                "by_strategy": dict(Counter(e["strategy"] for e in unique)),
                "by_profile": dict(Counter(e["profile"] or "(not logged)" for e in unique)),
                "by_namespace": dict(Counter(e["namespace"] for e in unique)),
                "by_node": dict(Counter(e["node"] for e in unique)),
                "dry_run": sum(1 for e in unique if e["dry_run"]),
                "real": sum(1 for e in unique if not e["dry_run"]),
            },
            "cycles": self.cycles,
            "cycles_completed": len(self.cycles),
            "cycle_in_progress": open_cycle,
            "limit_errors": self.limit_errors,
            "limit_errors_by_kind": dict(Counter(e["limit"] for e in self.limit_errors)),
            "eviction_errors": self.eviction_errors,
            "skipped_cycles": self.skipped_cycles,
            "profile_key_logged": self.profile_key_seen,
            "lines_read": self.lines_read,
            "records_read": self.records_read,
        }


def parse_descheduler_log(lines: Iterable[str] | str) -> dict[str, Any]:
    """Evictions (unique, with how often and in how many cycles each was reported), counts by strategy, profile,
    namespace and node, the per-cycle totals, and the eviction-limit errors of a descheduler log."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    summary = _LogSummary()
    for line in lines:
        summary.lines_read += 1
        record = parse_klog_line(line)
        if record is not None:
            summary.add(record)
    return summary.result()
