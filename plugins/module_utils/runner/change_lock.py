"""One module call that changes a cluster (kubedescheduler, operator, secondary_scheduler), run holding the change
Lease (cluster/change_lease.py): taken before its first write, renewed while it runs, given back at the end. The
rollout module takes the Lease itself, per cluster, and calls the runners below without this.

Before the call, an unfinished change an earlier rollout left on the same thing (its record, rollout/record.py) is
resolved as a rollout resolves it (``on_interrupted``, rollout/transaction.py): ``fail`` shows the record and writes
nothing; ``rollback`` puts the recorded last good configuration back through the rollout's own ``Change``;
``resume`` keeps what runs, recorded as ``verified`` (the call has no soak of its own: its result is what the user
accepted). The call's own change is not journaled, as before: the record is the rollouts' journal."""

from __future__ import annotations

import uuid
from typing import Any, Callable, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.change_lease import (
    change_holder,
    take_change_lease,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import LeaseBusy
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.cancel import controller_command
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.runlock import this_holder
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.record import VERIFIED, record_value
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.transaction import (
    earlier_record,
    how_to_resolve,
    journal,
    recorded_last_good,
    roll_back_earlier,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import change_of_module, module_change

DEFAULT_RESTORE_TIMEOUT = 600.0


def run_holding_change_lease(kind: str, run: Callable[..., dict], params: Mapping[str, Any], check_mode: bool,
                             *args: Any) -> dict:
    """``run(params, check_mode, *args)`` while this call holds the cluster's change Lease (check mode: while no
    one else does), once an unfinished earlier change of ``kind`` is resolved; the Lease is in the result as
    ``change_lease``, the resolution as ``resolved``."""
    holder = this_holder(controller_command()).as_dict()
    change_id = uuid.uuid4().hex[:12]
    api_client = connect_to_intended_cluster(params)[0]
    try:
        if check_mode:
            busy = change_holder(api_client, holder, change_id)
            if busy is not None:
                raise LeaseBusy(f"check mode: {busy}; a real run would fail here (or wait, with lock_timeout)")
            resolved = resolve_earlier_change(api_client, kind, params, check_mode, change_id)
            return {**run(params, check_mode, *args), **resolved}
        lease = take_change_lease(api_client, holder, change_id, float(params.get("lock_timeout") or 0))
        lease.start_renewing(lambda reason: None)  # a lost Lease is in the result (``lost``)
        try:
            resolved = resolve_earlier_change(api_client, kind, params, check_mode, change_id)
            result = run(params, check_mode, *args)
        finally:
            lease.release()
        return {**result, **resolved, "change_lease": lease.as_dict()}
    finally:
        api_client.close()


def resolve_earlier_change(api_client: Any, kind: str, params: Mapping[str, Any], check_mode: bool,
                           change_id: str) -> dict:
    """``{"resolved": what was done}`` with an unfinished change of an earlier rollout, ``{}`` without one."""
    change = change_of_module(kind, params)
    record = earlier_record(api_client, change.namespace, change.record_key)
    if record is None:
        return {}
    how = how_to_resolve(record, params.get("on_interrupted") or "fail", change.namespace)
    resolved = (f"{how}: the record {change.namespace}/{change.record_key} showed {record.get('state')} (run "
                f"{record.get('run_id')!r}, {record.get('at')})")
    if check_mode:
        return {"resolved": f"would {resolved}"}
    last_good = recorded_last_good(record)

    def write(state: str, *config_given: Any) -> None:
        config = config_given[0] if config_given else last_good  # the recorded last good unless told
        journal(api_client, change.namespace, change.record_key, config, state, run_id=f"{kind}-{change_id}",
                change_id=change_id)

    if how == "rollback":
        # as that change: its id (the run id) is on what it created, which its rollback may remove
        change, target = module_change(kind, {**params, "run_id": record.get("run_id")}, record.get("intended"))
        timeout = float(params.get("wait_timeout") or DEFAULT_RESTORE_TIMEOUT)
        roll_back_earlier(change, target, last_good, timeout, write)
    else:
        change, target = module_change(kind, params, None)
        write(VERIFIED, record_value(change.current(api_client, target)))
    return {"resolved": resolved}
