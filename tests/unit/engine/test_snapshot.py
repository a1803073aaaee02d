"""Snapshot files in every accepted shape give the same objects; bad files give clear errors."""

import gzip
import json

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import SnapshotError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import (
    Snapshot,
    load_snapshot_file,
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
