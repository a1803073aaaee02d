"""Removing the OLM-installed operator in the reference's order (operator.md §4).

KubeDescheduler ``cluster`` first (its operand Deployments go with it: wait for them), then the Subscription, the
CSV(s) it installed, the OperatorGroup, the cluster-scoped objects the operator rendered (they carry owner
references to the namespaced KubeDescheduler, which the garbage collector cannot resolve, so they stay), the
soft-taints the KubeVirt profile left on nodes, the namespace (waiting until it is gone) and, only when asked, the
CRD (OLM never deletes CRDs). Every step reads first and only deletes what is there: a second run changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import (
    CSV_PREFIX,
    KUBEDESCHEDULER_CRD,
    KUBEDESCHEDULER_NAME,
    OLM_OWNER_LABEL,
    OPERAND_CLUSTER_ROLE_BINDINGS,
    OPERAND_CLUSTER_ROLES,
    OPERAND_DEPLOYMENTS,
    OPERATOR_NAMESPACE,
    SOFT_TAINT_PREFIX,
    SOFTTAINTER_ADMISSION_POLICY,
    SOFTTAINTER_ADMISSION_POLICY_BINDING,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.olm import find_subscription
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import wait_gone

TAINT_PATCH_ATTEMPTS = 3


@dataclass
class UninstallRequest:
    remove_crd: bool
    wait: bool
    waiter: Waiter


def uninstall(session: ClusterSession, request: UninstallRequest) -> dict:
    removed_operand = remove_kubedescheduler(session, request)
    csvs = remove_subscription_and_csvs(session)
    remove_operator_groups(session)
    remove_cluster_scoped_leftovers(session)
    nodes = remove_soft_taints(session)
    remove_namespace(session, request)
    if request.remove_crd:
        session.delete("crd", Ref("CustomResourceDefinition", KUBEDESCHEDULER_CRD))
    return {"namespace": OPERATOR_NAMESPACE, "removed_csvs": csvs, "untainted_nodes": nodes,
            "operand_removed": removed_operand, "crd_kept": not request.remove_crd}


def remove_kubedescheduler(session: ClusterSession, request: UninstallRequest) -> bool:
    ref = Ref("KubeDescheduler", KUBEDESCHEDULER_NAME, OPERATOR_NAMESPACE)
    existed = session.delete("kubedescheduler", ref)
    if existed and request.wait and not session.check_mode:
        wait_gone(session, "operand", [Ref("Deployment", name, OPERATOR_NAMESPACE) for name in OPERAND_DEPLOYMENTS],
                  request.waiter)
    return existed


def remove_subscription_and_csvs(session: ClusterSession) -> list[str]:
    """Delete the Subscription, then every CSV of the package: those the Subscription names and those OLM labelled
    (a Subscription deleted by hand leaves its CSV behind, and the operator keeps running)."""
    subscription = find_subscription(session)
    names: list[str] = []
    if subscription is not None:
        status = subscription.get("status") or {}
        names += [n for n in (status.get("installedCSV"), status.get("currentCSV")) if n]
        session.delete("subscription", Ref("Subscription", subscription["metadata"]["name"], OPERATOR_NAMESPACE),
                       subscription)
    else:
        session.record("subscription", f"Subscription {OPERATOR_NAMESPACE}/*", "none", False, "already absent")
    names += package_csvs(session)
    unique = list(dict.fromkeys(names))
    for name in unique:
        session.delete("csv", Ref("ClusterServiceVersion", name, OPERATOR_NAMESPACE))
    if not unique:
        session.record("csv", f"ClusterServiceVersion {OPERATOR_NAMESPACE}/{CSV_PREFIX}*", "none", False,
                       "already absent")
    return unique


def package_csvs(session: ClusterSession) -> list[str]:
    """The names of the package's CSVs in the operator namespace: those OLM labelled, and those named like it."""
    return [csv["metadata"]["name"] for csv in session.list("ClusterServiceVersion", OPERATOR_NAMESPACE)
            if OLM_OWNER_LABEL in (csv["metadata"].get("labels") or {})
            or csv["metadata"]["name"].startswith(CSV_PREFIX)]


def remove_operator_groups(session: ClusterSession) -> None:
    groups = session.list("OperatorGroup", OPERATOR_NAMESPACE)
    for group in groups:
        session.delete("operator_group", Ref("OperatorGroup", group["metadata"]["name"], OPERATOR_NAMESPACE), group)
    if not groups:
        session.record("operator_group", f"OperatorGroup {OPERATOR_NAMESPACE}/*", "none", False, "already absent")


def remove_cluster_scoped_leftovers(session: ClusterSession) -> None:
    refs = ([Ref("ClusterRole", name) for name in OPERAND_CLUSTER_ROLES]
            + [Ref("ClusterRoleBinding", name) for name in OPERAND_CLUSTER_ROLE_BINDINGS]
            + [Ref("ValidatingAdmissionPolicyBinding", SOFTTAINTER_ADMISSION_POLICY_BINDING),
               Ref("ValidatingAdmissionPolicy", SOFTTAINTER_ADMISSION_POLICY)])
    for ref in refs:
        session.delete("cluster_scoped_leftovers", ref)


def remove_soft_taints(session: ClusterSession) -> list[str]:
    """Drop the ``nodeutilization.descheduler.openshift.io/*`` taints; nothing else removes them once the operator
    (and its soft-tainter) is gone. Node taints are an atomic list: the patch carries the resourceVersion read, and a
    conflict reads again."""
    untainted = []
    for node in session.list("Node"):
        if _soft_taints(node) and _untaint(session, node):
            untainted.append(node["metadata"]["name"])
    if not untainted:
        session.record("soft_taints", "Node *", "none", False, f"no node has a {SOFT_TAINT_PREFIX}* taint")
    return untainted


def _soft_taints(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or [] if str(t.get("key", "")).startswith(
        SOFT_TAINT_PREFIX)]


def _untaint(session: ClusterSession, node: dict) -> bool:
    ref = Ref("Node", node["metadata"]["name"])
    for attempt in range(TAINT_PATCH_ATTEMPTS):
        soft = _soft_taints(node)
        if not soft:
            return False
        kept = [t for t in (node.get("spec") or {}).get("taints") or [] if t not in soft]
        patch = {"metadata": {"resourceVersion": node["metadata"].get("resourceVersion")},
                 "spec": {"taints": kept or None}}
        try:
            session.patch("soft_taints", ref, node, patch, "update",
                          f"removed taints {', '.join(t.get('key', '') for t in soft)}")
            return True
        except ClusterApiError as error:
            if error.status != 409 or attempt == TAINT_PATCH_ATTEMPTS - 1:
                raise
            node = session.read(ref) or {"metadata": {"name": ref.name}}
    return False


def remove_namespace(session: ClusterSession, request: UninstallRequest) -> None:
    ref = Ref("Namespace", OPERATOR_NAMESPACE)
    existed = session.delete("namespace", ref)
    if existed and request.wait and not session.check_mode:
        wait_gone(session, "namespace", [ref], request.waiter)
