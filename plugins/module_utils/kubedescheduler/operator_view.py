"""The protected namespaces as the running operator has them, read from the cluster.

The operator fixes its protected list when it starts: kube-system, hypershift, openshift and every ``openshift-*``
namespace that exists then (operator-observed.md #4). An ``openshift-*`` namespace created later is not protected
until the operator restarts: its pods are evictable and it may be ``included``. So the list is made of
- what the operator rendered (ConfigMap ``cluster``, ``policy.yaml``): the protected-shaped names of its exclude lists,
- with the namespaces that existed when the operator's pod last started (its container's ``startedAt``: a restart
  after that rendering protects more);
- neither readable: every namespace that exists now, as the operator would see it after a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterator, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw, list_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    OPERATOR_LABEL_SELECTOR,
    PODS_PATH,
    POLICY_CONFIGMAP_PATH,
    POLICY_KEY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    STATIC_PROTECTED_NAMESPACES,
)

PROTECTED_PREFIX = "openshift-"


@dataclass
class OperatorView:
    """``namespaces``: what the running operator's protected list was built from (None: unknown, use the cluster's);
    ``late``: existing ``openshift-*`` namespaces it does not protect; ``source`` and ``started`` say why."""

    namespaces: Optional[list[str]] = None
    late: list[str] = field(default_factory=list)
    source: str = "the namespaces that exist now"
    started: Optional[str] = None


def _moment(text: Any) -> Optional[datetime]:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


def _pod_started(pod: Mapping[str, Any]) -> Optional[str]:
    """When the operator process started: its running container's startedAt, else the pod's startTime."""
    status = pod.get("status") or {}
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None  # going away: the operator that runs is in another pod
    for container in status.get("containerStatuses") or []:
        running = (container.get("state") or {}).get("running") or {}
        if running.get("startedAt"):
            return running["startedAt"]
    return status.get("startTime") if status.get("phase") == "Running" else None


def operator_started(api_client: Any) -> Optional[str]:
    """The latest start among the running operator pods (the one that leads after a restart); None if unreadable."""
    try:
        pods = list_raw(api_client, PODS_PATH, label_selector=OPERATOR_LABEL_SELECTOR, kind="Pod")[0]
    except ClusterApiError:
        return None
    starts = [start for start in (_pod_started(pod) for pod in pods) if _moment(start) is not None]
    return max(starts, key=_moment) if starts else None


def _exclude_lists(value: Any) -> Iterator[list]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "exclude" and isinstance(item, list):
                yield item
            else:
                yield from _exclude_lists(item)
    elif isinstance(value, list):
        for item in value:
            yield from _exclude_lists(item)


def rendered_protected(policy: Any) -> Optional[list[str]]:
    """The protected names in a rendered policy's exclude lists (an ``openshift-*`` namespace the user excluded
    looks the same); None when the policy has no exclude list (only ``included`` namespaces)."""
    names = {name for names in _exclude_lists(policy) for name in names if isinstance(name, str)}
    if not names:
        return None
    return sorted(n for n in names if n in STATIC_PROTECTED_NAMESPACES or n.startswith(PROTECTED_PREFIX))


def _rendered_policy(api_client: Any) -> Any:
    import yaml

    try:
        configmap = get_raw(api_client, POLICY_CONFIGMAP_PATH, kind="ConfigMap")
        return yaml.safe_load(((configmap or {}).get("data") or {}).get(POLICY_KEY) or "null")
    except (ClusterApiError, yaml.YAMLError):
        return None


def namespaces_created(api_client: Any) -> dict[str, Optional[str]]:
    """Every namespace with its creationTimestamp (what tells the operator's protected list from today's)."""
    items = list_raw(api_client, "/api/v1/namespaces", kind="Namespace")[0]
    return {item["metadata"]["name"]: item["metadata"].get("creationTimestamp") for item in items}


def late_namespaces_why(view: OperatorView) -> str:
    """What the running operator does with the openshift-* namespaces it does not protect (``view.late``)."""
    return (f"created after the operator started ({view.started or 'time unknown'}; its protected list is "
            f"{view.source}), so the running operator does not protect them until it restarts: their pods are "
            "evictable, its exclude lists leave them out and they may be included; after a restart they are protected")


def operator_view(api_client: Any, created: Mapping[str, Optional[str]]) -> OperatorView:
    """The running operator's protected namespaces, given every existing namespace with its creationTimestamp: those
    its rendered policy excludes, with those that existed when it (re)started (a restart after the rendering)."""
    started = operator_started(api_client)
    rendered = rendered_protected(_rendered_policy(api_client))
    if rendered is None and started is None:
        return OperatorView()
    start = _moment(started)
    at_start = [name for name, when in created.items() if start is not None and (_moment(when) or start) <= start]
    sources = (["the policy the operator rendered (ConfigMap cluster)"] if rendered is not None else []) + (
        [f"the namespaces that existed when the operator started ({started})"] if start is not None else [])
    known = set(rendered or []) | set(at_start)
    late = sorted(n for n in created if n.startswith(PROTECTED_PREFIX) and n not in known)
    return OperatorView(sorted(known), late, " and ".join(sources), started)
