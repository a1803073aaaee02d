"""The run_store module's flow: check the store options and the run id (before any read or write), then save a
cluster's dry-run result, load its plan for the evict step, or save its evict result."""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.store import runs
from ansible_collections.descheduler.fleet.plugins.module_utils.store.backends import ObjectStore, open_store
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import (
    StoreError,
    check_run_id,
    store_settings,
)


def _required(params: Mapping[str, Any], name: str, operation: str) -> Any:
    if params.get(name) in (None, "", {}):
        raise StoreError(f"{name}: operation {operation} needs it", field=name, value=params.get(name))
    return params[name]


def _read_plan_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise StoreError(f"plan_file: cannot read {path}: {exc.strerror or exc}; give the plan.json the plan "
                         "module wrote (report_dir/plan.json)", field="plan_file", value=path) from exc


def _planned_twice_so_far(store: ObjectStore, run_id: str, refs: dict) -> list[str]:
    """Warn when another slice already stored this cluster in the run (slices running at the same time may both
    miss it: the fleet report and the evict step check again)."""
    record = runs.ClusterRecord(refs["cluster"], refs["cluster_uid"], refs["slice"])
    reason = runs.read_run(store, run_id).duplicated().get(record)
    return [f"{refs['cluster']}: {reason}"] if reason else []


def run_run_store(params: Mapping[str, Any]) -> dict:
    operation = params["operation"]
    run_id = check_run_id(params.get("run_id"))
    cluster = _required(params, "cluster", operation)
    store = open_store(store_settings(_required(params, "run_store", operation)))
    if operation == "check":
        store.check()
        return {"changed": False, "ref": {"run": store.locate(runs.run_prefix(run_id))}}
    if operation == "save_plan":
        result = _required(params, "result", operation)
        entry = {**result, "cluster": cluster}
        plan_file = params.get("plan_file")
        plan_text = _read_plan_file(plan_file) if entry.get("ok") and plan_file else None
        if entry.get("ok") and plan_text is None:
            raise StoreError("plan_file: a cluster whose dry run succeeded needs its plan file", field="plan_file",
                             value=plan_file)
        refs = runs.save_plan(store, run_id, entry, slice_id=_required(params, "slice", operation),
                              plan_text=plan_text, cluster_uid=params.get("expected_cluster_uid"))
        return {"changed": True, "ref": refs, "warnings": _planned_twice_so_far(store, run_id, refs)}
    if operation == "load_plan":
        loaded = runs.load_plan(store, run_id, cluster, params.get("expected_cluster_uid"))
        plan = loaded["plan"]
        return {"changed": False, "ref": {"plan": loaded["ref"], "cluster_uid": loaded["cluster_uid"],
                                          "slice": loaded["slice"]},
                "plan": {"now": plan.get("now"), "cluster_identity": plan.get("cluster_identity"),
                         "evictions": plan.get("evictions") or [], "seal": plan.get("seal")}}
    reference = runs.save_evict_result(store, run_id, cluster, dict(_required(params, "result", operation)))
    return {"changed": True, "ref": {"evict_result": reference}}
