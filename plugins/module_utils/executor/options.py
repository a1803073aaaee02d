"""The executor's settings, validated once, with the reasons behind the defaults."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError

# KubeVirt's own defaults (virt-config parallelMigrationsPerCluster / parallelOutboundMigrationsPerNode): asking for
# more only queues migrations inside KubeVirt while we count them as running.
DEFAULT_MIGRATIONS_PER_CLUSTER = 5
DEFAULT_MIGRATIONS_PER_NODE = 2
# Like a Deployment's rolling update default: at most a quarter of a workload disrupted at once.
DEFAULT_MAX_UNAVAILABLE = "25%"
MAX_RETRY_DELAY = 30.0  # 429s carry no Retry-After (kubernetes #36409); back off, but keep trying often enough


class ExecutorInputError(FleetError, ValueError):
    """Bad executor input (options, plan, pod list): the message names the option and the fix."""


@dataclass(frozen=True)
class KubeVirtOptions:
    max_migrations_per_cluster: int = DEFAULT_MIGRATIONS_PER_CLUSTER
    max_migrations_per_node: int = DEFAULT_MIGRATIONS_PER_NODE
    migration_timeout: float = 900.0
    allow_vm_restart: bool = False


@dataclass(frozen=True)
class ExecutorOptions:
    max_per_node: Optional[int] = None
    max_per_namespace: Optional[int] = None
    max_per_owner: Optional[int] = None
    max_total: Optional[int] = None
    max_in_flight: int = 5
    pause: float = 0.0
    max_unavailable: Optional[str] = DEFAULT_MAX_UNAVAILABLE
    timeout: float = 300.0
    retry_delay: float = 5.0
    poll_interval: float = 2.0
    grace_period: Optional[int] = None
    failure_budget: int = 3
    wait_for_replacements: bool = True
    replacement_timeout: float = 300.0
    journal: Optional[str] = None
    check_mode: bool = False
    kubevirt: KubeVirtOptions = field(default_factory=KubeVirtOptions)

    @property
    def max_retry_delay(self) -> float:
        return max(MAX_RETRY_DELAY, self.retry_delay)

    def limits(self) -> dict[str, Optional[int]]:
        """The run-wide caps, as reported in the result."""
        return {"per_node": self.max_per_node, "per_namespace": self.max_per_namespace,
                "per_owner": self.max_per_owner, "total": self.max_total, "in_flight": self.max_in_flight,
                "migrations_per_cluster": self.kubevirt.max_migrations_per_cluster,
                "migrations_per_node": self.kubevirt.max_migrations_per_node,
                "max_unavailable_per_owner": self.max_unavailable}


def options_from_params(params: Mapping[str, Any], check_mode: bool) -> ExecutorOptions:
    """Module parameters to options; raises ExecutorInputError naming the option on a bad value."""
    kubevirt_params = params.get("kubevirt") or {}
    options = ExecutorOptions(
        max_per_node=_limit(params, "max_per_node"),
        max_per_namespace=_limit(params, "max_per_namespace"),
        max_per_owner=_limit(params, "max_per_owner"),
        max_total=_limit(params, "max_total"),
        max_in_flight=_positive_int(params.get("max_in_flight"), "max_in_flight", 5),
        pause=_non_negative(params.get("pause"), "pause", 0.0),
        max_unavailable=_max_unavailable(params.get("max_unavailable", DEFAULT_MAX_UNAVAILABLE)),
        timeout=_non_negative(params.get("timeout"), "timeout", 300.0),
        retry_delay=_positive(params.get("retry_delay"), "retry_delay", 5.0),
        poll_interval=_positive(params.get("poll_interval"), "poll_interval", 2.0),
        grace_period=_optional_non_negative_int(params.get("grace_period"), "grace_period"),
        failure_budget=int(_non_negative(params.get("failure_budget"), "failure_budget", 3)),
        wait_for_replacements=bool(params.get("wait_for_replacements", True)),
        replacement_timeout=_non_negative(params.get("replacement_timeout"), "replacement_timeout", 300.0),
        journal=params.get("journal") or None,
        check_mode=check_mode,
        kubevirt=KubeVirtOptions(
            max_migrations_per_cluster=_positive_int(kubevirt_params.get("max_migrations_per_cluster"),
                                                     "kubevirt.max_migrations_per_cluster",
                                                     DEFAULT_MIGRATIONS_PER_CLUSTER),
            max_migrations_per_node=_positive_int(kubevirt_params.get("max_migrations_per_node"),
                                                  "kubevirt.max_migrations_per_node", DEFAULT_MIGRATIONS_PER_NODE),
            migration_timeout=_non_negative(kubevirt_params.get("migration_timeout"), "kubevirt.migration_timeout",
                                            900.0),
            allow_vm_restart=bool(params.get("allow_vm_restart")),
        ),
    )
    return options


def allowed_unavailable(max_unavailable: Optional[str], desired: int) -> Optional[int]:
    """How many of a workload's ``desired`` replicas may be unavailable at once: a count, or a percentage rounded
    down but never below 1 (else a small workload could never be touched). None means no cap."""
    if max_unavailable is None:
        return None
    text = str(max_unavailable).strip()
    if text.endswith("%"):
        return max(1, math.floor(float(text[:-1]) * desired / 100))
    return max(1, int(text))


def _limit(params: Mapping[str, Any], name: str) -> Optional[int]:
    value = params.get(name)
    if value is None:
        return None
    if int(value) < 0:
        raise ExecutorInputError(f"{name}: must be 0 or more (or unset for no limit), got {value}")
    return int(value)


def _max_unavailable(value: Any) -> Optional[str]:
    if value is None or str(value).strip() in ("", "none", "None"):
        return None
    text = str(value).strip()
    number = text[:-1] if text.endswith("%") else text
    try:
        parsed = float(number) if text.endswith("%") else int(number)
    except ValueError:
        parsed = -1
    if parsed <= 0:
        raise ExecutorInputError(f"max_unavailable: expected a count such as 1 or a percentage such as 25%, "
                                 f"greater than 0, got {value!r}")
    return text


def _positive_int(value: Any, name: str, default: int) -> int:
    if value is None:
        return default
    if int(value) < 1:
        raise ExecutorInputError(f"{name}: must be 1 or more, got {value}")
    return int(value)


def _positive(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if float(value) <= 0:
        raise ExecutorInputError(f"{name}: must be greater than 0, got {value}")
    return float(value)


def _non_negative(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if float(value) < 0:
        raise ExecutorInputError(f"{name}: must be 0 or more, got {value}")
    return float(value)


def _optional_non_negative_int(value: Any, name: str) -> Optional[int]:
    if value is None:
        return None
    if int(value) < 0:
        raise ExecutorInputError(f"{name}: must be 0 or more, got {value}")
    return int(value)
