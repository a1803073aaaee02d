"""One change at a time per cluster: the change Lease ``kube-system/descheduler-fleet-change`` (cluster/lease.py's
rules: taken, renewed while held, released at the end, free at once when its holder's process is gone).

Every change the collection makes to a cluster (a rollout of any kind, the ``kubedescheduler``, ``operator`` and
``secondary_scheduler`` modules) holds it from before its first write until its soak and any rollback are over. A
change and an evict run see each other through two Leases: each takes its own first, then looks at the other's, and
gives its own back and fails when the other is held. Whichever order they come in, at least one of two that start
together sees the other (the API server orders the writes), so they never act at once; both may refuse, never both
go on. The evict run's Lease is looked at where the evict role's example puts it:
``kube-system/descheduler-fleet-evict``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import (
    DEFAULT_NAME,
    WAIT_SLICE,
    ClusterLease,
    LeaseBusy,
    LeaseSettings,
    identity_of,
)

NAMESPACE = "kube-system"
CHANGE_LEASE = LeaseSettings(NAMESPACE, "descheduler-fleet-change", holder_kind="change",
                             rule="only one change at a time may be made to a cluster (docs/rolling-out.md, "
                                  "\"One change at a time\")")
EVICT_LEASE = LeaseSettings(NAMESPACE, DEFAULT_NAME)


def change_lease(api_client: Any, holder: dict, run_id: str) -> ClusterLease:
    return ClusterLease(api_client, CHANGE_LEASE, identity_of(holder, run_id), holder)


def change_holder(api_client: Any, holder: dict, run_id: str) -> Optional[str]:
    """Check mode: who holds the change Lease or the evict run's Lease now (nothing is written)."""
    busy = change_lease(api_client, holder, run_id).holder_now()
    if busy is not None:
        return f"the change Lease {NAMESPACE}/{CHANGE_LEASE.name} is held by another change ({busy})"
    evict = ClusterLease(api_client, EVICT_LEASE, identity_of(holder, run_id), holder).holder_now()
    return None if evict is None else f"an evict run holds the Lease {NAMESPACE}/{EVICT_LEASE.name} ({evict})"


def take_change_lease(api_client: Any, holder: dict, run_id: str, timeout: float,
                      cancelled: Callable[[], bool] = lambda: False,
                      clock: Callable[[], float] = time.monotonic) -> ClusterLease:
    """The change Lease, taken (waiting up to ``timeout`` seconds for another change and for an evict run); a
    LeaseBusy names the holder and since when."""
    started = clock()
    lease = change_lease(api_client, holder, run_id).acquire(timeout, cancelled)
    try:
        _wait_for_no_evict_run(ClusterLease(api_client, EVICT_LEASE, lease.identity, holder),
                               timeout - (clock() - started), cancelled, clock)
    except BaseException:
        lease.release()
        raise
    return lease


def refuse_during_a_change(api_client: Any, identity: str, holder: dict) -> None:
    """For an evict run holding its own Lease: fail when a change holds the change Lease (read only)."""
    try:
        busy = ClusterLease(api_client, CHANGE_LEASE, identity, holder).holder_now()
    except ClusterApiError as error:
        if error.status == 403:
            return  # a user who may not read Leases there cannot see a change: docs/evict.md says what to grant
        raise
    if busy is not None:
        raise LeaseBusy(f"Lease {NAMESPACE}/{CHANGE_LEASE.name} is held by a change ({busy}): an evict run does not "
                        "start while the descheduler's configuration is being changed, soaked or rolled back on this "
                        "cluster (its gates would count these evictions). Run it once the change is over")


def _wait_for_no_evict_run(evict: ClusterLease, timeout: float, cancelled: Callable[[], bool],
                           clock: Callable[[], float]) -> None:
    started = clock()
    while (busy := evict.holder_now()) is not None:
        waited = clock() - started
        if waited >= timeout or cancelled():
            raise LeaseBusy(f"Lease {NAMESPACE}/{EVICT_LEASE.name} is held by an evict run ({busy}): a change does "
                            "not start while an evict run acts on this cluster. Wait for it to end, cancel it, or set "
                            "lock_timeout to wait for it")
        time.sleep(min(WAIT_SLICE, timeout - waited))
