"""The fleet_report module's flow for a run kept in the run store: every slice's clusters read back from the store,
those planned twice shown failed (naming the others), then the one fleet summary as for an unsliced run."""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import (
    summarize_fleet,
    write_fleet_summary,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.store import runs
from ansible_collections.descheduler.fleet.plugins.module_utils.store.backends import open_store
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import check_run_id, store_settings


def fleet_summary_of_run(params: Mapping[str, Any]) -> dict:
    run_id = check_run_id(params.get("run_id"))
    store = open_store(store_settings(params.get("run_store")))
    run = runs.existing_run(store, run_id)  # before any file is written
    clusters, evict_results = runs.fleet_entries(store, run)
    planned_twice = run.planned_twice()
    out_dir = params["report_dir"]
    files = write_fleet_summary(clusters, out_dir, template_dir=params.get("report_template_dir"))
    result = {"changed": False, "files": files, "fleet": summarize_fleet(clusters, out_dir=out_dir),
              "run": {"run_id": run_id, "store": store.locate(runs.run_prefix(run_id)), "clusters": len(clusters),
                      "planned_twice": planned_twice, "evict_results": evict_results}}
    if planned_twice:
        names = sorted({record["cluster"] for group in planned_twice for record in group["records"]})
        result.update(failed=True, msg=f"run {run_id}: cluster(s) planned twice: {', '.join(names)} (two inventory "
                                       "hosts or job slices reached the same cluster, or two jobs used one run id); "
                                       "the fleet summary shows them failed and the evict step refuses them")
    return result
