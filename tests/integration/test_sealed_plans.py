"""Nothing is executed that was not reviewed, nowhere but on its own cluster (issue 46): every plan is sealed when
written, and evict refuses, before its first eviction, an edited plan, an unsealed one, one that records no cluster
(unless the user opts in and pins one), one whose pods carry no UID, and one dated after the cluster's clock; a team
executes part of a plan with select/exclude, never by editing it.

Each refusal is asserted as a user would check it: the task failed naming the plan by where it came from, the field
and the value, the fix, and every pod is still there with the same UID. Two clusters (`fleet_clusters`) hold the
same namespace and workload names, where a plan of one would otherwise find "its" pods on the other.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evict_helpers import namespace_object, node, plan_of, ready_replicas, replicaset, sealed
from playbook import run_tasks

FAST = {"poll_interval": 0.1, "retry_delay": 0.2, "timeout": 120, "replacement_timeout": 120}


def aged_out(namespace: str) -> dict[str, Any]:
    """A policy evicting every pod of `namespace` older than a second."""
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [
            {
                "name": "aged",
                "pluginConfig": [
                    {
                        "name": "PodLifeTime",
                        "args": {"maxPodLifeTimeSeconds": 1, "namespaces": {"include": [namespace]}},
                    }
                ],
                "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
            }
        ],
    }


def run_in(directory: Path, tasks: list[dict[str, Any]]) -> Any:
    directory.mkdir(parents=True, exist_ok=True)
    return run_tasks(directory, tasks)


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def evict_task(kube: Any, register: str, **options: Any) -> dict[str, Any]:
    return {
        "name": register,
        "descheduler.fleet.evict": {**connection(kube), **FAST, **options},
        "register": register,
        "ignore_errors": True,
    }


def shop(kube: Any, replicas: int = 3, namespace: str = "shop") -> list[dict[str, Any]]:
    """A ReplicaSet web of `replicas` running pods in `namespace` (created when it is shop, the same names on every
    cluster of a fleet)."""
    kube.load([*([namespace_object(namespace)] if namespace == "shop" else []), node("worker-1"), node("worker-2")])
    kube.create(replicaset(namespace, "web", replicas))
    return ready_replicas(kube, namespace, "web", replicas)


def uids(kube: Any, namespace: str = "shop") -> set[str]:
    return {pod["metadata"]["uid"] for pod in kube.list("pods", namespace)}


def kube_system_uid(kube: Any) -> str:
    return kube.get("Namespace", None, "kube-system")["metadata"]["uid"]


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def refused(result: dict[str, Any], *parts: str) -> None:
    assert result.get("failed") is True, result
    for part in parts:
        assert part in result["msg"], (part, result["msg"])
    assert "nothing was evicted" in result["msg"].lower() or "Nothing was evicted" in result["msg"], result["msg"]
    assert "Traceback" not in result["msg"]
    assert "(plan)" not in result["msg"]


def test_an_edited_plan_is_refused_naming_what_differs(kube: Any, namespace: str, tmp_path: Path) -> None:
    pods = shop(kube, 2, namespace)
    reports = tmp_path / "reports"
    process, results = run_in(
        tmp_path / "plan",
        [
            {
                "descheduler.fleet.plan": {
                    **connection(kube),
                    "policy": aged_out(namespace),
                    "now": stamp(datetime.now(UTC) + timedelta(seconds=30)),
                    "report_dir": str(reports),
                },
                "register": "plan",
            }
        ],
    )
    assert process.returncode == 0, process.stdout[-3000:]
    written = json.loads((reports / "plan.json").read_text())
    assert len(written["evictions"]) == 2
    assert written["seal"]["evictions"] == 2 and len(written["seal"]["digest"]) == 64
    assert written["seal"]["cluster_uid"] == kube_system_uid(kube)
    assert results["plan"]["seal"]["digest"] == written["seal"]["digest"]
    before = uids(kube, namespace)

    added = json.loads(json.dumps(written))  # a kube-system pod added, the summary left as it was
    added["evictions"].append(
        {**added["evictions"][0], "namespace": "kube-system", "name": "coredns-0", "uid": "0000", "order": 3}
    )
    changed = json.loads(json.dumps(written))  # another pod in the place of the first
    changed["evictions"][0]["name"] = "db-0"
    moved = json.loads(json.dumps(written))  # dated a day later, to pass max_plan_age
    moved["now"] = stamp(datetime.now(UTC) - timedelta(hours=1))
    unsealed = {key: value for key, value in written.items() if key != "seal"}  # as an older release wrote it
    files = {}
    for name, plan in (("added", added), ("changed", changed), ("moved", moved), ("unsealed", unsealed)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(plan))
    _process, results = run_in(
        tmp_path / "evict", [evict_task(kube, name, plan_file=str(path)) for name, path in files.items()]
    )

    refused(
        results["added"],
        f"plan_file {files['added']}: the plan is not the one sealed when it was written",
        "evictions has 3 entries, 2 when sealed",
        "the first that differs is evictions[2] (kube-system/coredns-0)",
        "use select or exclude",
    )
    assert results["added"]["field"] == "evictions" and results["added"]["value"] == 3
    refused(results["changed"], f"evictions[0] ({namespace}/db-0) is not the entry sealed there")
    assert results["changed"]["field"] == "evictions[0]"
    refused(results["moved"], f"now is '{moved['now']}', '{written['now']}' when sealed")
    refused(
        results["unsealed"],
        f"plan_file {files['unsealed']}: the plan has no seal",
        "Plan the cluster again (the plan module or the dry_run role)",
    )
    assert results["unsealed"]["field"] == "seal"
    assert uids(kube, namespace) == before == {p["metadata"]["uid"] for p in pods}


def test_part_of_a_plan_is_executed_through_select_and_exclude(kube: Any, namespace: str, tmp_path: Path) -> None:
    pods = shop(kube, 3, namespace)
    names = [f"{namespace}/{p['metadata']['name']}" for p in pods]
    plan = sealed(kube, plan_of(pods))
    before = uids(kube, namespace)
    _process, results = run_in(
        tmp_path / "wrong",
        [
            evict_task(kube, "unknown", plan=plan, select=[f"{names[0]}x"]),
            evict_task(kube, "not_a_name", plan=plan, exclude=["web"]),
        ],
    )
    refused(
        results["unknown"],
        f"select[0]: '{names[0]}x' matches no pod of the plan",
        f"the closest planned pod is {names[0]}",
    )
    assert results["unknown"]["field"] == "select[0]"
    refused(results["not_a_name"], "exclude[0]: 'web' is not namespace/name")
    assert uids(kube, namespace) == before

    process, results = run_in(
        tmp_path / "part", [evict_task(kube, "part", plan=plan, select=[f"{namespace}/web-*"], exclude=names[1:])]
    )
    assert process.returncode == 0, process.stdout[-3000:]
    part = results["part"]
    assert [f"{namespace}/{pod['name']}" for pod in part["pods"]] == names[:1] and part["counts"]["evicted"] == 1
    assert part["input"]["selection"] == {
        "select": [f"{namespace}/web-*"],
        "exclude": names[1:],
        "planned": 3,
        "executed": 1,
        "left_out": names[1:],
    }
    assert part["input"]["plan_seal"] == plan["seal"]["digest"]
    after = uids(kube, namespace)
    assert pods[0]["metadata"]["uid"] not in after
    assert {pods[1]["metadata"]["uid"], pods[2]["metadata"]["uid"]} <= after, "the pods left out are still there"


def test_a_plan_from_the_future_is_refused_naming_both_times(kube: Any, namespace: str, tmp_path: Path) -> None:
    pods = shop(kube, 2, namespace)
    ahead = stamp(datetime.now(UTC) + timedelta(days=30))
    path = tmp_path / "future.json"
    path.write_text(json.dumps(sealed(kube, plan_of(pods, now=ahead))))
    before = uids(kube, namespace)
    _process, results = run_tasks(tmp_path, [evict_task(kube, "future", plan_file=str(path), max_plan_age="1h")])
    today = stamp(datetime.now(UTC))[:10]
    refused(
        results["future"],
        f"plan_file {path}: the plan's now {ahead} is 30.0d after the cluster's clock",
        f"({today}T",
        "more than the 120 s clock skew allowed",
        "without a fixed now",
    )
    assert results["future"]["field"] == "now" and results["future"]["value"] == ahead
    assert uids(kube, namespace) == before


def snapshot_of(kube: Any, path: Path) -> Path:
    """A snapshot file of the cluster's nodes and shop pods without its Namespaces (so without its identity)."""
    objects = [{**o, "kind": "Node", "apiVersion": "v1"} for o in kube.list("nodes")]
    objects += [{**o, "kind": "Pod", "apiVersion": "v1"} for o in kube.list("pods", "shop")]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return path


def test_a_plan_without_identity_or_uids_is_not_executed_on_another_cluster(
    fleet_clusters: Any, tmp_path: Path
) -> None:
    first, second = fleet_clusters(2)
    first_pods = shop(first)
    shop(second)
    now = stamp(datetime.now(UTC) + timedelta(seconds=30))
    process, results = run_in(
        tmp_path / "plan",
        [
            {
                "descheduler.fleet.plan": {
                    "snapshot": str(snapshot_of(first, tmp_path / "snapshot.json")),
                    "policy": aged_out("shop"),
                    "now": now,
                    "report_dir": str(tmp_path / "plans"),
                },
                "register": "plan",
            }
        ],
    )
    assert process.returncode == 0, process.stdout[-3000:]
    assert results["plan"]["cluster_identity"]["uid"] is None and len(results["plan"]["evictions"]) == 3
    with_uids = tmp_path / "plans" / "plan.json"
    # the plan module spares pods without a UID (as the descheduler does); another tool's plan, sealed as written
    nameless = plan_of(first_pods, now=now)
    for entry in nameless["evictions"]:
        entry["uid"] = None
    no_uids = tmp_path / "no-uids.json"
    no_uids.write_text(json.dumps(sealed(first, {**nameless, "cluster_identity": None})))
    before = uids(second)

    pin = kube_system_uid(second)
    _process, results = run_in(
        tmp_path / "evict",
        [
            evict_task(second, "no_identity", plan_file=str(with_uids)),
            evict_task(second, "not_pinned", plan_file=str(with_uids), allow_plan_without_identity=True),
            evict_task(
                second, "by_name", plan_file=str(no_uids), allow_plan_without_identity=True, expected_cluster_uid=pin
            ),
        ],
    )
    refused(
        results["no_identity"],
        f"plan_file {with_uids}: the plan records no cluster_identity",
        "set allow_plan_without_identity: true together with expected_cluster_uid",
    )
    assert results["no_identity"]["field"] == "cluster_identity"
    refused(results["not_pinned"], "allow_plan_without_identity is true but expected_cluster_uid is not set")
    assert results["not_pinned"]["field"] == "expected_cluster_uid"
    refused(
        results["by_name"],
        f"plan_file {no_uids}: 3 of 3 evictions carry no pod uid (the first: shop/web-",
        "give them as pods",
    )
    assert results["by_name"]["field"] == "evictions[0].uid"
    assert uids(second) == before

    # opted in and pinned: the plan's pods are not the second cluster's (its ReplicaSet named its own), none is evicted
    process, results = run_in(
        tmp_path / "pinned",
        [
            evict_task(
                second, "pinned", plan_file=str(with_uids), allow_plan_without_identity=True, expected_cluster_uid=pin
            )
        ],
    )
    assert process.returncode == 0, process.stdout[-3000:]
    assert results["pinned"]["skipped_by_reason"] == {"stale_gone": 3} and results["pinned"]["evicted_now"] == 0
    assert results["pinned"]["cluster_identity"]["uid"] == pin
    assert uids(second) == before
