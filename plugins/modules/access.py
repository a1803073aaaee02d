#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: access
short_description: Give one job of the collection its own ServiceAccount with exactly the shipped rights
version_added: 0.2.0
description:
  - Creates the ServiceAccount O(service_account) in O(namespace), the shipped ClusterRoles of O(job) and of the jobs
    it includes (a job that plans first is also bound to C(descheduler-fleet-planning)), their ClusterRoleBindings
    and, for a job that keeps a Lease or record in a namespace, its Role and RoleBinding in O(role_namespace).
    The rules are those of C(rbac/<job>.yml) and of the README's "Permissions" table (one source,
    C(plugins/module_utils/cluster/rights.py)).
  - With O(kubeconfig_dest), writes a kubeconfig (mode 0600) for that ServiceAccount with a token from the
    TokenRequest API, for an AWX/AAP credential; the token is never returned.
  - Every object is read first and written only when it differs, so a second run reports no change.
  - The connection needs the rights to create ServiceAccounts, ClusterRoles and bindings that grant these rules
    (a cluster administrator's).
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.cluster_identity
attributes:
  check_mode:
    support: full
    details: Reads the cluster and reports in RV(actions) what it would create or update; writes nothing.
  diff_mode:
    support: full
    details: Before and after of every object created or updated.
options:
  job:
    description: The job the ServiceAccount does (README, "Permissions").
    type: str
    required: true
    choices: [planning, executing, configuring, installing]
  namespace:
    description: Namespace of the ServiceAccount (it must exist).
    type: str
    required: true
  service_account:
    description: Name of the ServiceAccount; left out, C(descheduler-fleet-<job>).
    type: str
  role_namespace:
    description:
      - "Where the job keeps its Lease or record (the evict module's C(lease.namespace), the rollout record's
        namespace): its Role and RoleBinding go there. Required for O(job=executing) and O(job=configuring)."
      - It must exist, as O(namespace) must; a missing one fails before any write, naming it.
    type: str
  kubeconfig_dest:
    description: Write a kubeconfig for the ServiceAccount to this path (mode 0600), unless it exists.
    type: path
  rotate_token:
    description: Write O(kubeconfig_dest) with a new token even when it exists.
    type: bool
    default: false
  token_seconds:
    description: Lifetime asked of the token; left out, the API server's default.
    type: int
  context_name:
    description: Name of the cluster, user and context in the written kubeconfig.
    type: str
    default: descheduler-fleet
"""

EXAMPLES = r"""
- name: A ServiceAccount for the evict role, its Lease in kube-system, and a kubeconfig for AWX
  descheduler.fleet.access:
    kubeconfig: /etc/clusters/admin-east.kubeconfig
    job: executing
    namespace: descheduler-fleet
    role_namespace: kube-system
    kubeconfig_dest: /secure/east-evict.kubeconfig
"""

RETURN = r"""
job:
  description: The job granted.
  returned: always
  type: str
service_account:
  description: The ServiceAccount's name.
  returned: always
  type: str
namespace:
  description: The ServiceAccount's namespace.
  returned: always
  type: str
cluster_roles:
  description: The ClusterRoles bound to the ServiceAccount.
  returned: success
  type: list
  elements: str
kubeconfig:
  description: The path of the written (or kept) kubeconfig, or null without O(kubeconfig_dest).
  returned: success
  type: str
cluster_identity:
  description: UID of the cluster's kube-system namespace and the server reached.
  returned: always
  type: dict
check_mode:
  description: Whether nothing was written.
  returned: always
  type: bool
actions:
  description: One entry per object (C(step), C(object), C(action), C(changed), C(message)).
  returned: always
  type: list
  elements: dict
diff:
  description: Before and after of each object changed.
  returned: with --diff
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.access import run_access

ARGUMENT_SPEC = argument_spec(
    CONNECTION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
    job=dict(type="str", required=True, choices=["planning", "executing", "configuring", "installing"]),
    namespace=dict(type="str", required=True),
    service_account=dict(type="str"),
    role_namespace=dict(type="str"),
    kubeconfig_dest=dict(type="path"),
    rotate_token=dict(type="bool", default=False),
    token_seconds=dict(type="int", no_log=False),
    context_name=dict(type="str", default="descheduler-fleet"),
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    finish(module, run_and_report(module, run_access, module.params, module.check_mode, module._diff))


if __name__ == "__main__":
    main()
