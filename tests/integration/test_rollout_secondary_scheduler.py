"""playbooks/secondary_scheduler.yml with rollout controls (descheduler_fleet_rollout; docs/rolling-out.md): the
rollout module's kind secondary_scheduler on a fleet of three API servers (`fleet_clusters`), each with the OLM
stand-in serving the Secondary Scheduler Operator's package and the operator stand-in
(standins/secondary_scheduler_operator.py) whose scheduler Deployment really runs (kube-controller-manager and the
kubelet stand-in). One inventory host and one decision group each: canaries (mandatory: canary), wave-1 (prod-a),
wave-2 (prod-b).

Each cluster first gets BASE (Trimaran target utilization 40) through a rollout that passes: installed, soaked,
recorded as verified. Then NEW (utilization 70) is rolled out while prod-a's operator reports Degraded for NEW, as
the real operator does for a configuration its scheduler cannot run. The rollout must stop at prod-a's group, put
prod-a back on BASE, keep canary on NEW and leave prod-b untouched. No sleeps: every wait is on observed state with
a generous deadline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import node
from playbook import REPO, run_playbook
from standins.olm import Olm
from standins.rest import Rest, path, wait_until
from standins.secondary_scheduler_operator import (
    API_VERSION,
    CR_NAME,
    NAMESPACE,
    SecondarySchedulerOperator,
    secondary_scheduler_package,
)

PLAYBOOK = REPO / "playbooks" / "secondary_scheduler.yml"
IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8"
BASE, NEW = 40, 70  # Trimaran target utilizations
GROUPS = {"canary": "canaries", "prod-a": "wave-1", "prod-b": "wave-2"}
CONFIG_MAP = "secondary-scheduler-config"
RECORD = "descheduler-fleet-last-good"
CR_PATH = path(API_VERSION, "secondaryschedulers", NAMESPACE, CR_NAME)
DEGRADED = "TargetConfigControllerDegraded"


def utilization_of(config_map: dict[str, Any] | None) -> int | None:
    if config_map is None:
        return None
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    return config["profiles"][0]["pluginConfig"][0]["args"]["targetUtilization"]


class DegradingOperator(SecondarySchedulerOperator):
    """The operator stand-in, reporting Degraded on the CR while its configuration has `degrade_on` as target
    utilization (the real operator's TargetConfigController does so when it cannot run the scheduler's
    configuration). The condition is written before the Deployment is rendered: once a configuration has rolled
    out, its condition is already there."""

    degrade_on: int | None = None
    other_team: Callable[[], None] | None = None  # done once, just before the first Degraded condition is written

    def reconcile(self) -> None:
        cr = self.rest.get(CR_PATH)
        if cr is not None and not cr["metadata"].get("deletionTimestamp"):
            name = (cr.get("spec") or {}).get("schedulerConfig") or CONFIG_MAP
            utilization = utilization_of(self.rest.get(path("v1", "configmaps", NAMESPACE, name)))
            degraded = self.degrade_on is not None and utilization == self.degrade_on
            if degraded and self.other_team is not None:
                edit, self.other_team = self.other_team, None
                edit()
            condition = {"type": DEGRADED, "status": "True" if degraded else "False",
                         "reason": "SchedulerCrashLooping" if degraded else "AsExpected",
                         "message": f"the scheduler exits with targetUtilization {utilization}" if degraded else ""}
            self.rest.change(CR_PATH + "/status", lambda current: current.setdefault("status", {}).update(
                conditions=[condition]))
        super().reconcile()


@contextmanager
def clusters_named(fleet_clusters: Callable[[int], list[Any]], names: list[str]) -> Iterator[dict[str, Any]]:
    """The clusters, each with OLM, the operator stand-in (as `cluster.operator`) and a node for the scheduler."""
    clusters: dict[str, Any] = {}
    started: list[tuple[Any, Rest, Olm, DegradingOperator]] = []
    try:
        for name, cluster in zip(names, fleet_clusters(len(names)), strict=True):
            client = cluster.api_client()
            rest = Rest(client)
            if not rest.list(path("v1", "nodes")):
                cluster.load([node("worker-1")])
            olm = Olm(client, packages=[secondary_scheduler_package()]).install()
            cluster.operator = DegradingOperator(client).start()
            started.append((client, rest, olm, cluster.operator))
            clusters[name] = cluster
        yield clusters
    finally:
        for client, rest, olm, operator in started:
            operator.stop()
            olm.uninstall()
            rest.delete(path("v1", "namespaces", name=NAMESPACE))
            wait_until(lambda r=rest: r.get(path("v1", "namespaces", name=NAMESPACE)) is None, 120, 0.5,
                       "the operator namespace to go")
            client.close()
        for _client, _rest, olm, operator in started:
            olm.check()
            operator.check()


@pytest.fixture
def fleet(fleet_clusters: Callable[[int], list[Any]]) -> Iterator[dict[str, Any]]:
    """Three clusters, one per decision group."""
    with clusters_named(fleet_clusters, list(GROUPS)) as clusters:
        yield clusters


@pytest.fixture
def canary(fleet_clusters: Callable[[int], list[Any]]) -> Iterator[dict[str, Any]]:
    """One cluster, in the canaries group."""
    with clusters_named(fleet_clusters, ["canary"]) as clusters:
        yield clusters


def write_inventory(tmp_path: Path, fleet: dict[str, Any], utilization: int) -> Path:
    hosts = {name: {"descheduler_fleet_connection": {"kubeconfig": str(cluster.kubeconfig),
                                                     "context": cluster.context}}
             for name, cluster in fleet.items()}
    children = {group: {"hosts": {name: {}}} for name, group in GROUPS.items() if name in fleet}
    variables = {"secondary_scheduler_image": IMAGE, "secondary_scheduler_wait_sleep": 1,
                 "secondary_scheduler_trimaran": {"target_utilization": utilization,
                                                  "metric_provider": {"type": "KubernetesMetricsServer"}}}
    inventory = {"clusters": {"vars": variables, "hosts": hosts, "children": children}}
    inventory_path = tmp_path / f"inventory-{utilization}.yml"
    inventory_path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return inventory_path


def roll_out(inventory: Path, *options: str, **controls: Any) -> Any:
    rollout = {"mandatory_groups": ["canaries"], "groups": ["wave-1", "wave-2"], "min_success_time": 2,
               "gate_interval": 1, "progress_deadline": 180, "run_id": "test", **controls}
    return run_playbook(PLAYBOOK, "-i", str(inventory), "-e", json.dumps({"descheduler_fleet_rollout": rollout}),
                        *options)


def get(cluster: Any, url: str) -> dict[str, Any] | None:
    return cluster.operator.rest.get(url)


def config_map(cluster: Any) -> dict[str, Any] | None:
    return get(cluster, path("v1", "configmaps", NAMESPACE, CONFIG_MAP))


def record(cluster: Any) -> dict[str, Any] | None:
    found = get(cluster, path("v1", "configmaps", NAMESPACE, RECORD))
    if found is None:
        return None
    return {**json.loads(found["data"]["secondary_scheduler.json"]),
            "state": found["metadata"]["annotations"]["descheduler.fleet/state"]}


def running_utilization(cluster: Any) -> int | None:
    """The configuration the scheduler pods run: the Deployment's template names the ConfigMap's resourceVersion."""
    deployment = get(cluster, path("apps/v1", "deployments", NAMESPACE, "secondary-scheduler"))
    current = config_map(cluster)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations[f"configmaps/{CONFIG_MAP}"] == current["metadata"]["resourceVersion"]
    assert deployment["status"].get("availableReplicas") == 1
    return utilization_of(current)


def test_a_degraded_scheduler_rolls_its_cluster_back_and_halts(fleet: dict[str, Any], tmp_path: Path) -> None:
    base = roll_out(write_inventory(tmp_path, fleet, BASE))
    assert base.returncode == 0, base.stdout[-6000:]
    assert "Rollout done: canaries -> wave-1 -> wave-2" in base.stdout
    for cluster in fleet.values():
        assert running_utilization(cluster) == BASE
        # nothing ran before: the namespace did not exist, so only the verified configuration is recorded
        assert record(cluster)["state"] == "verified"
        assert record(cluster)["spec"]["scheduler_config"]["profiles"][0]["pluginConfig"][0]["args"][
            "targetUtilization"] == BASE

    fleet["prod-a"].operator.degrade_on = NEW
    prod_b_config, prod_b_cr = config_map(fleet["prod-b"]), get(fleet["prod-b"], CR_PATH)

    # check mode first: every cluster says what would change, one diff per object, its header naming the cluster;
    # nothing is written, nothing soaks
    checked = roll_out(write_inventory(tmp_path, fleet, NEW), "--check", "--diff", min_success_time=30)
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert "Rollout done: canaries -> wave-1 -> wave-2" in checked.stdout
    for name, cluster in fleet.items():
        assert f"{name}: ConfigMap {NAMESPACE}/{CONFIG_MAP}" in checked.stdout
        assert running_utilization(cluster) == BASE and record(cluster)["state"] == "verified"

    process = roll_out(write_inventory(tmp_path, fleet, NEW), min_success_time=30)
    assert process.returncode != 0, process.stdout[-6000:]
    assert ("Rollout halted: group wave-1: health gate breached on prod-a: the operator reports "
            f"{DEGRADED}: SchedulerCrashLooping: the scheduler exits with targetUtilization {NEW}") in process.stdout
    assert "prod-a: FAILED: health gate breached during the soak" in process.stdout
    assert "rolled back to its last good configuration" in process.stdout
    assert "prod-b: not reached yet" in process.stdout

    assert running_utilization(fleet["canary"]) == NEW  # the earlier group is kept
    assert record(fleet["canary"])["state"] == "verified"
    assert running_utilization(fleet["prod-a"]) == BASE  # back on its last good configuration, no longer degraded
    assert get(fleet["prod-a"], CR_PATH)["status"]["conditions"][0]["status"] == "False"
    assert record(fleet["prod-a"])["spec"]["scheduler_config"]["profiles"][0]["pluginConfig"][0]["args"][
        "targetUtilization"] == BASE
    # the later group untouched: same ConfigMap and CR versions, its record still the verified BASE
    assert config_map(fleet["prod-b"])["metadata"]["resourceVersion"] == prod_b_config["metadata"]["resourceVersion"]
    assert get(fleet["prod-b"], CR_PATH)["metadata"]["generation"] == prod_b_cr["metadata"]["generation"]
    assert record(fleet["prod-b"])["state"] == "verified" and running_utilization(fleet["prod-b"]) == BASE


def test_a_rollback_leaves_what_someone_else_modified_since_and_removes_what_the_change_created(
        canary: dict[str, Any], tmp_path: Path) -> None:
    """A first configuration (no SecondaryScheduler before) whose scheduler the operator reports Degraded; just
    before it does, another team edits the ConfigMap the change created. The rollback removes the CR the change
    created (it carries the change's id, as the change left it) and leaves their ConfigMap, saying so."""
    cluster = canary["canary"]
    config_map_path = path("v1", "configmaps", NAMESPACE, CONFIG_MAP)
    cluster.operator.degrade_on = NEW
    cluster.operator.other_team = lambda: cluster.operator.rest.change(
        config_map_path, lambda found: found["data"].update({"team-notes": "tuned by hand"}))

    process = roll_out(write_inventory(tmp_path, canary, NEW), groups=[], min_success_time=30)
    assert process.returncode != 0, process.stdout[-6000:]
    assert f"ConfigMap {NAMESPACE}/{CONFIG_MAP} was modified by someone else since the change" in process.stdout, \
        process.stdout[-6000:]
    assert "left as it is" in process.stdout and "ROLLBACK FAILED" in process.stdout
    assert get(cluster, CR_PATH) is None  # the change's own CR, as it left it: taken back
    theirs = config_map(cluster)
    assert theirs["data"]["team-notes"] == "tuned by hand" and utilization_of(theirs) == NEW
    assert theirs["metadata"]["labels"]["descheduler.fleet/change-id"] == "test"
    assert record(cluster)["state"] == "rolling-back"  # unfinished: the next run resolves it

    # the cause gone, a rerun that keeps what runs (resume) converges; their key is still there
    cluster.operator.degrade_on = None
    again = roll_out(write_inventory(tmp_path, canary, NEW), groups=[], on_interrupted="resume")
    assert again.returncode == 0, again.stdout[-6000:]
    assert running_utilization(cluster) == NEW and record(cluster)["state"] == "verified"
    assert config_map(cluster)["data"]["team-notes"] == "tuned by hand"
