"""What the roles check on an inventory host before they talk to its cluster: that every variable with the
collection's prefixes is one a role reads (a typo must not silently fall back to a default, least of all to the
default kubeconfig's cluster), and that the host names its cluster explicitly.

Pure functions over the host's variables; the ``descheduler.fleet.preflight`` action plugin feeds them.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import nearest_name

FLEET_PREFIX = "descheduler_fleet_"
# The variables every role reads, set once for the fleet (README "Role variables").
FLEET_VARIABLES = frozenset([
    "descheduler_fleet_connection",
    "descheduler_fleet_cluster_uid",
    "descheduler_fleet_use_default_kubeconfig",
    "descheduler_fleet_target_hosts",
    "descheduler_fleet_serial",
    "descheduler_fleet_max_fail_percentage",
    "descheduler_fleet_run_store",  # where a fleet run is kept across AWX job slices (docs/awx-slicing.md)
    "descheduler_fleet_run_id",
    "descheduler_fleet_rollout",  # rollout controls: decision groups, soak, gates, rollback (docs/rolling-out.md)
    "descheduler_fleet_rollout_group",
])
# Options that say which cluster: with none of them (in the connection, module_defaults or K8S_AUTH_*), the client
# would take the default kubeconfig's current context.
TARGET_OPTIONS = ("kubeconfig", "context", "host")
TARGET_ENVIRONMENT = ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST")


def unknown_variables(names: Iterable[str], role: str, known: Iterable[str]) -> list[tuple[str, Optional[str]]]:
    """(name, closest known name or None) for each variable of the collection's prefixes (``descheduler_fleet_``
    and ``<role>_``) that is neither a fleet variable nor in ``known`` (the role's options and results)."""
    role_prefix = f"{role}_"
    role_known = sorted(set(known))
    found = []
    for name in sorted(set(names)):
        if name.startswith(FLEET_PREFIX):
            candidates: list[str] = sorted(FLEET_VARIABLES)
        elif name.startswith(role_prefix):
            candidates = role_known
        else:
            continue
        if name not in candidates:
            found.append((name, nearest_name(name, candidates, cutoff=0.75)))
    return found


def describe_unknown(unknown: list[tuple[str, Optional[str]]], role: str, host: str) -> str:
    named = ", ".join(f"{name} (did you mean {close}?)" if close else name for name, close in unknown)
    return (f"{host}: unknown variable(s) for role descheduler.fleet.{role}: {named}. A misspelt variable would be "
            f"ignored and its default used, so nothing was done. Rename or remove them; the role's variables are "
            f"listed by 'ansible-doc -t role descheduler.fleet.{role}', the fleet's in the README (Role variables)")


def names_a_cluster(options: Mapping[str, object], environment: Mapping[str, str]) -> bool:
    """Whether the connection the role passes (from descheduler_fleet_connection) or the K8S_AUTH_* environment
    names a cluster."""
    return (any(options.get(option) for option in TARGET_OPTIONS)
            or any(environment.get(variable) for variable in TARGET_ENVIRONMENT))


def no_target_message(host: str) -> str:
    return (f"{host}: this inventory host names no cluster, and the collection does not fall back to the default "
            "kubeconfig on its own (a typo or a missing host_vars file would act on whatever cluster it points "
            "at). Set descheduler_fleet_connection (kubeconfig, context or host) for it, or the K8S_AUTH_* "
            "variables (an AWX/AAP credential); to use the default kubeconfig and its current context, set "
            "descheduler_fleet_use_default_kubeconfig: true")
