"""What the upstream and Volcano flavors give their descheduler: the DeschedulerPolicy (the document, its text, and
the check that the descheduler would load it: the engine loads policies as the descheduler does, Volcano's LoadAware
included), the ``--descheduling-interval``, and the objects both deploy alike (labels, the policy ConfigMap, the
ClusterRoleBinding, the policy checksum on the pod template, the install result)."""

from __future__ import annotations

import hashlib
from typing import Any, Optional, Protocol

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import go_duration_ns
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import names
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref

try:  # PyYAML is an ansible-core dependency; ansible-test's import sanity loads modules without it
    import yaml
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]

POLICY_API_VERSION = "descheduler/v1alpha2"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
POLICY_FILE_ARG = f"--policy-config-file={names.UPSTREAM_POLICY_DIR}/{names.UPSTREAM_POLICY_KEY}"


class FlavorRequest(Protocol):
    """What the upstream and Volcano requests both carry."""
    name: str
    namespace: str
    image: str
    version: str
    mode: str
    extra_args: list[str]


def policy_document(policy: Optional[dict], default: dict[str, Any]) -> dict:
    """The full document: ``policy`` (``default`` when empty) with our apiVersion and kind."""
    body = {key: value for key, value in (policy or default).items() if key not in ("apiVersion", "kind")}
    return {"apiVersion": POLICY_API_VERSION, "kind": "DeschedulerPolicy", **body}


def policy_text(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def check_policy(session: ClusterSession, document: dict, option: str) -> None:
    """Load ``document`` as the descheduler would, with the cluster's PriorityClasses; a refusal names the module
    option (``upstream.policy``, ``volcano.policy``) and the field in it. The loader's warnings become the task's."""
    priority_classes = {pc["metadata"]["name"]: pc.get("value", 0) for pc in session.list("PriorityClass")}
    try:
        loaded = load_policy(document, priority_classes)
    except PolicyError as error:
        raise LifecycleError(f"{option} is not a policy the descheduler accepts: {error}",
                             field=error.field.replace("policy", option, 1), value=error.value) from error
    session.warnings.extend(loaded.warnings)


def is_interval(text: Optional[str]) -> bool:
    """A ``--descheduling-interval`` the descheduler takes: a positive Go duration (pflag parses it with
    time.ParseDuration; 0 would make it run once and exit, and its Deployment restart it)."""
    try:
        return go_duration_ns(text or "") > 0
    except ValueError:
        return False


def refuse_dry_run_when_automatic(request: FlavorRequest, option: str) -> None:
    """``--dry-run`` in extra_args would silently turn an automatic descheduler predictive; ``option`` is the
    module option holding the request (``upstream``, ``volcano``)."""
    if request.mode == "automatic" and "--dry-run" in " ".join(request.extra_args):
        raise LifecycleError(f"{option}.extra_args holds --dry-run while {option}.mode is automatic; set "
                             f"{option}.mode: predictive instead", field=f"{option}.extra_args")


def selector_labels(app_name: str, request: FlavorRequest) -> dict[str, str]:
    return {"app.kubernetes.io/name": app_name, "app.kubernetes.io/instance": request.name}


def labels(app_name: str, request: FlavorRequest) -> dict[str, str]:
    return {**selector_labels(app_name, request), "app.kubernetes.io/version": request.version,
            MANAGED_BY_LABEL: names.MANAGED_BY}


def refuse_other_installs_objects(session: ClusterSession, name: str, option: str) -> None:
    """Before any write: the ClusterRole and ClusterRoleBinding ``name`` of the descheduler must not belong to
    another install (a Helm release, another name's, one made by hand): taking them over would rebind its
    permissions, and a rollback could not tell them from ours."""
    ours = {MANAGED_BY_LABEL: names.MANAGED_BY, "app.kubernetes.io/instance": name}
    for ref in (Ref("ClusterRole", name), Ref("ClusterRoleBinding", name)):
        existing = session.read(ref)
        found = ((existing or {}).get("metadata") or {}).get("labels") or {}
        if existing is not None and any(found.get(key) != value for key, value in ours.items()):
            raise LifecycleError(
                f"{option}.name: {ref} already exists and belongs to another install (its labels: {_text(found)}; "
                f"this collection's carry {_text(ours)}); nothing was changed. Give {option}.name another name, or "
                "remove that install first", field=f"{option}.name", value=name)


def _text(labels: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(labels.items())) or "none"


def ensure_access_and_policy(session: ClusterSession, request: FlavorRequest, object_labels: dict[str, str],
                             cluster_role: dict, text: str) -> None:
    """The ServiceAccount, the ClusterRole (``cluster_role``) bound to it and the ConfigMap holding the policy
    ``text``, each named after the descheduler, in that order."""
    session.ensure("service_account", Ref("ServiceAccount", request.name, request.namespace),
                   {"metadata": {"labels": object_labels}})
    session.ensure("cluster_role", Ref("ClusterRole", request.name), cluster_role)
    session.ensure("cluster_role_binding", Ref("ClusterRoleBinding", request.name), {
        "metadata": {"labels": object_labels},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": request.name},
        "subjects": [{"kind": "ServiceAccount", "name": request.name, "namespace": request.namespace}],
    })
    session.ensure("policy", Ref("ConfigMap", request.name, request.namespace),
                   {"metadata": {"labels": object_labels}, "data": {names.UPSTREAM_POLICY_KEY: text}})


def policy_checksum(text: str) -> str:
    """The pod template's checksum/config annotation: a policy change changes the template, so the pods restart."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def install_result(request: FlavorRequest, workload: Ref, obj: dict, args: list[str], document: dict) -> dict:
    """What install returns for either flavor."""
    return {
        "namespace": request.namespace,
        "name": request.name,
        "kind": workload.kind,
        "image": f"{request.image}:{request.version}",
        "installed_version": request.version,
        "mode": request.mode,
        "args": args,
        "policy": document,
        "workload": {"kind": workload.kind, "name": workload.name, "namespace": workload.namespace,
                     "generation": (obj.get("metadata") or {}).get("generation")},
    }
