"""Checks of the secondary scheduler's KubeSchedulerConfiguration (secondary_scheduler/config.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.secondary_scheduler.config import (
    ConfigError,
    Trimaran,
    trimaran_config,
    validate,
)

TLP = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "trimaran",
        "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking", "weight": 3}],
                              "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": "TargetLoadPacking", "args": {
            "targetUtilization": 70, "defaultRequests": {"cpu": "2000m"}, "defaultRequestsMultiplier": "1",
            "metricProvider": {"type": "Prometheus", "address": "https://prometheus-k8s.monitoring:9091"}}}],
    }],
}


def with_args(**args: Any) -> dict:
    config = copy.deepcopy(TLP)
    config["profiles"][0]["pluginConfig"][0]["args"].update(args)
    return config


def error_of(config: Any) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        validate(config)
    return caught.value


ARGS = "scheduler_config.profiles[0].pluginConfig[0].args"


def test_the_operator_example_and_the_built_configuration_pass() -> None:
    assert validate(TLP) == []
    built = trimaran_config(Trimaran("secondary-scheduler", metric_provider={"type": "Prometheus",
                                                                             "address": "http://p:9090"}))
    assert validate(built) == []
    assert built["profiles"][0]["pluginConfig"][0]["args"]["metricProvider"] == {"type": "Prometheus",
                                                                                 "address": "http://p:9090"}


@pytest.mark.parametrize(("args", "field", "fragment"), [
    ({"targetUtilization": 0}, f"{ARGS}.targetUtilization", "above 0 and at most 100"),
    ({"targetUtilization": 101}, f"{ARGS}.targetUtilization", "above 0 and at most 100"),
    ({"targetUtilization": "70"}, f"{ARGS}.targetUtilization", "integer percentage"),
    ({"defaultRequests": {"cpu": "lots"}}, f"{ARGS}.defaultRequests.cpu", "positive Kubernetes quantity"),
    ({"defaultRequestsMultiplier": 1.5}, f"{ARGS}.defaultRequestsMultiplier", "quote it"),
    ({"defaultRequestsMultiplier": "-2"}, f"{ARGS}.defaultRequestsMultiplier", "positive number"),
    ({"metricProvider": {"type": "Graphite"}}, f"{ARGS}.metricProvider.type", "KubernetesMetricsServer"),
    ({"metricProvider": {"type": "SignalFx"}}, f"{ARGS}.metricProvider.address", "needs its address"),
    ({"metricProvider": {"type": "Prometheus", "address": "prometheus:9090"}}, f"{ARGS}.metricProvider.address",
     "http(s) URL"),
])
def test_trimaran_args_errors_name_field_value_and_fix(args: dict, field: str, fragment: str) -> None:
    error = error_of(with_args(**args))
    assert error.field == field
    assert fragment in str(error) and str(error).startswith(f"{field}: invalid value ")


def test_watcher_address_replaces_the_metric_provider() -> None:
    assert validate(with_args(metricProvider={"type": "SignalFx"}, watcherAddress="http://load-watcher:2020")) == []
    assert error_of(with_args(watcherAddress="load-watcher")).field == f"{ARGS}.watcherAddress"


def test_plugins_are_checked_per_extension_point() -> None:
    config = copy.deepcopy(TLP)
    config["profiles"][0]["plugins"]["filter"] = {"enabled": [{"name": "NodeResourcesBalancedAllocation"}]}
    error = error_of(config)
    assert error.field == "scheduler_config.profiles[0].plugins.filter.enabled[0].name"
    assert "does not implement filter; it implements preScore, score" in str(error)
    config["profiles"][0]["plugins"] = {"scoring": {}}
    assert "unknown extension point" in str(error_of(config))
    config["profiles"][0]["plugins"] = {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}
    config["profiles"][0]["pluginConfig"] = []
    assert validate(config) == []


def test_profiles_names_and_plugin_config_entries() -> None:
    default = copy.deepcopy(TLP)
    default["profiles"][0]["schedulerName"] = "default-scheduler"
    assert "both would bind the same pods" in str(error_of(default))
    twice = copy.deepcopy(TLP)
    twice["profiles"].append(copy.deepcopy(twice["profiles"][0]))
    assert error_of(twice).field == "scheduler_config.profiles[1].schedulerName"
    repeated = copy.deepcopy(TLP)
    repeated["profiles"][0]["pluginConfig"].append({"name": "TargetLoadPacking"})
    assert "one pluginConfig entry per plugin" in str(error_of(repeated))
    unused = copy.deepcopy(TLP)
    unused["profiles"][0]["pluginConfig"].append({"name": "LoadVariationRiskBalancing",
                                                  "args": {"safeVarianceMargin": 1}})
    assert validate(unused) == [
        "scheduler_config.profiles[0].pluginConfig[1]: args for LoadVariationRiskBalancing, which this profile "
        "does not enable: unused"]
    heavy = copy.deepcopy(TLP)
    heavy["profiles"][0]["plugins"]["score"]["enabled"][0]["weight"] = 0
    assert "from 1 to 100" in str(error_of(heavy))


def test_api_version_and_kind() -> None:
    assert "v1beta2 and v1beta3 are gone" in str(error_of({**TLP, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"}))
    assert error_of({**TLP, "kind": "Policy"}).field == "scheduler_config.kind"
    assert error_of({**TLP, "profiles": []}).field == "scheduler_config.profiles"
