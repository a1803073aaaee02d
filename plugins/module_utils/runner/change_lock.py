"""One module call that changes a cluster (kubedescheduler, operator, secondary_scheduler), run holding the change
Lease (cluster/change_lease.py): taken before its first write, renewed while it runs, given back at the end. The
rollout module takes the Lease itself, per cluster, and calls the runners below without this."""

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


def run_holding_change_lease(run: Callable[..., dict], params: Mapping[str, Any], check_mode: bool,
                             *args: Any) -> dict:
    """``run(params, check_mode, *args)`` while this call holds the cluster's change Lease (check mode: while no
    one else does); the Lease is in the result as ``change_lease``."""
    holder = this_holder(controller_command()).as_dict()
    change_id = uuid.uuid4().hex[:12]
    api_client = connect_to_intended_cluster(params)[0]
    try:
        if check_mode:
            busy = change_holder(api_client, holder, change_id)
            if busy is not None:
                raise LeaseBusy(f"check mode: {busy}; a real run would fail here (or wait, with lock_timeout)")
            return run(params, check_mode, *args)
        lease = take_change_lease(api_client, holder, change_id, float(params.get("lock_timeout") or 0))
        lease.start_renewing(lambda reason: None)  # a lost Lease is in the result (``lost``)
        try:
            result = run(params, check_mode, *args)
        finally:
            lease.release()
        return {**result, "change_lease": lease.as_dict()}
    finally:
        api_client.close()
