"""The checks evict makes of a plan before contacting its cluster: the seal the plan module wrote (each difference
named), the recorded cluster, pod UIDs, select/exclude, and a plan dated after the cluster's clock."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan_seal import compact_seal, seal_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.plan_checks import (
    PlanRefused,
    check_identity_recorded,
    check_not_from_the_future,
    check_seal,
    check_uids,
    select_targets,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.targets import plan_time, targets_from_plan


def written(**changes: Any) -> dict[str, Any]:
    plan = {
        "now": "2026-11-22T10:00:00Z",
        "cluster_identity": {"uid": "uid-a", "server": "https://a"},
        "policy": {"kind": "DeschedulerPolicy", "profiles": []},
        "evictions": [
            {
                "order": i + 1,
                "namespace": "shop",
                "name": f"web-{i}",
                "uid": f"u{i}",
                "node": "n1",
                "owner": {"kind": "ReplicaSet", "name": "web"},
                "plugin": "PodLifeTime",
                "profile": "p",
                "reason": "old",
                "frequency": 1.0,
            }
            for i in range(3)
        ],
        **changes,
    }
    return {**plan, "seal": seal_plan(plan)}


def refusal(plan: dict[str, Any]) -> PlanRefused:
    with pytest.raises(PlanRefused) as caught:
        check_seal(plan, "plan_file /r/plan.json")
    assert str(caught.value).startswith("plan_file /r/plan.json: ")
    return caught.value


def test_a_plan_as_written_passes_whatever_evict_does_not_read() -> None:
    plan = written()
    assert check_seal(plan, "x") == plan["seal"]["digest"]
    reread = copy.deepcopy(plan)
    reread["evictions"][0]["frequency"] = 0.5  # not executed: not sealed
    reread.pop("policy")  # passed without its policy (the evict role does): the sealed policy_sha256 stands
    assert check_seal(reread, "x") == plan["seal"]["digest"]
    published = compact_seal(plan["seal"])
    assert "entries" not in published and published["digest"] == plan["seal"]["digest"]


def test_each_edit_is_named() -> None:
    added = written()
    added["evictions"].append({"namespace": "kube-system", "name": "coredns-0", "uid": "k"})
    error = refusal(added)
    assert (error.field, error.value) == ("evictions", 4)
    assert (
        "evictions has 4 entries, 3 when sealed; the first that differs is evictions[3] (kube-system/coredns-0)"
        in str(error)
    )

    removed = written()
    removed["evictions"].pop(0)
    assert "the first that differs is evictions[0] (shop/web-1)" in str(refusal(removed))

    edited = written()
    edited["evictions"][1]["uid"] = "other"
    error = refusal(edited)
    assert (error.field, error.value) == ("evictions[1]", "shop/web-1")

    for field, change, shown in (
        ("now", {"now": "2026-12-01T00:00:00Z"}, "now is '2026-12-01T00:00:00Z'"),
        (
            "cluster_identity.uid",
            {"cluster_identity": {"uid": "uid-b"}},
            "cluster_identity.uid is 'uid-b', 'uid-a' when sealed",
        ),
        ("policy", {"policy": {"kind": "DeschedulerPolicy", "profiles": [{}]}}, "policy: its sha256 is"),
    ):
        plan = {**written(), **change}
        error = refusal(plan)
        assert error.field == field and shown in str(error), str(error)

    forged = written()
    forged["seal"]["policy_sha256"] = "0" * 64
    forged.pop("policy")
    assert refusal(forged).field == "seal.digest"


def test_an_unsealed_plan_is_refused_saying_how_to_plan_again() -> None:
    plan = written()
    plan.pop("seal")
    error = refusal(plan)
    assert error.field == "seal" and "Plan the cluster again (the plan module or the dry_run role)" in str(error)
    assert refusal({**written(), "seal": {**written()["seal"], "version": 9}}).field == "seal.version"


def test_no_identity_needs_the_opt_in_and_a_pin() -> None:
    plan = written(cluster_identity={"uid": None, "server": None})
    check_identity_recorded(written(), "p", False, None)
    with pytest.raises(PlanRefused, match="records no cluster_identity") as caught:
        check_identity_recorded(plan, "p", False, "uid-a")
    assert caught.value.field == "cluster_identity"
    with pytest.raises(PlanRefused, match="expected_cluster_uid is not set") as caught:
        check_identity_recorded(plan, "p", True, None)
    assert caught.value.field == "expected_cluster_uid"
    check_identity_recorded(plan, "p", True, "uid-a")


def test_evictions_without_uid_are_refused() -> None:
    plan = written()
    plan["evictions"][1]["uid"] = None
    with pytest.raises(PlanRefused, match=r"1 of 3 evictions carry no pod uid \(the first: shop/web-1\)") as caught:
        check_uids(targets_from_plan(plan), "p")
    assert caught.value.field == "evictions[1].uid"


def test_select_and_exclude_pick_planned_pods_and_name_the_closest_when_unknown() -> None:
    targets = targets_from_plan(written())
    kept, selection = select_targets(targets, ["shop/web-*"], ["shop/web-2"])
    assert [t.name for t in kept] == ["web-0", "web-1"]
    assert selection.as_dict() == {
        "select": ["shop/web-*"],
        "exclude": ["shop/web-2"],
        "planned": 3,
        "executed": 2,
        "left_out": ["shop/web-2"],
    }
    assert select_targets(targets, None, None)[1].as_dict()["left_out"] == []
    with pytest.raises(
        PlanRefused,
        match=r"exclude\[0\]: 'shop/web-9' matches no pod of the plan \(the closest "
        r"planned pod is shop/web-",
    ) as caught:
        select_targets(targets, None, ["shop/web-9"])
    assert (caught.value.field, caught.value.value) == ("exclude[0]", "shop/web-9")
    with pytest.raises(PlanRefused, match=r"select\[1\]: 'web-0' is not namespace/name"):
        select_targets(targets, ["shop/web-0", "web-0"], None)


def test_a_plan_from_the_future_is_refused_beyond_the_skew() -> None:
    plan = written()
    planned = plan_time(plan)
    check_not_from_the_future(planned, plan["now"], planned - 120, "the cluster's clock", "p")
    with pytest.raises(
        PlanRefused,
        match=r"p: the plan's now 2026-11-22T10:00:00Z is 30.0d after the cluster's "
        r"clock \(2026-10-23T10:00:00Z\)",
    ) as caught:
        check_not_from_the_future(planned, plan["now"], planned - 30 * 86400, "the cluster's clock", "p")
    assert (caught.value.field, caught.value.value) == ("now", "2026-11-22T10:00:00Z")
