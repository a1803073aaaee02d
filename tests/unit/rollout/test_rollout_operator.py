"""The rollout's ``kind: operator``: each cluster's options are the operator module's own (names and defaults from
operator/args.py, never a copy), checked before any cluster is reached; what a restore writes back of a recorded
object."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import OLM_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import OPERATOR_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Rollout, Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.groups import decision_groups
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import rollout_options
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout import _targets, run_rollout
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.rollout_operator import (
    _without_added_keys,
    created_by_the_rollout,
    olm_refs,
    restorable,
)
from ansible_collections.descheduler.fleet.plugins.modules import operator as operator_module
from kubernetes.client import ApiClient, Configuration


def cluster(**options: Any) -> dict[str, Any]:
    return {"name": "c1", "state": "present", "operator": options}


def refused(*clusters: dict[str, Any], kind: str = "operator") -> RolloutError:
    with pytest.raises(RolloutError) as raised:
        run_rollout({"kind": kind, "clusters": list(clusters)}, check_mode=True)
    return raised.value


def test_the_options_are_the_operator_modules_own() -> None:
    module_options = set(operator_module.ARGUMENT_SPEC)
    assert set(OPERATOR_ARG_SPEC) | set(OLM_ARG_SPEC) <= module_options
    assert all(operator_module.ARGUMENT_SPEC[name] is spec for name, spec in OPERATOR_ARG_SPEC.items())


def test_a_clusters_options_get_the_module_defaults() -> None:
    desired = _targets([cluster(channel="stable-5.4")], "operator")["c1"].desired
    assert desired["flavor"] == "olm" and desired["state"] == "present" and desired["channel"] == "stable-5.4"
    assert desired["source"] == "redhat-operators" and desired["install_plan_approval"] == "Automatic"
    assert desired["remove_crd"] is False


def test_the_operator_options_state_wins_over_the_clusters() -> None:
    assert _targets([cluster(state="absent")], "operator")["c1"].desired["state"] == "absent"
    assert _targets([{"name": "c1", "state": "absent"}], "operator")["c1"].desired["state"] == "absent"


def test_an_unknown_option_is_named() -> None:
    error = refused(cluster(installPlanApproval="Manual"))
    assert error.field == "clusters[0].operator.installPlanApproval" and error.value == "Manual"
    assert "unknown option; use one of the operator module's: flavor, state" in str(error)


def test_an_unknown_flavor_suboption_is_named() -> None:
    error = refused(cluster(flavor="upstream", upstream={"dryRun": True}))
    assert error.field == "clusters[0].operator.upstream.dryRun" and error.value is True


@pytest.mark.parametrize(("option", "value"), [("flavor", "helm"), ("install_plan_approval", "manual")])
def test_a_value_outside_the_choices_is_named(option: str, value: str) -> None:
    error = refused(cluster(**{option: value}))
    assert error.field == f"clusters[0].operator.{option}" and error.value == value


def test_options_of_another_kind_are_refused() -> None:
    error = refused({**cluster(), "spec": {"mode": "Predictive"}})
    assert error.field == "clusters[0].spec" and "kind is operator" in str(error)
    error = refused(cluster(), kind="secondary_scheduler")
    assert error.field == "clusters[0].operator" and "only for kind operator" in str(error)


def test_a_restorable_object_keeps_what_was_asked_for() -> None:
    found = {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": "ops", "uid": "u", "resourceVersion": "7", "labels": {"team": "a"},
                          "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "x"}},
             "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    assert restorable(found) == {"apiVersion": "v1", "kind": "Namespace", "spec": {"finalizers": ["kubernetes"]},
                                 "metadata": {"name": "ops", "labels": {"team": "a"}, "annotations": {"note": "x"}}}


def test_a_restore_takes_away_what_the_object_gained_since() -> None:
    recorded = {"metadata": {"name": "ops", "labels": {"team": "a"}}, "data": {"a": "1"}}
    now = {"metadata": {"name": "ops", "labels": {"team": "a", "openshift.io/cluster-monitoring": "true"},
                        "annotations": {"deployment.kubernetes.io/revision": "2"}},
           "data": {"a": "2", "b": "3"}}
    assert _without_added_keys(recorded, now) == {
        "metadata": {"name": "ops", "labels": {"openshift.io/cluster-monitoring": None, "team": "a"}},
        "data": {"b": None, "a": "1"}}


NS = "openshift-kube-descheduler-operator"
CRD = Ref("CustomResourceDefinition", "kubedeschedulers.operator.openshift.io")
NAMESPACE = Ref("Namespace", NS)
GROUP = Ref("OperatorGroup", "descheduler", NS)
OLD_CSV, NEW_CSV = (Ref("ClusterServiceVersion", f"clusterkubedescheduleroperator.v{version}", NS)
                    for version in ("5.3.0", "5.4.0"))
SUBSCRIPTION = Ref("Subscription", "cluster-kube-descheduler-operator", NS)
KUBEDESCHEDULER = Ref("KubeDescheduler", "cluster", NS)


def test_a_restore_after_an_upgrade_keeps_the_only_operator_left() -> None:
    """The operator was installed (5.3.0): the upgrade's CSV replaced it, and OLM never installs 5.3.0 again; deleting
    5.4.0 would leave the cluster with no operator at all. Only the KubeDescheduler the rollout made goes."""
    recorded = {str(ref) for ref in olm_refs(["descheduler"], SUBSCRIPTION.name, [OLD_CSV.name])
                if ref != KUBEDESCHEDULER}
    now = olm_refs(["descheduler"], SUBSCRIPTION.name, [NEW_CSV.name])
    assert created_by_the_rollout(now, recorded) == [KUBEDESCHEDULER]


def test_a_restore_removes_the_subscription_before_its_csv() -> None:
    """A fresh install rolled back in a namespace that was there: deleting the CSV first would let OLM install it
    again from the Subscription still there."""
    now = olm_refs(["descheduler"], SUBSCRIPTION.name, [NEW_CSV.name])
    assert created_by_the_rollout(now, {str(NAMESPACE)}) == [KUBEDESCHEDULER, SUBSCRIPTION, NEW_CSV, GROUP, CRD]


class UnrecordableChange:
    """A cluster with the operator installed, read fine, whose record cannot be written (the API client below
    reaches no server): the change must never start, and nothing be restored."""

    namespace, record_key = "kube-system", "operator.json"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        return {"flavor": "olm", "objects": [], "installed_csv": "clusterkubedescheduleroperator.v5.3.0"}

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        self.calls.append("apply")
        return {"changed": True}

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        self.calls.append("restore")
        return {"changed": True}

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        return []


def test_a_record_that_cannot_be_written_fails_the_cluster_without_a_rollback() -> None:
    """Nothing was changed, so there is nothing to roll back: a restore there would write (or delete) on a cluster
    the rollout never touched, and report it rolled back."""
    change = UnrecordableChange()
    groups = decision_groups(["c1"], assigned={}, groups=["prod"], mandatory_groups=[],
                             inventory_groups={"prod": ["c1"]})
    unreachable = Configuration(host="http://127.0.0.1:9")  # the record's write fails: connection refused
    result = Rollout(rollout_options({"gates": {"workloads": False}, "max_failures": 0}), groups,
                     {"c1": Target("c1", {}, {"flavor": "olm", "state": "present"})}, change,
                     connect=lambda params: ApiClient(unreachable)).run()
    outcome = result["clusters"]["c1"]
    assert change.calls == [] and outcome["status"] == "failed" and outcome["rollback"] is None
    assert outcome["last_good"] is None and "127.0.0.1:9" in outcome["error"]
