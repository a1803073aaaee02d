"""Decision groups: which clusters change together, in which order.

As Open Cluster Management's ``decisionStrategy``: a cluster's group is its host variable
(``descheduler_fleet_rollout_group``) when set, else the first named group (``mandatory_groups`` then ``groups``)
of the inventory that holds it. Mandatory groups (the canaries) come first and tolerate no failure; then the other
named groups in the order given; then groups only host variables name (sorted); then the clusters of no group,
``clusters_per_group`` at a time. Clusters keep their inventory order inside a group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

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


def decision_groups(clusters: Sequence[str], *, assigned: Mapping[str, Optional[str]],
                    groups: Sequence[str] = (), mandatory_groups: Sequence[str] = (),
                    inventory_groups: Optional[Mapping[str, Sequence[str]]] = None,
                    clusters_per_group: Optional[Budget] = None) -> list[DecisionGroup]:
    """The groups in rollout order; empty groups are left out (a ``--limit`` may leave a group without a host)."""
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
