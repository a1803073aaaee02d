"""The install and uninstall roles through their playbooks, on a fleet of clusters (one inventory host per cluster;
`fleet_clusters`: the test control plane and extra planes sharing its etcd): canary rollout,
idempotence, check mode, the per-cluster summary, and a failing canary that stops the rollout before the other
clusters are touched."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_support import run_concurrently
from playbook import REPO, run_playbook
from standins.olm import Olm, csv_name

NAMESPACE = "openshift-kube-descheduler-operator"
INSTALL = REPO / "playbooks" / "install.yml"
UNINSTALL = REPO / "playbooks" / "uninstall.yml"


class Fleet:
    """Clusters, each with the OLM stand-in (or not), and an inventory naming them in order."""

    def __init__(self, tmp_path: Path, clusters: Callable[[int], list[Any]]) -> None:
        self.tmp_path = tmp_path
        self._clusters = clusters
        self.clusters: dict[str, Any] = {}
        self.olms: list[Olm] = []

    def add(self, olms: dict[str, dict[str, Any] | None]) -> list[Any]:
        """The test's clusters, by inventory name; the value: the OLM stand-in's options (e.g. {"packages": []}),
        None for a cluster without OLM."""
        for (name, olm), cluster in zip(olms.items(), self._clusters(len(olms)), strict=True):
            if olm is not None:
                self.olms.append(Olm(cluster.api_client(), **olm).install())
            self.clusters[name] = cluster
        return list(self.clusters.values())

    def inventory(self) -> Path:
        # The real control plane's controllers take a few seconds to roll out the operator: waits of a minute. The
        # garbage collector can take a minute to resolve owners of a kind whose CRD is seconds old: two for removals.
        hosts = {name: {"descheduler_fleet_connection": {"kubeconfig": str(c.kubeconfig), "context": c.context},
                        "install_wait_sleep": 1, "install_wait_timeout": 120,
                        "uninstall_wait_sleep": 1, "uninstall_wait_timeout": 120}
                 for name, c in self.clusters.items()}
        path = self.tmp_path / "inventory.yml"
        path.write_text(yaml.safe_dump({"clusters": {"hosts": hosts}}, sort_keys=False))
        return path

    def run(self, playbook: Path, *args: str, stats: bool = True) -> Any:
        env = {"ANSIBLE_SHOW_CUSTOM_STATS": "1", "ANSIBLE_CALLBACK_RESULT_FORMAT": "yaml"} if stats else {}
        return run_playbook(playbook, "-i", str(self.inventory()), *args, env=env)

    def stop(self) -> None:
        """The OLM stand-ins stop and remove their CRDs and catalog; `fleet_clusters` then removes the rest."""
        run_concurrently([olm.uninstall for olm in self.olms])  # separate clusters: no reason to wait in turn
        for olm in self.olms:
            olm.api_client.close()
        for olm in self.olms:
            olm.check()


@pytest.fixture
def fleet(tmp_path: Path, fleet_clusters: Callable[[int], list[Any]]) -> Iterator[Fleet]:
    created = Fleet(tmp_path, fleet_clusters)
    try:
        yield created
    finally:
        created.stop()


def output(process: Any) -> str:
    return process.stdout + process.stderr


def recap(process: Any) -> dict[str, dict[str, int]]:
    """PLAY RECAP counters per host."""
    counters: dict[str, dict[str, int]] = {}
    lines = process.stdout.split("PLAY RECAP")[-1].splitlines()
    for line in lines:
        if ":" in line and "ok=" in line:
            host, rest = line.split(":", 1)
            counters[host.strip()] = {k: int(v) for k, v in (item.split("=") for item in rest.split())}
    return counters


def test_install_then_uninstall_a_fleet_of_two(fleet: Fleet) -> None:
    east, west = fleet.add({"east": {}, "west": {}})

    installed = fleet.run(INSTALL)
    assert installed.returncode == 0, output(installed)[-6000:]
    text = output(installed)
    assert f"east: installed {csv_name('5.4.0')} (version 5.4.0), 3 change(s)" in text
    assert f"west: installed {csv_name('5.4.0')} (version 5.4.0), 3 change(s)" in text
    assert "Fleet: 1 installed, 0 failed, 1 not reached yet (of 2)" in text  # after the canary batch
    assert "Fleet: 2 installed, 0 failed, 0 not reached yet (of 2)" in text
    assert recap(installed)["east"]["changed"] == 1 and recap(installed)["west"]["changed"] == 1
    for cluster in (east, west):
        assert cluster.get("clusterserviceversions.operators.coreos.com", NAMESPACE, csv_name("5.4.0")) is not None

    again = fleet.run(INSTALL)
    assert again.returncode == 0, output(again)[-6000:]
    assert "east: installed" in output(again) and "no change" in output(again)
    assert all(counters["changed"] == 0 for counters in recap(again).values())

    preview = fleet.run(UNINSTALL, "--check")
    assert preview.returncode == 0, output(preview)[-6000:]
    assert east.get("Namespace", None, NAMESPACE) is not None  # check mode deleted nothing

    removed = fleet.run(UNINSTALL, "-e", "uninstall_remove_crd=true")
    assert removed.returncode == 0, output(removed)[-6000:]
    assert "Fleet: 2 uninstalled, 0 failed, 0 not reached yet (of 2)" in output(removed)
    for cluster in (east, west):
        assert cluster.get("Namespace", None, NAMESPACE) is None
        assert cluster.get("CustomResourceDefinition", None, "kubedeschedulers.operator.openshift.io") is None
    assert all(counters["changed"] == 0 for counters in recap(fleet.run(UNINSTALL)).values())


def test_failing_canary_stops_the_rollout(fleet: Fleet) -> None:
    _canary, rest = fleet.add({"canary": {"packages": []}, "rest": {}})  # the canary's catalog lacks the package

    process = fleet.run(INSTALL)
    assert process.returncode != 0
    text = output(process)
    assert "canary: FAILED: package cluster-kube-descheduler-operator is not in catalog redhat-operators" in text
    assert "rest: not reached yet" in text
    assert "rest" not in recap(process)  # never started
    assert rest.get("Namespace", None, NAMESPACE) is None


def test_upstream_flavor_and_stats_for_awx(fleet: Fleet, tmp_path: Path) -> None:
    (cluster,) = fleet.add({"kind": None})
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"install_flavor": "upstream", "install_wait": False, "uninstall_wait": False,
                                 "install_upstream": {"kind": "cronjob", "schedule": "*/5 * * * *"}}))

    process = fleet.run(INSTALL, "-e", f"@{extra}")
    assert process.returncode == 0, output(process)[-6000:]
    assert "kind: installed (version v0.36.0), 5 change(s)" in output(process)
    assert "install_results" in output(process)  # set_stats, shown with ANSIBLE_SHOW_CUSTOM_STATS
    assert cluster.get("CronJob", "kube-system", "descheduler")["spec"]["schedule"] == "*/5 * * * *"

    removed = fleet.run(UNINSTALL, "-e", f"@{extra}")
    assert removed.returncode == 0, output(removed)[-6000:]
    assert cluster.get("CronJob", "kube-system", "descheduler") is None
    assert cluster.get("Namespace", None, "kube-system") is not None


def test_failure_threshold_stops_later_batches(fleet: Fleet) -> None:
    fleet.add({name: {"packages": []} if name == "b" else {} for name in ["a", "b", "c", "d", "e"]})

    process = fleet.run(INSTALL, "-e", '{"descheduler_fleet_serial": [1, 2, 2]}', stats=False)

    assert process.returncode != 0
    assert sorted(recap(process)) == ["a", "b", "c"]  # the batch with the failure finished, the next never began
    assert "d: not reached yet" in output(process)
    assert fleet.clusters["d"].get("Namespace", None, NAMESPACE) is None
