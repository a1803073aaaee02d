"""The expected evictions gate's checks before the first group: a plan keyed by a name that is no cluster of the
rollout is refused (field, value, fix) before any cluster is reached, and a plan made on another cluster than the one
reached is refused by the identity check the controller runs on every planned cluster before the first group (the
check on a live cluster: tests/integration/test_rollout_gates.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import ClusterIdentity
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.expected_evictions import (
    check_plan_identity,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import run_rollout

UID, OTHER_UID = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"


def plan_file(tmp_path: Path, cluster: str) -> str:
    path = tmp_path / f"plan-{cluster}.json"
    path.write_text(json.dumps({"cluster": cluster, "cluster_identity": {"uid": UID, "server": None},
                                "evictions": []}), encoding="utf-8")
    return str(path)


def test_a_plan_keyed_by_no_cluster_of_the_rollout_is_refused_before_any_cluster_is_reached(tmp_path: Path) -> None:
    # the clusters have no connection at all: reaching one would be a connection error, not this one
    params: dict[str, Any] = {"clusters": [{"name": "east"}, {"name": "west"}],
                              "gates": {"expected_evictions": {"plans": {"esat": plan_file(tmp_path, "esat")}}}}
    with pytest.raises(RolloutError) as raised:
        run_rollout(params, check_mode=False)
    error = raised.value
    assert error.field == "gates.expected_evictions.plans.esat" and error.value == "esat"
    assert "'esat' is not a cluster of this rollout (its clusters: east, west)" in str(error)
    assert "key each plan by the name of the cluster it was made on" in str(error)
    assert "nothing was changed" in str(error)


def test_a_plan_made_on_another_cluster_names_the_plan_and_its_uid() -> None:
    plan = {"cluster": "east", "cluster_identity": {"uid": UID}}
    with pytest.raises(RolloutError) as raised:
        check_plan_identity(plan, ClusterIdentity(uid=OTHER_UID, server="https://east:6443"), "east")
    error = raised.value
    assert error.field == "gates.expected_evictions.plans.east" and error.value == UID
    assert "was made on another cluster" in str(error) and "Give gates.expected_evictions.plans.east the plan made " \
        "on this cluster" in str(error)


def test_a_plan_made_on_the_cluster_reached_passes() -> None:
    check_plan_identity({"cluster_identity": {"uid": UID}}, ClusterIdentity(uid=UID, server=None), "east")
