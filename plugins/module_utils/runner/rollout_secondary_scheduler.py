"""The rollout's ``Change`` for the Secondary Scheduler (rollout module ``kind: secondary_scheduler``).

What is rolled out and restored is the scheduler's configuration: the KubeSchedulerConfiguration in the ConfigMap the
``SecondaryScheduler`` CR ``cluster`` names, with the CR's scheduler image and log level. It is applied with the
secondary_scheduler module's runner (the operator installed through OLM when missing, the ConfigMap and the CR
written, then a wait until the operator has rolled the scheduler Deployment out). A restore writes the recorded
configuration back the same way; when the cluster had no SecondaryScheduler before, it removes only the CR and
the ConfigMap the change created (labelled with its id, ``descheduler.fleet/change-id``), never the operator (a
rollout cannot tell whether it installed it). A CR or ConfigMap someone else modified since the change left it
(operator/ownership.py ``modified_since``), or created without the change's id, is neither restored nor removed: the
restore leaves it and reports it (``left_in_place``).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional
from uuid import uuid4

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import OLM_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw, resource_path
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter, deployment_readiness
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.rollout import condition_text
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import WaitTimeout
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import CHANGE_LABEL
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.ownership import modified_since
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import wait_gone
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.secondary_scheduler import (
    desired_config,
    run_secondary_scheduler,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler import config as scheduler_config
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.names import (
    CONFIG_KEY,
    CR_NAME,
    DEFAULT_CONFIGMAP,
    NAMESPACE,
    OPERAND_DEPLOYMENT,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.options import (
    SCHEDULER_ARG_SPEC,
    TRIMARAN_SPEC,
)

try:  # PyYAML is an ansible-core dependency; ansible-test's import sanity loads modules without it
    import yaml
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]

SECONDARY_SCHEDULER_RECORD_KEY = "secondary_scheduler.json"
CR_API_VERSION = "operator.openshift.io/v1"
# A cluster's ``secondary_scheduler`` options: the secondary_scheduler module's, with its defaults.
OPTION_DEFAULTS: dict[str, Any] = {
    name: spec.get("default") for name, spec in {**SCHEDULER_ARG_SPEC, **OLM_ARG_SPEC}.items()}
TEMPLATE_INPUT_STEPS = ("config_map", "secondary_scheduler")  # lifecycle.install's steps for them
TRIMARAN_OPTIONS = tuple(TRIMARAN_SPEC)


def scheduler_options(given: Optional[Mapping[str, Any]], field: str) -> dict[str, Any]:
    """A cluster's options with the module's defaults; an unknown option or a configuration that cannot run is an
    error naming it, raised before any cluster is touched."""
    given = {key: value for key, value in (given or {}).items() if value is not None}
    for key in given:
        if key not in OPTION_DEFAULTS:
            raise RolloutError(f"{field}.{key}: unknown option; use one of the secondary_scheduler module's: "
                               f"{', '.join(OPTION_DEFAULTS)}", f"{field}.{key}", given[key])
    for key in given.get("trimaran") or {}:
        if key not in TRIMARAN_OPTIONS:
            raise RolloutError(f"{field}.trimaran.{key}: unknown option; use {', '.join(TRIMARAN_OPTIONS)}",
                               f"{field}.trimaran.{key}", given["trimaran"][key])
    options = {**OPTION_DEFAULTS, **given}
    if options["state"] not in ("present", "absent"):
        raise RolloutError(f"{field}.state: {options['state']!r} is not present or absent", f"{field}.state",
                           options["state"])
    if options["state"] == "present":
        try:
            scheduler_config.validate(desired_config(options), f"{field}.scheduler_config")
        except scheduler_config.ConfigError as error:
            raise RolloutError(str(error), error.field, error.value) from error
    return options


def _template_inputs_changed(result: Mapping[str, Any]) -> bool:
    """The configuration ConfigMap or the CR written: what the operator renders the pod template from (a change of
    the Subscription alone gives no new template to wait for)."""
    return any(action.get("changed") and action.get("step") in TEMPLATE_INPUT_STEPS
               for action in result.get("actions") or [])


class SecondarySchedulerChange:
    """The secondary scheduler's configuration, changed and restored through the secondary_scheduler runner."""

    namespace = NAMESPACE
    record_key = SECONDARY_SCHEDULER_RECORD_KEY
    job = "installing"  # the secondary_scheduler module's (cluster/rights.py)

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.wait_sleep = float(params.get("wait_sleep") or 5)
        # on what the change creates: a rollback removes only what carries it
        self.change_labels = {CHANGE_LABEL: str(params.get("run_id") or "") or f"rollout-{uuid4().hex[:12]}"}
        # by cluster: the marker of each object the change wrote as it left it (None: deleted); absent when the
        # change ran in another process
        self.left_by_cluster: dict[str, dict[str, Optional[str]]] = {}

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        """``scheduler_config`` (parsed), ``config_map_name``, ``scheduler_image``, ``log_level``; None without a CR."""
        cr = get_raw(api_client, resource_path(CR_API_VERSION, "secondaryschedulers", NAMESPACE, CR_NAME))
        if cr is None:
            return None
        spec = cr.get("spec") or {}
        name = spec.get("schedulerConfig") or DEFAULT_CONFIGMAP
        config_map = get_raw(api_client, resource_path("v1", "configmaps", NAMESPACE, name), kind="ConfigMap")
        text = ((config_map or {}).get("data") or {}).get(CONFIG_KEY)
        return {"scheduler_config": yaml.safe_load(text) if text else None, "config_map_name": name,
                "scheduler_image": spec.get("schedulerImage"), "log_level": spec.get("logLevel") or "Normal"}

    def _run(self, target: Target, options: dict[str, Any], timeout: float, check_mode: bool) -> dict[str, Any]:
        """The secondary_scheduler runner, then (the runner's wait may see the old scheduler still available) a wait
        until the operator has rolled out a new pod template: it puts the configuration's resourceVersion, the log
        level and the image in the template, so any change of them gives a new one."""
        before = None if check_mode else self._template(target)
        params = {**target.params, **options, "wait": True, "wait_timeout": timeout, "wait_sleep": self.wait_sleep}
        result = run_secondary_scheduler(params, check_mode, want_diff=True, created_labels=self.change_labels,
                                         left=None if check_mode else self.left_by_cluster.setdefault(target.name, {}))
        if result.get("failed"):
            raise RolloutError(result.get("msg") or "the secondary scheduler failed", result.get("field") or "",
                               result.get("value"))
        if before is not None and options.get("state") != "absent" and _template_inputs_changed(result):
            self._wait_new_template(target, before, timeout)
        return result

    def _deployment(self, api_client: Any) -> Optional[dict]:
        return get_raw(api_client, resource_path("apps/v1", "deployments", NAMESPACE, OPERAND_DEPLOYMENT))

    def _template(self, target: Target) -> Optional[dict]:
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            return ((self._deployment(api_client) or {}).get("spec") or {}).get("template")
        finally:
            api_client.close()

    def _wait_new_template(self, target: Target, before: dict, timeout: float) -> None:
        api_client = connect_to_intended_cluster(target.params)[0]

        def observe() -> tuple[Optional[dict], bool]:
            deployment = self._deployment(api_client)
            template = ((deployment or {}).get("spec") or {}).get("template")
            return deployment, template != before and deployment_readiness(deployment).ready

        def timed_out(last: tuple[Optional[dict], bool]) -> WaitTimeout:
            status = (last[0] or {}).get("status") or {}
            return WaitTimeout(f"the operator did not roll the new configuration out within {timeout:g}s (Deployment "
                               f"{NAMESPACE}/{OPERAND_DEPLOYMENT}: replicas {status.get('replicas', 0)}, updated "
                               f"{status.get('updatedReplicas', 0)}, available {status.get('availableReplicas', 0)}); "
                               f"check the operator's log and the SecondaryScheduler {NAMESPACE}/{CR_NAME} conditions",
                               deployment_status=status)
        try:
            Waiter(timeout=timeout, interval=self.wait_sleep).until(observe, lambda last: last[1], timed_out)
        finally:
            api_client.close()

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        self.left_by_cluster.pop(target.name, None)
        result = self._run(target, dict(target.desired), timeout, check_mode)
        changes = [action for action in result.get("actions") or [] if action.get("changed")]
        # name the cluster in --diff output: one diff per changed object
        diffs = [{**diff, "before_header": f"{target.name}: {diff.get('before_header')}",
                  "after_header": f"{target.name}: {diff.get('after_header')}"} for diff in result.get("diff") or []]
        return {"changed": bool(result.get("changed")), "changes": changes, "diff": diffs or None,
                "msg": f"secondary scheduler {target.desired.get('state')}: {len(changes)} change(s)"}

    def _refs(self, target: Target, last_good: Optional[dict]) -> list[Ref]:
        """What a restore writes or removes: the CR and the configuration ConfigMap(s), the change's and the
        recorded one."""
        names = {target.desired.get("config_map_name") or DEFAULT_CONFIGMAP,
                 (last_good or {}).get("config_map_name") or DEFAULT_CONFIGMAP}
        config_maps = [Ref("ConfigMap", name, NAMESPACE) for name in sorted(names)]
        return [Ref("SecondaryScheduler", CR_NAME, NAMESPACE), *config_maps]

    def _not_as_left(self, session: ClusterSession, target: Target, last_good: Optional[dict]) -> dict[str, str]:
        """By object: why it is no longer the change's to take back. Modified by someone else since the change left
        it; or, when there was no SecondaryScheduler before (a restore removes what the change created), without
        the change's id: someone else created it, or it was there before and the change only updated it."""
        left = self.left_by_cluster.get(target.name) or {}
        reasons = {}
        for ref in self._refs(target, last_good):
            why = modified_since(session, ref, left)
            if why is None and last_good is None:
                why = self._not_created_by_the_change(session, ref)
            if why is not None:
                reasons[str(ref)] = f"{why}; left as it is"
        return reasons

    def _not_created_by_the_change(self, session: ClusterSession, ref: Ref) -> Optional[str]:
        found = session.read(ref)
        if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
            return None
        labels = (found.get("metadata") or {}).get("labels") or {}
        if all(labels.get(key) == value for key, value in self.change_labels.items()):
            return None
        return f"{ref} was not created by this change (no label {CHANGE_LABEL}={self.change_labels[CHANGE_LABEL]})"

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            session = ClusterSession(api_client)
            untouched = self._not_as_left(session, target, last_good)
            if last_good is None:
                return self._remove_created(session, target, untouched, timeout)
        finally:
            api_client.close()
        if untouched:  # someone else's now: a partial restore would mix their configuration with the old one
            reasons = list(untouched.values())
            return {"changed": False, "left_in_place": reasons, "msg": "; ".join(reasons)}
        if not last_good.get("scheduler_config"):
            raise RolloutError(f"the recorded configuration of {target.name} has no scheduler configuration (its "
                               f"ConfigMap {NAMESPACE}/{last_good.get('config_map_name')} was missing before the "
                               "change): restore it by hand", "last_good.scheduler_config", None)
        # The old configuration ran on this cluster: no metric-provider probe stands in the way of going back.
        options = {**target.desired, "state": "present", "scheduler_config": last_good["scheduler_config"],
                   "trimaran": None, "config_map_name": last_good["config_map_name"],
                   "scheduler_image": last_good["scheduler_image"], "log_level": last_good["log_level"],
                   "check_metric_provider": False}
        result = self._run(target, options, timeout, check_mode=False)
        return {"changed": bool(result.get("changed")), "msg": "previous scheduler configuration restored"}

    def _remove_created(self, session: ClusterSession, target: Target, untouched: dict[str, str],
                        timeout: float) -> dict[str, Any]:
        """No SecondaryScheduler before the change: delete the CR and the ConfigMap the change created, as it left
        them (not in ``untouched``); the operator stays."""
        cr = Ref("SecondaryScheduler", CR_NAME, NAMESPACE)
        if str(cr) not in untouched and session.delete("secondary_scheduler", cr):
            wait_gone(session, "operand", [Ref("Deployment", OPERAND_DEPLOYMENT, NAMESPACE)],
                      Waiter(timeout=timeout, interval=self.wait_sleep))
        config_map = Ref("ConfigMap", target.desired.get("config_map_name") or DEFAULT_CONFIGMAP, NAMESPACE)
        if str(config_map) not in untouched:
            session.delete("config_map", config_map)
        left_in_place = list(untouched.values())
        return {"changed": session.changed, "left_in_place": left_in_place,
                "msg": "; ".join(["SecondaryScheduler removed: there was none before", *left_in_place])
                if str(cr) not in untouched else "; ".join(left_in_place)}

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        """The operand gate: the scheduler Deployment rolled out and no Degraded condition on the CR (nothing to check
        without a CR: a rollout that removes it wants exactly that)."""
        cr = get_raw(api_client, resource_path(CR_API_VERSION, "secondaryschedulers", NAMESPACE, CR_NAME))
        if cr is None:
            return []
        conditions = (cr.get("status") or {}).get("conditions") or []
        breaches = [f"the operator reports {c.get('type')}: {condition_text(c)}" for c in conditions
                    if str(c.get("type", "")).endswith("Degraded") and c.get("status") == "True"]
        deployment = self._deployment(api_client)
        if deployment is None:
            breaches.append(f"the scheduler Deployment {NAMESPACE}/{OPERAND_DEPLOYMENT} does not exist")
        elif not deployment_readiness(deployment).ready:
            status = deployment.get("status") or {}
            breaches.append(f"the scheduler is not available ({status.get('availableReplicas', 0)}/"
                            f"{(deployment.get('spec') or {}).get('replicas', 1)} available)")
        return breaches
