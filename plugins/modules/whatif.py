#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: whatif
short_description: Plan several candidate descheduler policies on one read of a cluster and compare them
version_added: 0.2.0
description:
  - Reads the cluster once (live, or a snapshot file) and plans each candidate - a DeschedulerPolicy or a
    C(KubeDescheduler) spec - on that read, at one time, as M(descheduler.fleet.plan) would plan it alone. Each
    candidate's figures are those of a separate plan run with the same input, time, O(samples), O(seed) and
    O(placement).
  - Returns, per candidate, the evictions (by plugin, namespace and workload), the workloads touched, the most pods
    one workload loses, the VMs that would live-migrate, the pods a PodDisruptionBudget spares, certain and possible
    evictions (with O(samples)), the utilization spread before, after the evictions and after placement (with
    O(placement)), and the replacements with nowhere to go.
  - Names the candidate that best meets O(objective).
  - With O(report_dir), writes C(whatif.json), C(whatif.md) and C(whatif.html) (the candidates side by side) there,
    and each candidate's plan report under C(<report_dir>/<candidate name>/).
  - Never changes the cluster.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.prometheus
  - descheduler.fleet.cluster_identity
  - descheduler.fleet.field_validation
  - descheduler.fleet.listing
  - descheduler.fleet.report
attributes:
  check_mode:
    support: full
    details: Returns the same comparison; it only reads the cluster. Report files, when asked for, are written in
      check mode too.
  diff_mode:
    support: none
    details: Nothing is changed, so there is no diff.
options:
  candidates:
    description:
      - The policies to compare, in order. Each has a C(name) (unique) and exactly one of C(policy) (a
        C(descheduler/v1alpha2) DeschedulerPolicy) or C(kubedescheduler) (a C(KubeDescheduler) spec, or the whole
        object, translated as the operator renders it).
      - Required unless O(threshold_search) is given.
    type: list
    elements: dict
  threshold_search:
    description:
      - Also try a grid of C(LowNodeUtilization) or C(HighNodeUtilization) thresholds of a DeschedulerPolicy, each
        point a candidate named C(<plugin>-<low>[-<high>]) with its thresholds in C(thresholds), and return the
        Pareto front of (evictions, final spread of O(objective.resource)) among them as RV(pareto).
      - Every point is the base policy with the plugin's C(thresholds) (and C(targetThresholds)) set to the point's
        value for every resource of O(threshold_search.resources), so planning that policy reproduces it.
      - A point the operator can express also has its operator equivalent planned as a candidate of its own,
        named C(<point>-operator) - the complete C(KubeDescheduler) spec, whose profile brings more than the
        thresholds (C(LifecycleAndUtilization) also runs C(PodLifeTime) and C(RemovePodsHavingTooManyRestarts)).
    type: dict
    suboptions:
      policy:
        description: The DeschedulerPolicy whose plugin thresholds are searched (the plugin must be in a profile's
          C(pluginConfig); its other args are kept).
        type: dict
        required: true
      plugin:
        description: The plugin whose thresholds are searched.
        type: str
        choices: [LowNodeUtilization, HighNodeUtilization]
        default: LowNodeUtilization
      low:
        description: The C(thresholds) percentages to try (under these a node is underutilized).
        type: list
        elements: float
        required: true
      high:
        description: With C(LowNodeUtilization), the C(targetThresholds) percentages to try; only points with
          low < high are planned.
        type: list
        elements: float
      resources:
        description: The resources the thresholds apply to.
        type: list
        elements: str
        default: [cpu, memory, pods]
  objective:
    description:
      - How the best candidate is chosen. The final spread is the one after placement with O(placement), else
        after the evictions. Ties go to fewer evictions, then the lower spread, then the candidate listed first.
      - A candidate whose cycle the descheduler would skip or whose plugins report an error is never the best - for
        every type, C(jmespath) included (such candidates are left out of C(candidates) before the expression is
        evaluated); RV(excluded) lists them. C(lowest_spread) and C(fewest_evictions) rank fewer replacements with
        nowhere to go (C(unplaced)) before any spread or eviction count; an expression reads C(unplaced).
    type: dict
    suboptions:
      type:
        description:
          - C(lowest_spread) - the lowest final spread of O(objective.resource), among the candidates with at most
            O(objective.max_evictions) evictions (any number when unset).
          - C(fewest_evictions) - the fewest evictions among the candidates whose final spread of
            O(objective.resource) is at most O(objective.target_spread).
          - C(jmespath) - O(objective.expression) over C({candidates - [{name, evictions, spread, ...}]}) (the
            RV(candidates) entries) returns the name of the best candidate, or null for none. Every field it names
            must be one of the figures RV(candidates) documents (the keys of C(by_plugin), C(by_namespace) and
            C(by_owner) excepted), or the module fails before reading the cluster, naming the field and the
            closest figure.
        type: str
        choices: [lowest_spread, fewest_evictions, jmespath]
        default: lowest_spread
      resource:
        description: The resource whose spread counts.
        type: str
        choices: [cpu, memory]
        default: cpu
      max_evictions:
        description: With C(lowest_spread), the most evictions a candidate may plan.
        type: int
      target_spread:
        description: With C(fewest_evictions), the spread to reach (standard deviation of the nodes' requested percent).
        type: float
      expression:
        description: With C(jmespath), the expression, for example C(min_by(candidates, &evictions).name).
        type: str
  snapshot:
    description:
      - Path to a JSON or YAML file holding the cluster's objects instead of reading a live cluster (as in
        M(descheduler.fleet.plan)).
    type: path
  now:
    description:
      - The time the plans are computed for (RFC 3339); pod ages are computed against it. Defaults to the time
        the module starts, the same for every candidate.
    type: str
  prometheus_url:
    description: As M(descheduler.fleet.plan)'s O(descheduler.fleet.plan#module:prometheus_url).
    type: str
  prometheus_result:
    description: Recorded Prometheus answers, as M(descheduler.fleet.plan)'s.
    type: raw
  metrics_file:
    description: A file of C(NodeMetrics) and C(PodMetrics) objects for the snapshot, as in M(descheduler.fleet.plan).
    type: path
  samples:
    description:
      - How many descheduling cycles to simulate per candidate; with more than one, each candidate has C(certain),
        C(possible) and C(likely) evictions, decided as the plan module's
        O(descheduler.fleet.plan#module:samples) describes (35 or more make an eviction every cycle makes certain;
        40 advised).
    type: int
    default: 1
  seed:
    description: Seed of the sampled orders (with O(samples) > 1), the same for every candidate.
    type: int
  placement:
    description:
      - Preview where the replacements land (as M(descheduler.fleet.plan)'s), for the spread after placement.
      - Unset, it is on when O(objective) compares spreads (C(lowest_spread), C(fewest_evictions), or a C(jmespath)
        expression reading C(spread)) and off otherwise - without placement the spread is taken with the evicted
        pods simply gone, which rewards evicting more. Set to false for such an objective, the result says
        (RV(best_reason), RV(whatif_warnings)) that the spread ignores where the pods go.
    type: bool
  scheduler_config:
    description: The scheduler configuration of the placement preview, as M(descheduler.fleet.plan)'s.
    type: raw
requirements:
  - jmespath (for O(objective.type=jmespath))
"""

EXAMPLES = r"""
- name: Compare three candidates on one read of the cluster, 40 sampled cycles each, with placement
  descheduler.fleet.whatif:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
    samples: 40
    placement: true
    candidates:
      - name: lifecycle
        kubedescheduler: {deschedulingIntervalSeconds: 3600, profiles: [LifecycleAndUtilization]}
      - name: lifecycle-high
        kubedescheduler:
          deschedulingIntervalSeconds: 3600
          profiles: [LifecycleAndUtilization]
          profileCustomizations: {devLowNodeUtilizationThresholds: High}
      - name: affinity-and-lifecycle
        kubedescheduler: {deschedulingIntervalSeconds: 3600, profiles: [AffinityAndTaints, LifecycleAndUtilization]}
    objective:
      type: lowest_spread
      max_evictions: 50
    report_dir: reports/prod/whatif
  register: whatif

- name: Search LowNodeUtilization thresholds and show the Pareto front of evictions against spread
  descheduler.fleet.whatif:
    snapshot: snapshots/prod.yaml
    now: "2026-11-22T12:00:00Z"
    threshold_search:
      policy: "{{ lookup('file', 'policies/lnu.yaml') | from_yaml }}"
      low: [10, 20, 30, 40]
      high: [50, 60, 70]
  register: search

- name: Show the best candidate
  ansible.builtin.debug:
    msg: "{{ whatif.best_reason }}"
"""

RETURN = r"""
candidates:
  description:
    - One entry per candidate, in the order given - C(name), C(evictions), C(by_plugin), C(by_namespace),
      C(by_owner), C(workloads_touched), C(most_pods_one_workload_loses), C(vms_to_migrate), C(spared_by_pdb),
      C(certain), C(possible) and C(likely) (the counts of the plan module's
      RV(descheduler.fleet.plan#module:sampling); null without O(samples) > 1), C(spread) (C(before),
      C(after_evictions) and C(after_placement), each C({cpu, memory}) standard deviations of the nodes' requested
      percent; C(after_placement) null without O(placement)), C(unplaced) (null without O(placement)), C(cycle_skipped),
      C(plugin_errors) and C(warnings); a threshold point has C(thresholds), a point's operator equivalent
      C(operator_equivalent_of) (the point's name). These are the figures an objective's expression may name.
  returned: always
  type: list
  elements: dict
  sample:
    - name: lifecycle
      evictions: 12
      workloads_touched: 7
      most_pods_one_workload_loses: 3
      spread: {before: {cpu: 21.4, memory: 12.0}, after_evictions: {cpu: 15.2, memory: 9.1}, after_placement: null}
pareto:
  description:
    - With O(threshold_search), the points of the search no other point beats on both evictions and final spread,
      fewest evictions first - C(name), C(thresholds) (C(low), C(high), C(resources)), C(evictions),
      C(final_spread), C(kubedescheduler) (the complete C(KubeDescheduler) spec with which the operator renders
      the same thresholds - C(managementState) C(Managed), C(mode) C(Predictive), C(deschedulingIntervalSeconds)
      3600, C(profiles), C(profileCustomizations) - that M(descheduler.fleet.plan) and
      M(descheduler.fleet.kubedescheduler) take as is; null when the operator cannot) and C(operator_equivalent)
      (that spec planned as its own candidate - C(name), C(evictions), C(final_spread), C(by_plugin),
      C(cycle_skipped) and C(adds), the evictions by the plugins its profile adds to the point's policy; null when
      the operator cannot).
  returned: when O(threshold_search) is set
  type: list
  elements: dict
  sample:
    - {name: LowNodeUtilization-20-50, thresholds: {low: 20, high: 50, resources: [cpu, memory, pods]}, evictions: 4,
       final_spread: 12.5, kubedescheduler: {managementState: Managed, mode: Predictive,
       deschedulingIntervalSeconds: 3600, profiles: [LifecycleAndUtilization],
       profileCustomizations: {devLowNodeUtilizationThresholds: Medium}},
       operator_equivalent: {name: LowNodeUtilization-20-50-operator, evictions: 19, final_spread: 13.1,
       by_plugin: {LowNodeUtilization: 4, PodLifeTime: 15}, adds: {PodLifeTime: 15}, cycle_skipped: false}}
best:
  description: The name of the candidate that best meets O(objective); null when none does.
  returned: always
  type: str
  sample: lifecycle
best_reason:
  description: Why that candidate (or why none), with the excluded candidates and, when O(placement) is false for
    an objective comparing spreads, that the spread ignores where the evicted pods go.
  returned: always
  type: str
  sample: "lowest cpu spread with at most 50 evictions: lifecycle (12 evictions, final cpu spread 15.2)"
excluded:
  description: The candidates no objective may choose, each with its C(name) and C(reasons) (its cycle is skipped,
    plugin errors).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: lifecycle, reasons: ["1 plugin error(s)"]}
placement:
  description: Whether the replacements' placement was previewed (O(placement), or decided by O(objective) when
    unset).
  returned: always
  type: bool
objective:
  description: The objective applied, with its defaults.
  returned: always
  type: dict
now:
  description: The time every candidate was planned for.
  returned: always
  type: str
source:
  description: Where the cluster was read from (C(type) C(snapshot) with its C(path), or C(cluster)).
  returned: always
  type: dict
cluster_identity:
  description: The cluster's C(kube-system) UID and server (null C(uid) for a snapshot without kube-system).
  returned: always
  type: dict
whatif_warnings:
  description: Warnings of the read and of the candidates' specs; each candidate's own are in its C(warnings).
  returned: always
  type: list
  elements: str
report_files:
  description: The files written, when O(report_dir) is set (C(plans) maps each candidate to its plan report).
  returned: when O(report_dir) is set
  type: dict
"""

from functools import partial

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan_args import WHATIF_ARG_GROUPS
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.whatif import run_whatif

ARGUMENT_SPEC = argument_spec(
    *WHATIF_ARG_GROUPS,
    candidates=dict(type="list", elements="dict"),
    threshold_search=dict(type="dict", options=dict(
        policy=dict(type="dict", required=True),
        plugin=dict(type="str", choices=["LowNodeUtilization", "HighNodeUtilization"], default="LowNodeUtilization"),
        low=dict(type="list", elements="float", required=True),
        high=dict(type="list", elements="float"),
        resources=dict(type="list", elements="str", default=["cpu", "memory", "pods"]),
    )),
    objective=dict(type="dict", options=dict(
        type=dict(type="str", choices=["lowest_spread", "fewest_evictions", "jmespath"], default="lowest_spread"),
        resource=dict(type="str", choices=["cpu", "memory"], default="cpu"),
        max_evictions=dict(type="int"),
        target_spread=dict(type="float"),
        expression=dict(type="str"),
    )),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, required_one_of=[("candidates", "threshold_search")],
                           supports_check_mode=True)
    # this process exits after the result: the snapshot is left to the operating system (runner/plan.py)
    result = run_and_report(module, partial(run_whatif, process_exits_after=True), module.params)
    finish(module, {**result, "changed": False}, warnings_key="whatif_warnings")


if __name__ == "__main__":
    main()
