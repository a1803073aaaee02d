"""Every name the rollout module is given must exist (issue #46): a group of mandatory_groups or groups that is no
inventory group and no host variable's group, a host of a named group that is no cluster of the rollout, and a host
variable's group that names no group are refused before any cluster is touched, naming the field, the value and the
closest existing name. One cluster ("c1", the suite's control plane) with the operator stand-in: nothing may be
written on it (no KubeDescheduler, no last-good record)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from operator_support import connection, descheduler_operator, get_kd, get_object
from playbook import run_tasks
from standins.descheduler_operator import DeschedulerOperator

SPEC = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
        "profiles": ["AffinityAndTaints"]}
RECORD = "descheduler-fleet-last-good"


@pytest.fixture
def operator(kube: Any) -> Iterator[DeschedulerOperator]:
    with descheduler_operator(kube) as running:
        yield running


CASES = [
    (
        {"mandatory_groups": ["canaryz"]},
        {},
        "mandatory_groups: 'canaryz' is no inventory group",
        "did you mean 'canary'?",
    ),
    ({"groups": ["wave-l"]}, {}, "groups: 'wave-l' is no inventory group", "did you mean 'wave-1'?"),
    (
        {"mandatory_groups": ["canary"], "inventory_groups": {"canary": ["c-1"], "wave-1": []}},
        {},
        "inventory_groups.canary: 'c-1' is no cluster of this rollout",
        "did you mean 'c1'?",
    ),
    (
        {"mandatory_groups": ["canary"]},
        {"group": "canaryz"},
        "clusters[0].group: 'canaryz', the descheduler_fleet_rollout_group of c1, is not in mandatory_groups or groups",
        "did you mean 'canary'?",
    ),
]


@pytest.mark.parametrize(
    ("options", "cluster", "message", "closest"),
    CASES,
    ids=["mandatory_groups", "groups", "inventory_groups-host", "host-variable-group"],
)
def test_a_name_that_refers_to_nothing_fails_before_any_change(
    kube: Any,
    operator: DeschedulerOperator,
    tmp_path: Path,
    options: dict[str, Any],
    cluster: dict[str, Any],
    message: str,
    closest: str,
) -> None:
    args = {
        "clusters": [{"name": "c1", "connection": connection(kube), "spec": SPEC, **cluster}],
        "inventory_groups": {"canary": ["c1"], "wave-1": []},
        "min_success_time": "1s",
        "gate_interval": 1,
        "progress_deadline": "180s",
        "wait_sleep": 1,
        "run_id": "names",
        **options,
    }
    task = {"name": "Roll out", "descheduler.fleet.rollout": args, "register": "rollout", "ignore_errors": True}
    process, results = run_tasks(tmp_path, [task])
    result = results["rollout"]
    assert result.get("failed") is True, result
    assert result["msg"].startswith(message) and closest in result["msg"], result["msg"]
    assert "correct the name" in result["msg"] or "give the group's members" in result["msg"], result["msg"]
    assert get_kd(kube) is None and get_object(kube, "configmaps", RECORD) is None  # nothing written
