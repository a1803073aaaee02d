"""The run journal: one JSON object per line, appended and fsync'd before the action it announces goes out.

Keyed by pod UID. The rule that makes a resume safe: ``requested`` is written (and on disk) before the Eviction is
POSTed, and an outcome after the answer. A later run that finds ``requested`` without an outcome does not know
whether the API server acted, so the executor re-reads the pod instead of evicting again (see worker.py).

Record fields: ``time`` (RFC 3339 UTC), ``run`` (id of the run that wrote it), ``event``, and for pod events ``key``
(UID, or namespace/name when the UID is unknown), ``namespace``, ``name``, ``uid``, ``node``, plus details.
Events: ``run_started`` (with the ``cluster`` identity it ran on), ``requested``, ``accepted`` (the pod is being
evicted), ``migration_started`` (KubeVirt answered "evacuation triggered"), ``outcome`` (``status``
evicted/migrated/blocked_by_pdb/skipped/failed, with ``reason``/``error``), ``run_finished``.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Optional

REQUESTED = "requested"
ACCEPTED = "accepted"
MIGRATION_STARTED = "migration_started"
OUTCOME = "outcome"
# Outcomes after which a pod must never be evicted again by a resumed run
DONE_STATUSES = ("evicted", "migrated")


@dataclass
class PodHistory:
    """What earlier runs recorded about one pod: the last progress event and the last outcome."""

    key: str
    node: Optional[str] = None
    progress: Optional[str] = None  # requested | accepted | migration_started (since the last outcome)
    outcome: Optional[dict] = None
    details: dict = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return bool(self.outcome) and self.outcome.get("status") in DONE_STATUSES and self.progress is None

    @property
    def interrupted(self) -> bool:
        """An eviction went out (or was about to) and no outcome followed: the previous run stopped there."""
        return self.progress is not None


class Journal:
    """Thread-safe appender. ``path=None`` keeps nothing (no resume possible); ``read_only`` (check mode) reads the
    history and writes nothing."""

    def __init__(self, path: Optional[str], read_only: bool = False) -> None:
        self.path = path
        self.run_id = uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._handle = None
        self.history: dict[str, PodHistory] = {}
        self.previous_runs = 0
        if path:
            self.history, self.previous_runs = read_history(path)
        if path and not read_only:
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            self._handle = open(path, "a", encoding="utf-8")  # closed by close(); pylint: disable=consider-using-with
            if _ends_mid_line(path):
                self._handle.write("\n")  # a torn last line (crash mid-write) must not swallow the next record

    def record(self, event: str, **fields: Any) -> dict:
        entry = {"time": _now(), "run": self.run_id, "event": event, **fields}
        line = json.dumps(entry, sort_keys=True, default=str)
        with self._lock:
            if self._handle is not None:
                self._handle.write(line + "\n")
                self._handle.flush()
                os.fsync(self._handle.fileno())  # on disk before the API call it announces
        return entry

    def record_pod(self, event: str, target: Any, **fields: Any) -> dict:
        identity = {"key": target.key, "namespace": target.namespace, "name": target.name, "uid": target.uid,
                    "node": target.node}
        return self.record(event, **{**identity, **{k: v for k, v in fields.items() if v is not None}})

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def read_history(path: str) -> tuple[dict[str, PodHistory], int]:
    """Fold an existing journal into one ``PodHistory`` per key. A torn last line (a crash mid-write) is ignored:
    what it announced never reached the API (the record is written before the call)."""
    history: dict[str, PodHistory] = {}
    runs = 0
    if not os.path.exists(path):
        return history, runs
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            entry = _parse(line)
            if entry is None:
                continue
            if entry.get("event") == "run_started":
                runs += 1
                continue
            key = entry.get("key")
            if not key:
                continue
            item = history.setdefault(key, PodHistory(key))
            _fold(item, entry)
    return history, runs


def recorded_cluster(path: str) -> Optional[dict]:
    """The cluster identity (``{"uid", "server"}``) the latest run of the journal recorded, if any."""
    cluster = None
    if not os.path.exists(path):
        return cluster
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            entry = _parse(line)
            if entry is not None and entry.get("event") == "run_started" and entry.get("cluster"):
                cluster = entry["cluster"]
    return cluster


def _fold(item: PodHistory, entry: dict) -> None:
    event = entry.get("event")
    if entry.get("node"):
        item.node = entry["node"]
    if event in (REQUESTED, ACCEPTED, MIGRATION_STARTED):
        # an acceptance is never downgraded by a later "requested" (a resumed run re-checking the pod)
        if not (event == REQUESTED and item.progress in (ACCEPTED, MIGRATION_STARTED)):
            item.progress = event
        item.details.update({k: entry[k] for k in ("vmi", "source_node", "uid") if entry.get(k)})
    elif event == OUTCOME:
        item.outcome = {k: entry.get(k) for k in ("status", "reason", "error", "time", "run")}
        item.progress = None


def _parse(line: str) -> Optional[dict]:
    line = line.strip()
    if not line:
        return None
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _ends_mid_line(path: str) -> bool:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
