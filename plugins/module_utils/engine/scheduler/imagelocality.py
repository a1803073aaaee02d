"""ImageLocality (score, weight 1 in the default profile): a node that already holds the pod's images scores higher,
the more so the bigger the images and the more nodes hold them (pkg/scheduler/framework/plugins/imagelocality).

A node's images are its ``status.images`` (each with several names and one size). Per image name the scheduler
keeps the size and how many nodes hold it; a pod's score on a node sums, over its init containers, containers and
image volumes, size × (nodes holding it / all nodes) for the names the node holds, and maps that sum from
[23 MiB, 1000 MiB × containers] onto [0, 100]. No normalization.
"""

from __future__ import annotations

from itertools import repeat
from operator import add, mul
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.cluster import Cluster, NodeInfo
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.helper import (
    MAX_NODE_SCORE,
    SKIP,
    Memo,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import SchedPod

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """An image reference without a tag gets ``:latest`` (a digest's ``@sha256:`` has a colon after the last /)."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def calculate_priority(total: int, containers: int) -> int:
    """The summed image score, clamped to [23 MiB, 1000 MiB × containers], scaled to [0, 100] (integer division)."""
    highest = MAX_CONTAINER_THRESHOLD * containers
    total = min(max(total, MIN_THRESHOLD), highest)
    return MAX_NODE_SCORE * (total - MIN_THRESHOLD) // (highest - MIN_THRESHOLD)


class ImageStates:
    """Per image name the size and the nodes (view indexes) holding it, and how many nodes the view has."""

    def __init__(self, nodes: list[NodeInfo], images: Mapping[str, list[tuple[tuple[str, ...], int]]]) -> None:
        self.total_nodes = len(nodes)
        self.size: dict[str, int] = {}
        self.holders: dict[str, set[int]] = {}
        # upstream keeps the size the first node reporting a name gave (informer order); here the first by name
        for node in sorted(nodes, key=lambda n: n.name):
            for names, size in images.get(node.name) or ():
                for name in names:
                    self.size.setdefault(name, size)
                    self.holders.setdefault(name, set()).add(node.index)

    @classmethod
    def from_nodes(cls, nodes: list[NodeInfo], images: Optional[Mapping[str, list]]) -> Optional[ImageStates]:
        """None when no node of the view reports an image (a snapshot without status.images)."""
        names = {n.name for n in nodes}
        if not images or not any(images.get(name) for name in names):
            return None
        return cls(nodes, images)

    def scaled(self, name: str) -> int:
        """scaledImageScore: the image's size weighted by the share of nodes holding it (float64, truncated)."""
        return int(float(self.size[name]) * (float(len(self.holders[name])) / float(self.total_nodes)))


class ImageLocality:
    name = NAME

    def pre_score(self, pod: SchedPod, cluster: Cluster, nodes: list[NodeInfo]) -> Any:
        """(scaled score per image name the pod uses that some node holds, × how often the pod uses it; the pod's
        container count), or SKIP when no node holds any of its images: every node would score 0."""
        states = cluster.images
        if states is None:
            return SKIP
        uses: dict[str, int] = {}
        for image in pod_images(pod):
            name = normalized_image_name(image)
            if name in states.size:
                uses[name] = uses.get(name, 0) + 1
        if not uses:
            return SKIP
        weighted = {name: states.scaled(name) * count for name, count in uses.items()}
        return weighted, states, len(pod.init_images) + len(pod.model.images)

    def score(self, pod: SchedPod, state: Any, node: NodeInfo) -> int:
        weighted, states, containers = state
        total = sum(value for name, value in weighted.items() if node.index in states.holders[name])
        return calculate_priority(total, containers)

    def normalize(self, state: Any, scores: list[int]) -> None:
        return None

    def window_scores(self, pod: SchedPod, cluster: Cluster, window: list[int], columns: Any) -> Any:
        """Batch: per image name, which window nodes hold it (a set lookup per node, in C), summed and mapped
        once per distinct sum."""
        state = self.pre_score(pod, cluster, [])
        if state is SKIP:
            return SKIP
        weighted, states, containers = state
        totals: Iterable[int] = repeat(0, len(window))
        for name, value in weighted.items():
            totals = map(add, totals, map(mul, map(states.holders[name].__contains__, window), repeat(value)))
        return list(map(Memo(lambda total: calculate_priority(total, containers)).__getitem__, totals))


def pod_images(pod: SchedPod) -> list[str]:
    """The images ImageLocality reads, in upstream's order: init containers, containers, image volumes."""
    return [*pod.init_images, *pod.model.images, *pod.volume_images]
