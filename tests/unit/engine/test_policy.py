"""Policy loading, ported from upstream pkg/descheduler/policyconfig_test.go (decode, validate, defaults), plus
spec §1 (DefaultEvictor insertion, priorityThreshold resolution, profile construction) and the cycle rules of §2/§3.

Upstream's ``decode`` stops before profile construction; our load_policy also runs the profile checks of
pkg/framework/profile (an enabled plugin without pluginConfig fails there, and the descheduler never starts), so the
two upstream cases that enable RemovePodsHavingTooManyRestarts without a pluginConfig are an error here (see
test_enabled_plugin_without_plugin_config). Upstream aggregates every validation error; a PolicyError names the
first one, which is upstream's first too.
"""

from __future__ import annotations

import copy

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import EvictionLimits, LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import (
    add_taint,
    build_node,
    build_pod,
    build_priority_class,
    evicted_names,
    policy,
    set_rs_owner,
)

NOW = "2026-06-30T12:00:00Z"
EVICTOR = "DefaultEvictor"


def load(text: str, priority_classes: dict | None = None):
    return load_policy(yaml.safe_load(text), priority_classes or {})


def field_of(document, priority_classes: dict | None = None) -> str:
    with pytest.raises(PolicyError) as info:
        load_policy(yaml.safe_load(document) if isinstance(document, str) else document, priority_classes or {})
    return info.value.field


# --- TestDecodeVersionedPolicy --------------------------------------------------------------------------------------

def test_v1alpha2_to_internal():
    loaded = load("""
apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "DefaultEvictor"
      args:
        evictSystemCriticalPods: true
        evictFailedBarePods: true
        evictLocalStoragePods: true
        evictDaemonSetPods: true
        nodeFit: true
    - name: "RemovePodsHavingTooManyRestarts"
      args:
        podRestartThreshold: 100
        includingInitContainers: true
    plugins:
      deschedule:
        enabled:
          - "RemovePodsHavingTooManyRestarts"
""")
    profile = loaded.profiles[0]
    assert profile.name == "ProfileName"
    assert list(profile.args) == [EVICTOR, "RemovePodsHavingTooManyRestarts"]
    assert profile.args[EVICTOR] == {"evictSystemCriticalPods": True, "evictFailedBarePods": True,
                                     "evictLocalStoragePods": True, "evictDaemonSetPods": True, "nodeFit": True,
                                     "priorityThreshold": {"value": 2_000_000_000}}
    assert profile.args["RemovePodsHavingTooManyRestarts"] == {"podRestartThreshold": 100,
                                                               "includingInitContainers": True}
    assert (profile.filters, profile.pre_eviction_filters) == ([EVICTOR], [EVICTOR])
    assert (profile.deschedule, profile.balance) == (["RemovePodsHavingTooManyRestarts"], [])


def test_priority_threshold_exceeding_maximum():
    assert field_of("""
apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "DefaultEvictor"
      args:
        priorityThreshold:
          value: 2000000001
    plugins:
      deschedule:
        enabled:
          - "RemovePodsHavingTooManyRestarts"
""") == "policy.profiles[0].pluginConfig[DefaultEvictor].args.priorityThreshold"


# --- TestValidateDeschedulerConfiguration -------------------------------------------------------------------------

def test_first_of_multiple_validation_errors():
    both = {"include": ["test1"], "exclude": ["test1"]}
    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [
        {"name": "RemoveFailedPods", "pluginConfig": [{"name": "RemoveFailedPods", "args": {"namespaces": both}}],
         "plugins": {"deschedule": {"enabled": ["RemoveFailedPods"]}}},
        {"name": "RemovePodsViolatingTopologySpreadConstraint",
         "pluginConfig": [{"name": "RemovePodsViolatingTopologySpreadConstraint", "args": {"namespaces": both}}],
         "plugins": {"balance": {"enabled": ["RemovePodsViolatingTopologySpreadConstraint"]}}}]}
    assert field_of(document) == "policy.profiles[0].pluginConfig[0].args.namespaces"
    document["profiles"].pop(0)
    assert field_of(document) == "policy.profiles[0].pluginConfig[0].args.namespaces"


def providers(*items: dict, **top) -> dict:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "metricsProviders": list(items), **top}


def prometheus(url: str = "https://example.com:80", **extra) -> dict:
    return {"source": "Prometheus", "prometheus": {"url": url, **extra}}


@pytest.mark.parametrize("document,field", [
    (providers({"source": "KubernetesMetrics"}, {"source": "KubernetesMetrics"}), "policy.metricsProviders[1].source"),
    (providers({"source": "KubernetesMetrics"}, metricsCollector={"enabled": True}), "policy.metricsProviders[0]"),
    (providers({"source": "Prometheus", "prometheus": {}}), "policy.metricsProviders[0].prometheus.url"),
    (providers({"source": "Prometheus"}), "policy.metricsProviders[0].prometheus.url"),
    (providers(prometheus("http://example.com:-80")), "policy.metricsProviders[0].prometheus.url"),
    (providers(prometheus(authToken={})), "policy.metricsProviders[0].prometheus.authToken.secretReference"),
    (providers(prometheus(authToken={"secretReference": {}})),
     "policy.metricsProviders[0].prometheus.authToken.secretReference"),
    (providers(prometheus(authToken={"secretReference": {"name": "secretname"}})),
     "policy.metricsProviders[0].prometheus.authToken.secretReference"),
    (providers(prometheus(authToken={"secretReference": {"namespace": "secretnamespace"}})),
     "policy.metricsProviders[0].prometheus.authToken.secretReference"),
])
def test_metrics_provider_errors(document, field):
    assert field_of(document) == field


def test_valid_prometheus_auth_token():
    secret = {"secretReference": {"name": "secretname", "namespace": "secretnamespace"}}
    assert load_policy(providers(prometheus(authToken=secret)), {}).metrics_providers[0]["source"] == "Prometheus"


# --- TestDecodeDefaults -------------------------------------------------------------------------------------------

DEFAULTS_POLICY = """
apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "DefaultEvictor"
      args:
        evictSystemCriticalPods: true
        evictFailedBarePods: true
        evictLocalStoragePods: true
        evictDaemonSetPods: true
        nodeFit: true
    - name: "RemoveFailedPods"
    plugins:
%s
      deschedule:
        enabled:
          - "%s"
"""
FILTERS = """      filter:
        enabled:
          - "DefaultEvictor"
      preEvictionFilter:
        enabled:
          - "DefaultEvictor\""""


@pytest.mark.parametrize("filters", [FILTERS, ""], ids=["with filters", "omitted filters"])
def test_enabled_plugin_without_plugin_config(filters):
    """Upstream's decode accepts this; building the profile then fails, so the descheduler never starts."""
    document = DEFAULTS_POLICY % (filters, "RemovePodsHavingTooManyRestarts")
    assert field_of(document) == "policy.profiles[0].plugins.deschedule.enabled"


@pytest.mark.parametrize("filters", [FILTERS, ""], ids=["with filters", "omitted filters"])
def test_remove_failed_pods_defaults(filters):
    loaded = load(DEFAULTS_POLICY % (filters, "RemoveFailedPods"))
    profile = loaded.profiles[0]
    assert profile.args["RemoveFailedPods"] == {"minPodLifetimeSeconds": 3600}
    assert profile.args[EVICTOR]["priorityThreshold"] == {"value": 2_000_000_000}
    assert (profile.filters, profile.pre_eviction_filters) == ([EVICTOR], [EVICTOR])
    # "preEvictionFilter" does not match the JSON tag preevictionfilter: dropped (harmless, DefaultEvictor is added)
    assert any("preEvictionFilter" in w for w in loaded.warnings) == bool(filters)


PROTECTIONS_POLICY = """
apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "DefaultEvictor"
      args:
%s
        priorityThreshold:
          value: 2000000000
        nodeFit: true
    plugins:
      filter:
        enabled:
          - "DefaultEvictor"
      preEvictionFilter:
        enabled:
          - "DefaultEvictor"
"""


@pytest.mark.parametrize("protections,expected", [
    ("""        podProtections:
          defaultDisabled:
          - "PodsWithLocalStorage"
          - "DaemonSetPods\"""", {"defaultDisabled": ["PodsWithLocalStorage", "DaemonSetPods"]}),
    ("""        podProtections:
          extraEnabled:
          - "PodsWithPVC"
          - "PodsWithoutPDB\"""", {"extraEnabled": ["PodsWithPVC", "PodsWithoutPDB"]}),
    ("""        podProtections:
          extraEnabled:
          - "PodsWithPVC"
          - "PodsWithoutPDB"
          defaultDisabled:
          - "PodsWithLocalStorage"
          - "DaemonSetPods\"""",
     {"extraEnabled": ["PodsWithPVC", "PodsWithoutPDB"], "defaultDisabled": ["PodsWithLocalStorage", "DaemonSetPods"]}),
])
def test_pod_protections_configuration(protections, expected):
    profile = load(PROTECTIONS_POLICY % protections).profiles[0]
    assert profile.args[EVICTOR] == {"podProtections": expected, "priorityThreshold": {"value": 2_000_000_000},
                                     "nodeFit": True}
    assert profile.filters == [EVICTOR]


@pytest.mark.parametrize("protections,field", [
    ("""        evictSystemCriticalPods: true
        podProtections:
          extraEnabled:
          - "PodsWithPVC"
          - "PodsWithoutPDB"
          defaultDisabled:
          - "PodsWithLocalStorage"
          - "DaemonSetPods\"""", ""),
    ("""        podProtections:
          defaultDisabled:
          - "InvalidProtection\"""", ".podProtections.defaultDisabled"),
    ("""        podProtections:
          extraEnabled:
          - "InvalidProtection\"""", ".podProtections.extraEnabled"),
    ("""        podProtections:
          defaultDisabled:
          - "PodsWithPVC\"""", ".podProtections.defaultDisabled"),
    ("""        podProtections:
          extraEnabled:
          - "DaemonSetPods\"""", ".podProtections.extraEnabled"),
])
def test_pod_protections_errors(protections, field):
    assert field_of(PROTECTIONS_POLICY % protections) == "policy.profiles[0].pluginConfig[0].args" + field


# --- spec §1: DefaultEvictor insertion and priorityThreshold ------------------------------------------------------

def bare_profile(**profile) -> dict:
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
            "profiles": [{"name": "p", **profile}]}


def test_default_evictor_is_prepended_with_zero_args():
    profile = load_policy(bare_profile(
        pluginConfig=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 60}}],
        plugins={"deschedule": {"enabled": ["PodLifeTime"]}, "filter": {"enabled": []}}), {}).profiles[0]
    assert list(profile.args) == [EVICTOR, "PodLifeTime"]
    assert profile.args[EVICTOR] == {"priorityThreshold": {"value": 2_000_000_000}}
    assert (profile.filters, profile.pre_eviction_filters) == ([EVICTOR], [EVICTOR])


def test_default_evictor_not_duplicated_when_listed():
    profile = load_policy(bare_profile(plugins={"filter": {"enabled": [EVICTOR]},
                                                "preevictionfilter": {"enabled": [EVICTOR]}}), {}).profiles[0]
    assert (profile.filters, profile.pre_eviction_filters) == ([EVICTOR], [EVICTOR])


def test_plugin_config_without_args_gets_zero_args_and_defaults():
    profile = load_policy(bare_profile(pluginConfig=[{"name": EVICTOR}, {"name": "RemoveFailedPods", "args": None}],
                                       plugins={"deschedule": {"enabled": ["RemoveFailedPods"]}}), {}).profiles[0]
    assert profile.args == {EVICTOR: {"priorityThreshold": {"value": 2_000_000_000}},
                            "RemoveFailedPods": {"minPodLifetimeSeconds": 3600}}


def threshold_policy(threshold: dict) -> dict:
    return bare_profile(pluginConfig=[{"name": EVICTOR, "args": {"priorityThreshold": threshold}}])


@pytest.mark.parametrize("threshold,classes,value", [
    ({"name": "high"}, {"high": 1000}, 1000),
    ({"value": -5}, {}, -5),
    ({"value": 2_000_000_000}, {}, 2_000_000_000),
    ({}, {}, 2_000_000_000),
    ({"name": ""}, {}, 2_000_000_000),
])
def test_priority_threshold_resolution(threshold, classes, value):
    profile = load_policy(threshold_policy(threshold), classes).profiles[0]
    assert profile.priority_threshold == value
    assert profile.args[EVICTOR]["priorityThreshold"] == {"value": value}


@pytest.mark.parametrize("threshold,classes,field", [
    ({"name": "missing"}, {"other": 1}, ".priorityThreshold.name"),
    ({"name": "high", "value": 1}, {"high": 1000}, ".priorityThreshold"),
    ({"value": 2_000_000_001}, {}, ".priorityThreshold"),
    ({"value": -(2**31) - 1}, {}, ".priorityThreshold"),
    ({"value": "100"}, {}, ".priorityThreshold"),
    ({"value": 1, "level": 3}, {}, ".priorityThreshold.level"),
])
def test_priority_threshold_errors(threshold, classes, field):
    resolved = "policy.profiles[0].pluginConfig[DefaultEvictor].args"
    validated = "policy.profiles[0].pluginConfig[0].args"
    assert field_of(threshold_policy(threshold), classes) in (resolved + field, validated + field)


def test_priority_threshold_from_cluster_priority_class_end_to_end():
    nodes = [build_node("n1", 1000, 10**9, 10), build_node("n2", 1000, 10**9, 10)]

    def prioritized(name: str, value: int) -> dict:
        return build_pod(name, 1, 1, "n1", lambda p: (set_rs_owner(p), p["spec"].update(priority=value)))

    objects = [*nodes, build_priority_class("cutoff", 100), prioritized("low", 99), prioritized("high", 100)]
    document = policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 1}),
                      evictor_args={"priorityThreshold": {"name": "cutoff"}})
    assert evicted_names(compute_plan(objects, document, NOW)) == ["low"]


# --- spec §1: decoding, plugin names, extension points -----------------------------------------------------------

def test_unknown_plugin_in_plugin_config():
    assert field_of(bare_profile(pluginConfig=[{"name": "NoSuchPlugin", "args": {}}])) == \
        "policy.profiles[0].pluginConfig[0].name"


def test_unknown_plugin_enabled():
    assert field_of(bare_profile(plugins={"balance": {"enabled": ["NoSuchPlugin"]}})) == \
        "policy.profiles[0].plugins.balance.enabled"


def test_plugin_at_the_wrong_extension_point():
    document = bare_profile(pluginConfig=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1}}],
                            plugins={"balance": {"enabled": ["PodLifeTime"]}})
    assert field_of(document) == "policy.profiles[0].plugins.balance.enabled"
    document["profiles"][0]["plugins"] = {"filter": {"enabled": ["PodLifeTime"]}}
    assert field_of(document) == "policy.profiles[0].plugins.filter.enabled"


@pytest.mark.parametrize("document", [
    {"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy", "strategies": {}},
    {"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy"},
    {"kind": "DeschedulerPolicy", "strategies": {"PodLifeTime": {"enabled": True}}},
])
def test_v1alpha1_is_rejected(document):
    assert field_of(document) == "policy.apiVersion"


def test_unknown_top_level_keys_are_dropped_but_args_are_strict():
    document = bare_profile(pluginConfig=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1}}],
                            plugins={"deschedule": {"enabled": ["PodLifeTime"]}, "presort": {"enabled": ["X"]},
                                     "sort": {"enabled": ["Y"]}})
    document["evictLocalStoragePods"] = True  # a v1alpha1 field at the top level: dropped
    loaded = load_policy(document, {})
    assert any("evictLocalStoragePods" in w for w in loaded.warnings)
    assert loaded.profiles[0].deschedule == ["PodLifeTime"]  # presort/sort are parsed and ignored
    document["profiles"][0]["pluginConfig"][0]["args"]["maxPodLifetimeSeconds"] = 1  # wrong case: unknown field
    assert field_of(document) == "policy.profiles[0].pluginConfig[0].args.maxPodLifetimeSeconds"


def test_disabled_lists_are_ignored():
    document = bare_profile(pluginConfig=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1}}],
                            plugins={"deschedule": {"enabled": ["PodLifeTime"], "disabled": ["PodLifeTime"]},
                                     "filter": {"disabled": [EVICTOR]}})
    profile = load_policy(document, {}).profiles[0]
    assert profile.deschedule == ["PodLifeTime"] and profile.filters == [EVICTOR]


def test_duplicate_plugin_config_first_wins_but_all_are_validated():
    document = bare_profile(pluginConfig=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1}},
                                          {"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 9}}],
                            plugins={"deschedule": {"enabled": ["PodLifeTime"]}})
    loaded = load_policy(copy.deepcopy(document), {})
    assert loaded.profiles[0].args["PodLifeTime"] == {"maxPodLifeTimeSeconds": 1}
    document["profiles"][0]["pluginConfig"][1]["args"] = {}
    assert field_of(document) == "policy.profiles[0].pluginConfig[1].args"


@pytest.mark.parametrize("key,value", [("maxNoOfPodsToEvictTotal", -1), ("maxNoOfPodsToEvictPerNode", "2"),
                                       ("maxNoOfPodsToEvictPerNamespace", True)])
def test_eviction_limits_must_be_unsigned(key, value):
    assert field_of({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", key: value}) == f"policy.{key}"


def test_duplicate_profile_names_run_by_index():
    # upstream's validateDeschedulerConfiguration does not refuse them (the operator renders two "LongLifecycle")
    document = bare_profile()
    document["profiles"].append({"name": "p"})
    assert [profile.name for profile in load_policy(document, {}).profiles] == ["p", "p"]


# --- spec §2/§3: the cycle -------------------------------------------------------------------------------------------

def two_nodes(*applies) -> list:
    return [build_node("n1", 2000, 4 * 10**9, 10, *applies), build_node("n2", 2000, 4 * 10**9, 10, *applies)]


def old_pods(count: int, node: str = "n1", namespace: str = "default", prefix: str = "p") -> list:
    return [build_pod(f"{prefix}{i}", 1, 1, node, set_rs_owner, namespace=namespace) for i in range(count)]


LIFETIME = ("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 1})


def test_cycle_skipped_below_two_ready_nodes():
    not_ready = build_node("n2", 2000, 4 * 10**9, 10, lambda n: n["status"].update(
        conditions=[{"type": "Ready", "status": "False"}]))
    plan = compute_plan([build_node("n1", 2000, 4 * 10**9, 10), not_ready, *old_pods(2)], policy(LIFETIME), NOW)
    assert plan["cycle"]["skipped"] and plan["cycle"]["skip_reason"] == "requires >=2 nodes, found 1"
    assert plan["evictions"] == []


def test_node_without_conditions_is_ready_and_unschedulable_nodes_are_kept():
    nodes = [build_node("n1", 2000, 4 * 10**9, 10, lambda n: n["status"].pop("conditions")),
             build_node("n2", 2000, 4 * 10**9, 10, lambda n: n["spec"].update(unschedulable=True))]
    plan = compute_plan([*nodes, *old_pods(1, "n2")], policy(LIFETIME), NOW)
    assert plan["cycle"]["nodes"] == ["n1", "n2"] and evicted_names(plan) == ["p0"]


def test_policy_node_selector_limits_the_node_list():
    nodes = two_nodes(lambda n: n["metadata"]["labels"].update(pool="a"))
    nodes.append(build_node("n3", 2000, 4 * 10**9, 10))
    plan = compute_plan([*nodes, *old_pods(1, "n3")], policy(LIFETIME, nodeSelector="pool=a"), NOW)
    assert plan["cycle"]["nodes"] == ["n1", "n2"] and plan["evictions"] == []


def test_all_deschedule_plugins_run_before_balance_plugins():
    """Profile 1 balances, profile 2 deschedules: profile 2's deschedule plugin still runs first."""
    nodes = two_nodes(lambda n: add_taint(n, "t"))
    pods = [build_pod(f"d{i}", 1, 1, "n1", lambda p: (set_rs_owner(p), p["spec"]["containers"][0].update(
        image="img"))) for i in range(2)]
    balance = policy(("RemoveDuplicates", "balance", {}), profile="first")
    deschedule = policy(("RemovePodsViolatingNodeTaints", "deschedule", {}), profile="second")
    balance["profiles"] += deschedule["profiles"]
    plan = compute_plan([*nodes, *pods], balance, NOW)
    assert [e["profile"] for e in plan["evictions"]] == ["second", "second"]


def test_limits_are_checked_total_then_node_then_namespace():
    limits = EvictionLimits(total=1, per_node=1, per_namespace=1)
    first = Pod(build_pod("a", 1, 1, "n1"))
    limits.check(first)
    limits.record(first)
    with pytest.raises(LimitError) as info:
        limits.check(Pod(build_pod("b", 1, 1, "n1")))
    assert info.value.scope == "total"
    limits.max_total = None
    with pytest.raises(LimitError) as info:
        limits.check(Pod(build_pod("b", 1, 1, "n1")))
    assert info.value.scope == "node"
    with pytest.raises(LimitError) as info:
        limits.check(Pod(build_pod("b", 1, 1, "n2")))
    assert info.value.scope == "namespace"
    limits.check(Pod(build_pod("b", 1, 1, "n2", namespace="other")))


def test_limits_are_shared_by_all_profiles_and_plugins():
    document = policy(LIFETIME, ("RemoveFailedPods", "deschedule", {"minPodLifetimeSeconds": 0}),
                      maxNoOfPodsToEvictTotal=3)
    failed = [build_pod(f"f{i}", 1, 1, "n2", lambda p: (set_rs_owner(p), p["status"].update(phase="Failed")))
              for i in range(2)]
    plan = compute_plan([*two_nodes(), *old_pods(2), *failed], document, NOW)
    assert plan["summary"]["limits"]["hit"]["total"]
    # equal ages keep node order (n1, n2) in the stable age sort; RemoveFailedPods then finds the total spent
    assert [(e["plugin"], e["name"]) for e in plan["evictions"]] == [
        ("PodLifeTime", "p0"), ("PodLifeTime", "p1"), ("PodLifeTime", "f0")]


def test_zero_limit_means_no_eviction():
    plan = compute_plan([*two_nodes(), *old_pods(2)], policy(LIFETIME, maxNoOfPodsToEvictPerNode=0), NOW)
    assert plan["evictions"] == [] and plan["summary"]["limits"]["hit"]["node"] == ["n1"]
