"""The change's journal, kept in the cluster itself: a ConfigMap the collection owns.

``descheduler-fleet-last-good`` in the namespace of the thing changed (labelled
``app.kubernetes.io/managed-by=descheduler.fleet``) holds one key per kind of configuration (``kubedescheduler.json``
...). Each key is ``{"present", "spec"}``, the last good configuration (what a rollback puts back), with the step the
change on that key reached, written before the step is taken (``state``): ``intended`` (about to apply ``intended``),
``applied``, ``soaking``, ``rolling-back``, then ``verified`` (a passed soak: ``spec`` is now the new configuration),
``rolled-back`` (``spec`` runs again), ``interrupted`` (cancelled and not rolled back within the grace period) or
``unsoaked`` (changed in a group that halted before its soak passed: ``spec`` is still the configuration before).
The run id and the change's own id (one per rollout call) are kept with it; the ConfigMap's annotations repeat the
last step for a person reading it. The next change reads the record before anything else: a state that is neither
``verified`` nor ``rolled-back`` is an unfinished change, resolved first (``on_interrupted``), and the configuration
it left is never taken as the last good one. A rollback never deletes the record.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    get_raw,
    post_raw,
    request_raw,
    resource_path,
)

RECORD_NAME = "descheduler-fleet-last-good"
MANAGED_BY = {"app.kubernetes.io/managed-by": "descheduler.fleet"}
RUN_ANNOTATION = "descheduler.fleet/run-id"
STATE_ANNOTATION = "descheduler.fleet/state"
RECORDED_ANNOTATION = "descheduler.fleet/recorded-at"
BEFORE_CHANGE = "before-change"  # written by releases before the journal: an unfinished change
INTENDED, APPLIED, SOAKING, VERIFIED = "intended", "applied", "soaking", "verified"
ROLLING_BACK, ROLLED_BACK_STATE, INTERRUPTED = "rolling-back", "rolled-back", "interrupted"
SETTLED = (VERIFIED, ROLLED_BACK_STATE)  # any other state is a change that did not finish
UNSOAKED = "unsoaked"  # changed, but its group halted before the soak passed: the data is still the one before
CONFLICT_RETRIES = 3


def record_path(namespace: str) -> str:
    return resource_path("v1", "configmaps", namespace, RECORD_NAME)


def record_value(config: Optional[dict]) -> dict[str, Any]:
    """What is stored: ``present`` false when there was nothing (a rollback then removes what the rollout made)."""
    return {"present": config is not None, "spec": config}


def _configmap(namespace: str, key: str, entry: dict, run_id: str, state: str, existing: Optional[dict]) -> dict:
    new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": RECORD_NAME, "namespace": namespace}}
    body = existing or new
    metadata = body["metadata"]
    metadata["labels"] = {**(metadata.get("labels") or {}), **MANAGED_BY}
    metadata["annotations"] = {**(metadata.get("annotations") or {}), RUN_ANNOTATION: run_id, STATE_ANNOTATION: state,
                               RECORDED_ANNOTATION: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    body["data"] = {**(body.get("data") or {}), key: json.dumps(entry, sort_keys=True)}
    return body


def write_record(api_client: Any, namespace: str, key: str, config: Optional[dict], *, run_id: str,
                 state: str, change_id: Optional[str] = None, intended: Optional[dict] = None) -> dict:
    """Create or update the record's ``key`` (other keys kept): ``config`` is the last good configuration, ``state``
    the step about to be taken; a conflicting writer makes it re-read and retry."""
    path = record_path(namespace)
    entry = {**record_value(config), "state": state, "run_id": run_id, "change_id": change_id,
             "intended": intended, "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    for attempt in range(CONFLICT_RETRIES):
        existing = get_raw(api_client, path, kind="ConfigMap")
        body = _configmap(namespace, key, entry, run_id, state, existing)
        try:
            if existing is None:
                return post_raw(api_client, resource_path("v1", "configmaps", namespace), body, kind="ConfigMap")
            return request_raw(api_client, "PUT", path, body=body, kind="ConfigMap")
        except ClusterApiError as error:
            if error.status not in (409,) or attempt == CONFLICT_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def read_record(api_client: Any, namespace: str, key: str) -> Optional[dict[str, Any]]:
    """The stored ``{"present", "spec"}`` with its ``state``, ``run_id``, ``change_id``, ``intended`` and ``at``, or
    None when nothing was recorded (a record of an older release has its state in the annotations only)."""
    configmap = get_raw(api_client, record_path(namespace), kind="ConfigMap")
    text = ((configmap or {}).get("data") or {}).get(key)
    if not text:
        return None
    annotations = (configmap.get("metadata") or {}).get("annotations") or {}
    entry = json.loads(text)
    return {"run_id": annotations.get(RUN_ANNOTATION), **entry,
            "state": entry.get("state") or annotations.get(STATE_ANNOTATION)}


def unfinished(record: Optional[dict]) -> bool:
    """A change that did not reach a settled state: its configuration is not a good one to go back to."""
    return record is not None and record.get("state") not in SETTLED
