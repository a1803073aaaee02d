"""The rollout module's ``kind``: each cluster's input checked for the chosen Change before any cluster is reached
(the clusters here have no connection at all: an error raised later would be a connection error, not these)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import _targets, run_rollout
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_secondary_scheduler import (
    _template_inputs_changed,
)

IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.31.8"


def scheduler(**options: Any) -> dict[str, Any]:
    return {"name": "c1", "state": "present", "secondary_scheduler": {"scheduler_image": IMAGE, **options}}


def refused(kind: str, *clusters: dict[str, Any]) -> RolloutError:
    with pytest.raises(RolloutError) as raised:
        run_rollout({"kind": kind, "clusters": list(clusters)}, check_mode=True)
    return raised.value


def test_secondary_scheduler_options_get_the_module_defaults() -> None:
    target = _targets([scheduler(trimaran={"target_utilization": 60})], "secondary_scheduler")["c1"]
    assert target.desired["scheduler_image"] == IMAGE and target.desired["trimaran"] == {"target_utilization": 60}
    assert target.desired["state"] == "present" and target.desired["channel"] == "stable"
    assert target.desired["config_map_name"] == "secondary-scheduler-config"
    assert target.desired["install_plan_approval"] == "Automatic" and not target.desired["check_metric_provider"]


def test_the_scheduler_options_state_wins_over_the_clusters() -> None:
    target = _targets([scheduler(state="absent")], "secondary_scheduler")["c1"]
    assert target.desired["state"] == "absent"


def test_an_unknown_scheduler_option_is_named() -> None:
    error = refused("secondary_scheduler", scheduler(schedulerImage=IMAGE))
    assert error.field == "clusters[0].secondary_scheduler.schedulerImage"
    assert "unknown option; use one of the secondary_scheduler module's: state, scheduler_image" in str(error)


def test_an_unknown_trimaran_option_is_named() -> None:
    error = refused("secondary_scheduler", scheduler(trimaran={"targetUtilization": 60}))
    assert error.field == "clusters[0].secondary_scheduler.trimaran.targetUtilization" and error.value == 60


def test_a_configuration_that_cannot_run_is_refused_before_any_cluster() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}}]}
    error = refused("secondary_scheduler", scheduler(scheduler_config=config))
    assert error.field.startswith("clusters[0].secondary_scheduler.scheduler_config.profiles[0]")
    assert "NoSuchPlugin" in str(error)


def test_a_kubedescheduler_spec_is_refused_for_the_secondary_scheduler() -> None:
    error = refused("secondary_scheduler", {**scheduler(), "spec": {"mode": "Predictive"}})
    assert error.field == "clusters[0].spec" and "kind is secondary_scheduler" in str(error)


def test_scheduler_options_are_refused_for_the_kubedescheduler() -> None:
    error = refused("kubedescheduler", scheduler())
    assert error.field == "clusters[0].secondary_scheduler" and "only for kind secondary_scheduler" in str(error)


def test_an_unknown_kind_is_named() -> None:
    error = refused("volcano", scheduler())
    assert error.field == "kind" and error.value == "volcano"


def test_only_a_written_configuration_or_cr_means_a_new_scheduler_template_to_wait_for() -> None:
    def actions(*changed_steps: str) -> dict[str, Any]:
        return {"actions": [{"step": step, "changed": step in changed_steps}
                            for step in ("subscription", "config_map", "secondary_scheduler", "wait")]}

    assert _template_inputs_changed(actions("config_map"))
    assert _template_inputs_changed(actions("secondary_scheduler"))
    assert not _template_inputs_changed(actions("subscription"))  # a new channel alone: the template stays
    assert not _template_inputs_changed(actions())
