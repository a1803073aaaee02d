"""Action plugin of ``descheduler.fleet.preflight`` (documented in plugins/modules/preflight.py): runs on the
controller, where the host's variables and the task's module_defaults are known, before a role reads its cluster."""

from __future__ import annotations

import os
from typing import Any, Optional

import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

try:  # ansible-core 2.19 applies module_defaults when a module runs, so an action that runs none merges them itself
    from ansible.executor.module_common import _apply_action_arg_defaults
except ImportError:  # ansible-core 2.18 merged them into the task's arguments before the action ran
    _apply_action_arg_defaults = None
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import CONNECTION_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.inventory.variables import (
    describe_unknown,
    names_a_cluster,
    no_target_message,
    unknown_variables,
)

ARGUMENT_SPEC = dict(
    CONNECTION_ARG_SPEC,
    role=dict(type="str", required=True),
    outputs=dict(type="list", elements="str", default=[]),
    needs_cluster=dict(type="bool", default=True),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[dict] = None) -> dict:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        if _apply_action_arg_defaults is not None:  # the group/descheduler.fleet.cluster connection of the play
            self._task.args = _apply_action_arg_defaults(self._task.resolved_action, self._task, self._task.args,
                                                         self._templar)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        role = args["role"]
        host = task_vars.get("inventory_hostname", "this host")
        known = set(self._role_options(role)) | {f"{role}_result", f"{role}_results"} | set(args["outputs"])
        unknown = unknown_variables(task_vars.keys(), role, known)
        if unknown:
            raise AnsibleActionFail(describe_unknown(unknown, role, host))
        # host variables reach an action unrendered, and from -e as strings ("false" must stay false)
        default_allowed = boolean(self._templar.template(
            task_vars.get("descheduler_fleet_use_default_kubeconfig", False)), strict=False)
        if args["needs_cluster"] and not default_allowed and not names_a_cluster(args, os.environ):
            raise AnsibleActionFail(no_target_message(host))
        identity = None
        pinned = self._templar.template(task_vars.get("descheduler_fleet_cluster_uid"))
        if args["needs_cluster"] and pinned:
            identity = self._check_pinned_cluster(args, str(pinned), host)
        result.update(changed=False, role=role, checked_variables=sorted(known), cluster_identity=identity)
        return result

    @staticmethod
    def _check_pinned_cluster(args: dict, pinned: str, host: str) -> dict:
        """Read the cluster's identity with the role's connection and compare it with descheduler_fleet_cluster_uid
        (the modules run on this controller, so it has the client library they use)."""
        connection = {name: args.get(name) for name in CONNECTION_ARG_SPEC}
        try:
            api_client, identity = connect_to_intended_cluster(
                {**connection, "descheduler_fleet_cluster_uid": pinned}, pinned_by="descheduler_fleet_cluster_uid")
            api_client.close()
        except ClusterError as error:
            describe = getattr(error, "describe", None)
            raise AnsibleActionFail(f"{host}: {describe() if callable(describe) else error}") from None
        return identity.as_dict()

    def _role_options(self, role: str) -> list[str]:
        """The options of the role's meta/argument_specs.yml (entry point main)."""
        role_path = getattr(getattr(self._task, "_role", None), "_role_path", None)
        if not role_path:
            raise AnsibleActionFail(f"descheduler.fleet.preflight checks the variables of a role: run it as a task "
                                    f"of the role descheduler.fleet.{role}")
        with open(os.path.join(role_path, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            specs: Any = yaml.safe_load(handle) or {}
        return list(((specs.get("argument_specs") or {}).get("main") or {}).get("options") or {})
