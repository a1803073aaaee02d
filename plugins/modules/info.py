#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: info
short_description: Read-only facts about a cluster's descheduler, and the evictions it reported in its log
version_added: 0.1.0
description:
  - Finds which descheduler runs on the cluster - C(olm) (the Kube Descheduler Operator installed through OLM, or a
    C(KubeDescheduler) resource), C(upstream) (a C(descheduler) Deployment or CronJob, as the Helm chart deploys it)
    or C(none).
  - For the operator - its version and channel (Subscription, CSV), the CSV phase, the C(KubeDescheduler) spec and
    conditions, and the policy it rendered. For both flavors - the operand and its mode (C(--dry-run) means
    predictive), the policy, and the evictions parsed from the operand pod's log.
  - Evictions are the C("Evicted pod in dry run mode") (Predictive) and C("Evicted pod") (Automatic) log lines with
    their pod, reason, strategy, node and profile keys, de-duplicated across cycles (in Predictive mode the same pods
    are reported every cycle) and counted by strategy, profile, namespace and node, with the per-cycle totals and
    the eviction-limit errors.
  - Never changes the cluster. A read that is forbidden becomes a note in RV(notes).
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.cluster_identity
attributes:
  check_mode:
    support: full
    details: The module only reads.
  diff_mode:
    support: none
options:
  read_log:
    description: Read and parse the operand pod's log.
    type: bool
    default: true
  log_lines:
    description: How many lines of the log to read, from the end (C(tailLines)).
    type: int
    default: 10000
  upstream_namespace:
    description: Namespace of an upstream descheduler (Deployment or CronJob) when no operator is found.
    type: str
    default: kube-system
  upstream_name:
    description: Name of the upstream descheduler Deployment or CronJob.
    type: str
    default: descheduler
  upstream_container:
    description: Container of the upstream descheduler whose log and arguments to read; the first one when unset.
    type: str
"""

EXAMPLES = r"""
- name: What does the descheduler of this cluster do?
  descheduler.fleet.info:
    kubeconfig: ~/.kube/prod.kubeconfig
  register: descheduler

- name: Predictive evictions per strategy
  ansible.builtin.debug:
    msg: "{{ descheduler.operand.mode }}: {{ descheduler.evictions.counts.by_strategy }}"
  when: descheduler.evictions is not none

- name: Every pod it would evict
  ansible.builtin.debug:
    msg: "{{ descheduler.evictions.evictions | map(attribute='pod') | list }}"
  when: descheduler.evictions is not none
"""

RETURN = r"""
cluster_identity:
  description:
    - The cluster the connection reached, read before anything else - C(uid) (of its C(kube-system) namespace) and
      C(server) (the API server URL). Compare it with O(expected_cluster_uid) or with the inventory.
  returned: success
  type: dict
  sample: {uid: 3f1c2a9e-8d4b-4c1e-9a55-0b7c2d1e6f10, server: "https://api.cluster.example:6443"}
flavor:
  description: C(olm), C(upstream) or C(none).
  returned: always
  type: str
operator:
  description:
    - The operator - C(package), C(namespace), C(subscription) (name, channel, source, approval, state, installed and
      current CSV), C(channel), C(csv) (name, version, phase, reason, message), C(version) and C(csv_phase).
  returned: always (null unless the flavor is olm)
  type: dict
kubedescheduler:
  description: The C(cluster) KubeDescheduler - C(spec), C(generation), C(conditions) and the C(degraded) ones.
  returned: always (null when there is none)
  type: dict
policy:
  description: The rendered DeschedulerPolicy, parsed.
  returned: always (null when none was found)
  type: dict
policy_source:
  description: The ConfigMap and key the policy was read from.
  returned: always
  type: str
operand:
  description:
    - The descheduler workload - C(kind), C(name), C(namespace), C(container), C(image), C(args), C(mode)
      (C(predictive) with C(--dry-run), else C(automatic)), C(log_level), C(interval), C(schedule), C(replicas),
      C(rolled_out), C(rendered_generation) and C(pods) (name, node, phase, ready, created, args).
  returned: always (null when there is none)
  type: dict
expected_operand:
  description:
    - The Deployments the operator writes for the live KubeDescheduler spec - C(descheduler), C(softtainter) (null
      when it deletes it), C(softtainter_why) and C(eviction_limits) (from the rendered policy), as the
      C(kubedescheduler) module's C(rendered_operand). The image is not rendered.
  returned: always (null without a KubeDescheduler)
  type: dict
operand_drift:
  description:
    - Each field where the live C(descheduler) or C(softtainter) Deployment differs from C(expected_operand), with
      C(deployment), C(field) (C(spec.replicas), C(container.name), C(container.command), C(container.args),
      C(spec.template.spec.serviceAccountName), C(spec.template.spec.priorityClassName), C(policy volume configMap),
      or C(deployment) when one is missing or should not exist), C(live) and C(expected). The image is not compared.
      Empty when they agree.
  returned: always (null without a KubeDescheduler)
  type: list
  elements: dict
  sample:
    - {deployment: descheduler, field: container.args, live: ["-v=10"], expected: ["-v=2"]}
evictions:
  description:
    - Parsed from the newest running operand pod's log. C(evictions) (unique on pod, strategy, profile and node,
      each with C(pod), C(namespace), C(name), C(strategy), C(profile) (null before 4.17), C(node), C(reason),
      C(dry_run), C(first_seen), C(last_seen), C(times_reported), C(cycles_seen), C(cycle_indices) (the cycles
      that logged it, by index; the cycle in progress has the next one)), C(counts) (C(total), C(pods),
      C(by_strategy), C(by_profile), C(by_namespace), C(by_node), C(dry_run), C(real)), C(cycles) (per cycle
      C(total_evicted) and C(eviction_requests) from C("Number of evictions/requests")), C(limit_errors) and
      C(limit_errors_by_kind) (total, node, namespace), C(eviction_errors), C(skipped_cycles),
      C(container_started) (when the container whose log was read started, RFC 3339; its log begins there) and
      C(container_restarts) (its restart count). M(descheduler.fleet.predictive_gate) takes this value as its
      O(descheduler.fleet.predictive_gate#module:log).
  returned: always (null when no operand pod log was read)
  type: dict
log_source:
  description: The pod and container whose log was read, and how many lines.
  returned: always (null when no log was read)
  type: dict
secondary_scheduler:
  description:
    - The Secondary Scheduler Operator - C(installed_csv), C(installed_version), C(csv_phase), C(secondary_scheduler)
      (the CR's C(spec) and C(conditions)), C(config_source), C(config) (the KubeSchedulerConfiguration it runs,
      metric provider tokens redacted), C(scheduler_names) and C(deployment) (replicas, available replicas).
  returned: always (null when the operator is not installed)
  type: dict
volcano:
  description:
    - The Volcano descheduler - C(namespace), C(name), C(image), C(args), C(mode), C(interval), C(deployment),
      C(policy), C(scheduler_config_source) and C(pairing), the problems found between its policy and the Volcano
      scheduler's C(volcano-scheduler-configmap) in the same namespace (each with C(field), C(message),
      C(severity); empty when they pair well, null when the scheduler's configuration was not found).
  returned: always (null when there is none)
  type: dict
notes:
  description: Reads that were forbidden or failed, so their facts are missing.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.info import run_info

ARGUMENT_SPEC = argument_spec(
    CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC,
    read_log=dict(type="bool", default=True),
    log_lines=dict(type="int", default=10000),
    upstream_namespace=dict(type="str", default="kube-system"),
    upstream_name=dict(type="str", default="descheduler"),
    upstream_container=dict(type="str"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    info = run_and_report(module, run_info, module.params)
    module.exit_json(changed=False, **info)


if __name__ == "__main__":
    main()
