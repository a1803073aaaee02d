"""Helpers shared by the strategy plugins: namespace/label filters and the usual per-node eviction loop."""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.args import namespace_allowed
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.evictor import LimitError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import PluginHandle
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import Selector, matches
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import Pod

R_NAMESPACE = "namespace excluded by the plugin's namespaces filter"

# What evict_or_stop answers besides the handle's own EVICTED / NOT_EVICTED: which limit stopped the eviction.
NODE_LIMIT = "node-limit"
TOTAL_LIMIT = "total-limit"
LIMITS = (NODE_LIMIT, TOTAL_LIMIT)


class PodFilter:
    """NS ∧ LS, then the condition, then F, then P — spared reasons are recorded for pods that met the condition."""

    def __init__(self, handle: PluginHandle, include: frozenset = frozenset(), exclude: frozenset = frozenset(),
                 label_selector: Selector = None, use_label_selector: bool = False,
                 use_pre_eviction: bool = True) -> None:
        self.handle = handle
        self.include = include
        self.exclude = exclude
        self.label_selector = label_selector
        self.use_label_selector = use_label_selector
        self.use_pre_eviction = use_pre_eviction

    def namespace_ok(self, pod: Pod) -> bool:
        return namespace_allowed(pod.namespace, self.include, self.exclude)

    def labels_ok(self, pod: Pod) -> bool:
        return not self.use_label_selector or matches(self.label_selector, pod.labels)

    def accepts(self, pod: Pod, condition: Optional[Callable[[Pod], bool]] = None) -> bool:
        if not self.labels_ok(pod):
            return False
        if condition is not None and not condition(pod):
            return False
        if not self.namespace_ok(pod):
            self.handle.spare(pod, R_NAMESPACE)
            return False
        if not self.handle.filter(pod):
            return False
        return not self.use_pre_eviction or self.handle.pre_evict(pod)


def evict_or_stop(handle: PluginHandle, pod: Pod, reason: str) -> str:
    """handle.evict with a reached limit answered, not raised: EVICTED, NOT_EVICTED, NODE_LIMIT or TOTAL_LIMIT.

    The evictor raises LimitError for the node and total limits (a namespace limit is already NOT_EVICTED); every
    strategy loop turns that into "next node" or "end of the plugin", so the catching lives here once.
    """
    try:
        return handle.evict(pod, reason)
    except LimitError as exc:
        return TOTAL_LIMIT if exc.scope == "total" else NODE_LIMIT


def evict_per_node(handle: PluginHandle, candidates_by_node: Iterable[tuple[str, list[Pod]]],
                   reason: Callable[[Pod], str]) -> None:
    """Evict candidates node by node: a node limit moves to the next node, the total limit ends the plugin."""
    for _node_name, pods in candidates_by_node:
        for pod in pods:
            result = evict_or_stop(handle, pod, reason(pod))
            if result == TOTAL_LIMIT:
                return
            if result == NODE_LIMIT:
                break


def format_age(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes}m"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def optional_label_selector(reader, key: str = "labelSelector") -> tuple[Selector, bool]:
    """A plugin labelSelector: unset means no filtering (unlike metav1's nil-matches-nothing)."""
    if reader.args.get(key) is None:
        return None, False
    return reader.label_selector(key), True
