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
  on_interrupted:
    description:
      - "What to do first when the record a rollout keeps on this cluster (ConfigMap C(descheduler-fleet-last-good),
        the key of what this module changes) shows a change that did not finish (a state other than C(verified) or
        C(rolled-back): cancelled, killed, or its rollback left unfinished), as M(descheduler.fleet.rollout) does.
        Resolved while holding the change Lease, before this module's own change."
      - C(fail) fails with the record shown, nothing written. C(rollback) puts the recorded last good configuration
        back first (as the rollout's rollback does, records C(rolled-back)), then makes this change. C(resume) keeps
        what runs, recorded as C(verified), then makes this change.
      - Check mode writes nothing and says in C(resolved) what a real run would do.
    type: str
    choices: [fail, rollback, resume]
    default: fail
"""
