"""ImageLocality: upstream's TestImageLocalityPriority cases (image_locality_test.go, v1.36), image names, and the
plugin in a scheduling cycle, read from raw Node objects the way a plan records them."""

from __future__ import annotations

import copy
from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.framework import (
    StaticCache,
    load_profiles,
    schedule,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.imagelocality import (
    ImageLocality,
    calculate_priority,
    normalized_image_name,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import build_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import ExtrasIndex
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot
from schedtest import node, pod, sched, scores

MB = 1024 * 1024


def image_node(name: str, images: list[tuple[list[str], int]], capacity: Optional[dict] = None) -> dict:
    obj = node(name, capacity or {"cpu": "4", "memory": "8Gi"}, labels={"kubernetes.io/hostname": name})
    obj["status"]["images"] = [{"names": names, "sizeBytes": size * MB} for names, size in images]
    return obj


NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300), (["gcr.io/2000:latest"], 2000)]
NODE_250_10 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]


def spec(containers: list[str], init: Optional[list[str]] = None, volumes: Optional[list[str]] = None) -> dict:
    body: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(containers)]}
    if init:
        body["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    if volumes:
        body["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)]
    return body


def view(nodes: list[dict], pods: Optional[list[dict]] = None) -> Any:
    """The scheduler's view as a plan builds it: Snapshot plus the extras recorded from the same raw objects."""
    objects = nodes + (pods or [])
    return build_cluster(Snapshot(copy.deepcopy(objects)), ExtrasIndex.from_objects(objects))[0]


def incoming(body: dict) -> dict:
    obj = pod("incoming")
    obj["spec"] = body
    return obj


UPSTREAM_CASES = [
    ("two images spread on two nodes, prefer the larger image one", spec(["gcr.io/40", "gcr.io/250"]),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], {"node1": 0, "node2": 5}),
    ("two images on one node, prefer this node", spec(["gcr.io/40", "gcr.io/300"]),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], {"node1": 7, "node2": 0}),
    ("if exceed limit, use limit", spec(["gcr.io/10", "gcr.io/4000"]),
     [("node1", NODE_4000_30), ("node2", NODE_250_10)], {"node1": 100, "node2": 0}),
    ("if exceed limit, use limit (with node which has no images present)", spec(["gcr.io/10", "gcr.io/4000"]),
     [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", [])], {"node1": 66, "node2": 0, "node3": 0}),
    ("pod with multiple large images, node2 is preferred", spec(["gcr.io/300", "gcr.io/600", "gcr.io/900"]),
     [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", [])],
     {"node1": 32, "node2": 36, "node3": 0}),
    ("pod with multiple small images", spec(["gcr.io/30", "gcr.io/40"]),
     [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], {"node1": 1, "node2": 0}),
    ("pod with ImageVolume", spec(["gcr.io/30"], volumes=["gcr.io/300"]),
     [("node1", NODE_300_600_900), ("node2", NODE_4000_30)], {"node1": 12, "node2": 0}),
    ("include InitContainers", spec(["gcr.io/30"], init=["gcr.io/300"]),
     [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], {"node1": 6, "node2": 0}),
]


@pytest.mark.parametrize("name,body,nodes,expected", UPSTREAM_CASES, ids=[c[0] for c in UPSTREAM_CASES])
def test_upstream_scores(name: str, body: dict, nodes: list, expected: dict) -> None:
    state = view([image_node(n, images) for n, images in nodes])
    assert scores(ImageLocality(), incoming(body), state) == expected


@pytest.mark.parametrize("reference,normalized", [
    ("nginx", "nginx:latest"),
    ("nginx:1.27", "nginx:1.27"),
    ("registry.local:5000/team/app", "registry.local:5000/team/app:latest"),
    ("registry.local:5000/team/app:v2", "registry.local:5000/team/app:v2"),
    ("app@sha256:0123abcd", "app@sha256:0123abcd"),
])
def test_image_names_without_a_tag_mean_latest(reference: str, normalized: str) -> None:
    assert normalized_image_name(reference) == normalized


def test_priority_is_clamped_between_23_mib_and_1000_mib_per_container() -> None:
    assert calculate_priority(10 * MB, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(500 * MB, 2) == 100 * (500 - 23) // (2000 - 23)


def test_a_node_holding_the_image_breaks_the_tie_of_equal_nodes() -> None:
    """Two equal empty nodes tie on every other score; the one holding the pod's 900 MiB image wins, and without
    node images they tie again (and the plan says ImageLocality had nothing to read)."""
    nodes = [image_node("cold", []), image_node("warm", [(["registry.local/app:v1"], 900)])]
    pending = incoming({"containers": [{"name": "app", "image": "registry.local/app:v1",
                                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]})
    profile = load_profiles(None)["default-scheduler"]
    state = view(nodes)
    decision = schedule(profile, sched(pending), state, StaticCache())
    assert (decision.node, decision.tied) == ("warm", ["warm"])
    for obj in nodes:
        obj["status"].pop("images")
    state = view(nodes)
    assert state.images is None
    decision = schedule(profile, sched(pending), state, StaticCache())
    assert decision.tied == ["cold", "warm"]


def test_an_image_used_by_two_containers_counts_twice() -> None:
    """sumImageScores loops over the containers, not over distinct images."""
    state = view([image_node("node1", [(["gcr.io/300:latest"], 300)])])
    twice = scores(ImageLocality(), incoming(spec(["gcr.io/300", "gcr.io/300:latest"])), state)
    assert twice == {"node1": 100 * (600 - 23) // (2000 - 23)}


def test_the_plan_says_when_no_node_lists_images() -> None:
    """A drained node's ReplicaSet pod is placed; the verdict names ImageLocality as not fed only without images."""
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import (
        PlacementRequest,
    )

    drained = image_node("drained", [])
    drained["spec"]["taints"] = [{"key": "drain", "value": "true", "effect": "NoSchedule"}]
    objects = [drained, image_node("cold", []), image_node("warm", [(["registry.local/app:v1"], 900)]),
               pod("app-1", node_name="drained", requests=[{"cpu": "100m", "memory": "64Mi"}], owner="app")]
    objects[-1]["spec"]["containers"][0]["image"] = "registry.local/app:v1"
    policy = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
        "name": "drain", "pluginConfig": [{"name": "RemovePodsViolatingNodeTaints", "args": {}}],
        "plugins": {"deschedule": {"enabled": ["RemovePodsViolatingNodeTaints"]}}}]}
    plan = compute_plan(copy.deepcopy(objects), policy, "2026-11-25T00:00:00Z", placement=PlacementRequest())
    assert [e["placement"]["node"] for e in plan["evictions"]] == ["warm"]
    assert not any(n.startswith("ImageLocality") for n in plan["placement"]["not_modeled"])
    for obj in objects[:3]:
        obj["status"].pop("images")
    plan = compute_plan(copy.deepcopy(objects), policy, "2026-11-25T00:00:00Z", placement=PlacementRequest())
    assert plan["evictions"][0]["placement"]["tied_nodes"] == ["cold", "warm"]
    assert any(n.startswith("ImageLocality: no node") for n in plan["placement"]["not_modeled"])


def test_malformed_image_entries_of_a_snapshot_file_are_skipped() -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.podinfo import node_images

    obj = image_node("node1", [(["gcr.io/300:latest"], 300)])
    obj["status"]["images"] += ["gcr.io/40", {"names": ["gcr.io/40:latest"], "sizeBytes": "40Mi"}]
    assert node_images(obj) == [(("gcr.io/300:latest",), 300 * MB)]


def test_a_snapshot_file_in_any_order_keeps_the_images_of_pods_before_their_nodes():
    """A file may list pods before the nodes holding their images: the images of every pod are kept then, as a
    listing (nodes first) keeps them once a node lists images."""
    nodes = [image_node("node1", NODE_300_600_900), image_node("node2", NODE_4000_30)]
    with_init = incoming(spec(["gcr.io/30"], init=["gcr.io/300"], volumes=["gcr.io/600"]))
    nodes_first = ExtrasIndex.from_objects(nodes + [with_init])
    any_order, listing_order = ExtrasIndex(nodes_first=False), ExtrasIndex()
    for obj in [with_init, *nodes]:
        any_order.record(obj)
        listing_order.record(obj)

    assert any_order.by_key == nodes_first.by_key
    assert any_order.node_images == nodes_first.node_images
    assert "initImages" in next(iter(any_order.by_key.values()))
    assert listing_order.by_key != nodes_first.by_key  # why a file is not read as a listing
