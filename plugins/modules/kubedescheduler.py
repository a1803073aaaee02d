#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: kubedescheduler
short_description: Manage the Kube Descheduler Operator's C(cluster) KubeDescheduler, validated before any write
version_added: 0.1.0
description:
  - Creates, updates or deletes the C(KubeDescheduler) named C(cluster) in C(openshift-kube-descheduler-operator)
    (C(operator.openshift.io/v1)), declaratively. The spec is built from O(spec) or O(legacy_spec), then the
    per-field options, each of which replaces that field. A field set by none of them is removed.
  - Before any write, the spec is validated against the cluster with every rule of the operator and its CRD,
    including the ones the operator only logs or degrades on (both namespace lists, both priority fields, a protected
    namespace included, deviation and static thresholds together on the KubeVirt profile, an unknown
    devActualUtilizationProfile, a missing monitoring label or Prometheus route, the KubeVirt profile without
    C(kubevirt.io/schedulable=true) nodes, an unknown priority class, the scheduler-profile hot loops). An error fails
    the task and names the field, the value, why, and the fix; nothing is written. Warnings are returned and shown.
  - With O(wait), waits until the operator rolled the descheduler out with the new generation and reports no
    C(TargetConfigControllerDegraded) condition, then returns the policy it rendered (ConfigMap C(cluster),
    key C(policy.yaml)); the wait fails if the operator reports Degraded or does not apply the spec. With
    O(state=absent), waits until the operator's Deployment and ConfigMap are garbage-collected.
  - O(legacy_spec) takes a C(v1beta1) spec (OKD/OpenShift 4.4 to 4.8, C(strategies) with params) and translates it to
    the nearest v1 profiles and customizations, with a report of what maps, what changes meaning and what cannot be
    expressed.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.cluster_identity
  - descheduler.fleet.change_lock
  - descheduler.fleet.field_validation
  - descheduler.fleet.wait
attributes:
  check_mode:
    support: full
    details: Validates and compares, changes nothing, and says what would change in RV(changes) and RV(msg).
  diff_mode:
    support: full
    details: The spec before and after (CRD defaults applied; operator-owned fields left out).
options:
  state:
    description:
      - C(present) creates or updates the resource; C(absent) deletes it (the operator's ConfigMap and Deployment are
        garbage-collected with it).
    type: str
    choices: [present, absent]
    default: present
  spec:
    description:
      - A whole KubeDescheduler C(v1) spec in the API's camelCase, as C(oc get kubedescheduler cluster -o yaml) shows
        it (the whole object is accepted too).
      - The per-field options below replace the fields they set. Mutually exclusive with O(legacy_spec).
    type: dict
  legacy_spec:
    description:
      - A C(operator.openshift.io/v1beta1) KubeDescheduler spec or object (OKD/OpenShift 4.4 to 4.8), translated to
        the nearest v1 spec; the report is returned in RV(legacy_translation).
      - "Without a C(--dry-run) flag the legacy descheduler evicted for real, so the translation sets
        C(mode: Automatic); set O(mode=Predictive) to review the new profiles first."
      - Mutually exclusive with O(spec).
    type: dict
  mode:
    description:
      - C(Predictive) only simulates evictions (the operand runs with C(--dry-run=true)); C(Automatic) evicts.
      - The CRD default is C(Predictive).
    type: str
  descheduling_interval_seconds:
    description:
      - Seconds between descheduling cycles (C(spec.deschedulingIntervalSeconds)), at least 1. Required in practice
        (the operator scales the descheduler to 0 without it).
    type: int
  profiles:
    description:
      - Profiles to enable (C(spec.profiles)), among C(AffinityAndTaints), C(TopologyAndDuplicates),
        C(SoftTopologyAndDuplicates), C(LifecycleAndUtilization), C(LongLifecycle), C(CompactAndScale),
        C(KubeVirtRelieveAndMigrate), C(EvictPodsWithPVC), C(EvictPodsWithLocalStorage) and the deprecated
        C(DevPreviewLongLifecycle) and C(DevKubeVirtRelieveAndMigrate).
    type: list
    elements: str
  profile_customizations:
    description:
      - C(spec.profileCustomizations). Only the suboptions given are set.
    type: dict
    suboptions:
      pod_lifetime:
        description: Age after which PodLifeTime evicts a pod, a Go duration such as C(48h) (LifecycleAndUtilization).
        type: str
      threshold_priority:
        description:
          - Pods with this priority or higher are never evicted.
          - Exclusive with O(profile_customizations.threshold_priority_class_name).
        type: int
      threshold_priority_class_name:
        description: The PriorityClass whose value is the threshold (it must exist).
        type: str
      namespaces:
        description: Namespaces to include or exclude (one of the two). Protected namespaces cannot be included.
        type: dict
        suboptions:
          included:
            description: Only these namespaces.
            type: list
            elements: str
          excluded:
            description: Not these namespaces (in addition to the protected ones).
            type: list
            elements: str
      dev_low_node_utilization_thresholds:
        description: LowNodeUtilization preset, C(Low) (10/30), C(Medium) (20/50) or C(High) (40/70).
        type: str
      dev_high_node_utilization_thresholds:
        description: CompactAndScale preset, C(Minimal) (10), C(Modest) (20) or C(Moderate) (30).
        type: str
      dev_deviation_thresholds:
        description:
          - KubeVirt profile deviation preset, C(Low), C(Medium), C(High), C(AsymmetricLow), C(AsymmetricMedium) or
            C(AsymmetricHigh). Exclusive with O(profile_customizations.dev_low_node_utilization_thresholds) there.
        type: str
      dev_actual_utilization_profile:
        description:
          - Prometheus query profile for LowNodeUtilization, for example C(PrometheusCPUUsage); needs the
            cluster-monitoring label on the operator namespace and the prometheus-k8s route.
        type: str
      dev_enable_evictions_in_background:
        description: Adds C(--feature-gates=EvictionsInBackground=true) to the descheduler.
        type: bool
      dev_enable_soft_tainter:
        description: Deprecated and ignored by the operator since 4.19.
        type: bool
      dev_migration_cooldown:
        description: KubeVirt profile, Go duration (KubevirtMigrationAware C(migrationCooldown)).
        type: str
      dev_max_migration_cooldown:
        description: KubeVirt profile, Go duration (KubevirtMigrationAware C(maxMigrationCooldown)).
        type: str
      dev_migration_history_window:
        description: KubeVirt profile, Go duration (KubevirtMigrationAware C(migrationHistoryWindow)).
        type: str
  eviction_limits:
    description:
      - C(spec.evictionLimits).
    type: dict
    suboptions:
      total:
        description: At most this many evictions per cycle (C(maxNoOfPodsToEvictTotal)).
        type: int
      node:
        description: At most this many evictions per node and cycle (C(maxNoOfPodsToEvictPerNode)).
        type: int
  log_level:
    description:
      - Descheduler verbosity, C(Normal) (-v=2), C(Debug) (4), C(Trace) (6) or C(TraceAll) (8). CRD default C(Normal).
    type: str
  operator_log_level:
    description: Operator verbosity, same values as O(log_level). CRD default C(Normal).
    type: str
  management_state:
    description:
      - C(spec.managementState). When the spec is built from the per-field options or O(legacy_spec), C(Managed)
        unless set here.
      - A O(spec) without C(managementState) (and without this option) is refused before any write - the API server
        would admit it, but the operator then sets C(TargetConfigControllerDegraded) and C(ConfigObservationDegraded)
        and scales the descheduler to 0.
      - C(Unmanaged) and C(Removed) are written with a warning - they neither stop nor remove the descheduler (delete
        the KubeDescheduler with O(state=absent) for that).
    type: str
  fail_on_warnings:
    description: Treat validation warnings (legal but surprising settings) as errors.
    type: bool
    default: false
notes:
  - The resource is always C(cluster) in C(openshift-kube-descheduler-operator); the operator reads no other.
  - Not checkable from outside the operator pod, so only warned about, is PSI (C(/proc/pressure)) for the KubeVirt
    profile.
"""

EXAMPLES = r"""
- name: Predictive descheduling, one cycle an hour
  descheduler.fleet.kubedescheduler:
    kubeconfig: ~/.kube/prod.kubeconfig
    mode: Predictive
    descheduling_interval_seconds: 3600
    profiles: [AffinityAndTaints, LifecycleAndUtilization]
    profile_customizations:
      pod_lifetime: 48h
      namespaces:
        excluded: [batch]
    eviction_limits:
      total: 20
  register: descheduler

- name: Show the policy the operator rendered
  ansible.builtin.debug:
    var: descheduler.policy

- name: The same from a whole spec, as oc shows it (managementState is required there)
  descheduler.fleet.kubedescheduler:
    spec:
      managementState: Managed
      mode: Predictive
      deschedulingIntervalSeconds: 3600
      profiles: [AffinityAndTaints]

- name: Migrate an OKD 4.6 configuration, reviewing it in Predictive mode first
  descheduler.fleet.kubedescheduler:
    legacy_spec: "{{ lookup('ansible.builtin.file', 'kubedescheduler-4.6.yaml') | from_yaml }}"
    mode: Predictive
  register: migrated

- name: What could not be carried over
  ansible.builtin.debug:
    var: migrated.legacy_translation.cannot_express

- name: Remove the descheduler configuration
  descheduler.fleet.kubedescheduler:
    state: absent
"""

RETURN = r"""
cluster_identity:
  description:
    - The cluster the connection reached, read before anything else - C(uid) (of its C(kube-system) namespace) and
      C(server) (the API server URL). Compare it with O(expected_cluster_uid) or with the inventory.
  returned: success
  type: dict
  sample: {uid: 3f1c2a9e-8d4b-4c1e-9a55-0b7c2d1e6f10, server: "https://api.cluster.example:6443"}
changed:
  description: Whether the resource was (or, in check mode, would be) created, changed or deleted.
  returned: always
  type: bool
msg:
  description: What was done or would be done, with each changed field.
  returned: always
  type: str
changes:
  description: The changed fields, each with C(field), C(before) and C(after).
  returned: always
  type: list
  elements: dict
  sample: [{field: spec.mode, before: Predictive, after: Automatic}]
spec:
  description: The spec as stored (CRD defaults applied); null with O(state=absent).
  returned: always
  type: dict
kubedescheduler:
  description: The resource after the task (before it, in check mode); null when absent.
  returned: always
  type: dict
conditions:
  description: The resource's status conditions.
  returned: when O(state=present)
  type: list
  elements: dict
policy:
  description: The DeschedulerPolicy the operator rendered (ConfigMap C(cluster), key C(policy.yaml)), parsed.
  returned: always
  type: dict
operand:
  description: The descheduler Deployment (replicas, ready, rendered generation, rolled out, degraded conditions).
  returned: when O(state=present)
  type: dict
rendered_operand:
  description:
    - What the operator writes for the spec, in check mode too (docs/configuration.md).
    - C(descheduler) is the operand Deployment, its args in the operator's order (C(--descheduling-interval),
      C(--feature-gates=EvictionsInBackground=true), the TLS flags from C(spec.observedConfig), C(--dry-run=true) in
      Predictive mode, C(-v) from C(logLevel)); null when the spec has no positive interval. The image is not
      rendered (the operator takes it from its environment).
    - C(softtainter) is the soft-tainter Deployment, for a KubeVirt profile or while a KubeVirt node keeps a soft
      taint (C(softtainter_why) says which); null when the operator deletes it.
    - C(eviction_limits) holds the policy's C(total) and C(node) limits (the KubeVirt profiles default them to 5
      and 2).
  returned: when O(state=present)
  type: dict
  sample:
    descheduler: {metadata: {name: descheduler}, spec: {replicas: 1}}
    softtainter: null
    softtainter_why: null
    eviction_limits: {total: null, node: null}
validation_warnings:
  description: Legal but surprising settings, each with C(field), C(value), C(message), C(fix).
  returned: always
  type: list
  elements: dict
validation_errors:
  description: On failure only, every error found, each with C(field), C(value), C(message), C(fix) and what the
    operator would have done (C(operator_behaviour), C(operator_message)).
  returned: on validation failure
  type: list
  elements: dict
notes:
  description: Cluster facts that could not be read (their rule was skipped).
  returned: always
  type: list
  elements: str
legacy_translation:
  description:
    - The translation of O(legacy_spec) - C(spec), C(maps), C(changes_meaning), C(cannot_express), C(ignored) (each
      entry with C(source), C(value), C(target), C(note)) and C(summary).
  returned: when O(legacy_spec) is given
  type: dict
diff:
  description:
    - The spec before and after and, with O(state=present), C(operand) - for the C(descheduler) and
      C(softtainter) Deployments, the fields the spec decides (replicas, container name, command, args, service
      account, priority class, policy ConfigMap), live before and as the operator will write them after.
  returned: in diff mode
  type: dict
resolved:
  description:
    - What was done first with a change an earlier rollout did not finish on this cluster (O(on_interrupted)), with
      the record's state, run id and time; in check mode, what a real run would do. Absent when there was none.
  returned: when the record showed an unfinished change
  type: str
  sample: "rollback: the record kube-system/operator.json showed interrupted (run 'r1', 2026-12-02T10:00:00Z)"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CHANGE_LOCK_ARG_SPEC,
    CONNECTION_ARG_SPEC,
    FIELD_VALIDATION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
    WAIT_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.change_lock import run_holding_change_lease
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.kubedescheduler import run_kubedescheduler

NAMESPACES_SPEC = dict(included=dict(type="list", elements="str"), excluded=dict(type="list", elements="str"))
CUSTOMIZATIONS_SPEC = dict(
    pod_lifetime=dict(type="str"),
    threshold_priority=dict(type="int"),
    threshold_priority_class_name=dict(type="str"),
    namespaces=dict(type="dict", options=NAMESPACES_SPEC),
    dev_low_node_utilization_thresholds=dict(type="str"),
    dev_high_node_utilization_thresholds=dict(type="str"),
    dev_deviation_thresholds=dict(type="str"),
    dev_actual_utilization_profile=dict(type="str"),
    dev_enable_evictions_in_background=dict(type="bool"),
    dev_enable_soft_tainter=dict(type="bool"),
    dev_migration_cooldown=dict(type="str"),
    dev_max_migration_cooldown=dict(type="str"),
    dev_migration_history_window=dict(type="str"),
)
ARGUMENT_SPEC = argument_spec(
    CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, CHANGE_LOCK_ARG_SPEC, FIELD_VALIDATION_ARG_SPEC, WAIT_ARG_SPEC,
    state=dict(type="str", choices=["present", "absent"], default="present"),
    spec=dict(type="dict"),
    legacy_spec=dict(type="dict"),
    mode=dict(type="str"),
    descheduling_interval_seconds=dict(type="int"),
    profiles=dict(type="list", elements="str"),
    profile_customizations=dict(type="dict", options=CUSTOMIZATIONS_SPEC),
    eviction_limits=dict(type="dict", options=dict(total=dict(type="int"), node=dict(type="int"))),
    log_level=dict(type="str"),
    operator_log_level=dict(type="str"),
    management_state=dict(type="str"),
    fail_on_warnings=dict(type="bool", default=False),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("spec", "legacy_spec")],
                           supports_check_mode=True)
    result = run_and_report(module, run_holding_change_lease, "kubedescheduler", run_kubedescheduler, module.params,
                            module.check_mode)
    for finding in result.get("validation_warnings", []):
        module.warn(finding["message"])
    for note in result.get("notes", []):
        module.warn(note)
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
