"""The last good configuration of a cluster, kept in the cluster itself: a ConfigMap the collection owns.

Before a cluster is changed, what it ran is written as ``descheduler-fleet-last-good`` in the namespace of the thing
changed (labelled ``app.kubernetes.io/managed-by=descheduler.fleet``), one key per kind of configuration
(``kubedescheduler.json``: ``{"present": bool, "spec": ...}``), with the run id and whether the configuration was
verified by a passed soak (``verified``), only recorded before a change (``before-change``), or changed in a group
that halted before its soak passed (``unsoaked``: the data is still the configuration from before the change). After
the group's soak passes, the new configuration becomes the last good one. A rollback does not read this ConfigMap: it
puts back what the controller kept in memory when it wrote it (the result's ``last_good``); the ConfigMap is there for
a person (or a later run) to see what the fleet ran, and is never deleted by a rollback.
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
BEFORE_CHANGE = "before-change"
VERIFIED = "verified"
UNSOAKED = "unsoaked"  # changed, but its group halted before the soak passed: the data is still the one before
CONFLICT_RETRIES = 3


def record_path(namespace: str) -> str:
    return resource_path("v1", "configmaps", namespace, RECORD_NAME)


def record_value(config: Optional[dict]) -> dict[str, Any]:
    """What is stored: ``present`` false when there was nothing (a rollback then removes what the rollout made)."""
    return {"present": config is not None, "spec": config}


def _configmap(namespace: str, key: str, config: Optional[dict], run_id: str, state: str,
               existing: Optional[dict]) -> dict:
    new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": RECORD_NAME, "namespace": namespace}}
    body = existing or new
    metadata = body["metadata"]
    metadata["labels"] = {**(metadata.get("labels") or {}), **MANAGED_BY}
    metadata["annotations"] = {**(metadata.get("annotations") or {}), RUN_ANNOTATION: run_id, STATE_ANNOTATION: state,
                               RECORDED_ANNOTATION: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    body["data"] = {**(body.get("data") or {}), key: json.dumps(record_value(config), sort_keys=True)}
    return body


def write_record(api_client: Any, namespace: str, key: str, config: Optional[dict], *, run_id: str,
                 state: str) -> dict:
    """Create or update the record's ``key`` (other keys kept); a conflicting writer makes it re-read and retry."""
    path = record_path(namespace)
    for attempt in range(CONFLICT_RETRIES):
        existing = get_raw(api_client, path, kind="ConfigMap")
        body = _configmap(namespace, key, config, run_id, state, existing)
        try:
            if existing is None:
                return post_raw(api_client, resource_path("v1", "configmaps", namespace), body, kind="ConfigMap")
            return request_raw(api_client, "PUT", path, body=body, kind="ConfigMap")
        except ClusterApiError as error:
            if error.status not in (409,) or attempt == CONFLICT_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def read_record(api_client: Any, namespace: str, key: str) -> Optional[dict[str, Any]]:
    """The stored ``{"present", "spec"}`` with the run and state, or None when nothing was recorded."""
    configmap = get_raw(api_client, record_path(namespace), kind="ConfigMap")
    text = ((configmap or {}).get("data") or {}).get(key)
    if not text:
        return None
    annotations = (configmap.get("metadata") or {}).get("annotations") or {}
    return {**json.loads(text), "run_id": annotations.get(RUN_ANNOTATION), "state": annotations.get(STATE_ANNOTATION)}
