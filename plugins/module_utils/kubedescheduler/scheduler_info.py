"""Read-only facts about what places the evicted pods and the other descheduler flavors the info module reports:
the Secondary Scheduler Operator (installed version, its CR, the KubeSchedulerConfiguration it runs) and the Volcano
descheduler (its Deployment, policy, and whether the Volcano scheduler's configuration pairs with it).

``reader`` is info's reader: reads that are forbidden become notes, an API that is not served reads as nothing.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import resource_path
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import volcano_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.catalog import csv_version
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import (
    OLM_V1ALPHA1,
    UPSTREAM_POLICY_KEY,
    VOLCANO_NAME,
    VOLCANO_NAMESPACE,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.names import (
    CONFIG_KEY,
    CR_NAME,
    CSV_PREFIX,
    NAMESPACE,
    OPERAND_DEPLOYMENT,
    PACKAGE,
)

VOLCANO_SELECTOR = "app.kubernetes.io/name=volcano-descheduler"  # what the operator module's volcano flavor sets
VOLCANO_SCHEDULER_CONFIGMAP = "volcano-scheduler-configmap"


def _deployment_status(deployment: Optional[dict]) -> Optional[dict]:
    if deployment is None:
        return None
    status = deployment.get("status") or {}
    return {"name": deployment["metadata"]["name"], "namespace": deployment["metadata"].get("namespace"),
            "replicas": status.get("replicas", 0), "available_replicas": status.get("availableReplicas", 0)}


def _container(deployment: dict) -> dict:
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return containers[0] if containers else {}


def _parse_yaml(text: Optional[str]) -> Optional[Any]:
    import yaml  # imported when used: the module's import must not need PyYAML (ansible-test import sanity)

    try:
        return yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return None


# ---- the Secondary Scheduler Operator -------------------------------------------------------------------------------

def secondary_scheduler_facts(reader: Any) -> Optional[dict]:
    subscriptions = reader.list(resource_path(OLM_V1ALPHA1, "subscriptions", NAMESPACE), "Subscription")
    subscription = next((s for s in subscriptions if (s.get("spec") or {}).get("name") == PACKAGE), None)
    cr = reader.get(resource_path("operator.openshift.io/v1", "secondaryschedulers", NAMESPACE, CR_NAME),
                    "SecondaryScheduler")
    if subscription is None and cr is None:
        return None
    installed = ((subscription or {}).get("status") or {}).get("installedCSV")
    csv = reader.get(resource_path(OLM_V1ALPHA1, "clusterserviceversions", NAMESPACE, installed),
                     "ClusterServiceVersion") if installed else None
    spec = (cr or {}).get("spec") or {}
    config = _scheduler_config(reader, spec.get("schedulerConfig"))
    deployment = reader.get(resource_path("apps/v1", "deployments", NAMESPACE, OPERAND_DEPLOYMENT), "Deployment")
    return {
        "namespace": NAMESPACE,
        "installed_csv": installed,
        "installed_version": csv_version(csv, installed, CSV_PREFIX) if installed else None,
        "csv_phase": ((csv or {}).get("status") or {}).get("phase"),
        "secondary_scheduler": {"spec": spec, "conditions": ((cr or {}).get("status") or {}).get("conditions") or []}
        if cr is not None else None,
        "config_source": f"ConfigMap {NAMESPACE}/{spec['schedulerConfig']} key {CONFIG_KEY}"
        if spec.get("schedulerConfig") else None,
        "config": config,
        "scheduler_names": [p.get("schedulerName") for p in (config or {}).get("profiles") or []
                            if isinstance(p, dict)],
        "deployment": _deployment_status(deployment),
    }


def _scheduler_config(reader: Any, name: Optional[str]) -> Optional[dict]:
    if not name:
        return None
    config_map = reader.get(resource_path("v1", "configmaps", NAMESPACE, name), "ConfigMap")
    config = _parse_yaml(((config_map or {}).get("data") or {}).get(CONFIG_KEY))
    return _redacted(config) if isinstance(config, dict) else None


def _redacted(config: dict) -> dict:
    """The metric provider's token stays in the cluster, never in a report."""
    shown = copy.deepcopy(config)
    for profile in shown.get("profiles") or []:
        for entry in (profile or {}).get("pluginConfig") or []:
            provider = ((entry or {}).get("args") or {}).get("metricProvider")
            if isinstance(provider, dict) and provider.get("token"):
                provider["token"] = "(redacted)"
    return shown


# ---- the Volcano descheduler ----------------------------------------------------------------------------------------

def volcano_facts(reader: Any) -> Optional[dict]:
    deployment = reader.get(resource_path("apps/v1", "deployments", VOLCANO_NAMESPACE, VOLCANO_NAME), "Deployment")
    if deployment is None:
        found = reader.list(resource_path("apps/v1", "deployments"), "Deployment", VOLCANO_SELECTOR)
        deployment = found[0] if found else None
    if deployment is None:
        return None
    namespace = deployment["metadata"]["namespace"]
    container = _container(deployment)
    args = [str(a) for a in container.get("args") or []]
    policy = _volcano_policy(reader, deployment)
    scheduler_map = reader.get(resource_path("v1", "configmaps", namespace, VOLCANO_SCHEDULER_CONFIGMAP), "ConfigMap")
    return {
        "namespace": namespace,
        "name": deployment["metadata"]["name"],
        "image": container.get("image"),
        "args": args,
        "mode": "predictive" if any(a in ("--dry-run", "--dry-run=true") for a in args) else "automatic",
        "interval": next((a.split("=", 1)[1] for a in args if a.startswith("--descheduling-interval=")), None),
        "deployment": _deployment_status(deployment),
        "policy": policy,
        "scheduler_config_source": f"ConfigMap {namespace}/{VOLCANO_SCHEDULER_CONFIGMAP}" if scheduler_map else None,
        "pairing": _pairing(policy, scheduler_map),
    }


def _volcano_policy(reader: Any, deployment: dict) -> Optional[dict]:
    volumes = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("volumes") or []
    names = [v["configMap"].get("name") for v in volumes if isinstance(v, dict) and v.get("configMap")]
    if not names:
        return None
    config_map = reader.get(resource_path("v1", "configmaps", deployment["metadata"]["namespace"], names[0]),
                            "ConfigMap")
    policy = _parse_yaml(((config_map or {}).get("data") or {}).get(UPSTREAM_POLICY_KEY))
    return policy if isinstance(policy, dict) else None


def _pairing(policy: Optional[dict], scheduler_map: Optional[dict]) -> Optional[list[dict]]:
    """What the pairing checks find (empty: they pair well); None when either side could not be read."""
    if policy is None or scheduler_map is None:
        return None
    try:
        scheduler = volcano_policy.parse_scheduler_config(scheduler_map)
    except volcano_policy.SchedulerConfigError as error:
        return [{"field": "volcano_scheduler_config", "message": str(error), "severity": "error"}]
    if scheduler is None:
        return None
    return [{"field": p.field, "message": p.message, "severity": p.severity}
            for p in volcano_policy.pairing_problems(policy, scheduler)]
