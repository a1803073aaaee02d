"""The Volcano descheduler's HighNodeUtilization: upstream v0.27.1's, vendored unchanged by volcano-sh/descheduler
(go.mod sigs.k8s.io/descheduler v0.27.1, pkg/descheduler/setupplugins.go), against upstream HEAD's that the engine
runs for other policies. A policy is Volcano's when it is the CCE add-on's configuration (``deschedulerPolicy``) or
a profile balances with LoadAware.

v0.27.1 (pkg/framework/plugins/nodeutilization/highnodeutilization.go, nodeutilization.go): setDefaultForThresholds
puts cpu, memory and pods missing from thresholds at 100; isNodeWithLowUtilization compares each resource's requests
with resourceThreshold = int64(pct * 0.01 * allocatable) (cpu in millis); HighNodeUtilizationArgs has no
evictionModes and plugin args are decoded strictly (pkg/api/v1alpha2 conversion with EnableStrict).
"""

from __future__ import annotations

from typing import Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import build_node, build_pod, evicted_names, node_classes, policy, set_rs_owner

NOW = "2026-11-22T12:00:00Z"
NAME = "HighNodeUtilization"
KEY = f"test/{NAME}"
GI = 2**30
LOAD_AWARE_ARGS = {"thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 80},
                   "metrics": {"type": "prometheus", "address": "http://prometheus.monitoring:9090"}}


def hnu_policy(args: dict) -> dict:
    return policy((NAME, "balance", args))


def as_cce_addon(document: dict) -> dict:
    """The Huawei CCE Volcano add-on's configuration: the policy (without header) under deschedulerPolicy."""
    inner = {k: v for k, v in document.items() if k not in ("apiVersion", "kind")}
    return {"descheduler_enable": "true", "deschedulerPolicy": inner}


def with_loadaware_profile(document: dict) -> dict:
    second = policy(("LoadAware", "balance", LOAD_AWARE_ARGS), profile="load")["profiles"][0]
    return {**document, "profiles": document["profiles"] + [second]}


def owned_pod(name: str, cpu: int, node: str) -> dict:
    return build_pod(name, cpu, 0, node, lambda p: set_rs_owner(p, f"rs-{name}", f"uid-rs-{name}"))


def boundary_cluster() -> list[dict]:
    """n1 requests 560m of 2 cores: 28% exactly in whole millis, 28.000000000000004 as HEAD's float percentage."""
    nodes = [build_node(name, 2000, 8 * GI, 110) for name in ("n1", "n2", "n3")]
    pods = [owned_pod("a", 280, "n1"), owned_pod("b", 280, "n1"),
            owned_pod("c", 1500, "n2"), owned_pod("d", 1500, "n3")]
    return nodes + pods


def plan(objects: list[dict], document: dict) -> dict:
    return compute_plan(objects, document, NOW)


@pytest.mark.parametrize("volcano", [as_cce_addon, with_loadaware_profile])
def test_a_node_exactly_at_the_threshold_in_whole_millis_is_underutilized_for_volcano(volcano):
    document = hnu_policy({"thresholds": {"cpu": 28}})
    upstream, volcano_plan = plan(boundary_cluster(), document), plan(boundary_cluster(), volcano(document))
    assert node_classes(upstream, KEY)["n1"] == "appropriate" and evicted_names(upstream) == []
    assert node_classes(volcano_plan, KEY)["n1"] == "underutilized"
    assert sorted(evicted_names(volcano_plan)) == ["a", "b"]  # emptied onto n2/n3 (500m free each)


def test_an_unnamed_resource_over_allocatable_keeps_a_node_from_being_underutilized_for_volcano():
    """n1 holds 3 pods but allocates 2 (pods bound by nodeName skip the scheduler's check): pods at 150% > the
    implicit 100% in v0.27.1; HEAD looks at cpu only."""
    nodes = [build_node("n1", 2000, 8 * GI, 2), build_node("n2", 2000, 8 * GI, 110),
             build_node("n3", 2000, 8 * GI, 110)]
    pods = [owned_pod(name, 100, "n1") for name in ("a", "b", "e")]
    pods += [owned_pod("c", 1500, "n2"), owned_pod("d", 1500, "n3")]
    document = hnu_policy({"thresholds": {"cpu": 20}})
    upstream = plan(nodes + pods, document)
    volcano = plan(nodes + pods, as_cce_addon(document))
    assert node_classes(upstream, KEY)["n1"] == "underutilized" and evicted_names(upstream)
    assert node_classes(volcano, KEY)["n1"] == "appropriate" and evicted_names(volcano) == []


def test_away_from_boundaries_volcano_and_upstream_plan_the_same():
    nodes = [build_node(name, 4000, 8 * GI, 110) for name in ("n1", "n2", "n3")]
    pods = [owned_pod("a", 300, "n1"), owned_pod("b", 200, "n1"), owned_pod("c", 3000, "n2"),
            owned_pod("d", 2500, "n3")]
    document = hnu_policy({"thresholds": {"cpu": 20, "memory": 50}})
    upstream, volcano = plan(nodes + pods, document), plan(nodes + pods, as_cce_addon(document))
    assert evicted_names(volcano) == evicted_names(upstream) == ["a", "b"]


def evictionmodes_policy(volcano: Optional[bool]) -> dict:
    document = hnu_policy({"thresholds": {"cpu": 20}, "evictionModes": ["OnlyThresholdingResources"]})
    return as_cce_addon(document) if volcano else document


def test_eviction_modes_are_refused_by_volcanos_strict_v0271_decoding():
    with pytest.raises(PolicyError) as caught:
        load_policy(evictionmodes_policy(volcano=True), {})
    assert caught.value.field == f"policy.profiles[0].pluginConfig[{NAME}].args.evictionModes"
    assert 'unknown field "evictionModes"' in str(caught.value) and "v0.27.1" in str(caught.value)
    assert load_policy(evictionmodes_policy(volcano=False), {}).flavor == "upstream"  # HEAD has them


def test_the_flavor_is_volcano_only_for_the_addon_or_a_loadaware_profile():
    document = hnu_policy({"thresholds": {"cpu": 20}})
    assert load_policy(document, {}).flavor == "upstream"
    assert load_policy(as_cce_addon(document), {}).flavor == "volcano"
    assert load_policy(with_loadaware_profile(document), {}).flavor == "volcano"
