#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: run_store
short_description: Keep a cluster's plan, summary and evict result of a fleet run in a shared store
version_added: 0.2.0
description:
  - A fleet run sliced by AWX/AAP (job slicing) runs in jobs that share nothing, and AWX does not merge C(set_stats)
    artifacts across slices. This module keeps what a later workflow node needs in a store every job reads - a
    directory on shared storage or an S3-compatible bucket - keyed by the run id, the inventory name and the
    cluster's identity (the UID of its C(kube-system) namespace), one object per cluster.
  - O(operation=check) checks the options and that the store answers (the directory is writable, the bucket
    exists and the credentials are accepted) and writes nothing; the roles run it before planning or evicting.
  - O(operation=save_plan) stores a cluster's dry-run result (its plan file and the summary the fleet report
    shows); O(operation=load_plan) returns the plan of a cluster for the evict step, refusing a cluster planned twice
    in the run (two inventory hosts or slices with the same cluster) or another cluster than
    O(expected_cluster_uid) (O(operation=save_plan) already warns when it finds the cluster stored by another
    slice); O(operation=save_evict_result) stores the evict step's result beside the plan.
  - O(operation=load_plan) and O(operation=save_evict_result) refuse a run id the store holds no run of, and a
    O(cluster) the run never planned, before any write, naming the closest existing run id or cluster.
  - M(descheduler.fleet.fleet_report) builds one fleet summary of a run from the store.
  - Does not talk to any cluster. The C(dry_run) and C(evict) roles call it when C(descheduler_fleet_run_store) is
    set.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.run_store
attributes:
  check_mode:
    support: full
    details: The store is written in check mode too, as report files are; it changes no cluster.
  diff_mode:
    support: none
    details: Nothing is changed in a cluster, so there is no diff.
options:
  operation:
    description: What to do.
    type: str
    choices: [check, save_plan, load_plan, save_evict_result]
    required: true
  cluster:
    description: The inventory name of the cluster.
    type: str
    required: true
  slice:
    description:
      - For O(operation=save_plan), the job slice that planned the cluster. Two slices storing the same cluster (by
        name or by identity) mark it planned twice. The roles give a digest of the play's hosts, so a re-run of the
        same slice replaces its own objects.
    type: str
  result:
    description:
      - For O(operation=save_plan), the cluster's dry-run result as the C(dry_run) role records it (C(cluster),
        C(ok), C(error), C(report_dir), C(plan)); the evictions are kept only in the plan object.
      - For O(operation=save_evict_result), the evict step's result of the cluster.
    type: dict
  plan_file:
    description: For O(operation=save_plan), the plan JSON the plan module wrote (C(<report_dir>/plan.json)).
    type: path
  expected_cluster_uid:
    description:
      - For O(operation=load_plan), refuse a plan of another cluster than this C(kube-system) UID.
      - For O(operation=save_plan) of a cluster whose dry run failed before its identity was read, the identity to
        file it under.
    type: str
"""

EXAMPLES = r"""
- name: Keep this cluster's plan in the run store
  descheduler.fleet.run_store:
    operation: save_plan
    run_store:
      bucket: descheduler-runs
      prefix: prod
      endpoint_url: https://minio.example.com:9000
    run_id: "{{ awx_workflow_job_id }}"
    cluster: "{{ inventory_hostname }}"
    slice: "{{ ansible_play_hosts_all | join(',') | hash('sha1') }}"
    result: "{{ dry_run_result }}"
    plan_file: "reports/{{ inventory_hostname }}/plan.json"

- name: Take the plan back in the evict step
  descheduler.fleet.run_store:
    operation: load_plan
    run_store:
      path: /mnt/shared/descheduler-runs
    run_id: "{{ awx_workflow_job_id }}"
    cluster: "{{ inventory_hostname }}"
  register: stored
"""

RETURN = r"""
ref:
  description:
    - Where the objects are (paths or C(s3://) URLs) - C(run) (the run's folder) for O(operation=check);
      C(summary), C(plan) and C(plan_seal) (the plan's seal without its per-eviction digests, also kept in the
      summary) for O(operation=save_plan); C(plan), C(cluster_uid) and C(slice) for
      O(operation=load_plan); C(evict_result) for O(operation=save_evict_result).
  returned: always
  type: dict
plan:
  description:
    - The cluster's plan - C(now), C(cluster_identity), C(evictions), C(seal) - as the evict module takes it.
    - A plan object whose seal is not the one the dry run's summary recorded (replaced after the dry run) is
      refused.
  returned: when O(operation=load_plan)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.run_store import run_run_store
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import RUN_STORE_ARG_SPEC

ARGUMENT_SPEC = argument_spec(
    RUN_STORE_ARG_SPEC,
    operation=dict(type="str", choices=["check", "save_plan", "load_plan", "save_evict_result"], required=True),
    cluster=dict(type="str", required=True),
    slice=dict(type="str"),
    result=dict(type="dict"),
    plan_file=dict(type="path"),
    expected_cluster_uid=dict(type="str"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    finish(module, run_and_report(module, run_run_store, module.params))


if __name__ == "__main__":
    main()
