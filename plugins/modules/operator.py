#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: operator
short_description: Install, upgrade or uninstall the descheduler on one cluster (OLM operator or upstream)
version_added: 0.1.0
description:
  - "O(flavor=olm) (OpenShift, OKD): installs the Kube Descheduler Operator through OLM: the namespace
    C(openshift-kube-descheduler-operator) labelled C(openshift.io/cluster-monitoring: \"true\"), an OperatorGroup
    targeting it and a Subscription to package C(cluster-kube-descheduler-operator). The catalog is read first
    (PackageManifest), so a missing package, channel or CSV fails with the list of what the catalog offers."
  - The OLM options (O(channel), O(source), O(source_namespace), O(starting_csv), O(install_plan_approval)) apply to
    O(flavor=olm) only. With O(install_plan_approval=Manual), an upgrade that was not asked for is left waiting
    (RV(pending_upgrade)).
  - With O(wait), waits until the Subscription's installed CSV is C(Succeeded) and the
    C(kubedeschedulers.operator.openshift.io) CRD is established, and reports the installed version. A CSV that
    fails stops the wait with its reason and message. With O(flavor=upstream) or O(flavor=volcano), waits until the
    descheduler Deployment is rolled out.
  - "O(flavor=upstream) (plain Kubernetes): deploys the kubernetes-sigs descheduler as its Helm chart does:
    ServiceAccount, ClusterRole and ClusterRoleBinding, the policy ConfigMap, and a Deployment (O(upstream.interval)
    loop) or a CronJob (O(upstream.schedule)). The policy is validated before anything is written."
  - "O(flavor=volcano): deploys the Volcano descheduler (C(volcano-sh/descheduler), with the C(LoadAware) plugin) as
    its installer does: namespace C(volcano-system) (created when missing), ServiceAccount, ClusterRole and
    ClusterRoleBinding, ConfigMap C(volcano-descheduler) with C(policy.yaml), and a Deployment running
    C(--descheduling-interval=<volcano.interval>). The policy is validated before anything is written (C(LoadAware)
    thresholds and metrics source, the other plugins as the upstream descheduler checks them) and, when
    O(volcano_scheduler_config) is given, paired with the Volcano scheduler: C(LoadAware) needs its C(usage) plugin
    reading the same metrics source, C(HighNodeUtilization) needs C(binpack)."
  - "O(state=absent) removes, in this order: the KubeDescheduler C(cluster) (waiting for its operand Deployments to
    go), the Subscription, the installed CSV(s), the OperatorGroup, the cluster-scoped objects the operator leaves
    behind (ClusterRoles and ClusterRoleBindings C(openshift-descheduler-operand), C(cluster-monitoring-view-cr), the
    soft-tainter's, its ValidatingAdmissionPolicy and binding), the C(nodeutilization.descheduler.openshift.io/*)
    taints on nodes, the namespace (waiting until it is gone), and the CRD only with O(remove_crd=true).
    With O(flavor=upstream) it removes the objects O(flavor=upstream) creates, not the namespace. With
    O(flavor=volcano): the Deployment (waiting until it is gone), the ConfigMap, the ClusterRoleBinding, the
    ClusterRole, the ServiceAccount, and the namespace only when this module created it (the Volcano scheduler
    often shares C(volcano-system))."
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
    details: Reads the cluster (the catalog included) and reports in RV(actions) what it would create, update,
      approve or delete; nothing is written and nothing is awaited.
  diff_mode:
    support: full
    details: Before and after of every object created, updated or deleted (status and server bookkeeping left out).
options:
  flavor:
    description:
      - C(olm) installs the Kube Descheduler Operator with OLM (OpenShift, OKD).
      - C(upstream) deploys the upstream descheduler without OLM (plain Kubernetes).
      - C(volcano) deploys the Volcano descheduler (clusters scheduled by Volcano, such as Huawei CCE).
    type: str
    choices: [olm, upstream, volcano]
    default: olm
  state:
    description: Whether the descheduler should be installed.
    type: str
    choices: [present, absent]
    default: present
  remove_crd:
    description:
      - With O(state=absent) and O(flavor=olm), also delete the C(kubedeschedulers.operator.openshift.io) CRD
        (OLM never deletes CRDs).
    type: bool
    default: false
  upstream:
    description: The upstream descheduler (O(flavor=upstream)); every suboption has a default.
    type: dict
    suboptions:
      name:
        description: Name of the ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMap and Deployment/CronJob.
        type: str
        default: descheduler
      namespace:
        description: Namespace of the descheduler (created when missing, never deleted).
        type: str
        default: kube-system
      image:
        description: Image repository.
        type: str
        default: registry.k8s.io/descheduler/descheduler
      version:
        description: Image tag, the descheduler version.
        type: str
        default: v0.36.0
      mode:
        description:
          - C(predictive) runs with C(--dry-run=true) (evictions are only logged); C(automatic) evicts.
        type: str
        choices: [predictive, automatic]
        default: predictive
      kind:
        description: Run as a C(deployment) (a loop every O(upstream.interval)) or a C(cronjob) (O(upstream.schedule)).
        type: str
        choices: [deployment, cronjob]
        default: deployment
      interval:
        description: The C(--descheduling-interval) of a deployment, a Go duration such as C(5m).
        type: str
        default: 5m
      schedule:
        description: The cron schedule of a cronjob.
        type: str
        default: "*/2 * * * *"
      policy:
        description:
          - The C(descheduler/v1alpha2) DeschedulerPolicy (C(apiVersion) and C(kind) may be left out).
          - Defaults to the Helm chart's default policy.
        type: dict
      priority_class_name:
        description: The pod's priority class; an empty string sets none.
        type: str
        default: system-cluster-critical
      log_level:
        description: The C(--v) verbosity.
        type: int
        default: 3
      extra_args:
        description: More descheduler flags, for example C(--kube-api-qps=50).
        type: list
        elements: str
        default: []
  volcano:
    description: The Volcano descheduler (O(flavor=volcano)); every suboption has a default.
    type: dict
    suboptions:
      name:
        description: Name of the ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMap and Deployment.
        type: str
        default: volcano-descheduler
      namespace:
        description:
          - Namespace of the descheduler. Created when missing, labelled
            C(app.kubernetes.io/managed-by=descheduler.fleet); deleted with O(state=absent) only when it has that label.
        type: str
        default: volcano-system
      image:
        description: Image repository.
        type: str
        default: docker.io/volcanosh/vc-descheduler
      version:
        description: Image tag.
        type: str
        default: v0.1.0
      mode:
        description: C(predictive) runs with C(--dry-run=true) (evictions are only logged); C(automatic) evicts.
        type: str
        choices: [predictive, automatic]
        default: predictive
      interval:
        description: The C(--descheduling-interval), a Go duration such as C(10m).
        type: str
        default: 10m
      policy:
        description:
          - The C(descheduler/v1alpha2) DeschedulerPolicy (C(apiVersion) and C(kind) may be left out); C(LoadAware)
            takes C(thresholds), C(targetThresholds), C(metrics.type) (C(prometheus) or C(prometheus_adaptor)),
            C(metrics.address), C(evictableNamespaces.exclude).
          - Defaults to the installer's example policy (C(LoadAware) cpu 30/80, memory 30/85), whose metrics source
            is empty, so it evicts nothing until one is set (a warning says so).
        type: dict
      log_level:
        description: The C(--v) verbosity.
        type: int
        default: 3
      extra_args:
        description: More descheduler flags.
        type: list
        elements: str
        default: []
  volcano_scheduler_config:
    description:
      - The Volcano scheduler's configuration, to check that it can act on what the descheduler does
        (O(flavor=volcano)); either the text of C(volcano-scheduler.conf) (YAML), that content as a mapping, the
        ConfigMap C(volcano-scheduler-configmap) or its C(data), or the CCE Volcano add-on JSON
        (C(default_scheduler_conf), at the top or under C(custom)).
      - "Errors, before anything is written: C(LoadAware) enabled without the scheduler's C(usage) plugin, or with
        another metrics type or address than the scheduler's C(metrics); C(HighNodeUtilization) enabled without
        C(binpack). A warning when the C(usage) plugin's thresholds are above the descheduler's targetThresholds
        (pods could bounce)."
    type: raw
    aliases: [scheduler_config]
notes:
  - The operator only works in the namespace C(openshift-kube-descheduler-operator) (hard-coded in the operator).
  - Configure the operator afterwards with M(descheduler.fleet.kubedescheduler).
"""

EXAMPLES = r"""
- name: Install the operator from the stable channel and wait for it
  descheduler.fleet.operator:
    kubeconfig: ~/.kube/prod.kubeconfig
  register: installed

- name: Install a pinned version with manual approval (no unexpected upgrade)
  descheduler.fleet.operator:
    install_plan_approval: Manual
    starting_csv: clusterkubedescheduleroperator.v5.3.2

- name: Deploy the upstream descheduler as a CronJob in predictive mode
  descheduler.fleet.operator:
    flavor: upstream
    upstream:
      kind: cronjob
      schedule: "*/10 * * * *"
      mode: predictive
      policy:
        profiles:
          - name: default
            pluginConfig:
              - name: DefaultEvictor
              - name: RemovePodsHavingTooManyRestarts
                args:
                  podRestartThreshold: 100
            plugins:
              deschedule:
                enabled: [RemovePodsHavingTooManyRestarts]

- name: Deploy the Volcano descheduler, checked against the Volcano scheduler's configuration
  descheduler.fleet.operator:
    flavor: volcano
    volcano:
      mode: automatic
      policy:
        profiles:
          - name: default
            pluginConfig:
              - name: DefaultEvictor
                args: {ignorePvcPods: true, nodeFit: true}
              - name: LoadAware
                args:
                  metrics: {type: prometheus, address: "http://prometheus.monitoring:9090"}
                  thresholds: {cpu: 30, memory: 30}
                  targetThresholds: {cpu: 80, memory: 85}
            plugins:
              balance:
                enabled: [LoadAware]
    # the content of ConfigMap volcano-system/volcano-scheduler-configmap, key volcano-scheduler.conf
    volcano_scheduler_config: "{{ lookup('ansible.builtin.file', 'volcano-scheduler.conf') }}"

- name: Uninstall the operator and everything it left behind, the CRD too
  descheduler.fleet.operator:
    state: absent
    remove_crd: true
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
  description:
    - Every step in order, one entry per object, with what was done (or would be, in check mode).
    - C(action) is C(create), C(update), C(delete), C(approve), C(wait) or C(none).
  returned: always
  type: list
  elements: dict
  sample:
    - step: subscription
      object: Subscription openshift-kube-descheduler-operator/cluster-kube-descheduler-operator
      action: create
      changed: true
      message: created
installed_csv:
  description: The CSV the Subscription installed (O(flavor=olm), O(state=present)).
  returned: when flavor is olm and state is present
  type: str
  sample: clusterkubedescheduleroperator.v5.4.0
installed_version:
  description: The operator version (the CSV's C(spec.version)), or the upstream image tag.
  returned: when state is present
  type: str
  sample: 5.4.0
csv_phase:
  description: The phase of the installed CSV.
  returned: when flavor is olm and state is present
  type: str
  sample: Succeeded
crd_established:
  description: Whether the KubeDescheduler CRD is established.
  returned: when flavor is olm and state is present
  type: bool
subscription:
  description: The Subscription's spec and status in short.
  returned: when flavor is olm and state is present
  type: dict
catalog:
  description: The package channel as the catalog describes it (default channel, head CSV, the channel's CSVs).
  returned: when flavor is olm and state is present
  type: dict
install_plans:
  description: The operator's InstallPlans with their CSVs, approval and phase.
  returned: when flavor is olm and state is present
  type: list
  elements: dict
pending_upgrade:
  description: An InstallPlan waiting for approval that was not approved because it is not the requested version.
  returned: when flavor is olm and state is present
  type: dict
removed_csvs:
  description: The CSVs deleted (or that would be).
  returned: when flavor is olm and state is absent
  type: list
  elements: str
untainted_nodes:
  description: The nodes whose soft-taints were removed.
  returned: when flavor is olm and state is absent
  type: list
  elements: str
workload:
  description: The upstream Deployment or CronJob, or the Volcano descheduler's Deployment.
  returned: when flavor is upstream or volcano and state is present
  type: dict
policy:
  description: The DeschedulerPolicy deployed (upstream, volcano).
  returned: when flavor is upstream or volcano and state is present
  type: dict
args:
  description: The descheduler's command line flags (upstream, volcano).
  returned: when flavor is upstream or volcano and state is present
  type: list
  elements: str
removed:
  description: The upstream or Volcano objects deleted (or that would be).
  returned: when flavor is upstream or volcano and state is absent
  type: list
  elements: str
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
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import OPERATOR_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.change_lock import run_holding_change_lease
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.operator import run_operator

ARGUMENT_SPEC = argument_spec(CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, CHANGE_LOCK_ARG_SPEC, OLM_ARG_SPEC, WAIT_ARG_SPEC,
                              **OPERATOR_ARG_SPEC)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    finish(module, run_and_report(module, run_holding_change_lease, "operator", run_operator, module.params,
                                  module.check_mode, module._diff))


if __name__ == "__main__":
    main()
