"""One run in the store: each cluster's plan, the summary the fleet report reads, and its evict result.

Objects of a run, one folder per cluster as one job slice planned it, so slices never write the same object:

    runs/<run id>/clusters/<inventory name>/<kube-system uid>/<slice>/summary.json   (the fleet report's entry)
                                                                     /plan.json      (the plan the dry run wrote)
                                                                     /evict-result.json

A cluster is planned twice in a run when one kube-system UID is found under two inventory names, or one name under
two slices or UIDs (two slices of one inventory with the same cluster, or two jobs given one run id): the fleet
report shows each such entry as failed and the evict step refuses the cluster, since two plans of one cluster must
never both be executed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Optional
from urllib.parse import quote, unquote

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import closest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.store.backends import ObjectStore
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import StoreError, check_run_id

FORMAT_VERSION = 1
SUMMARY, PLAN, EVICT_RESULT = "summary.json", "plan.json", "evict-result.json"
UNKNOWN_UID = "unknown"  # a cluster whose dry run failed before its identity was read


@dataclass(frozen=True, order=True)
class ClusterRecord:
    """Where one cluster's objects of a run are."""

    cluster: str
    uid: str
    slice: str

    def key(self, run_id: str, name: str) -> str:
        parts = (self.cluster, self.uid, self.slice)
        return "/".join([run_prefix(run_id), *(quote(part, safe="") for part in parts), name])


def run_prefix(run_id: str) -> str:
    return f"runs/{check_run_id(run_id)}/clusters"


def _record_of(key: str, run_id: str) -> Optional[tuple[ClusterRecord, str]]:
    parts = key[len(run_prefix(run_id)) + 1:].split("/")
    if len(parts) != 4:
        return None  # not an object of this layout
    cluster, uid, slice_id, name = (unquote(part) for part in parts)
    return ClusterRecord(cluster, uid, slice_id), name


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, default=str) + "\n"


def _check_name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or value in (".", ".."):
        raise StoreError(f"{field}: {value!r} is not a name for the run store; give the inventory host name (or a "
                         "non-empty slice name)", field=field, value=value)
    return value


# --- the dry run ------------------------------------------------------------------------------------------------------


def save_plan(store: ObjectStore, run_id: str, entry: dict, *, slice_id: str, plan_text: Optional[str],
              cluster_uid: Optional[str] = None) -> dict:
    """Store a cluster's dry-run result: ``entry`` is its fleet-report entry (cluster, ok, error, report_dir, plan
    without the evictions), ``plan_text`` the plan JSON (None when the dry run failed). Returns the references."""
    cluster = _check_name(entry.get("cluster"), "cluster")
    plan = json.loads(plan_text) if plan_text else None
    uid = ((plan or {}).get("cluster_identity") or {}).get("uid") or cluster_uid or UNKNOWN_UID
    record = ClusterRecord(cluster, str(uid), _check_name(slice_id, "slice"))
    refs = {"summary": store.locate(record.key(run_id, SUMMARY)), "plan": None}
    if plan_text:
        store.put(record.key(run_id, PLAN), plan_text)
        refs["plan"] = store.locate(record.key(run_id, PLAN))
    summary_entry = dict(entry)
    if isinstance(summary_entry.get("plan"), dict):  # the summary stays small: the evictions are in the plan object
        summary_entry["plan"] = {key: value for key, value in summary_entry["plan"].items() if key != "evictions"}
    seal = _published_seal(plan)
    store.put(record.key(run_id, SUMMARY), _dump({
        "format_version": FORMAT_VERSION, "run_id": run_id, "cluster": cluster, "cluster_uid": record.uid,
        "slice": record.slice, "written_at": datetime.now(UTC).isoformat(), "plan_ref": refs["plan"],
        "plan_seal": seal, "entry": summary_entry}))
    return {"run_id": run_id, "cluster": cluster, "cluster_uid": record.uid, "slice": record.slice, **refs,
            "plan_seal": seal}


def _published_seal(plan: Optional[dict]) -> Optional[dict]:
    """The plan's seal without its per-eviction digests (its digest still covers them): what the summary keeps of
    the plan that was reviewed."""
    seal = (plan or {}).get("seal")
    return {key: value for key, value in seal.items() if key != "entries"} if isinstance(seal, dict) else None


# --- reading a run ----------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """What the store holds of a run: each record's objects by name, and the clusters planned twice."""

    run_id: str
    objects: dict[ClusterRecord, set[str]]

    @property
    def records(self) -> list[ClusterRecord]:
        return sorted(record for record, names in self.objects.items() if SUMMARY in names)

    def planned_twice(self) -> list[dict]:
        """Each cluster (by UID, or by inventory name) found in more than one record of the run."""
        groups: dict[tuple[str, str], list[ClusterRecord]] = defaultdict(list)
        for record in self.records:
            groups[("name", record.cluster)].append(record)
            if record.uid != UNKNOWN_UID:
                groups[("uid", record.uid)].append(record)
        found, seen = [], set()
        for (kind, value), records in sorted(groups.items()):
            if len(records) > 1 and tuple(records) not in seen:
                seen.add(tuple(records))
                found.append({"by": kind, "value": value,
                              "records": [{"cluster": r.cluster, "cluster_uid": r.uid, "slice": r.slice}
                                          for r in records]})
        return found

    def duplicated(self) -> dict[ClusterRecord, str]:
        """Each record planned twice, with the sentence saying with which others."""
        reasons: dict[ClusterRecord, str] = {}
        for group in self.planned_twice():
            records = [ClusterRecord(r["cluster"], r["cluster_uid"], r["slice"]) for r in group["records"]]
            for record in records:
                others = ", ".join(f"{o.cluster} (slice {o.slice}, kube-system UID {o.uid})"
                                   for o in records if o != record)
                reasons[record] = (f"planned twice in run {self.run_id}: this cluster (slice {record.slice}, "
                                   f"kube-system UID {record.uid}) was also planned as {others}; its plans are not "
                                   "executed. Give each cluster one inventory host and each run its own run id")
        return reasons


def read_run(store: ObjectStore, run_id: str) -> Run:
    objects: dict[ClusterRecord, set[str]] = defaultdict(set)
    for key in store.keys(run_prefix(run_id) + "/"):
        found = _record_of(key, run_id)
        if found:
            objects[found[0]].add(found[1])
    return Run(run_id, dict(objects))


def fleet_entries(store: ObjectStore, run: Run) -> tuple[list[dict], list[dict]]:
    """The fleet report's entries of every cluster of the run (those planned twice as failed, naming the others),
    ordered by cluster name, and each cluster's evict result when the evict step stored one."""
    duplicated = run.duplicated()
    entries, evict_results = [], []
    for record in run.records:
        text = store.get(record.key(run.run_id, SUMMARY))
        vanished = {"cluster": record.cluster, "ok": False, "error": "its summary object vanished from the store"}
        entry = dict(json.loads(text)["entry"]) if text else vanished
        if record in duplicated:
            entry.update(ok=False, error=duplicated[record], plan=None)
        entries.append(entry)
        if EVICT_RESULT in run.objects[record]:
            result = store.get(record.key(run.run_id, EVICT_RESULT))
            if result:
                evict_results.append(json.loads(result))
    return entries, evict_results


# --- the evict step ---------------------------------------------------------------------------------------------------


def run_ids(store: ObjectStore) -> list[str]:
    """The runs the store holds (each has at least one object under runs/<run id>/)."""
    return sorted({key.split("/")[1] for key in store.keys("runs/") if key.count("/") > 1})


def existing_run(store: ObjectStore, run_id: str) -> Run:
    """The run, refused when the store holds nothing of it: a misspelt run id must not read as an empty run."""
    run = read_run(store, run_id)
    if not run.records:
        raise StoreError(f"run_id: {run_id!r} is no run in the run store ({store.locate('runs')}: "
                         f"{closest_name(run_id, run_ids(store))}); give the run id the dry run used "
                         "(descheduler_fleet_run_id), or run the dry run with this one first", field="run_id",
                         value=run_id)
    return run


def _only_record(store: ObjectStore, run_id: str, cluster: str) -> tuple[Run, ClusterRecord]:
    run = existing_run(store, run_id)
    mine = [record for record in run.records if record.cluster == cluster]
    if not mine:
        raise StoreError(f"cluster: {cluster!r} has no plan in run {run_id} ({store.locate(run_prefix(run_id))}: "
                         f"{closest_name(cluster, {record.cluster for record in run.records})}); give the inventory "
                         "host name the dry run planned it under, or run the dry run of this cluster with the same "
                         "run_store and run_id first", field="cluster", value=cluster)
    duplicated = run.duplicated()
    for record in mine:
        if record in duplicated:
            raise StoreError(f"{cluster}: {duplicated[record]}", field="run_id", value=run_id,
                             details={"planned_twice": run.planned_twice()})
    return run, mine[0]


def load_plan(store: ObjectStore, run_id: str, cluster: str, expected_uid: Optional[str] = None) -> dict:
    """The plan of ``cluster`` in the run, refused when it was planned twice, failed, or is of another cluster."""
    _run, record = _only_record(store, run_id, _check_name(cluster, "cluster"))
    summary = json.loads(store.get(record.key(run_id, SUMMARY)) or "{}")
    entry = summary.get("entry") or {}
    if not entry.get("ok"):
        raise StoreError(f"{cluster}: its dry run in run {run_id} failed ({entry.get('error') or 'no error given'}); "
                         "there is no plan to execute", field="run_id", value=run_id)
    if expected_uid and record.uid != expected_uid:
        raise StoreError(f"{cluster}: the plan of run {run_id} is of the cluster with kube-system UID {record.uid}, "
                         f"not {expected_uid} (descheduler_fleet_cluster_uid); plan this cluster again",
                         field="expected_cluster_uid", value=expected_uid)
    text = store.get(record.key(run_id, PLAN))
    if not text:
        raise StoreError(f"{cluster}: run {run_id} has its summary but not its plan "
                         f"({store.locate(record.key(run_id, PLAN))}); run the dry run again", field="run_id",
                         value=run_id)
    plan = json.loads(text)
    reviewed, found = (summary.get("plan_seal") or {}).get("digest"), (_published_seal(plan) or {}).get("digest")
    if reviewed and found != reviewed:
        where = store.locate(record.key(run_id, PLAN))
        raise StoreError(f"{cluster}: the plan object {where} is sealed {found or 'not at all'}, but the summary the "
                         f"dry run of run {run_id} stored beside it names the plan sealed {reviewed}: the plan was "
                         "replaced after the dry run; run the dry run again and review its plan", field="run_id",
                         value=run_id)
    return {"plan": plan, "ref": store.locate(record.key(run_id, PLAN)), "cluster_uid": record.uid,
            "slice": record.slice}


def save_evict_result(store: ObjectStore, run_id: str, cluster: str, result: dict) -> str:
    """Store the evict step's result of ``cluster`` beside its plan; returns its reference."""
    _run, record = _only_record(store, run_id, _check_name(cluster, "cluster"))
    key = record.key(run_id, EVICT_RESULT)
    store.put(key, _dump({"format_version": FORMAT_VERSION, "run_id": run_id, "cluster": cluster,
                          "cluster_uid": record.uid, "written_at": datetime.now(UTC).isoformat(),
                          "result": result}))
    return store.locate(key)
