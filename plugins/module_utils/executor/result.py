"""Per-pod outcomes and the run summary: structured data only (statuses and reason codes are stable strings)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import Target

EVICTED = "evicted"
MIGRATED = "migrated"
BLOCKED_BY_PDB = "blocked_by_pdb"
SKIPPED = "skipped"
FAILED = "failed"
WOULD_EVICT = "would_evict"  # check mode: the server-side dry run accepted the eviction
WOULD_MIGRATE = "would_migrate"  # check mode: KubeVirt would live-migrate the VM
STATUSES = (EVICTED, MIGRATED, BLOCKED_BY_PDB, SKIPPED, FAILED, WOULD_EVICT, WOULD_MIGRATE)
DISRUPTED = (EVICTED, MIGRATED)


@dataclass
class PodResult:
    target: Target
    status: str = SKIPPED
    reason_code: Optional[str] = None
    reason: Optional[str] = None
    error: Optional[str] = None
    uid: Optional[str] = None
    node: Optional[str] = None
    owner: Optional[str] = None
    attempts: int = 0
    http_status: Optional[int] = None
    message: Optional[str] = None
    waited_seconds: float = 0.0
    duration_seconds: float = 0.0
    replacement: Optional[dict] = None
    migration: Optional[dict] = None
    vm: Optional[dict] = None
    resumed: bool = False  # the outcome was established from an earlier run's journal
    changed: bool = False  # this run evicted the pod (or started its migration)
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        result: dict[str, Any] = {
            "namespace": self.target.namespace, "name": self.target.name, "uid": self.uid or self.target.uid,
            "node": self.node or self.target.node, "owner": self.owner, "status": self.status,
            "reason_code": self.reason_code, "reason": self.reason, "error": self.error, "attempts": self.attempts,
            "http_status": self.http_status, "message": self.message,
            "waited_seconds": round(self.waited_seconds, 3), "duration_seconds": round(self.duration_seconds, 3),
            "replacement": self.replacement, "migration": self.migration, "vm": self.vm, "resumed": self.resumed,
            "order": self.target.order, "plugin": self.target.plugin, "profile": self.target.profile,
        }
        result.update(self.extra)
        return result


def summarise(results: list[PodResult]) -> dict:
    """counts, skipped_by_reason, durations and placements of a finished run."""
    statuses = Counter(result.status for result in results)
    counts = {status: statuses.get(status, 0) for status in STATUSES}
    counts["total"] = len(results)
    counts["resumed"] = sum(1 for result in results if result.resumed)
    return {
        "counts": counts,
        "skipped_by_reason": dict(sorted(Counter(r.reason_code or "other" for r in results
                                                 if r.status == SKIPPED).items())),
        "durations": _durations(results),
        "placements": _placements(results),
    }


def nothing_but_failures(counts: dict) -> bool:
    """Errors prevented every eviction of the run: some pod failed and none was (or, in check mode, would be)
    evicted or migrated. Such a run did nothing because of errors, and must not read as a success."""
    done = sum(counts.get(status, 0) for status in (*DISRUPTED, WOULD_EVICT, WOULD_MIGRATE))
    return counts.get(FAILED, 0) > 0 and done == 0


def _durations(results: Iterable[PodResult]) -> dict:
    evictions = [r.duration_seconds for r in results if r.status in DISRUPTED and not r.resumed]
    replacements = [float(r.replacement["seconds"]) for r in results
                    if r.replacement and r.replacement.get("status") == "ready" and "seconds" in r.replacement]
    migrations = [float(r.migration["seconds"]) for r in results if r.migration and "seconds" in r.migration]
    return {"pod_seconds": _stats(evictions), "replacement_seconds": _stats(replacements),
            "migration_seconds": _stats(migrations)}


def _stats(values: list[float]) -> dict:
    if not values:
        return {"count": 0, "max": None, "mean": None}
    return {"count": len(values), "max": round(max(values), 3), "mean": round(sum(values) / len(values), 3)}


def _placements(results: Iterable[PodResult]) -> dict:
    """Where the workloads went: one entry per evicted pod with a known replacement, per migrated VM."""
    items = []
    for result in results:
        if result.status == EVICTED and result.replacement and result.replacement.get("node"):
            items.append({"kind": "pod", "namespace": result.target.namespace, "evicted": result.target.name,
                          "replacement": result.replacement.get("pod"), "from_node": result.node,
                          "to_node": result.replacement["node"], "same_node": result.replacement.get("same_node")})
        elif result.status == MIGRATED and result.migration and result.migration.get("target_node"):
            items.append({"kind": "vm", "namespace": result.target.namespace, "evicted": result.target.name,
                          "vmi": result.migration.get("vmi"), "from_node": result.migration.get("source_node"),
                          "to_node": result.migration["target_node"], "same_node": False})
    same = sum(1 for item in items if item["same_node"])
    return {"items": items, "same_node": same, "moved": len(items) - same,
            "by_node": dict(sorted(Counter(item["to_node"] for item in items).items()))}
