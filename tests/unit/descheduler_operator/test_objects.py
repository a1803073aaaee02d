"""The comparisons that make the lifecycle idempotent, and the diff view."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.operator.catalog import csv_version
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import (
    Ref,
    for_diff,
    is_subset,
    merge_patch,
)


def test_server_defaults_inside_list_items_are_not_differences() -> None:
    wanted = {"spec": {"containers": [{"name": "d", "args": ["--v=3"]}]}}
    actual = {"spec": {"containers": [{"name": "d", "args": ["--v=3"], "imagePullPolicy": "IfNotPresent"}],
                       "replicas": 1}}
    assert is_subset(wanted, actual)


def test_changed_lists_and_missing_keys_are_differences() -> None:
    assert not is_subset({"spec": {"args": ["--v=3"]}}, {"spec": {"args": ["--v=3", "--dry-run=true"]}})
    assert not is_subset({"metadata": {"labels": {"a": "1"}}}, {"metadata": {}})
    assert not is_subset({"spec": {"replicas": 1}}, {"spec": {"replicas": 2}})


def test_none_means_absent() -> None:
    assert is_subset({"spec": {"taints": None}}, {"spec": {}})
    assert not is_subset({"spec": {"taints": None}}, {"spec": {"taints": [{"key": "k"}]}})


def test_merge_patch_follows_rfc_7386() -> None:
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2], "gone": 1}
    assert merge_patch(target, {"a": {"c": 3}, "l": [3], "gone": None}) == {"a": {"b": 1, "c": 3}, "l": [3]}


def test_diff_view_hides_status_and_bookkeeping() -> None:
    obj = {"kind": "Namespace", "metadata": {"name": "n", "uid": "u", "resourceVersion": "7", "labels": {"a": "b"},
                                             "managedFields": []}, "status": {"phase": "Active"}}
    assert for_diff(obj) == {"kind": "Namespace", "metadata": {"name": "n", "labels": {"a": "b"}}}
    assert obj["metadata"]["uid"] == "u"  # the original is left alone


def test_paths_of_namespaced_and_cluster_kinds() -> None:
    assert Ref("Subscription", "s", "ns").path == "/apis/operators.coreos.com/v1alpha1/namespaces/ns/subscriptions/s"
    assert Ref("ClusterRole", "r", "ignored").path == "/apis/rbac.authorization.k8s.io/v1/clusterroles/r"
    assert str(Ref("Namespace", "n")) == "Namespace n"


def test_csv_version_from_spec_or_name() -> None:
    assert csv_version({"spec": {"version": "5.4.0"}}) == "5.4.0"
    assert csv_version(None, "clusterkubedescheduleroperator.v5.3.2") == "5.3.2"
    assert csv_version(None, "clusterkubedescheduleroperator.4.13.0-202309181427") == "4.13.0-202309181427"
