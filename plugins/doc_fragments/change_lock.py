"""Documentation of the change Lease option (module_utils/cluster/args.py CHANGE_LOCK_ARG_SPEC), for the modules
that change a cluster's descheduler. Use it with ``extends_documentation_fragment: [descheduler.fleet.change_lock]``."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  lock_timeout:
    description:
      - "One change at a time per cluster: before its first write the module takes the change Lease
        C(kube-system/descheduler-fleet-change) (which M(descheduler.fleet.rollout) holds on a cluster from before
        its change until its soak and any rollback are over), renews it while it runs and gives it back at the end.
        It also refuses while an evict run holds C(kube-system/descheduler-fleet-evict). See docs/rolling-out.md,
        \"One change at a time\"."
      - How many seconds to wait for another holder; 0 fails at once, naming the holder and since when, with nothing
        written. Check mode takes no Lease but fails the same way when it is held.
    type: float
    default: 0
"""
