"""The operator module's flavor options (``upstream``, ``volcano``) as plain data (no Ansible import).

Each default is written here once: the module's argument spec is meant to use these specs, and the runner fills the
suboptions of an omitted option from the same defaults (``defaults``). ``OPERATOR_ARG_SPEC`` is the module's own
options (connection, identity, OLM and wait options come from cluster/args): the rollout's check of a cluster's
``operator`` options derives its names and defaults from it too.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import (
    UPSTREAM_IMAGE,
    UPSTREAM_NAME,
    UPSTREAM_NAMESPACE,
    UPSTREAM_VERSION,
    VOLCANO_IMAGE,
    VOLCANO_NAME,
    VOLCANO_NAMESPACE,
    VOLCANO_VERSION,
)

MODES = ["predictive", "automatic"]


def _deployed_as(name: str, namespace: str, image: str, version: str) -> dict[str, dict[str, Any]]:
    """The options that come first in every flavor: what is deployed where, and in which mode."""
    return {
        "name": {"type": "str", "default": name},
        "namespace": {"type": "str", "default": namespace},
        "image": {"type": "str", "default": image},
        "version": {"type": "str", "default": version},
        "mode": {"type": "str", "choices": MODES, "default": "predictive"},
    }


# The kubernetes-sigs descheduler as its Helm chart (0.36) deploys it.
UPSTREAM_ARG_SPEC: dict[str, dict[str, Any]] = {
    **_deployed_as(UPSTREAM_NAME, UPSTREAM_NAMESPACE, UPSTREAM_IMAGE, UPSTREAM_VERSION),
    "kind": {"type": "str", "choices": ["deployment", "cronjob"], "default": "deployment"},
    "interval": {"type": "str", "default": "5m"},
    "schedule": {"type": "str", "default": "*/2 * * * *"},
    "policy": {"type": "dict"},
    "priority_class_name": {"type": "str", "default": "system-cluster-critical"},
    "log_level": {"type": "int", "default": 3},
    "extra_args": {"type": "list", "elements": "str", "default": []},
}

# The Volcano descheduler as its installer (installer/volcano-descheduler-development.yaml) deploys it.
VOLCANO_ARG_SPEC: dict[str, dict[str, Any]] = {
    **_deployed_as(VOLCANO_NAME, VOLCANO_NAMESPACE, VOLCANO_IMAGE, VOLCANO_VERSION),
    "interval": {"type": "str", "default": "10m"},
    "policy": {"type": "dict"},
    "log_level": {"type": "int", "default": 3},
    "extra_args": {"type": "list", "elements": "str", "default": []},
}


OPERATOR_ARG_SPEC: dict[str, dict[str, Any]] = {
    "flavor": {"type": "str", "choices": ["olm", "upstream", "volcano"], "default": "olm"},
    "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    "remove_crd": {"type": "bool", "default": False},
    "upstream": {"type": "dict", "options": UPSTREAM_ARG_SPEC, "apply_defaults": True},
    "volcano": {"type": "dict", "options": VOLCANO_ARG_SPEC, "apply_defaults": True},
    "volcano_scheduler_config": {"type": "raw", "aliases": ["scheduler_config"]},
}


def defaults(spec: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each suboption's default (None when it has none), as the module would fill them in."""
    return {name: option.get("default") for name, option in spec.items()}
