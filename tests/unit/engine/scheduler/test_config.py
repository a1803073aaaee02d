"""scheduler_config as a user gives it: a mapping, YAML text, a file, or the Secondary Scheduler's ConfigMap."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.config import read_scheduler_config
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import load_profiles

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "secondary-scheduler"}]}


def test_mapping_text_file_and_configmap_give_the_same_profiles(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "secondary-scheduler-config"},
                 "data": {"config.yaml": yaml.safe_dump(CONFIG)}}
    for given in (CONFIG, yaml.safe_dump(CONFIG), str(path), configmap):
        assert set(load_profiles(read_scheduler_config(given))) == {"secondary-scheduler", "default-scheduler"}


def test_configmap_without_the_key_names_what_is_expected() -> None:
    with pytest.raises(PolicyError, match="config.yaml") as caught:
        read_scheduler_config({"kind": "ConfigMap", "data": {"other": "x"}})
    assert caught.value.field == "scheduler_config.data"


def test_text_that_is_not_a_configuration_is_refused() -> None:
    with pytest.raises(PolicyError, match="scheduler_config"):
        read_scheduler_config("just words")
    with pytest.raises(PolicyError, match="valid YAML"):
        read_scheduler_config("profiles: [")
