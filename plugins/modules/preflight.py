#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation of the descheduler.fleet.preflight action plugin (plugins/action/preflight.py).

from __future__ import annotations

DOCUMENTATION = r"""
module: preflight
short_description: Check an inventory host's variables and target cluster before a role touches the cluster
version_added: 0.2.0
description:
  - The first task of every role of the collection. Runs on the controller and changes nothing.
  - Fails when the host has a variable with the collection's prefixes that the role does not read - a
    C(descheduler_fleet_*) variable that is not one of the fleet's, or a C(<role>_*) variable that is not one of the
    role's options or results - naming it with the closest known name. A misspelt variable would otherwise be
    ignored and its default used (for example a misspelt connection falling back to the default kubeconfig).
  - When the role talks to a cluster (O(needs_cluster)), fails unless the host names its cluster explicitly -
    O(kubeconfig), O(context) or O(host), which the role passes from C(descheduler_fleet_connection), or the
    C(K8S_AUTH_KUBECONFIG), C(K8S_AUTH_CONTEXT) or C(K8S_AUTH_HOST) environment variables (an AWX/AAP credential) -
    or sets C(descheduler_fleet_use_default_kubeconfig=true) to use the default kubeconfig and its current context
    on purpose.
  - When the host pins its cluster (C(descheduler_fleet_cluster_uid), the UID of the cluster's C(kube-system)
    namespace) and the role talks to a cluster, reads the UID of the cluster the connection reaches and fails,
    naming both, when it differs. Then the role's own modules have not read or changed anything yet.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.connection
  - action_common_attributes
  - action_common_attributes.conn
  - action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  become:
    support: none
  bypass_host_loop:
    support: none
  connection:
    support: none
  check_mode:
    support: full
  delegation:
    support: none
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  role:
    description:
      - The role whose variables are checked (its name without the collection, for example C(dry_run)); its
        options are read from its C(meta/argument_specs.yml). The task must run inside that role.
    type: str
    required: true
  outputs:
    description:
      - Variables the role sets itself besides C(<role>_result) and C(<role>_results) (set_stats names, registered
        results), which a later run in the same play finds defined.
    type: list
    elements: str
    default: []
  needs_cluster:
    description: Whether the role will talk to the host's cluster (false, for example, for a dry run of a snapshot).
    type: bool
    default: true
notes:
  - The connection options are only read to tell whether a cluster is named; nothing is connected to.
"""

EXAMPLES = r"""
# As the first task of a role (each role of the collection does this):
- name: Check this host's variables and the cluster it names
  descheduler.fleet.preflight:
    role: dry_run
    outputs: [dry_run_plans]
    needs_cluster: "{{ not dry_run_snapshot }}"
    kubeconfig: "{{ descheduler_fleet_connection.kubeconfig | default(omit, true) }}"
    context: "{{ descheduler_fleet_connection.context | default(omit, true) }}"
    host: "{{ descheduler_fleet_connection.host | default(omit, true) }}"
"""

RETURN = r"""
role:
  description: The role whose variables were checked.
  returned: success
  type: str
  sample: dry_run
cluster_identity:
  description: The UID of the C(kube-system) namespace and the server of the cluster reached, when the host pins
    its cluster (C(descheduler_fleet_cluster_uid)); null otherwise.
  returned: success
  type: dict
  sample: {uid: 5c2f0d4e-8a1b-4b7e-9f3a-2d6c1e0b9a87, server: "https://api.prod-1.example.com:6443"}
checked_variables:
  description: The role's variables the host may set (its options and results).
  returned: success
  type: list
  elements: str
  sample: [dry_run_policy, dry_run_report_dir, dry_run_result, dry_run_results]
"""
