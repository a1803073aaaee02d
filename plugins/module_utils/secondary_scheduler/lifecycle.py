"""Installing, configuring and removing the Secondary Scheduler Operator and its scheduler (peers.md §4.4).

Install: check the configuration (and the metric source when asked) -> the operator through OLM, with the same steps
as the Kube Descheduler Operator (catalog checked, channel, Manual approval of the requested CSV only, wait for the
CSV) -> the KubeSchedulerConfiguration ConfigMap -> the ``SecondaryScheduler`` CR ``cluster`` -> wait until the
operator's ``secondary-scheduler`` Deployment is available.

Remove, in order: the CR (then wait for the operand Deployment to go: the operator garbage-collects it), our
ConfigMap, the Subscription and CSV(s), and the OperatorGroup and namespace only when this collection created the
namespace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import olm
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.catalog import resolve_channel
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import MANAGED_BY
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import (
    deployment_facts,
    wait_gone,
    wait_rolled_out,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler import config as scheduler_config
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler import probe
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.names import (
    CONFIG_KEY,
    CR_NAME,
    MANAGED_BY_LABEL,
    NAMESPACE,
    OPERAND_DEPLOYMENT,
    SSO_OLM,
)

try:  # PyYAML is an ansible-core dependency; ansible-test's import sanity loads modules without it
    import yaml
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]


@dataclass
class SchedulerRequest:
    olm: olm.OlmRequest
    config: dict  # the KubeSchedulerConfiguration
    config_map: str
    scheduler_image: Optional[str]
    log_level: str
    check_metric_provider: bool
    wait: bool
    waiter: Waiter
    field_aliases: Optional[dict[str, str]] = None  # config field -> the module option it was built from


# ---- install --------------------------------------------------------------------------------------------------------

def check_config(session: ClusterSession, request: SchedulerRequest) -> list[dict]:
    """Everything that can be known wrong before the first write."""
    try:
        session.warnings.extend(scheduler_config.validate(request.config))
        if request.check_metric_provider:
            checked = probe.check_sources(session.api, scheduler_config.metric_sources(request.config))
            aliases = request.field_aliases or {}
            return [{**entry, "field": aliases.get(entry["field"], entry["field"])} for entry in checked]
    except scheduler_config.ConfigError as error:
        field = (request.field_aliases or {}).get(error.field, error.field)
        message = str(error).replace(error.field, field, 1)
        raise LifecycleError(message, field=field, value=error.value) from error
    return []


def install(session: ClusterSession, request: SchedulerRequest) -> dict:
    checked = check_config(session, request)
    if not request.scheduler_image:
        raise LifecycleError("scheduler_image: required with state present: the scheduler-plugins kube-scheduler "
                             "image the operator runs, matching the cluster's Kubernetes minor version (e.g. "
                             "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8 on Kubernetes 1.31)",
                             field="scheduler_image")
    # The catalog is read before the namespace is written (olm.install reads it again: a cheap read).
    resolve_channel(session, SSO_OLM.package, request.olm.source, request.olm.source_namespace, request.olm.channel,
                    request.olm.starting_csv)
    ensure_own_namespace(session)
    operator = olm.install(session, request.olm)
    text = config_text(request.config)
    session.ensure("config_map", Ref("ConfigMap", request.config_map, NAMESPACE),
                   {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY}}, "data": {CONFIG_KEY: text}})
    cr = session.ensure("secondary_scheduler", Ref("SecondaryScheduler", CR_NAME, NAMESPACE), {"spec": {
        "managementState": "Managed", "schedulerConfig": request.config_map,
        "schedulerImage": request.scheduler_image, "logLevel": request.log_level}})
    deployment = None
    if request.wait and not session.check_mode:
        deployment = wait_available(session, request.waiter)
    return {
        **operator,
        "scheduler_config": request.config,
        "config_map": f"{NAMESPACE}/{request.config_map}",
        "scheduler_names": [p.get("schedulerName") for p in request.config.get("profiles") or []],
        "secondary_scheduler": {"name": CR_NAME, "namespace": NAMESPACE, "spec": cr.get("spec") or {}},
        "deployment": deployment_facts(deployment),
        "metric_provider_checks": checked,
    }


def config_text(config: dict) -> str:
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def ensure_own_namespace(session: ClusterSession) -> None:
    """Created here (and labelled so) only when missing, so removal knows whether the namespace is ours."""
    ref = Ref("Namespace", NAMESPACE)
    if session.read(ref) is None:
        session.ensure("namespace", ref, {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY}}})


def wait_available(session: ClusterSession, waiter: Waiter) -> dict:
    """Until the operator's scheduler Deployment is rolled out; returns it."""
    return wait_rolled_out(session, Ref("Deployment", OPERAND_DEPLOYMENT, NAMESPACE), waiter,
                           f"check the operator's log and the SecondaryScheduler {NAMESPACE}/{CR_NAME} conditions")


# ---- uninstall ------------------------------------------------------------------------------------------------------

def uninstall(session: ClusterSession, config_map: str, wait: bool, waiter: Waiter) -> dict:
    cr = Ref("SecondaryScheduler", CR_NAME, NAMESPACE)
    if session.delete("secondary_scheduler", cr) and wait and not session.check_mode:
        wait_gone(session, "operand", [Ref("Deployment", OPERAND_DEPLOYMENT, NAMESPACE)], waiter)
    session.delete("config_map", Ref("ConfigMap", config_map, NAMESPACE))
    csvs = _remove_subscription_and_csvs(session)
    namespace = session.read(Ref("Namespace", NAMESPACE))
    ours = ((namespace or {}).get("metadata") or {}).get("labels", {}).get(MANAGED_BY_LABEL) == MANAGED_BY
    if namespace is not None and (namespace.get("metadata") or {}).get("deletionTimestamp"):
        session.record("namespace", f"Namespace {NAMESPACE}", "none", False, "already being deleted")
    elif namespace is not None and ours:
        for group in session.list("OperatorGroup", NAMESPACE):
            session.delete("operator_group", Ref("OperatorGroup", group["metadata"]["name"], NAMESPACE), group)
        session.delete("namespace", Ref("Namespace", NAMESPACE), namespace)
        if wait and not session.check_mode:
            wait_gone(session, "namespace", [Ref("Namespace", NAMESPACE)], waiter)
    elif namespace is not None:
        session.record("namespace", f"Namespace {NAMESPACE}", "none", False,
                       "kept with its OperatorGroup: not created by descheduler.fleet")
    return {"namespace": NAMESPACE, "removed_csvs": csvs, "namespace_removed": bool(namespace is not None and ours)}


def _remove_subscription_and_csvs(session: ClusterSession) -> list[str]:
    subscription = olm.find_subscription(session, SSO_OLM)
    names: list[str] = []
    if subscription is not None:
        status = subscription.get("status") or {}
        names += [n for n in (status.get("installedCSV"), status.get("currentCSV")) if n]
        session.delete("subscription", Ref("Subscription", subscription["metadata"]["name"], NAMESPACE),
                       subscription)
    names += [csv["metadata"]["name"] for csv in session.list("ClusterServiceVersion", NAMESPACE)
              if csv["metadata"]["name"].startswith(SSO_OLM.csv_prefix)]
    unique = list(dict.fromkeys(names))
    for name in unique:
        session.delete("csv", Ref("ClusterServiceVersion", name, NAMESPACE))
    return unique
