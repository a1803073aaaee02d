#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: predictive_gate
short_description: Compare what the descheduler logged in Predictive mode with a plan, before switching to Automatic
version_added: 0.2.0
description:
  - In C(Predictive) mode the descheduler logs each eviction it would perform and each cycle's total. This module
    checks that log against a plan of the same configuration - each logged eviction must be one the plan finds
    possible (planned, or seen in one of its sampled cycles with O(descheduler.fleet.plan#module:samples) > 1) and
    each compared cycle's total must lie in the plan's range of evictions per cycle - and returns the verdict with
    the differences, pod by pod.
  - The first O(skip_initial_cycles) cycles after the operand's container started are not judged, nor the
    evictions logged only in them. In C(Predictive) mode the descheduler copies its view of the cluster into a
    sandbox and starts its first cycle before every object has reached it; on a large cluster that cycle runs on part
    of the pods and logs far fewer evictions than the next ones. The start time comes with the log
    (M(descheduler.fleet.info) returns the container's C(container_started)); without it, cycles are counted from the
    log's first. A restart of the operand starts the count again.
  - The C(tune) role runs it before it switches a cluster from C(Predictive) to C(Automatic); use it in your own
    gates the same way.
  - Runs on the controller and reads nothing from a cluster (give it the results of M(descheduler.fleet.plan) and
    M(descheduler.fleet.info)).
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
attributes:
  check_mode:
    support: full
    details: The same verdict in check mode; nothing is changed.
  diff_mode:
    support: none
    details: Nothing is changed, so there is no diff.
options:
  plan:
    description:
      - The result of M(descheduler.fleet.plan) for the configuration the operator runs in C(Predictive) mode, on the
        same cluster. With O(descheduler.fleet.plan#module:samples) > 1 (40 or more advised - from 35 an eviction
        every cycle makes is certain), the possible evictions and the range of evictions per cycle come from the
        sampled cycles.
      - Every planned eviction is compared, so register the plan with
        O(descheduler.fleet.plan#module:return_evictions=all); a result that leaves evictions out is refused.
    type: dict
    required: true
  log:
    description:
      - The parsed log - the C(evictions) value M(descheduler.fleet.info) returns (its C(evictions) and C(cycles)).
    type: dict
    required: true
  cycles:
    description:
      - Compare the totals of the last this many completed cycles (all of them when unset), of those not left out by
        O(skip_initial_cycles).
    type: int
  skip_initial_cycles:
    description:
      - Leave out this many cycles after the operand's container started, and the evictions logged only in them.
      - The cycles are counted among those the log shows; when the log was cut at its head (the info module's
        C(log_lines)) a cycle may be left out that was not among the first, never judged one that was.
      - V(0) judges every cycle (a cluster small enough for the operand to copy it before its first cycle).
    type: int
    default: 1
  max_unexpected:
    description: How many logged evictions the plan does not find possible are tolerated.
    type: int
    default: 0
  count_tolerance:
    description: How far outside the plan's range of evictions per cycle a logged total may be.
    type: int
    default: 0
  fail_on_disagreement:
    description: Fail the task, with the reasons, when the log and the plan disagree (else return C(agrees=false)).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Read the operator's Predictive log
  descheduler.fleet.info:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
  register: current

- name: Plan the configuration it runs, 40 sampled cycles (enough to call an eviction certain)
  descheduler.fleet.plan:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
    kubedescheduler: "{{ current.kubedescheduler.spec }}"
    samples: 40
    return_evictions: all
  register: plan

- name: Refuse to go on unless the log agrees with the plan
  descheduler.fleet.predictive_gate:
    plan: "{{ plan }}"
    log: "{{ current.evictions }}"
    cycles: 3
    fail_on_disagreement: true
"""

RETURN = r"""
agrees:
  description: Whether the log agrees with the plan within the tolerances (and holds at least one completed cycle).
  returned: always
  type: bool
reasons:
  description: Why not, one sentence per reason (empty when it agrees).
  returned: always
  type: list
  elements: str
unexpected:
  description: Each logged eviction the plan does not find possible - C(pod), C(strategy), C(node), C(times_reported).
  returned: always
  type: list
  elements: dict
cycles:
  description:
    - Every completed cycle of the log - C(index), C(time) (the klog stamp of its end), C(logged) (its total),
      C(used) (whether it was compared), C(within) (whether its total lies in the plan's range; null when not
      compared) and C(why) (why it was compared or left out - among the first O(skip_initial_cycles) after the
      operand started, closed before its container started, or older than the last O(cycles)).
  returned: always
  type: list
  elements: dict
  sample:
    - index: 1
      time: "1202 09:00:41.201000"
      logged: 1842
      used: false
      within: null
      why: >-
        left out: the 1st cycle since the operand's container started (2026-12-02T09:00:12Z) (skip_initial_cycles 1);
        the descheduler may have started it before its dry-run copy of the cluster was complete
    - index: 2
      time: "1202 10:00:44.113000"
      logged: 5728
      used: true
      within: true
      why: "compared: the 2nd cycle since the operand's container started (2026-12-02T09:00:12Z)"
plan_range:
  description: The plan's evictions per cycle, C(min) and C(max).
  returned: always
  type: dict
certain_not_logged:
  description:
    - Pods the plan calls certain (their C(likelihood), see M(descheduler.fleet.plan)) that the log never showed (for
      review; not a reason). A plan of one cycle, or one whose evictions carry no C(certain), counts every planned
      eviction.
  returned: always
  type: list
  elements: str
logged_evictions:
  description: Distinct evictions in the log that were judged (logged in a cycle not left out as initial).
  returned: always
  type: int
left_out_evictions:
  description: Distinct evictions logged only in the cycles left out as initial, not judged.
  returned: always
  type: int
possible_evictions:
  description: Distinct pods the plan finds possible.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.promotion.gate import compare_predictive_log

ARGUMENT_SPEC = dict(
    plan=dict(type="dict", required=True),
    log=dict(type="dict", required=True),
    cycles=dict(type="int"),
    max_unexpected=dict(type="int", default=0),
    count_tolerance=dict(type="int", default=0),
    skip_initial_cycles=dict(type="int", default=1),
    fail_on_disagreement=dict(type="bool", default=False),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if params["cycles"] is not None and params["cycles"] < 1:
        module.fail_json(msg=f"cycles: {params['cycles']} is not a number of cycles; give 1 or more, or leave it unset")
    left_out = params["plan"].get("evictions_left_out") or 0
    if left_out:
        module.fail_json(msg=f"plan: the registered plan's result leaves {left_out} of its evictions out "
                             "(return_evictions), so the log cannot be compared with all of them; register the plan "
                             "with return_evictions: all", field="plan.evictions_left_out", value=left_out)
    if params["skip_initial_cycles"] < 0:
        module.fail_json(msg=f"skip_initial_cycles: {params['skip_initial_cycles']} is not a number of cycles; give 0 "
                             "(judge every cycle) or more")
    verdict = compare_predictive_log(params["plan"], params["log"], cycles=params["cycles"],
                                     max_unexpected=params["max_unexpected"],
                                     count_tolerance=params["count_tolerance"],
                                     skip_initial_cycles=params["skip_initial_cycles"])
    if not verdict["agrees"] and params["fail_on_disagreement"]:
        module.fail_json(msg="the Predictive log and the plan disagree: " + "; ".join(verdict["reasons"]), **verdict)
    module.exit_json(changed=False, **verdict)


if __name__ == "__main__":
    main()
