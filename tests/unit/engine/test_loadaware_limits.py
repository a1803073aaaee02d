"""LoadAware under the descheduler's eviction limits (the shared evict-or-stop step of plugins/common.py): a node
limit moves on to the next hot node, the total limit ends the plugin."""

from __future__ import annotations

from test_loadaware import CCE_ARGS, la_policy, node, plan_with, prometheus_answers, rs_pod

# Two hot nodes and an idle one; no pod has recorded usage, so an eviction frees nothing measured and every
# evictable pod of a hot node would go while the idle node's room lasts: only the limits stop the plugin.
HOT_TWICE = {"n1": (0.9, 0.5), "n2": (0.9, 0.5), "n3": (0.1, 0.2)}
PODS = {"n1": ["a1", "a2"], "n2": ["b1", "b2"]}


def cluster() -> list[dict]:
    return [node("n1"), node("n2"), node("n3")] + [rs_pod(name, node_name)
                                                   for node_name, names in PODS.items() for name in names]


def evicted_by_node(**limits: int) -> dict[str, int]:
    document = la_policy(CCE_ARGS)
    document.update(limits)
    plan = plan_with(cluster(), document, prometheus_answers(HOT_TWICE, {}))
    counts: dict[str, int] = {}
    for eviction in plan["evictions"]:
        counts[eviction["node"]] = counts.get(eviction["node"], 0) + 1
    return counts


def test_without_limits_every_pod_of_both_hot_nodes_goes():
    assert evicted_by_node() == {"n1": 2, "n2": 2}


def test_a_node_limit_moves_on_to_the_next_hot_node():
    assert evicted_by_node(maxNoOfPodsToEvictPerNode=1) == {"n1": 1, "n2": 1}


def test_the_total_limit_ends_the_plugin():
    assert sum(evicted_by_node(maxNoOfPodsToEvictTotal=1).values()) == 1
