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
  - Does not talk to any cluster.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
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
      - One entry per cluster.
    type: list
    elements: dict
    required: true
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
      report_dir:
        description: Directory of the cluster's own report (linked from the summary).
        type: str
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
"""

RETURN = r"""
files:
  description: Paths of the written summary.
  returned: always
  type: dict
  sample: {json: reports/fleet-summary.json, markdown: reports/fleet-summary.md, html: reports/fleet-summary.html}
fleet:
  description: The summary table as data (per cluster rows and fleet totals).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import (
    summarize_fleet,
    write_fleet_summary,
)

ARGUMENT_SPEC = dict(
    clusters=dict(
        type="list",
        elements="dict",
        required=True,
        options=dict(
            cluster=dict(type="str", required=True),
            ok=dict(type="bool", required=True),
            error=dict(type="str"),
            plan=dict(type="dict"),
            report_dir=dict(type="str"),
        ),
    ),
    report_dir=dict(type="path", required=True),
    report_template_dir=dict(type="path"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    clusters = module.params["clusters"]
    try:
        files = write_fleet_summary(clusters, module.params["report_dir"],
                                    template_dir=module.params["report_template_dir"])
    except OSError as exc:
        module.fail_json(msg=f"cannot write the fleet summary into {module.params['report_dir']}: {exc}")
    except FleetError as exc:  # a user's template that does not render
        module.fail_json(msg=exc.user_message())
    module.exit_json(changed=False, files=files,
                     fleet=summarize_fleet(clusters, out_dir=module.params["report_dir"]))


if __name__ == "__main__":
    main()
