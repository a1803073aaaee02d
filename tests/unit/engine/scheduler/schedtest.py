"""Builders for scheduler tests, shaped like upstream's st.MakeNode()/st.MakePod() (pkg/scheduler/testing)."""

from __future__ import annotations

import itertools
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Node, Pod
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import Profile
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import SKIP
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import (
    SchedPod,
    extract_extras,
)

_names = itertools.count(1)


def node(name: str, capacity: Optional[dict] = None, labels: Optional[dict] = None, taints: Optional[list] = None,
         unschedulable: bool = False) -> dict:
    capacity = dict(capacity or {})
    capacity.setdefault("pods", "110")
    return {"kind": "Node", "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": {"taints": list(taints or []), "unschedulable": unschedulable},
            "status": {"capacity": dict(capacity), "allocatable": dict(capacity)}}


def pod(name: str = "", node_name: str = "", requests: Optional[list] = None, labels: Optional[dict] = None,
        namespace: str = "default", spec: Optional[dict] = None, owner: Optional[str] = None) -> dict:
    """``requests``: one mapping per container (st.MakePod().Req(...) adds a container per call)."""
    containers = [{"name": f"c{i}", "resources": {"requests": dict(r)}} for i, r in enumerate(requests or [])]
    meta: dict[str, Any] = {"name": name or f"pod-{next(_names)}", "namespace": namespace,
                            "uid": f"uid-{next(_names)}", "labels": dict(labels or {})}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"{owner}-uid", "controller": True}]
    body = {"containers": containers, "nodeName": node_name}
    body.update(spec or {})
    return {"kind": "Pod", "metadata": meta, "spec": body, "status": {"phase": "Running"}}


def sched(obj: dict) -> SchedPod:
    return SchedPod(Pod(obj), extract_extras(obj))


def cluster(nodes: list[dict], pods: Optional[list[dict]] = None,
            namespaces: Optional[dict] = None) -> Cluster:
    result = Cluster([Node(n) for n in nodes], namespaces or {})
    for obj in pods or []:
        result.bind(sched(obj), obj["spec"]["nodeName"])
    return result


def scores(plugin: Any, incoming: dict, state: Cluster, names: Optional[list[str]] = None) -> dict[str, int]:
    """PreScore, Score and NormalizeScore of one plugin over the named (default: all) nodes, by node name."""
    target = sched(incoming)
    nodes = [state.by_name[n] for n in names] if names else sorted(state.nodes, key=lambda n: n.name)
    pre = plugin.pre_score(target, state, nodes)
    if pre is SKIP:
        return {n.name: 0 for n in nodes}
    values = [plugin.score(target, pre, n) for n in nodes]
    if hasattr(plugin, "normalize_nodes"):
        plugin.normalize_nodes(pre, nodes, values)
    else:
        plugin.normalize(pre, values)
    return {n.name: v for n, v in zip(nodes, values, strict=True)}


def raw_scores(plugin: Any, incoming: dict, state: Cluster) -> dict[str, int]:
    target = sched(incoming)
    nodes = sorted(state.nodes, key=lambda n: n.name)
    pre = plugin.pre_score(target, state, nodes)
    return {n.name: plugin.score(target, pre, n) for n in nodes}


def filter_reasons(plugin: Any, incoming: dict, state: Cluster) -> dict[str, Optional[tuple]]:
    target = sched(incoming)
    pre = plugin.pre_filter(target, state)
    if pre is SKIP:
        return {n.name: None for n in state.nodes}
    return {n.name: plugin.filter(target, pre, n) for n in sorted(state.nodes, key=lambda n: n.name)}


def profile_of(filters: list, scorers: list) -> Profile:
    return Profile("default-scheduler", filters, scorers, None, [])
