"""The running operator's protected namespaces (kubedescheduler/operator_view.py): read from its rendered policy."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_view import (
    rendered_protected,
)

from kubedescheduler.policy_helpers import make_spec, render


def test_the_rendered_policy_names_the_protected_namespaces_the_operator_started_with() -> None:
    policy = render(make_spec(["AffinityAndTaints", "LifecycleAndUtilization"],
                              {"namespaces": {"excluded": ["batch"]}}),
                    namespaces=["default", "batch", "openshift-etcd", "openshift-ingress"])
    assert rendered_protected(policy) == ["hypershift", "kube-system", "openshift", "openshift-etcd",
                                          "openshift-ingress"]


def test_included_namespaces_leave_only_low_node_utilization_to_tell() -> None:
    spec = make_spec(["AffinityAndTaints"], {"namespaces": {"included": ["shop"]}})
    assert rendered_protected(render(spec, namespaces=["shop", "openshift-etcd"])) is None
    spec = make_spec(["LifecycleAndUtilization"], {"namespaces": {"included": ["shop"]}})
    assert rendered_protected(render(spec, namespaces=["shop", "openshift-etcd"])) == [
        "hypershift", "kube-system", "openshift", "openshift-etcd"]
