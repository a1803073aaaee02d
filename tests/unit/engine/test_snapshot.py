"""Snapshot files in every accepted shape give the same objects; bad files give clear errors."""

import gzip
import json

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import snapshot as snapshot_module
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import SnapshotError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import (
    Snapshot,
    load_snapshot_file,
    model_listed_object,
    slim_object,
)

OBJECTS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "a", "uid": "u1"},
     "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}},
]


def write(tmp_path, name, text, compress=False):
    path = tmp_path / name
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name, text, compress", [
    ("list.json", json.dumps(OBJECTS), False),
    ("list.yaml", yaml.safe_dump(OBJECTS), False),
    ("kind-list.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": OBJECTS}), False),
    ("multi.yaml", yaml.safe_dump_all(OBJECTS), False),
    ("kind-list.json.gz", json.dumps({"apiVersion": "v1", "kind": "List", "items": OBJECTS}), True),
])
def test_every_snapshot_shape_reads_the_same_objects(tmp_path, name, text, compress):
    assert load_snapshot_file(write(tmp_path, name, text, compress)) == OBJECTS


def test_typed_lists_give_their_items_a_kind(tmp_path):
    items = [{"metadata": {"name": "p1", "namespace": "a"}, "spec": {"nodeName": "n1"}}]
    path = write(tmp_path, "pods.json", json.dumps({"apiVersion": "v1", "kind": "PodList", "items": items}))
    assert [o["kind"] for o in load_snapshot_file(path)] == ["Pod"]


@pytest.mark.parametrize("text, message", [
    ("{not json", "invalid JSON"),
    ("a: [b", "invalid YAML"),
    ("- 3\n", "expected a Kubernetes object"),
    ("- metadata: {name: x}\n", "without 'kind'"),
])
def test_bad_files_say_what_is_wrong(tmp_path, text, message):
    with pytest.raises(SnapshotError, match=message):
        load_snapshot_file(write(tmp_path, "bad.yaml", text))


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(SnapshotError, match="cannot be read"):
        load_snapshot_file(str(tmp_path / "nope.yaml"))


def test_an_object_without_a_name_is_rejected_with_its_kind():
    with pytest.raises(SnapshotError, match="kind 'Pod'.*metadata.name is missing"):
        Snapshot([{"kind": "Pod", "metadata": {"namespace": "a"}}])


def test_slimming_keeps_what_the_engine_reads_and_drops_the_rest():
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "a", "uid": "u", "managedFields": [{"big": "x"}],
                     "annotations": {"descheduler.alpha.kubernetes.io/evict": "", "noise": "y" * 1000}},
        "spec": {"nodeName": "n1", "containers": [
            {"name": "c", "image": "i", "env": [{"name": "E"}], "resources": {"requests": {"cpu": "1"}}},
        ]},
        "status": {"phase": "Running", "podIP": "10.0.0.1"},
    }
    slim = slim_object(pod)
    assert "managedFields" not in slim["metadata"]
    assert slim["metadata"]["annotations"] == {"descheduler.alpha.kubernetes.io/evict": ""}
    assert slim["spec"]["containers"] == [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]
    assert slim["status"] == {"phase": "Running"}
    assert Snapshot([slim]).pods[0].requests == Snapshot([pod]).pods[0].requests


def test_a_listed_pod_is_modelled_at_once_and_planned_as_its_object():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "managedFields": [{"big": "x"}]},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}, "images": [{"names": ["i"]}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": "u"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"phase": "Running"}}
    metrics = {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": "n1"},
               "usage": {"cpu": "1"}}
    kept = [model_listed_object(obj) for obj in (node, pod, metrics)]
    assert "images" not in kept[0]["status"] and "managedFields" not in kept[0]["metadata"]
    assert not isinstance(kept[1], dict)  # the pod's parsed object is not held
    assert kept[2] is metrics  # other kinds are read whole (a NodeMetrics' usage is not under spec or status)
    from_listing, from_objects = Snapshot(kept), Snapshot([node, pod, metrics])
    assert [(p.key, p.node_name, p.requests) for p in from_listing.pods] == [
        (p.key, p.node_name, p.requests) for p in from_objects.pods]
    assert from_listing.pods_by_node["n1"][0].index == 0
    assert from_listing.metrics_objects == [metrics]


def test_a_listed_pod_that_cannot_be_modelled_is_named():
    bad = {"kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}
    with pytest.raises(SnapshotError, match=r"^Pod a/p: .*lots"):
        model_listed_object(bad)
    nameless = {"kind": "Pod", "metadata": {}}
    assert model_listed_object(nameless) is nameless  # Snapshot reports it, with its position
    with pytest.raises(SnapshotError, match="metadata.name is missing"):
        Snapshot([nameless])


# ---- JSON snapshots are streamed: the same objects as parsing the whole text, at every chunk size ----------------

MANY = [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "namespace": "ns", "uid": f"u{index}"},
     "spec": {"nodeName": "n1", "priority": index * 1000, "containers": [{"name": "c", "image": "i\u00e9\\\"x"}]},
     "status": {"phase": "Running", "ratio": 0.5 + index}}
    for index in range(12)
]
KUBECTL_ORDER = {"apiVersion": "v1", "items": MANY, "kind": "List", "metadata": {"resourceVersion": ""}}
KINDLESS_AFTER = {"apiVersion": "v1", "items": [{k: v for k, v in o.items() if k != "kind"} for o in MANY],
                  "kind": "PodList", "metadata": {}}
NESTED = [{"kind": "List", "items": MANY[:3]}, MANY[3], {"kind": "PodList", "items": MANY[4:6]}, 12345]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("document, indent", [
    (MANY, None), (MANY, 2), (KUBECTL_ORDER, 4), (KINDLESS_AFTER, None), ({"kind": "List", "items": []}, None),
    ([], 1), ({"apiVersion": "v1", "kind": "PodList", "items": MANY[:2]}, None), (MANY[0], 3),
])
def test_streamed_json_reads_as_parsing_it_whole(tmp_path, monkeypatch, chunk, document, indent):
    monkeypatch.setattr(snapshot_module, "READ_CHUNK", chunk)
    text = json.dumps(document, indent=indent)
    whole = snapshot_module.parse_snapshot_text(text, source="x")
    assert load_snapshot_file(write(tmp_path, "s.json", text)) == whole
    assert load_snapshot_file(write(tmp_path, "s.json.gz", text, compress=True)) == whole


def test_a_number_cut_by_a_chunk_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot_module, "READ_CHUNK", 1)
    item = {"kind": "PriorityClass", "metadata": {"name": "p"}, "value": 1234567}
    text = json.dumps({"kind": "List", "items": [item], "metadata": {"n": 987654321}})
    assert load_snapshot_file(write(tmp_path, "n.json", text))[0]["value"] == 1234567


def test_lists_in_a_list_are_flattened_as_they_stream(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot_module, "READ_CHUNK", 5)
    path = write(tmp_path, "nested.json", json.dumps(NESTED[:3]))
    assert [o["metadata"]["name"] for o in load_snapshot_file(path)] == [f"p{i}" for i in range(6)]


def test_objects_are_handed_out_before_the_file_is_read_to_its_end(tmp_path, monkeypatch):
    """What makes a large snapshot fit: the first pod is available while most of the file is still unread."""
    monkeypatch.setattr(snapshot_module, "READ_CHUNK", 64)
    path = write(tmp_path, "big.json", json.dumps(KUBECTL_ORDER))
    objects = snapshot_module.iter_snapshot_file(path)
    assert next(objects)["metadata"]["name"] == "p0"
    objects.close()


@pytest.mark.parametrize("text, message", [
    ('{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "a"}}', "invalid JSON"),
    ('[{"kind": "Pod", "metadata": {"name": "a"}}] [', "extra data"),
    ('[{"kind": "Pod", "metadata": {"name": "a"}} {"kind": "Pod"}]', "expected ',' or ']'"),
    ('[3]', "expected a Kubernetes object"),
    ('{"items": [{"metadata": {"name": "a"}}], "kind": "ConfigMap"}', "with 'items' but kind 'ConfigMap'"),
    ('{"kind": "List", "items": [{"metadata": {"name": "a"}}]}', "without 'kind'"),
])
def test_bad_json_snapshots_say_what_is_wrong(tmp_path, monkeypatch, text, message):
    monkeypatch.setattr(snapshot_module, "READ_CHUNK", 8)
    with pytest.raises(SnapshotError, match=message):
        load_snapshot_file(write(tmp_path, "bad.json", text))
