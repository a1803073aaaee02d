"""What the upstream and Volcano flavors give their descheduler: the DeschedulerPolicy (the document, its text, and
the check that the descheduler would load it: the engine loads policies as the descheduler does, Volcano's LoadAware
included) and the ``--descheduling-interval``."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import go_duration_ns
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession

try:  # PyYAML is an ansible-core dependency; ansible-test's import sanity loads modules without it
    import yaml
except ImportError:  # pragma: no cover - ansible-core always ships PyYAML
    yaml = None  # type: ignore[assignment]

POLICY_API_VERSION = "descheduler/v1alpha2"


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
