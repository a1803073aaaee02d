#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: metrics_record
short_description: Record a cluster's actual utilization (metrics API, Prometheus) for offline plans
version_added: 0.2.0
description:
  - "Writes the C(NodeMetrics) and C(PodMetrics) the C(metrics.k8s.io/v1beta1) API serves to O(dest), as a
    C(kind: List) that M(descheduler.fleet.plan) reads as O(descheduler.fleet.plan#module:metrics_file)."
  - "Writes the Prometheus instant-query answers of the queries a policy uses (or of O(queries)) to
    O(prometheus_dest) as C({query: answer}), which M(descheduler.fleet.plan) reads as
    O(descheduler.fleet.plan#module:prometheus_result)."
  - Record the snapshot at the same moment, so the plan sees the objects and the usage of one instant.
  - Only reads the cluster and Prometheus; writes the local files only when their content changes.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.cluster_identity
  - descheduler.fleet.prometheus
  - descheduler.fleet.listing
attributes:
  check_mode:
    support: full
    details: Reads everything and reports whether the files would change, without writing them.
  diff_mode:
    support: none
    details: The files are data, reported as changed or not.
options:
  dest:
    description: File for the NodeMetrics and PodMetrics (JSON).
    type: path
  prometheus_dest:
    description: "File for the Prometheus answers (JSON, C({query: answer}))."
    type: path
  queries:
    description: Prometheus queries to record, on top of those of O(policy) or O(kubedescheduler).
    type: list
    elements: str
  policy:
    description:
      - A DeschedulerPolicy whose C(LowNodeUtilization) Prometheus queries are recorded.
      - "Volcano's C(LoadAware) with C(metrics.type=prometheus) (also inside a CCE add-on configuration): its queries
        for every node (the policy's C(nodeSelector)) and every non-terminal pod on them, sent to O(prometheus_url),
        else to its C(metrics.address), with no token unless O(prometheus_token) or O(prometheus_token_secret) is
        given."
    type: dict
  kubedescheduler:
    description: A KubeDescheduler spec; the queries of the policy the operator renders from it are recorded.
    type: dict
  now:
    description: The time to evaluate the queries at (RFC 3339). Defaults to the current time.
    type: str
  prometheus_url:
    description:
      - Prometheus URL. Defaults to the C(openshift-monitoring/prometheus-k8s) route of the cluster.
    type: str
"""

EXAMPLES = r"""
- name: Record metrics next to the snapshot of the cluster
  descheduler.fleet.metrics_record:
    kubeconfig: ~/.kube/virt.kubeconfig
    kubedescheduler: "{{ lookup('file', 'kubedescheduler.yaml') | from_yaml }}"
    dest: snapshots/virt-metrics.json
    prometheus_dest: snapshots/virt-prometheus.json

- name: Plan offline from the recorded state
  descheduler.fleet.plan:
    snapshot: snapshots/virt.json
    metrics_file: snapshots/virt-metrics.json
    prometheus_result: snapshots/virt-prometheus.json
    kubedescheduler: "{{ lookup('file', 'kubedescheduler.yaml') | from_yaml }}"
"""

RETURN = r"""
cluster_identity:
  description:
    - The cluster the connection reached, read before anything else - C(uid) (of its C(kube-system) namespace) and
      C(server) (the API server URL). Compare it with O(expected_cluster_uid) or with the inventory.
  returned: success
  type: dict
  sample: {uid: 3f1c2a9e-8d4b-4c1e-9a55-0b7c2d1e6f10, server: "https://api.cluster.example:6443"}
files:
  description: The files written (or that would be, in check mode).
  returned: always
  type: dict
  sample: {dest: snapshots/virt-metrics.json, prometheus_dest: snapshots/virt-prometheus.json}
queries:
  description: The Prometheus queries recorded.
  returned: always
  type: list
  elements: str
  sample: ["rate(node_pressure_cpu_waiting_seconds_total[1m])"]
node_metrics:
  description: NodeMetrics recorded.
  returned: when O(dest) is set
  type: int
  sample: 6
pod_metrics:
  description: PodMetrics recorded.
  returned: when O(dest) is set
  type: int
  sample: 180
samples:
  description: Samples per recorded query.
  returned: when O(prometheus_dest) is set
  type: dict
  sample: {"rate(node_pressure_cpu_waiting_seconds_total[1m])": 6}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
    LISTING_ARG_SPEC,
    PROMETHEUS_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.metrics_record import run_record

ARGUMENT_SPEC = argument_spec(
    CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, PROMETHEUS_ARG_SPEC, LISTING_ARG_SPEC,
    dest=dict(type="path"),
    prometheus_dest=dict(type="path"),
    queries=dict(type="list", elements="str"),
    policy=dict(type="dict"),
    kubedescheduler=dict(type="dict"),
    now=dict(type="str"),
    prometheus_url=dict(type="str"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("policy", "kubedescheduler")],
                           required_one_of=[("dest", "prometheus_dest")], supports_check_mode=True)
    finish(module, run_and_report(module, run_record, module.params, module.check_mode))


if __name__ == "__main__":
    main()
