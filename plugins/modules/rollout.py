#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: rollout
short_description: Roll a descheduler change (spec, secondary scheduler, install) across clusters by decision groups
version_added: 0.2.0
description:
  - Runs once, on the controller, for a whole fleet (the C(tune) role calls it with C(run_once) when
    C(descheduler_fleet_rollout) is set). It changes the C(cluster) KubeDescheduler of each cluster of O(clusters)
    group after group, as M(descheduler.fleet.kubedescheduler) does for one (validated before any write; waits for
    the operator to roll the descheduler out).
  - "With O(kind=secondary_scheduler) (the C(secondary_scheduler) role calls it so) it changes the secondary
    scheduler of each cluster instead, as M(descheduler.fleet.secondary_scheduler) does for one
    (O(clusters[].secondary_scheduler)). The configuration recorded and restored is the KubeSchedulerConfiguration
    of the C(SecondaryScheduler) CR's ConfigMap with its scheduler image and log level (key
    C(secondary_scheduler.json) of the record, in C(openshift-secondary-scheduler-operator)). The operand gate is
    the C(secondary-scheduler) Deployment rolled out and no C(*Degraded) condition on the CR. A cluster with no
    SecondaryScheduler before gets the CR and the ConfigMap the rollout wrote removed on rollback, never the operator."
  - "With O(kind=operator) (the C(install) and C(uninstall) roles call it so) it installs, upgrades or removes the
    descheduler on each cluster instead, as M(descheduler.fleet.operator) does for one (O(clusters[].operator)).
    What is recorded (key C(operator.json) of the record, in C(kube-system)) is every object that module manages for
    the cluster's flavor as the cluster had it - olm, the KubeDescheduler CRD, the operator namespace, its
    OperatorGroups, the Subscription, the package's CSVs (by name) and the C(cluster) KubeDescheduler; upstream and
    volcano, the namespace, ServiceAccount, ClusterRole and binding, policy ConfigMap and Deployment (and CronJob).
    A rollback deletes what exists now and was not recorded (what the rollout created), puts each recorded object
    back (a missing Subscription through the module's install, so OLM installs the recorded CSV again) and waits for
    the operand gate. The operand gate is, for olm, the Subscription's CSV C(Succeeded), the operator Deployment
    rolled out, and the KubeDescheduler's operand when there is one; for upstream and volcano, the descheduler
    Deployment rolled out. OLM never downgrades: a rollback of an upgrade that leaves the new CSV installed fails,
    saying how to go back by hand."
  - "Decision groups: a cluster's group is its O(clusters[].group), else the first group of O(mandatory_groups) then
    O(groups) whose O(inventory_groups) entry holds it. Mandatory groups go first and tolerate no failure; then the
    other named groups in order; then inventory groups only O(clusters[].group) names (sorted); then the clusters of
    no group, O(clusters_per_group) at a time."
  - "Every group or host name must exist, or the module fails before any cluster is touched, naming the option, the
    name and the closest existing one: a name of O(mandatory_groups) or O(groups) must be a key of
    O(inventory_groups) or some O(clusters[].group); a O(clusters[].group) must be in O(mandatory_groups),
    O(groups) or O(inventory_groups); a host of a named group in O(inventory_groups) must be a O(clusters[].name)."
  - "In each group, at most O(max_concurrency) clusters change at once, each within O(progress_deadline). Before a
    cluster is changed, the spec it runs is recorded in the cluster (ConfigMap C(descheduler-fleet-last-good) in
    C(openshift-kube-descheduler-operator), key C(kubedescheduler.json)) and in the result (RV(clusters)). The record
    is the change's journal - each step is written before it is taken (C(intended), C(applied), C(soaking),
    C(rolling-back), then C(verified), C(rolled-back) or C(interrupted)) and read back at the start of the next
    change (O(on_interrupted))."
  - "A failed cluster is rolled back to that spec. When a group's failures exceed O(max_failures), or the fleet's
    exceed O(max_failures_total), the rollout halts: later groups are not touched, earlier ones are kept."
  - "Otherwise the changed clusters of the group soak for O(min_success_time) while O(gates) are polled every
    O(gate_interval): the operand available and not Degraded; no workload further below its PodDisruptionBudget or
    its desired ready replicas than before the change (beyond O(gates.workload_tolerance)); no eviction storm in the
    operand's log. A breach rolls the breaching cluster back and halts the rollout. A passed soak records the new
    spec as the last good one."
  - A rollback puts the recorded spec back (or removes the KubeDescheduler when there was none before, which only
    the rollout can have created), waits for the operator to roll it out and checks the operand again. It is
    idempotent and never deletes the record or anything the rollout did not create. See docs/rolling-out.md.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
requirements:
  - kubernetes >= 31.0.0 (Python library)
  - PyYAML
extends_documentation_fragment:
  - descheduler.fleet.attributes
attributes:
  check_mode:
    support: full
    details: Validates and compares on every cluster, group by group; writes nothing (no record), soaks nothing.
  diff_mode:
    support: full
    details: One before/after diff of the spec per changed cluster, its header naming the cluster.
options:
  kind:
    description:
      - What is rolled out - C(kubedescheduler), the C(cluster) KubeDescheduler's spec (O(clusters[].spec));
        C(secondary_scheduler), the secondary scheduler's configuration (O(clusters[].secondary_scheduler)); or
        C(operator), the descheduler installed, upgraded or removed (O(clusters[].operator)).
    type: str
    choices: [kubedescheduler, secondary_scheduler, operator]
    default: kubedescheduler
  clusters:
    description: The clusters of the fleet, in inventory order.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The cluster's name (its inventory host).
        type: str
        required: true
      group:
        description:
          - Its decision group (the host variable C(descheduler_fleet_rollout_group)); overrides O(inventory_groups).
          - Must be in O(mandatory_groups), O(groups) or O(inventory_groups) (a misspelt group is refused).
        type: str
      connection:
        description:
          - How to reach it, as the roles' C(descheduler_fleet_connection) (keys left out fall back to the
            C(K8S_AUTH_*) environment variables).
        type: dict
        suboptions:
          kubeconfig:
            description: Path to a kubeconfig file, or its content as a dict.
            type: raw
          context:
            description: The kubeconfig context.
            type: str
          host:
            description: The API server URL.
            type: str
          api_key:
            description: A bearer token.
            type: str
          validate_certs:
            description: Verify the API server's certificate.
            type: bool
          ca_cert:
            description: The CA bundle to verify it with.
            type: path
      expected_cluster_uid:
        description: The UID of its C(kube-system) namespace; nothing is read or changed on another cluster.
        type: str
      state:
        description: C(present) to create or update the KubeDescheduler with O(clusters[].spec), C(absent) to delete it.
        type: str
        choices: [present, absent]
        default: present
      spec:
        description:
          - The whole desired KubeDescheduler spec (as M(descheduler.fleet.kubedescheduler)'s C(spec)), with
            C(managementState) (normally C(Managed)) - without it the operator scales the descheduler to 0, so the
            spec is refused before any write.
        type: dict
      secondary_scheduler:
        description:
          - With O(kind=secondary_scheduler), the cluster's M(descheduler.fleet.secondary_scheduler) options (C(state),
            C(scheduler_image), C(scheduler_name), C(config_map_name), C(scheduler_config), C(trimaran),
            C(check_metric_provider), C(log_level), C(channel), C(source), C(source_namespace), C(starting_csv),
            C(install_plan_approval)), with that module's defaults. Its C(state) overrides O(clusters[].state).
          - Checked on every cluster (unknown options, the configuration) before any cluster is changed.
        type: dict
      operator:
        description:
          - With O(kind=operator), the cluster's M(descheduler.fleet.operator) options (C(state), C(flavor),
            C(remove_crd), C(upstream), C(volcano), C(volcano_scheduler_config), C(channel), C(source),
            C(source_namespace), C(starting_csv), C(install_plan_approval)), with that module's defaults. Its
            C(state) overrides O(clusters[].state).
          - Checked on every cluster (unknown options and values) before any cluster is changed.
        type: dict
      blocked:
        description:
          - Why the cluster may not take part (it failed its checks before the rollout). It counts as a failure of its
            group and is never touched.
        type: str
  groups:
    description:
      - Decision groups, in order, after the mandatory ones.
      - Each must be a key of O(inventory_groups) or some O(clusters[].group); an unknown name is refused, naming the
        closest.
    type: list
    elements: str
    default: []
  mandatory_groups:
    description:
      - Decision groups that go first and tolerate no failure (the canaries).
      - Each must be a key of O(inventory_groups) or some O(clusters[].group); an unknown name is refused, naming the
        closest (a misspelt canary group would otherwise make the canaries ordinary clusters).
    type: list
    elements: str
    default: []
  inventory_groups:
    description:
      - The inventory groups (the C(groups) magic variable) - a dict of group name to host names - each holding only
        the rollout's clusters (the roles pass every group, restricted to the play's hosts).
      - The members of a named group must be O(clusters[].name)s; the other groups only serve to name the closest
        group when a name is misspelt.
    type: dict
    default: {}
  clusters_per_group:
    description: How many clusters of no named group form one group (a count, or a percent of them); all by default.
    type: raw
  max_concurrency:
    description: How many clusters of a group change at once (a count, or a percent of the group, at least 1).
    type: raw
    default: 100%
  max_failures:
    description: How many clusters of a (not mandatory) group may fail before the rollout halts (a count or a percent).
    type: raw
    default: 0
  max_failures_total:
    description: How many clusters of the fleet may fail before the rollout halts (a count or a percent).
    type: raw
    default: 0
  progress_deadline:
    description: How long a cluster has to take the change and run it (seconds, or a Go duration such as C(5m)).
    type: raw
    default: 10m
  min_success_time:
    description: How long each group soaks, its gates polled, before the next group starts (seconds or Go duration).
    type: raw
    default: 1m
  gate_interval:
    description: The time between two polls of the gates during the soak (seconds or Go duration).
    type: raw
    default: 10s
  gates:
    description: The health gates polled during the soak.
    type: dict
    default: {}
    suboptions:
      operand:
        description:
          - The descheduler rolled out (not scaled to 0) and no Degraded condition on the KubeDescheduler (for
            O(kind=secondary_scheduler) and O(kind=operator), their own operand gate, as the description says).
        type: bool
        default: true
      workloads:
        description:
          - No PodDisruptionBudget with fewer healthy pods than it wants, and no Deployment or StatefulSet with fewer
            ready replicas than desired, beyond what it lacked before the change and O(gates.workload_tolerance).
        type: bool
        default: true
      workload_tolerance:
        description: The pods a workload may lose during the soak beyond what it lacked before the change.
        type: int
        default: 0
      max_evictions_per_minute:
        description:
          - The most evictions the descheduler may log within a minute (its C("Evicted pod") lines; dry-run lines do
            not count). 0 does not check.
        type: int
        default: 0
      expected_evictions:
        description:
          - The evictions the descheduler logged since the change (its C("Evicted pod") lines, dry-run ones included)
            stay within what the cluster's plan predicted - no pod the plan never evicts (planned, or seen in one of
            its sampled cycles, with O(descheduler.fleet.plan#module:samples) > 1), no completed cycle evicting
            more than the plan's most per cycle. The comparison is the one of M(descheduler.fleet.predictive_gate).
          - Each plan file is read, must be keyed by a cluster of O(clusters) and must name it (the plan's
            C(cluster)), before anything is changed; the cluster identity it records must be the one reached,
            checked on every planned cluster before the first group changes (a wrong plan fails the whole rollout,
            nothing changed) and again before the change is applied to it.
        type: dict
        default: {}
        suboptions:
          plans:
            description:
              - Per cluster name (as in O(clusters[].name)), the path of its C(plan.json) (written by
                M(descheduler.fleet.plan) with O(descheduler.fleet.plan#module:report_dir), or by the C(dry_run)
                role). Clusters without a plan are not checked by this gate.
            type: dict
            default: {}
          max_unexpected:
            description: How many logged evictions the plan does not find possible are tolerated.
            type: int
            default: 0
          count_tolerance:
            description: How far above the plan's most evictions per cycle a logged cycle total may be.
            type: int
            default: 0
  rollback:
    description: Roll failed and breaching clusters back to their last good spec.
    type: bool
    default: true
  lock_timeout:
    description:
      - "One change at a time per cluster: before its first write to a cluster the rollout takes the change Lease
        C(kube-system/descheduler-fleet-change) (any other change of the collection holds it too - the
        M(descheduler.fleet.kubedescheduler), M(descheduler.fleet.operator) and
        M(descheduler.fleet.secondary_scheduler) modules), renews it, and gives it back once the cluster's group has
        soaked and any rollback is over. It also refuses while an evict run holds C(kube-system/descheduler-fleet-evict)
        (the evict role's C(evict_lease) example)."
      - How long to wait for another holder (seconds or Go duration); 0 fails the cluster at once, naming the holder and
        since when, before anything is written to it. Check mode takes no Lease but fails a cluster whose Lease is held.
    type: raw
    default: 0
  on_interrupted:
    description:
      - What to do first on a cluster whose record shows a change that did not finish (a state other than
        C(verified) or C(rolled-back) - C(intended), C(applied), C(soaking), C(rolling-back), C(interrupted)); the
        configuration that change left is never taken as the last good one.
      - C(fail) fails the cluster with the record shown, nothing written; C(rollback) puts the recorded last good
        configuration back, then makes this change; C(resume) keeps what runs and makes this change, with the recorded
        last good configuration as what a rollback goes back to.
    type: str
    choices: [fail, rollback, resume]
    default: fail
  interrupt_rollback:
    description:
      - On SIGINT, SIGTERM or SIGHUP to the module, or when the C(ansible-playbook) that started it goes away (an AWX
        cancel), or when a change Lease is lost, no further cluster is started and the clusters mid-change or mid-soak
        are rolled back within O(interrupt_grace) (with O(rollback)); those not rolled back by then are left as they
        are, their status and record C(interrupted). False rolls nothing back on a cancel.
    type: bool
    default: true
  interrupt_grace:
    description: How long the rollbacks after a cancel may take, from the cancel (seconds or Go duration).
    type: raw
    default: 2m
  run_id:
    description: Names this rollout in the last-good record (for example the AWX job id).
    type: str
  field_validation:
    description: As M(descheduler.fleet.kubedescheduler)'s O(descheduler.fleet.kubedescheduler#module:field_validation).
    type: str
    choices: [Strict, Warn, Ignore]
    default: Strict
  fail_on_warnings:
    description: Treat validation warnings as errors (the cluster fails).
    type: bool
    default: false
  wait_sleep:
    description: Seconds between two checks while waiting for the operator.
    type: float
    default: 5
notes:
  - The clusters are reached from the controller, several at once; the connection options of each must work there.
seealso:
  - module: descheduler.fleet.kubedescheduler
  - module: descheduler.fleet.secondary_scheduler
  - module: descheduler.fleet.operator
"""

EXAMPLES = r"""
- name: Roll the new spec out, canary first, soaking 5 minutes after each group
  descheduler.fleet.rollout:
    clusters:
      - name: canary-1
        connection: {kubeconfig: ~/.kube/canary-1}
        spec: {managementState: Managed, mode: Predictive, profiles: [AffinityAndTaints],
               deschedulingIntervalSeconds: 3600}
      - name: prod-1
        group: wave-1
        connection: {kubeconfig: ~/.kube/prod-1}
        spec: {managementState: Managed, mode: Predictive, profiles: [AffinityAndTaints],
               deschedulingIntervalSeconds: 3600}
    mandatory_groups: [canary]
    inventory_groups: {canary: [canary-1]}
    max_concurrency: 25%
    max_failures: 10%
    max_failures_total: 3  # else the fleet's budget (default 0) halts the rollout at its first failure
    progress_deadline: 10m
    min_success_time: 5m
    gates:
      workload_tolerance: 1
      max_evictions_per_minute: 30
  run_once: true
  register: rollout

- name: Roll a new Trimaran target utilization out to the secondary schedulers, one cluster per group
  descheduler.fleet.rollout:
    kind: secondary_scheduler
    clusters:
      - name: canary-1
        connection: {kubeconfig: ~/.kube/canary-1}
        secondary_scheduler:
          scheduler_image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8
          trimaran: {target_utilization: 60}
      - name: prod-1
        connection: {kubeconfig: ~/.kube/prod-1}
        secondary_scheduler:
          scheduler_image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8
          trimaran: {target_utilization: 60}
    clusters_per_group: 1
    min_success_time: 5m
  run_once: true

- name: Install the descheduler through OLM, canary first; a cluster whose workloads suffer goes back to not installed
  descheduler.fleet.rollout:
    kind: operator
    clusters:
      - name: canary-1
        connection: {kubeconfig: ~/.kube/canary-1}
        operator: {flavor: olm, channel: stable}
      - name: prod-1
        connection: {kubeconfig: ~/.kube/prod-1}
        operator: {flavor: olm, channel: stable}
    clusters_per_group: 1
    min_success_time: 5m
  run_once: true
"""

RETURN = r"""
halted:
  description: Whether the rollout stopped before its last group.
  returned: always
  type: bool
halt_reason:
  description: Why, naming the group, the clusters and the failures or the breached gates; null when it did not halt.
  returned: always
  type: str
groups:
  description:
    - Each decision group in order - C(name), C(clusters), C(mandatory), C(status) (succeeded, failed, not_started),
      C(allowed_failures), C(failures), C(soak_seconds), C(breaches) (by cluster).
  returned: always
  type: list
  elements: dict
clusters:
  description:
    - By cluster name - C(group), C(status) (succeeded, failed, rolled_back, rollback_failed, interrupted,
      not_started), C(resolved) (what was done first with an unfinished change of an earlier run),
      C(changed), C(changes), C(error), C(breaches), C(last_good) (C(present), C(spec) - what was recorded before the
      change; with O(kind=secondary_scheduler) C(spec) holds C(scheduler_config), C(config_map_name), C(scheduler_image)
      and C(log_level); with O(kind=operator) C(flavor), C(objects) and C(installed_csv)), C(rollback) (C(ok),
      C(changed), C(msg) or C(error), C(breaches_after), C(left_in_place) - why each object someone else modified
      since the change was left as it is, C(as_before_the_change) - what the operand gate found after the rollback
      that it found before the change too, not counted as a failure), C(soak) (C(verified), or C(unsoaked) -
      changed in a group that halted before its soak passed), C(seconds), C(msg).
  returned: always
  type: dict
summary:
  description:
    - Counts - C(changed), C(unchanged), C(failed), C(rolled_back), C(rollback_failed), C(interrupted),
      C(not_started), C(total), C(unsoaked).
  returned: always
  type: dict
msg:
  description: One sentence with the counts, and the halt reason.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import run_rollout

CONNECTION_SPEC = dict(
    kubeconfig=dict(type="raw"),
    context=dict(type="str"),
    host=dict(type="str"),
    api_key=dict(type="str", no_log=True),
    validate_certs=dict(type="bool"),
    ca_cert=dict(type="path"),
)
CLUSTER_SPEC = dict(
    name=dict(type="str", required=True),
    group=dict(type="str"),
    connection=dict(type="dict", options=CONNECTION_SPEC),
    expected_cluster_uid=dict(type="str"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    spec=dict(type="dict"),
    secondary_scheduler=dict(type="dict"),
    operator=dict(type="dict"),
    blocked=dict(type="str"),
)
GATES_SPEC = dict(
    operand=dict(type="bool", default=True),
    workloads=dict(type="bool", default=True),
    workload_tolerance=dict(type="int", default=0),
    max_evictions_per_minute=dict(type="int", default=0),
    expected_evictions=dict(type="dict", default={}, options=dict(
        plans=dict(type="dict", default={}),
        max_unexpected=dict(type="int", default=0),
        count_tolerance=dict(type="int", default=0),
    )),
)
ARGUMENT_SPEC = dict(
    kind=dict(type="str", choices=["kubedescheduler", "secondary_scheduler", "operator"], default="kubedescheduler"),
    clusters=dict(type="list", elements="dict", options=CLUSTER_SPEC, required=True),
    groups=dict(type="list", elements="str", default=[]),
    mandatory_groups=dict(type="list", elements="str", default=[]),
    inventory_groups=dict(type="dict", default={}),
    clusters_per_group=dict(type="raw"),
    max_concurrency=dict(type="raw", default="100%"),
    max_failures=dict(type="raw", default=0),
    max_failures_total=dict(type="raw", default=0),
    progress_deadline=dict(type="raw", default="10m"),
    min_success_time=dict(type="raw", default="1m"),
    gate_interval=dict(type="raw", default="10s"),
    gates=dict(type="dict", options=GATES_SPEC, default={}),
    rollback=dict(type="bool", default=True),
    run_id=dict(type="str"),
    field_validation=dict(type="str", choices=["Strict", "Warn", "Ignore"], default="Strict"),
    fail_on_warnings=dict(type="bool", default=False),
    wait_sleep=dict(type="float", default=5),
    lock_timeout=dict(type="raw", default=0),
    on_interrupted=dict(type="str", choices=["fail", "rollback", "resume"], default="fail"),
    interrupt_rollback=dict(type="bool", default=True),
    interrupt_grace=dict(type="raw", default="2m"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result = run_and_report(module, run_rollout, module.params, module.check_mode)
    if not module._diff:
        result.pop("diff", None)
    if result["halted"]:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
