#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: secondary_scheduler
short_description: Install, configure or remove the Secondary Scheduler Operator and its scheduler (OpenShift)
version_added: 0.2.0
description:
  - Runs a second kube-scheduler next to the default one, so that the pods the descheduler evicts can be placed by
    load (Trimaran C(TargetLoadPacking)) instead of by requests. Pods opt in with C(spec.schedulerName).
  - "Installs the Secondary Scheduler Operator through OLM with the same steps as M(descheduler.fleet.operator)
    (package C(openshift-secondary-scheduler-operator) in namespace C(openshift-secondary-scheduler-operator)):
    the catalog is read first, with O(install_plan_approval=Manual) only the InstallPlan of the requested CSV is
    approved, and with O(wait) the module waits for the CSV to succeed."
  - Writes the KubeSchedulerConfiguration into ConfigMap O(config_map_name) (key C(config.yaml)), built from
    O(trimaran) (one profile scoring with C(TargetLoadPacking), the resource-based scores off) or given whole in
    O(scheduler_config); creates or updates the C(SecondaryScheduler) C(cluster); with O(wait), waits for the
    operator's C(secondary-scheduler) Deployment to be available.
  - "The configuration is checked before anything is written: apiVersion and kind, one C(schedulerName) per
    profile (never C(default-scheduler)), known plugins at each extension point, score weights, one
    C(pluginConfig) per plugin, Trimaran args (C(targetUtilization) above 0 and at most 100, C(defaultRequests)
    quantities, C(defaultRequestsMultiplier) a positive number as a string, C(metricProvider.type) one of
    C(KubernetesMetricsServer), C(Prometheus), C(SignalFx), an address for the latter two, or C(watcherAddress)).
    With O(check_metric_provider) the metric source is also asked once (Prometheus C(/api/v1/status/buildinfo),
    the load-watcher C(/watcher), or C(metrics.k8s.io) being served). Each error names the field, the value and
    the fix."
  - "O(state=absent) removes, in order: the C(SecondaryScheduler) (waiting for its Deployment to go), the
    ConfigMap, the Subscription and the operator's CSV(s), then the OperatorGroup and the namespace only when this
    module created the namespace."
  - Every step reads first and writes only what differs, so a second run reports no change.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.cluster_identity
  - descheduler.fleet.change_lock
  - descheduler.fleet.olm
  - descheduler.fleet.wait
attributes:
  check_mode:
    support: full
    details: Reads the cluster (the catalog included), checks the configuration, and reports in RV(actions) what it
      would create, update, approve or delete; nothing is written and nothing is awaited.
  diff_mode:
    support: full
    details: Before and after of every object created, updated or deleted, the ConfigMap's C(config.yaml) included.
options:
  state:
    description: Whether the secondary scheduler should be installed.
    type: str
    choices: [present, absent]
    default: present
  scheduler_image:
    description:
      - The scheduler image the operator runs (C(spec.schedulerImage)), a scheduler-plugins kube-scheduler build
        whose minor version matches the cluster's, for example
        C(registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8).
      - Required with O(state=present).
    type: str
  scheduler_name:
    description: The C(schedulerName) of the profile built from O(trimaran); pods opt in with it.
    type: str
    default: secondary-scheduler
  config_map_name:
    description:
      - The ConfigMap holding the configuration (C(spec.schedulerConfig)). Not C(secondary-scheduler), the name of
        the copy the operator writes itself.
    type: str
    default: secondary-scheduler-config
  scheduler_config:
    description:
      - A whole C(kubescheduler.config.k8s.io/v1) KubeSchedulerConfiguration, any profiles. Replaces O(trimaran).
    type: dict
  trimaran:
    description: The C(TargetLoadPacking) profile to build when O(scheduler_config) is not given.
    type: dict
    suboptions:
      target_utilization:
        description: The CPU utilization (percent) nodes are packed up to (C(targetUtilization)).
        type: int
        default: 40
      default_requests_cpu:
        description: The CPU assumed for a container without requests or limits (C(defaultRequests.cpu)).
        type: str
        default: 1000m
      default_requests_multiplier:
        description: Requests are multiplied by this to predict use when there is no limit (a number as a string).
        type: str
        default: "1.5"
      metric_provider:
        description: Where Trimaran reads node load (C(metricProvider)).
        type: dict
        suboptions:
          type:
            description: The provider.
            type: str
            choices: [KubernetesMetricsServer, Prometheus, SignalFx]
            default: KubernetesMetricsServer
          address:
            description: Its URL (required for C(Prometheus) and C(SignalFx)).
            type: str
          token:
            description: A bearer token for it; kept out of the module's output.
            type: str
          insecure_skip_verify:
            description: Skip the TLS certificate check (Trimaran's default for Prometheus is to skip it).
            type: bool
      watcher_address:
        description: An external load-watcher service URL, used instead of O(trimaran.metric_provider).
        type: str
  check_metric_provider:
    description: Ask the metric source once from the control node before writing anything.
    type: bool
    default: false
  log_level:
    description: The operand's log level (C(spec.logLevel)).
    type: str
    choices: [Normal, Debug, Trace, TraceAll]
    default: Normal
notes:
  - The operator only works in the namespace C(openshift-secondary-scheduler-operator) and reconciles only the
    C(SecondaryScheduler) named C(cluster).
  - The metric source check runs from the control node; a service name only the cluster resolves fails it.
"""

EXAMPLES = r"""
- name: Trimaran TargetLoadPacking with the cluster's Prometheus, checked first
  descheduler.fleet.secondary_scheduler:
    scheduler_image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8
    check_metric_provider: true
    trimaran:
      target_utilization: 70
      default_requests_cpu: 2000m
      default_requests_multiplier: "1"
      metric_provider:
        type: Prometheus
        address: https://prometheus-k8s.openshift-monitoring.svc:9091
        token: "{{ prometheus_token }}"

- name: Any profile, version pinned with manual approval
  descheduler.fleet.secondary_scheduler:
    scheduler_image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8
    install_plan_approval: Manual
    starting_csv: secondaryscheduleroperator.v1.4.0
    scheduler_config:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: KubeSchedulerConfiguration
      leaderElection:
        leaderElect: false
      profiles:
        - schedulerName: binpack-scheduler
          pluginConfig:
            - name: NodeResourcesFit
              args:
                scoringStrategy:
                  type: MostAllocated

- name: Remove it
  descheduler.fleet.secondary_scheduler:
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
  description: Whether anything was (or, in check mode, would be) written.
  returned: always
  type: bool
actions:
  description: Every step in order, one entry per object, with what was done (or would be, in check mode).
  returned: always
  type: list
  elements: dict
  sample:
    - step: secondary_scheduler
      object: SecondaryScheduler openshift-secondary-scheduler-operator/cluster
      action: create
      changed: true
      message: created
installed_csv:
  description: The operator's CSV the Subscription installed.
  returned: when state is present
  type: str
  sample: secondaryscheduleroperator.v1.4.0
installed_version:
  description: The operator version (the CSV's C(spec.version)).
  returned: when state is present
  type: str
  sample: 1.4.0
csv_phase:
  description: The phase of the installed CSV.
  returned: when state is present
  type: str
subscription:
  description: The Subscription's spec and status in short.
  returned: when state is present
  type: dict
catalog:
  description: The package channel as the catalog describes it.
  returned: when state is present
  type: dict
install_plans:
  description: The operator's InstallPlans with their CSVs, approval and phase.
  returned: when state is present
  type: list
  elements: dict
pending_upgrade:
  description: An InstallPlan waiting for approval that was not approved because it is not the requested version.
  returned: when state is present
  type: dict
scheduler_config:
  description: The KubeSchedulerConfiguration deployed.
  returned: when state is present
  type: dict
scheduler_names:
  description: The C(schedulerName) of each profile, the values pods set to use this scheduler.
  returned: when state is present
  type: list
  elements: str
  sample: [secondary-scheduler]
config_map:
  description: The ConfigMap holding the configuration, as namespace/name.
  returned: when state is present
  type: str
secondary_scheduler:
  description: The C(SecondaryScheduler) C(cluster) (name, namespace, spec).
  returned: when state is present
  type: dict
deployment:
  description: The scheduler Deployment's replicas once available (null without O(wait) or in check mode).
  returned: when state is present
  type: dict
metric_provider_checks:
  description: The metric sources asked with O(check_metric_provider).
  returned: when state is present
  type: list
  elements: dict
removed_csvs:
  description: The operator's CSVs deleted (or that would be).
  returned: when state is absent
  type: list
  elements: str
namespace_removed:
  description: Whether the operator's namespace was removed (only when this module created it).
  returned: when state is absent
  type: bool
diff:
  description: Before and after of each object changed.
  returned: with --diff
  type: list
  elements: dict
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
    IDENTITY_ARG_SPEC,
    OLM_ARG_SPEC,
    WAIT_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.change_lock import run_holding_change_lease
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.secondary_scheduler import (
    run_secondary_scheduler,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.options import SCHEDULER_ARG_SPEC

ARGUMENT_SPEC = argument_spec(CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, CHANGE_LOCK_ARG_SPEC, OLM_ARG_SPEC, WAIT_ARG_SPEC,
                              **SCHEDULER_ARG_SPEC)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[("state", "present", ("scheduler_image",))])
    finish(module, run_and_report(module, run_holding_change_lease, "secondary_scheduler", run_secondary_scheduler,
                                  module.params, module.check_mode, module._diff))


if __name__ == "__main__":
    main()
