"""Reading the scheduler configuration the plan option ``scheduler_config`` gives: a KubeSchedulerConfiguration
mapping, YAML/JSON text or file, or the ConfigMap holding it (the Secondary Scheduler's keeps it under config.yaml)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError

CONFIGMAP_KEYS = ("config.yaml", "scheduler-config.yaml", "config")


def read_scheduler_config(value: Any) -> Optional[Mapping[str, Any]]:
    if value is None:
        return None
    if isinstance(value, str):
        value = _parse(_read(value) if os.path.exists(value) else value, value)
    if not isinstance(value, Mapping):
        raise PolicyError("scheduler_config", value, "a KubeSchedulerConfiguration mapping, YAML text or file path")
    if value.get("kind") == "ConfigMap":
        data = value.get("data") or {}
        key = next((k for k in CONFIGMAP_KEYS if k in data), None)
        if key is None:
            raise PolicyError("scheduler_config.data", sorted(data),
                              f"a ConfigMap with the configuration under one of {', '.join(CONFIGMAP_KEYS)}")
        value = _parse(data[key], f"ConfigMap key {key}")
        if not isinstance(value, Mapping):
            raise PolicyError(f"scheduler_config.data.{key}", value, "a KubeSchedulerConfiguration document")
    return value


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise PolicyError("scheduler_config", path, f"a readable file: {exc.strerror or exc}") from exc


def _parse(text: str, where: str) -> Any:
    import yaml  # YAML is a superset of JSON

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError("scheduler_config", where[:80], f"valid YAML or JSON: {exc}") from exc
