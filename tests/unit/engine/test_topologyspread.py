"""RemovePodsViolatingTopologySpreadConstraint: upstream's plugin tests, run through compute_plan.

Ported from pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/{topologyspreadconstraint,defaults,
validation}_test.go at 7d2b28bf. Upstream's TestTopologySpreadConstraint lists pods sorted by name (as our snapshot
does), so where it names the evicted pods we assert them exactly.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import topologyspread
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.policy import load_policy
from builders import build_node, build_pod, evicted_names, policy

NOW = "2026-11-22T12:00:00Z"
PLUGIN = "RemovePodsViolatingTopologySpreadConstraint"
FOO_BAR = {"foo": "bar"}
HASH_KEY = "pod-template-hash"  # appsv1.DefaultDeploymentUniqueLabelKey
ARCH = "kubernetes.io/arch"  # v1.LabelArchStable


# --- builders mirroring the helpers at the end of upstream's test file ---

def node(name: str, cpu: int = 2000, mem: int = 3000, pods: int = 10, taints: Optional[list] = None,
         replace_labels: bool = False, **labels: str) -> dict:
    def apply(obj: dict) -> None:
        if replace_labels:
            obj["metadata"]["labels"] = {}
        obj["metadata"]["labels"].update(labels)
        if taints:
            obj["spec"]["taints"] = taints
    return build_node(name, cpu, mem, pods, apply)


def zone_node(name: str, zone: str, **kwargs: Any) -> dict:
    return node(name, zone=zone, **kwargs)


def constraint(max_skew: int, key: str = "zone", when: str = "DoNotSchedule",
               selector: Optional[dict] = None, **extra: Any) -> list[dict]:
    """getDefaultTopologyConstraints: one constraint selecting foo=bar over <key>, with optional edits."""
    raw = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
           "labelSelector": selector if selector is not None else {"matchLabels": dict(FOO_BAR)}}
    raw.update(extra)
    return [raw]


def group(count: int, node_name: str, labels: Optional[dict] = None, constraints: Optional[list] = None,
          node_selector: Optional[dict] = None, affinity: Optional[dict] = None, no_owners: bool = False,
          tolerations: Optional[list] = None, deleting: bool = False) -> dict:
    return {"count": count, "node": node_name, "labels": labels, "constraints": constraints,
            "node_selector": node_selector, "affinity": affinity, "no_owners": no_owners,
            "tolerations": tolerations, "deleting": deleting}


def create_pods(groups: list[dict]) -> list[dict]:
    """createTestPods: pod-<n> in ns1, 100m cpu, ReplicaSet replicaset-1 owner unless noOwners."""
    pods = []
    for spec in groups:
        for _index in range(spec["count"]):
            pods.append(build_pod(f"pod-{len(pods)}", 100, 0, spec["node"], _shape(spec), namespace="ns1"))
    return pods


def _shape(spec: dict):
    def apply(pod: dict) -> None:
        meta, pod_spec = pod["metadata"], pod["spec"]
        if spec["labels"] is not None:
            meta["labels"] = dict(spec["labels"])
        if not spec["no_owners"]:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-1"}]
        for key, field in (("constraints", "topologySpreadConstraints"), ("node_selector", "nodeSelector"),
                           ("affinity", "affinity"), ("tolerations", "tolerations")):
            if spec[key] is not None:
                pod_spec[field] = spec[key]
        if spec["deleting"]:
            meta["deletionTimestamp"] = "0001-01-01T00:00:00Z"  # &metav1.Time{}: set, zero
    return apply


def required_affinity(key: str, operator: str, values: Optional[list] = None) -> dict:
    expression = {"key": key, "operator": operator}
    if values is not None:
        expression["values"] = values
    term = {"matchExpressions": [expression]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def label_selector(key: str, values: list[str], operator: str) -> dict:
    return {"matchExpressions": [{"key": key, "operator": operator, "values": values}]}


def run(nodes: list[dict], pods: list[dict], args: dict, node_fit: bool = False) -> dict:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}
    document = policy((PLUGIN, "balance", args), evictor_args={"nodeFit": node_fit})
    return compute_plan(nodes + pods + [namespace], document, NOW)


def two_zones(**kwargs: Any) -> list[dict]:
    return [zone_node("n1", "zoneA", **kwargs), zone_node("n2", "zoneB")]


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict:
    return {"key": key, "value": value, "effect": effect}


def os_nodes(extra: int = 0) -> list[dict]:
    nodes = [node(f"n{i + 1}", node=f"linNode{c}", os="linux") for i, c in enumerate("ABC")]
    names = "ABCD"[:3 + extra]
    nodes += [node(f"n{i + 4}", node=f"winNode{c}", os="windows") for i, c in enumerate(names)]
    return nodes


def whoami(node_name: str) -> dict:
    app = {"matchLabels": {"app": "whoami"}}
    constraints = [
        {"labelSelector": app, "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "ScheduleAnyway"},
        {"labelSelector": app, "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
         "whenUnsatisfiable": "DoNotSchedule"},
    ]
    return group(1, node_name, {"app": "whoami"}, constraints)


def host_zone_node(name: str, zone: str) -> dict:
    return node(name, replace_labels=True, **{"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name})


WINDOWS = {"os": "windows"}
BOTH = {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}
SOFT = constraint(1, when="ScheduleAnyway")
APP_SERVICE = required_affinity("app_service", "Exists")
SERVICE = {"app.kubernetes.io/name": "service"}
SERVICE_CONSTRAINT = constraint(1, key="kubernetes.io/hostname", selector={"matchLabels": SERVICE})
IGNORE_AFFINITY = constraint(1, nodeAffinityPolicy="Ignore")
GPU_TAINT = [taint("hardware", "gpu")]
TEST_TAINT = [taint("taint-test", "test")]
TEST_TOLERATION = [{"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}]


def _tainted_cluster() -> list[dict]:
    """Issue #839: control-plane and infra nodes are tainted; the pods require app_service nodes."""
    control_plane = [taint("node-role.kubernetes.io/controlplane", "true"),
                     taint("node-role.kubernetes.io/etcd", "true")]
    return [
        node("controlplane1", taints=control_plane, zone="zoneA", **{"kubernetes.io/hostname": "cp-1"}),
        node("infraservices1", taints=[taint("infra_service")], zone="zoneA", infra_service="true",
             **{"kubernetes.io/hostname": "infra-1"}),
        node("app1", zone="zoneA", app_service="true", **{"kubernetes.io/hostname": "app-1"}),
        node("app2", zone="zoneB", app_service="true", **{"kubernetes.io/hostname": "app-2"}),
    ]


def _arch_nodes() -> list[dict]:
    return [node(name, 1000, 2000, 9, zone=zone, **{ARCH: "arm64"})
            for name, zone in (("A1", "zoneA"), ("B1", "zoneB"), ("C1", "zoneC"))]


def _cases() -> list:
    cases = [
        ("2 domains, sizes [2,1], maxSkew=1, move 0 pods", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR), group(1, "n2", FOO_BAR)],
         0, None, {}, False),
        ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(2, "n1", FOO_BAR), group(1, "n2", FOO_BAR)],
         1, None, {}, False),
        ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both constraints)", two_zones(),
         [group(1, "n1", FOO_BAR, SOFT), group(2, "n1", FOO_BAR), group(1, "n2", FOO_BAR)],
         1, None, BOTH, False),
        ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (soft constraints)", two_zones(),
         [group(1, "n1", FOO_BAR, SOFT), group(2, "n1", FOO_BAR), group(1, "n2", FOO_BAR)],
         1, None, BOTH, False),
        ("2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1), no_owners=True), group(2, "n1", FOO_BAR, no_owners=True),
          group(1, "n2", FOO_BAR, no_owners=True)],
         0, None, {}, False),
        ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude kube-system namespace",
         two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(2, "n1", FOO_BAR), group(1, "n2", FOO_BAR)],
         1, None, {"namespaces": {"exclude": ["kube-system"]}}, True),
        ("2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(4, "n1", FOO_BAR), group(2, "n2", FOO_BAR)],
         1, None, {}, False),
        ("2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(3, "n1", FOO_BAR)],
         2, None, {}, False),
        ("2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity "
         "aren't evicted", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1), node_selector={"zone": "zoneA"}),
          group(1, "n1", FOO_BAR, constraint(1), node_selector={"zone": "zoneA"}),
          group(1, "n1", FOO_BAR, constraint(1), affinity=required_affinity("foo", "In", ["bar"])),
          group(1, "n1", FOO_BAR, constraint(1))],
         1, None, {}, True),
        ("6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is balanced", os_nodes(),
         [group(3, "n4", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(3, "n5", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(2, "n6", FOO_BAR, constraint(1, key="node"), WINDOWS)],
         0, None, {}, False),
        ("7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node added",
         os_nodes(extra=1),
         [group(3, "n4", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(3, "n5", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(2, "n6", FOO_BAR, constraint(1, key="node"), WINDOWS)],
         2, None, {}, False),
        ("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4", os_nodes(),
         [group(4, "n4", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(3, "n5", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(1, "n6", FOO_BAR, constraint(1, key="node"), WINDOWS)],
         1, None, {}, False),
        ("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA can only be "
         "scheduled on this node and nodeFit is true", os_nodes(),
         [group(4, "n4", FOO_BAR, constraint(1, key="node"), {"node": "winNodeA"}),
          group(3, "n5", FOO_BAR, constraint(1, key="node"), WINDOWS),
          group(1, "n6", FOO_BAR, constraint(1, key="node"), WINDOWS)],
         0, None, {}, True),
        ("2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches multiple nodes",
         [zone_node("n1", "zoneA", region="boston"), zone_node("n2", "zoneB", region="boston")],
         [group(1, "n1", FOO_BAR, constraint(1), {"region": "boston"})]
         + [group(1, "n1", FOO_BAR, node_selector={"region": "boston"}) for _copy in range(3)],
         2, None, {}, False),
        ("3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB"), zone_node("n3", "zoneC")],
         [group(1, "n2", FOO_BAR, constraint(1)), group(100, "n3", FOO_BAR)],
         66, None, {}, False),
        ("4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]",
         [zone_node(f"n{i + 1}", f"zone{z}") for i, z in enumerate("ABCD")],
         [group(1, "n2", FOO_BAR, constraint(1)), group(3, "n3", FOO_BAR), group(5, "n4", FOO_BAR)],
         3, None, {}, False),
        ("2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(2)), group(1, "n1", FOO_BAR), group(6, "n2", FOO_BAR)],
         1, None, {}, False),
        ("2 domains size [2 6], maxSkew=2, can't move any because of node taints", two_zones(taints=GPU_TAINT),
         [group(1, "n1", FOO_BAR, constraint(2)), group(1, "n1", FOO_BAR), group(6, "n2", FOO_BAR)],
         0, None, {}, True),
        ("2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough CPU",
         [zone_node("n1", "zoneA", cpu=200), zone_node("n2", "zoneB")],
         [group(1, "n1", FOO_BAR, constraint(2)), group(1, "n1", FOO_BAR), group(6, "n2", FOO_BAR)],
         0, None, {}, True),
        ("Multiple constraints (6 nodes/2 zones, 4 pods)",
         [host_zone_node(f"n{i}", "zoneA" if i <= 3 else "zoneB") for i in range(1, 7)],
         [whoami(f"n{i}") for i in range(1, 5)],
         1, None, BOTH, False),
        ("3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB"), zone_node("n3", "zoneC")],
         [group(8, "n1", FOO_BAR, constraint(1)), group(7, "n2", FOO_BAR, constraint(1))],
         5, ["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"], {}, False),
        ("3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB"), zone_node("n3", "zoneC")],
         [group(5, f"n{i}", FOO_BAR, constraint(1)) for i in (1, 2, 3)],
         0, None, {}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB", taints=TEST_TAINT)],
         [group(1, "n1", FOO_BAR, constraint(1), tolerations=TEST_TOLERATION),
          group(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})],
         1, ["pod-0"], {}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB", taints=TEST_TAINT)],
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})],
         0, None, {}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node, and NodeFit "
         "is enabled",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB", taints=TEST_TAINT)],
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})],
         0, None, {}, True),
        ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint",
         [zone_node("n1", "zoneA"), zone_node("n2", "zoneB", taints=[taint("taint-test", "test", "PreferNoSchedule")])],
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})],
         1, ["pod-0"], {}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 0 pod for node with unmatched label filtering", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR)],
         0, None, {"labelSelector": label_selector("foo", ["baz"], "In")}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering", two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR)],
         1, ["pod-1"], {"labelSelector": label_selector("foo", ["bar"], "In")}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (NotIn op)",
         two_zones(),
         [group(1, "n1", FOO_BAR, constraint(1)), group(1, "n1", FOO_BAR)],
         1, ["pod-1"], {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset", two_zones(),
         [group(1, "n1", {**FOO_BAR, HASH_KEY: "foo"}, constraint(1, matchLabelKeys=[HASH_KEY])),
          group(1, "n1", {**FOO_BAR, HASH_KEY: "foo"}, constraint(1, matchLabelKeys=[HASH_KEY]))],
         1, ["pod-1"], {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
        ("2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets",
         two_zones(),
         [group(1, "n1", {**FOO_BAR, HASH_KEY: "foo"}, constraint(1, matchLabelKeys=[HASH_KEY])),
          group(1, "n1", {**FOO_BAR, HASH_KEY: "bar"}, constraint(1, matchLabelKeys=[HASH_KEY]))],
         0, None, {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
        ("2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved", two_zones(),
         [group(2, "n1", FOO_BAR, constraint(1)), group(2, "n1", FOO_BAR, constraint(1), deleting=True),
          group(2, "n2", FOO_BAR, constraint(1))],
         0, None, {"labelSelector": label_selector("foo", ["bar"], "In")}, False),
        ("3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be "
         "moved",
         [zone_node("n1", "zoneA", cpu=250, mem=2000, pods=9), zone_node("n2", "zoneB", cpu=1000, mem=2000, pods=9),
          zone_node("n3", "zoneC", cpu=1000, mem=2000, pods=9)],
         [group(2, "n1", FOO_BAR, constraint(1)), group(3, "n2", FOO_BAR, constraint(1)),
          group(4, "n3", FOO_BAR, constraint(1))],
         0, None, {}, True),
        ("3 domains, sizes [2,3,4], maxSkew=1, args.NodeFit is false, and not enough cpu on zoneA; 1 should be "
         "moved to force scale-up",
         [zone_node("n1", "zoneA", cpu=250, mem=2000, pods=9), zone_node("n2", "zoneB", cpu=1000, mem=2000, pods=9),
          zone_node("n3", "zoneC", cpu=1000, mem=2000, pods=9)],
         [group(2, "n1", FOO_BAR, constraint(1)), group(3, "n2", FOO_BAR, constraint(1)),
          group(4, "n3", FOO_BAR, constraint(1))],
         1, None, {"topologyBalanceNodeFit": False}, True),
        ("3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough cpu on ZoneA; "
         "nothing should be moved",
         [zone_node(name, f"zone{name[0]}", cpu=cpu, mem=2000, pods=9)
          for name, cpu in (("A1", 150), ("B1", 1000), ("C1", 1000), ("A2", 50), ("B2", 1000), ("C2", 1000))],
         [group(1, "A1", FOO_BAR, constraint(1)), group(1, "B1", FOO_BAR, constraint(1)),
          group(1, "B2", FOO_BAR, constraint(1)), group(2, "C1", FOO_BAR, constraint(1)),
          group(1, "C2", FOO_BAR, constraint(1))],
         0, None, {}, True),
        ("2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1",
         [zone_node(name, f"zone{name[0]}", cpu=1000, mem=2000, pods=9) for name in ("A1", "A2", "B1", "B2")],
         [group(1, "A1", FOO_BAR, constraint(1)), group(4, "A2", FOO_BAR, constraint(1)),
          group(2, "B1", FOO_BAR, constraint(1)), group(1, "B2", FOO_BAR, constraint(1))],
         1, ["pod-4"], {}, True),
        ("2 domains, sizes [3, 1], maxSkew=1, Tainted nodes; nothing should be moved", _tainted_cluster(),
         [group(2, "app1", SERVICE, SERVICE_CONSTRAINT, affinity=APP_SERVICE),
          group(2, "app2", SERVICE, SERVICE_CONSTRAINT, affinity=APP_SERVICE)],
         0, None, {}, True),
        ("3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should move 1 for "
         "[1, 1, 1]", _arch_nodes(),
         [group(1, "A1", FOO_BAR, IGNORE_AFFINITY, {ARCH: "arm64"}),
          group(1, "A1", FOO_BAR, IGNORE_AFFINITY, {"zone": "zoneA", ARCH: "arm64"}),
          group(1, "B1", FOO_BAR, IGNORE_AFFINITY, {ARCH: "arm64"})],
         1, ["pod-0"], {}, False),
    ]
    return [pytest.param(*case[1:], id=case[0]) for case in cases]


@pytest.mark.parametrize("nodes, groups, expected_count, expected_pods, args, node_fit", _cases())
def test_topology_spread_constraint(nodes, groups, expected_count, expected_pods, args, node_fit):
    plan = run(nodes, create_pods(groups), args, node_fit)
    assert plan["errors"] == []
    assert plan["summary"]["total"] == expected_count
    if expected_pods is not None:
        assert sorted(evicted_names(plan)) == sorted(expected_pods)
    assert all(e["plugin"] == PLUGIN for e in plan["evictions"])


# --- TestSortDomains: the in-domain order (eviction takes pods from the end) ---

def _pod(name: str, priority: Optional[int] = None, affinity: Optional[dict] = None,
         node_selector: Optional[dict] = None) -> Pod:
    spec: dict = {"nodeName": "n1"}
    if priority is not None:
        spec["priority"] = priority
    if affinity is not None:
        spec["affinity"] = affinity
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return Pod({"metadata": {"name": name, "namespace": "ns1"}, "spec": spec})


def _domain_order(pods: list[Pod]) -> list[str]:
    return [p.name for p in sorted(pods, key=topologyspread.domain_pod_order)]


def test_sort_domains_priority_ascending_nil_first():
    # "multiple domains with different priorities and selectors", zone a (all evictable)
    pods = [_pod("high-priority-affinity", 20), _pod("low-priority-no-affinity", 5)]
    assert _domain_order(pods) == ["low-priority-no-affinity", "high-priority-affinity"]
    assert _domain_order([_pod("p15", 15), _pod("nil")]) == ["nil", "p15"]


def test_sort_domains_selector_or_affinity_first():
    # "domain with pods having different selector/affinity": an empty nodeAffinity counts (Go: != nil)
    pods = [_pod("pod-no-affinity", 15), _pod("pod-with-affinity", 10, affinity={"nodeAffinity": {}})]
    assert _domain_order(pods) == ["pod-with-affinity", "pod-no-affinity"]
    pods = [_pod("plain", 1), _pod("selector", 99, node_selector={})]
    assert _domain_order(pods) == ["selector", "plain"]


def test_sort_domains_non_evictable_pods_never_reach_a_domain():
    """Upstream's first TestSortDomains cases put non-evictable pods first; here F filters them out before domains
    are built (spec §6.7 step 1), so a protected pod is neither counted nor evicted."""
    nodes = two_zones()
    pods = create_pods([group(1, "n1", FOO_BAR, constraint(1)), group(2, "n1", FOO_BAR, no_owners=True),
                        group(1, "n1", FOO_BAR)])
    plan = run(nodes, pods, {})
    assert plan["summary"]["total"] == 1  # domains [2, 0]: the two bare pods are invisible
    assert evicted_names(plan) == ["pod-3"]


# --- TestCheckIdenticalConstraints ---

def _constraint(raw: dict) -> topologyspread.Constraint:
    return topologyspread.Constraint(raw, _pod("p"))


def test_check_identical_constraints():
    selector = {"matchLabels": {"foo": "bar"}}
    existing = _constraint({"maxSkew": 2, "topologyKey": "zone", "labelSelector": selector})
    same = _constraint({"maxSkew": 2, "topologyKey": "zone", "labelSelector": selector})
    different = _constraint({"maxSkew": 3, "topologyKey": "node", "labelSelector": selector})
    assert same.identity == existing.identity
    assert different.identity != existing.identity


def test_identical_constraints_ignore_when_unsatisfiable():
    # upstream's internal constraint has no WhenUnsatisfiable field, so a soft and a hard twin are one constraint
    selector = {"matchLabels": {"foo": "bar"}}
    hard = _constraint({"maxSkew": 1, "topologyKey": "zone", "labelSelector": selector,
                        "whenUnsatisfiable": "DoNotSchedule"})
    soft = _constraint({"maxSkew": 1, "topologyKey": "zone", "labelSelector": selector,
                        "whenUnsatisfiable": "ScheduleAnyway"})
    assert hard.identity == soft.identity


# --- defaults_test.go ---

def _loaded_args(args: Optional[dict]) -> dict:
    config: dict = {"name": PLUGIN}
    if args is not None:
        config["args"] = args
    document = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                "profiles": [{"name": "p", "pluginConfig": [config], "plugins": {"balance": {"enabled": [PLUGIN]}}}]}
    return load_policy(document, {}).profiles[0].args[PLUGIN]


@pytest.mark.parametrize("args, expected", [
    pytest.param(None, {"constraints": ["DoNotSchedule"], "topologyBalanceNodeFit": True}, id="empty"),
    pytest.param({"namespaces": {}, "labelSelector": {}, "constraints": ["DoNotSchedule", "ScheduleAnyway"]},
                 {"namespaces": {}, "labelSelector": {}, "constraints": ["DoNotSchedule", "ScheduleAnyway"],
                  "topologyBalanceNodeFit": True}, id="with value"),
    pytest.param({}, {"constraints": ["DoNotSchedule"], "topologyBalanceNodeFit": True},
                 id="without TopologyBalanceNodeFit"),
    pytest.param({"topologyBalanceNodeFit": False}, {"constraints": ["DoNotSchedule"], "topologyBalanceNodeFit": False},
                 id="with TopologyBalanceNodeFit=false"),
    pytest.param({"constraints": None}, {"constraints": ["DoNotSchedule"], "topologyBalanceNodeFit": True},
                 id="with nil constraints"),
])
def test_set_defaults(args, expected):
    assert _loaded_args(args) == expected


# --- validation_test.go ---

@pytest.mark.parametrize("args, error", [
    pytest.param({"namespaces": {"include": ["default"]}}, None, id="valid namespace args"),
    pytest.param({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}},
                 "only one of include and exclude", id="invalid namespaces args"),
    pytest.param({"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}}, None,
                 id="valid label selector args"),
    pytest.param({"labelSelector": {"matchExpressions": [{"operator": "In"}]}}, "must be non-empty",
                 id="invalid label selector args"),
    pytest.param({"constraints": ["DoNotSchedule", "ScheduleAnyway"]}, None, id="valid constraints args"),
    pytest.param({"constraints": ["foo"]}, "must be one of DoNotSchedule, ScheduleAnyway",
                 id="invalid constraints args"),
])
def test_validate_args(args, error):
    if error is None:
        _loaded_args(args)
        return
    with pytest.raises(PolicyError, match=error):
        _loaded_args(args)


# --- behaviour the upstream cases do not pin down (spec §6.7) ---

def test_node_taints_policy_honor_drops_untolerated_domains():
    nodes = [zone_node("n1", "zoneA"), zone_node("n2", "zoneB", taints=[taint("dedicated", "x")])]
    no_fit = {"topologyBalanceNodeFit": False}
    ignore = run(nodes, create_pods([group(2, "n1", FOO_BAR, constraint(1))]), no_fit)
    honor = run(nodes, create_pods([group(2, "n1", FOO_BAR, constraint(1, nodeTaintsPolicy="Honor"))]), no_fit)
    assert ignore["summary"]["total"] == 1  # domains [2, 0]
    assert honor["summary"]["total"] == 0  # zoneB is no domain: [2]


def test_domain_of_a_counted_pod_exists_even_if_its_node_is_excluded():
    # the constraint's pod selects zoneA only; zoneB still becomes a domain through its pods, zoneC does not
    nodes = [zone_node("n1", "zoneA"), zone_node("n2", "zoneB"), zone_node("n3", "zoneC")]
    honor = [group(1, "n1", FOO_BAR, constraint(1), node_selector={"zone": "zoneA"}), group(5, "n2", FOO_BAR)]
    ignore = [group(1, "n1", FOO_BAR, constraint(1, nodeAffinityPolicy="Ignore"), node_selector={"zone": "zoneA"}),
              group(5, "n2", FOO_BAR)]
    assert run(nodes, create_pods(honor), {})["summary"]["total"] == 2  # [1, 5]: ideal 3
    assert run(nodes, create_pods(ignore), {})["summary"]["total"] == 3  # [1, 5, 0]: ideal 2


def test_node_limit_skips_the_rest_of_that_nodes_marked_pods():
    nodes = [zone_node("n1", "zoneA"), zone_node("n1b", "zoneA"), zone_node("n2", "zoneB")]
    pods = create_pods([group(1, "n1", FOO_BAR, constraint(1)), group(2, "n1", FOO_BAR), group(3, "n1b", FOO_BAR)])
    plan = compute_plan(nodes + pods, policy((PLUGIN, "balance", {}), maxNoOfPodsToEvictPerNode=1), NOW)
    # [6, 0]: the last three pods of zoneA (all on n1b) are marked; n1b gives one
    assert evicted_names(plan) == ["pod-3"]
    assert plan["summary"]["limits"]["hit"]["node"] == ["n1b"]


def test_total_limit_ends_the_eviction_phase():
    pods = create_pods([group(1, "n1", FOO_BAR, constraint(1)), group(5, "n1", FOO_BAR)])
    plan = compute_plan(two_zones() + pods, policy((PLUGIN, "balance", {}), maxNoOfPodsToEvictTotal=2), NOW)
    assert plan["summary"]["total"] == 2
    assert plan["summary"]["limits"]["hit"]["total"] is True


def test_constraint_without_label_selector_matches_nothing():
    raw = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["foo"]}]
    plan = run(two_zones(), create_pods([group(1, "n1", FOO_BAR, raw), group(3, "n1", FOO_BAR)]), {})
    assert plan["summary"]["total"] == 0


def test_unparsable_constraint_selector_is_skipped_not_an_error():
    bad = constraint(1, selector={"matchExpressions": [{"key": "foo", "operator": "Foo", "values": ["bar"]}]})
    plan = run(two_zones(), create_pods([group(1, "n1", FOO_BAR, bad), group(1, "n1", FOO_BAR, constraint(1)),
                                         group(2, "n1", FOO_BAR)]), {})
    assert plan["errors"] == []
    assert plan["summary"]["total"] == 2  # the valid twin still balances [4, 0]
    assert any("topology spread constraint skipped" in w for w in plan["warnings"])


def test_constraint_without_when_unsatisfiable_is_not_allowed():
    raw = [{"maxSkew": 1, "topologyKey": "zone", "labelSelector": {"matchLabels": FOO_BAR}}]
    plan = run(two_zones(), create_pods([group(1, "n1", FOO_BAR, raw), group(3, "n1", FOO_BAR)]), BOTH)
    assert plan["summary"]["total"] == 0


@pytest.mark.parametrize("seed", range(40))
def test_take_fitting_last_matches_a_stable_sort(seed):
    import random

    rng = random.Random(seed)
    pods = [_pod(f"p{k}") for k in range(rng.randint(1, 12))]
    for k, pod_obj in enumerate(pods):
        pod_obj.index = k
    fitting = {p.index for p in pods if rng.random() < 0.5}
    reference = [p.name for p in pods]
    remaining = list(pods)
    while remaining:
        move = rng.randint(1, len(remaining))
        ordered = sorted(reference, key=lambda name: int(name[1:]) in fitting)  # upstream's SliceStable
        expected, reference = ordered[-move:], ordered[:-move]
        chosen = topologyspread.take_fitting_last(remaining, move, lambda p: p.index in fitting)
        assert [p.name for p in chosen] == expected
        assert sorted(p.name for p in remaining) == sorted(reference)


@pytest.mark.parametrize("seed", range(25))
def test_fit_cache_matches_pod_fits_any_other_node(seed):
    import random

    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.predicates import (
        NodeUsage,
        fits_any_other_node,
    )
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot

    rng = random.Random(seed)
    nodes = [build_node(f"n{k}", rng.choice([100, 250, 1000]), 3000, rng.choice([1, 3, 10]),
                        lambda n: n["metadata"]["labels"].update(zone=rng.choice("AB")))
             for k in range(rng.randint(2, 6))]

    def shape(pod: dict) -> None:
        pod["metadata"]["labels"] = dict(FOO_BAR)
        if rng.random() < 0.3:
            pod["spec"]["nodeSelector"] = {"zone": "A"}

    pods = [build_pod(f"p{k}", rng.choice([100, 200]), 0, f"n{rng.randrange(len(nodes))}", shape)
            for k in range(rng.randint(1, 15))]
    snapshot = Snapshot(nodes + pods)
    usage = NodeUsage(snapshot.pods_by_node)
    candidates = [n for n in snapshot.sorted_nodes() if rng.random() < 0.7]
    cached = topologyspread.FitsAnyOtherNode(candidates, usage, {})
    for pod_obj in rng.sample(snapshot.pods, len(snapshot.pods)):
        assert cached(pod_obj) == fits_any_other_node(pod_obj, candidates, usage), pod_obj.key
