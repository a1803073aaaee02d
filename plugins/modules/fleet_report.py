#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: fleet_report
short_description: Write the fleet summary of descheduler plans (one row per cluster)
version_added: 0.1.0
description:
  - Takes the per-cluster results of a fleet dry run (as the C(dry_run) role records them) and writes
    C(fleet-summary.json), C(fleet-summary.md) and a self-contained C(fleet-summary.html).
  - Each cluster row shows its status (failed clusters with their error), evictions in total and by plugin, the top
    namespaces and owners, the limits hit, errors and warnings, and a link to the cluster's own report.
  - With O(kind=whatif), takes the per-cluster results of the C(whatif) role instead and writes
    C(whatif-fleet.json), C(whatif-fleet.md) and C(whatif-fleet.html) - each cluster's best candidate and why, the
    candidates over the fleet (evictions, VMs migrated, PDB-blocked, clusters where each is the best, final
    spread), side by side per cluster, and a link to each cluster's C(whatif.html).
  - With O(run_id) and O(run_store), builds the summary of a whole run from the run store instead of O(clusters) -
    every job slice's clusters (AWX/AAP job slicing), see M(descheduler.fleet.run_store). A cluster planned twice in
    the run (two inventory hosts or slices reaching the same cluster) is shown failed, naming the others, and the
    task fails once the summary is written. A run id the store holds no run of fails before any file is written,
    naming the closest existing run id.
  - Does not talk to any cluster.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.run_store
attributes:
  check_mode:
    support: full
    details: Report files are written in check mode too; they change no cluster.
  diff_mode:
    support: none
    details: Nothing is changed in a cluster, so there is no diff.
options:
  clusters:
    description:
      - One entry per cluster. Either this or O(run_id) with O(run_store).
    type: list
    elements: dict
    suboptions:
      cluster:
        description: Name of the cluster.
        type: str
        required: true
      ok:
        description: Whether the plan of this cluster could be computed.
        type: bool
        required: true
      error:
        description: The error message when O(clusters[].ok) is false.
        type: str
      plan:
        description: The plan (or its summary part) returned by M(descheduler.fleet.plan).
        type: dict
      best:
        description: With O(kind=whatif), the cluster's best candidate (M(descheduler.fleet.whatif)'s C(best)).
        type: str
      best_reason:
        description: With O(kind=whatif), why (M(descheduler.fleet.whatif)'s C(best_reason)).
        type: str
      candidates:
        description: With O(kind=whatif), the candidates' figures (M(descheduler.fleet.whatif)'s C(candidates)).
        type: list
        elements: dict
      cluster_identity:
        description: With O(kind=whatif), the cluster's identity, kept in the JSON summary.
        type: dict
      report_dir:
        description: Directory of the cluster's own report (linked from the summary).
        type: str
  kind:
    description:
      - C(dry_run) summarizes plans (C(fleet-summary.*)); C(whatif) summarizes what-if comparisons of candidate
        policies (C(whatif-fleet.*)).
    type: str
    choices: [dry_run, whatif]
    default: dry_run
  report_dir:
    description:
      - Directory to write the fleet summary into; created if needed.
    type: path
    required: true
  report_template_dir:
    description:
      - A directory of Jinja2 templates that replace the shipped ones of the same name (for example
        C(fleet.html), C(fleet.md), C(style.css)); HTML templates are autoescaped. See docs/reports.md.
      - A template that does not render fails the task before any file is written.
    type: path
"""

EXAMPLES = r"""
- name: Write the fleet summary once the clusters are planned
  descheduler.fleet.fleet_report:
    clusters: "{{ ansible_play_hosts_all | map('extract', hostvars, 'dry_run_result') | select('defined') | list }}"
    report_dir: reports/
  run_once: true
  delegate_to: localhost

- name: Write the what-if fleet summary once every cluster's candidates are compared
  descheduler.fleet.fleet_report:
    kind: whatif
    clusters: "{{ ansible_play_hosts_all | map('extract', hostvars, 'whatif_result') | select('defined') | list }}"
    report_dir: reports/whatif
  run_once: true
  delegate_to: localhost

- name: One fleet summary of a sliced dry run, from the run store (every slice's clusters)
  descheduler.fleet.fleet_report:
    run_store:
      bucket: descheduler-runs
      endpoint_url: https://minio.example.com:9000
    run_id: "{{ descheduler_fleet_run_id }}"
    report_dir: reports/
"""

RETURN = r"""
files:
  description: Paths of the written summary.
  returned: always
  type: dict
  sample: {json: reports/fleet-summary.json, markdown: reports/fleet-summary.md, html: reports/fleet-summary.html}
fleet:
  description:
    - The summary table as data (per cluster rows and fleet totals).
    - With O(kind=whatif), the what-if summary - C(clusters) (each with C(ok), C(error), C(best), C(best_reason),
      C(candidates) and C(report)), C(candidates) (each candidate's totals over the fleet, with C(best_on)), and
      C(clusters_total), C(clusters_ok), C(clusters_failed), C(clusters_without_best).
  returned: always
  type: dict
run:
  description:
    - With O(run_id), the run read from the store - C(run_id), C(store) (where), C(clusters) (how many),
      C(planned_twice) (each cluster found in more than one record - C(by) C(uid) or C(name), C(value), C(records)),
      and C(evict_results) (what the evict step stored).
  returned: when O(run_id) is given
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import (
    summarize_fleet,
    write_fleet_summary,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.fleet_report import fleet_summary_of_run
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import RUN_STORE_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.fleet import (
    summarize_whatif_fleet,
    write_whatif_fleet_summary,
)

ARGUMENT_SPEC = argument_spec(
    RUN_STORE_ARG_SPEC,
    clusters=dict(
        type="list",
        elements="dict",
        options=dict(
            cluster=dict(type="str", required=True),
            ok=dict(type="bool", required=True),
            error=dict(type="str"),
            plan=dict(type="dict"),
            report_dir=dict(type="str"),
            best=dict(type="str"),
            best_reason=dict(type="str"),
            candidates=dict(type="list", elements="dict"),
            cluster_identity=dict(type="dict"),
        ),
    ),
    kind=dict(type="str", choices=["dry_run", "whatif"], default="dry_run"),
    report_dir=dict(type="path", required=True),
    report_template_dir=dict(type="path"),
)
# kind: (write the summary files, the summary as data)
SUMMARIES = {"dry_run": (write_fleet_summary, summarize_fleet),
             "whatif": (write_whatif_fleet_summary, summarize_whatif_fleet)}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_one_of=[("clusters", "run_id")], mutually_exclusive=[("clusters", "run_id")],
                           required_together=[("run_id", "run_store")])
    if module.params["run_id"] is not None:
        finish(module, run_and_report(module, fleet_summary_of_run, module.params))
    clusters = module.params["clusters"]
    write, summarize = SUMMARIES[module.params["kind"]]
    try:
        files = write(clusters, module.params["report_dir"], template_dir=module.params["report_template_dir"])
    except OSError as exc:
        module.fail_json(msg=f"cannot write the fleet summary into {module.params['report_dir']}: {exc}")
    except FleetError as exc:  # a user's template that does not render
        module.fail_json(msg=exc.user_message())
    module.exit_json(changed=False, files=files, fleet=summarize(clusters, out_dir=module.params["report_dir"]))


if __name__ == "__main__":
    main()
