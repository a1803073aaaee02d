"""A rollout's change of one cluster as a transaction: the change Lease held from before the first write until the
soak and any rollback are over (cluster/change_lease.py), each step written to the record before it is taken
(record.py), and an unfinished change of an earlier run resolved before anything else (``on_interrupted``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.change_lease import (
    change_holder,
    take_change_lease,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import ClusterLease
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.record import (
    RECORD_NAME,
    ROLLED_BACK_STATE,
    ROLLING_BACK,
    UNSOAKED,
    read_record,
    unfinished,
    write_record,
)

Connect = Callable[[dict], Any]


class HeldLeases:
    """The change Lease of each cluster this rollout is changing, with the client that renews it."""

    def __init__(self, connect: Connect, holder: dict, change_id: str, on_lost: Callable[[str], None]) -> None:
        self.connect, self.holder, self.change_id, self.on_lost = connect, holder, change_id, on_lost
        self.held: dict[str, ClusterLease] = {}

    def take(self, name: str, params: dict, timeout: float, cancelled: Callable[[], bool]) -> None:
        api_client = self.connect(params)
        try:
            lease = take_change_lease(api_client, self.holder, self.change_id, timeout, cancelled)
        except BaseException:
            api_client.close()
            raise
        lease.start_renewing(self.on_lost)
        self.held[name] = lease

    def release(self, names: list[str]) -> None:
        for name in names:
            lease = self.held.pop(name, None)
            if lease is not None:
                lease.release()
                lease.api_client.close()

    def release_all(self) -> None:
        self.release(list(self.held))


def check_mode_holder(api_client: Any, holder: dict, change_id: str) -> None:
    """Check mode takes no Lease but tells what a real run would meet."""
    busy = change_holder(api_client, holder, change_id)
    if busy is not None:
        raise RolloutError(f"check mode: {busy}; a real run would fail here (or wait, with lock_timeout)",
                           "lock_timeout", 0)


def refuse_unfinished(record: dict, namespace: str) -> RolloutError:
    """on_interrupted: fail, with the record shown."""
    shown = json.dumps({key: record.get(key) for key in ("state", "run_id", "change_id", "at", "present", "spec",
                                                         "intended")}, sort_keys=True)
    return RolloutError(f"the record {namespace}/{RECORD_NAME} shows a change that did not finish ({shown}): the "
                        "cluster may run an unverified configuration. Set on_interrupted to rollback (put the recorded "
                        "last good configuration back first) or resume (keep what runs; a rollback goes to the "
                        "recorded last good configuration), or put it right by hand", "on_interrupted", "fail")


def how_to_resolve(record: dict, on_interrupted: str, namespace: str) -> str:
    """``rollback`` or ``resume`` for an unfinished change (``on_interrupted: fail`` raises, with the record shown)."""
    # unsoaked: a run that ended and said so left it on the change; it is soaked now (resumed), never failed on
    how = "resume" if record.get("state") == UNSOAKED and on_interrupted == "fail" else on_interrupted
    if how == "fail":
        raise refuse_unfinished(record, namespace)
    return how


def recorded_last_good(record: dict) -> dict:
    return {"present": bool(record.get("present")), "spec": record.get("spec")}


def roll_back_earlier(change: Any, target: Any, last_good: dict, timeout: float,
                      write: Callable[[str], None]) -> dict:
    """``on_interrupted: rollback``: the recorded last good configuration put back through ``change`` (a rollout's
    ``Change``), each step written to the record first (``write(state)``); the restore's result."""
    write(ROLLING_BACK)
    result = change.restore(target, last_good["spec"] if last_good["present"] else None, timeout)
    left = result.get("left_in_place") or []
    if left:  # not as that change left it: someone else's now; the record keeps saying rolling-back
        raise RolloutError("the unfinished change could not be rolled back: " + "; ".join(left), "on_interrupted",
                           "rollback")
    write(ROLLED_BACK_STATE)
    return result


def earlier_record(api_client: Any, namespace: str, key: str) -> Optional[dict]:
    """The record an earlier change left, when it did not finish; None when it did (or there is none)."""
    try:
        record = read_record(api_client, namespace, key)
    except ClusterApiError as error:
        if error.status == 404:
            return None
        raise
    return record if unfinished(record) else None


def journal(api_client: Any, namespace: str, key: str, last_good: dict, state: str, *, run_id: str,
            change_id: str, intended: Optional[dict] = None) -> None:
    """Write one step; a namespace that does not exist yet (nothing installed before) cannot hold it, and there is
    nothing before the change to keep: that fact is in the result."""
    config = last_good["spec"] if last_good["present"] else None
    try:
        write_record(api_client, namespace, key, config, run_id=run_id, state=state, change_id=change_id,
                     intended=intended)
    except ClusterApiError as error:
        if not (not last_good["present"] and error.status == 404):
            raise
