"""Decision groups: which clusters change together, in which order.

As Open Cluster Management's ``decisionStrategy``: a cluster's group is its host variable
(``descheduler_fleet_rollout_group``) when set, else the first named group (``mandatory_groups`` then ``groups``)
of the inventory that holds it. Mandatory groups (the canaries) come first and tolerate no failure; then the other
named groups in the order given; then inventory groups only host variables name (sorted); then the clusters of no
group, ``clusters_per_group`` at a time. Clusters keep their inventory order inside a group.

Every name must exist before anything is grouped: a misspelt canary group would otherwise leave the canaries in an
ordinary group, a misspelt host in a group would leave it out, and the rollout would go on without a word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import closest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import Budget

UNGROUPED = "rest"


@dataclass(frozen=True)
class DecisionGroup:
    name: str
    clusters: tuple[str, ...]
    mandatory: bool = False


def _group_of(cluster: str, assigned: Mapping[str, Optional[str]], named: Sequence[str],
              inventory_groups: Mapping[str, Sequence[str]]) -> Optional[str]:
    if assigned.get(cluster):
        return str(assigned[cluster])
    return next((name for name in named if cluster in (inventory_groups.get(name) or ())), None)


def _chunks(clusters: list[str], size: Optional[Budget]) -> list[tuple[str, ...]]:
    if not clusters:
        return []
    step = size.of(len(clusters), at_least_one=True) if size is not None else len(clusters)
    return [tuple(clusters[start:start + step]) for start in range(0, len(clusters), step)]


def check_group_names(clusters: Sequence[str], *, assigned: Mapping[str, Optional[str]],
                      groups: Sequence[str] = (), mandatory_groups: Sequence[str] = (),
                      inventory_groups: Optional[Mapping[str, Sequence[str]]] = None) -> None:
    """Refuse a group name that is no inventory group and no host variable's group, a host of a named group that is
    no cluster of the rollout, and a host variable's group that is neither named nor an inventory group."""
    inventory = inventory_groups or {}
    host_groups = {str(group) for group in assigned.values() if group}
    for field, names in (("mandatory_groups", mandatory_groups), ("groups", groups)):
        for name in names:
            if name not in inventory and name not in host_groups:
                raise RolloutError(
                    f"{field}: {name!r} is no inventory group (inventory_groups) and no cluster's "
                    f"descheduler_fleet_rollout_group ({closest_name(name, [*inventory, *host_groups])}); correct "
                    f"the name, or add the group to the inventory", field, name)
    known = set(clusters)
    for group in dict.fromkeys([*mandatory_groups, *groups]):
        for host in inventory.get(group) or ():
            if host not in known:
                raise RolloutError(
                    f"inventory_groups.{group}: {host!r} is no cluster of this rollout (clusters[].name: "
                    f"{closest_name(host, known)}); give the group's members among the rollout's clusters "
                    "(the inventory hosts of the play)", f"inventory_groups.{group}", host)
    named = {*mandatory_groups, *groups, *inventory}
    for index, cluster in enumerate(clusters):
        group = assigned.get(cluster)
        if group and group not in named:
            raise RolloutError(
                f"clusters[{index}].group: {group!r}, the descheduler_fleet_rollout_group of {cluster}, is not in "
                f"mandatory_groups or groups and no inventory group ({closest_name(group, named)}); correct the "
                "name, or add it to groups to order it", f"clusters[{index}].group", group)


def decision_groups(clusters: Sequence[str], *, assigned: Mapping[str, Optional[str]],
                    groups: Sequence[str] = (), mandatory_groups: Sequence[str] = (),
                    inventory_groups: Optional[Mapping[str, Sequence[str]]] = None,
                    clusters_per_group: Optional[Budget] = None) -> list[DecisionGroup]:
    """The groups in rollout order; empty groups are left out (a ``--limit`` may leave a group without a host)."""
    check_group_names(clusters, assigned=assigned, groups=groups, mandatory_groups=mandatory_groups,
                      inventory_groups=inventory_groups)
    named = list(dict.fromkeys([*mandatory_groups, *groups]))
    members: dict[str, list[str]] = {}
    for cluster in clusters:
        members.setdefault(_group_of(cluster, assigned, named, inventory_groups or {}) or "", []).append(cluster)
    only_assigned = sorted(name for name in members if name and name not in named)
    ordered = [DecisionGroup(name, tuple(members[name]), name in mandatory_groups)
               for name in [*named, *only_assigned] if members.get(name)]
    rest = _chunks(members.get("", []), clusters_per_group)
    ordered += [DecisionGroup(UNGROUPED if len(rest) == 1 else f"{UNGROUPED}-{index}", chunk)
                for index, chunk in enumerate(rest, start=1)]
    return ordered
