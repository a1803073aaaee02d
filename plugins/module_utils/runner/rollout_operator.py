"""The rollout's ``Change`` for the descheduler's own lifecycle (rollout module ``kind: operator``): installing,
upgrading or removing it on each cluster as the operator module does for one (its runner, runner/operator.py), with
each cluster's options in ``clusters[].operator`` (the module's own options and defaults, operator/args.py).

What is recorded before the change is every object the operator module manages for the cluster's flavor, as the
cluster had it (None: none of them was there):
- olm: the KubeDescheduler CRD, the operator namespace, its OperatorGroups, the Subscription to the package, the
  package's CSVs (by name only: OLM makes them) and the ``cluster`` KubeDescheduler;
- upstream and volcano: their namespace, ServiceAccount, ClusterRole and binding, policy ConfigMap and Deployment (and
  the upstream CronJob).
Before anything is recorded, a ClusterRole or ClusterRoleBinding of the upstream or Volcano descheduler's name that
another install owns is refused (operator/descheduler_config.py). What the change creates is labelled with its id
(the rollout's ``run_id``), and what it left is remembered (the generation or resourceVersion of each object as its
last write returned it: operator/objects.py ``marker``). A restore deletes what exists now and was not
recorded (what the rollout created, never anything else; no CSV while the recorded Subscription stays:
``created_by_the_rollout``; a namespace only while it holds nothing the change did not create), waits until it is
gone, writes each recorded object back as it was (a missing Subscription through the operator module's install, so
that OLM installs the recorded CSV again) and waits until the operand gate passes. An object modified by someone else
since the change left it is neither deleted nor restored: it stays, and the restore reports it (``left_in_place``).
OLM never downgrades an operator: after an upgrade the Subscription is put back, and a CSV other than the recorded
one still installed is a failed rollback, to be handled by hand.

The record lives in ``kube-system`` (key ``operator.json``): removing the operator removes its namespace.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, Collection, Mapping, Optional
from uuid import uuid4

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import OLM_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter, deployment_readiness
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import (
    OPERATOR_ARG_SPEC,
    UPSTREAM_ARG_SPEC,
    VOLCANO_ARG_SPEC,
    defaults,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.descheduler_config import (
    refuse_other_installs_objects,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import WaitTimeout
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import (
    CHANGE_LABEL,
    KUBEDESCHEDULER_CRD,
    KUBEDESCHEDULER_NAME,
    OPERATOR_DEPLOYMENT,
    OPERATOR_NAMESPACE,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.olm import find_subscription
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.ownership import (
    foreign_objects,
    modified_since,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.uninstall import package_csvs
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.waits import wait_gone
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.controller import Target
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.errors import RolloutError
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.gates import operand_breaches
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.operator import dispatch, run_session

OPERATOR_RECORD_KEY = "operator.json"
RECORD_NAMESPACE = "kube-system"  # never removed: the operator's own namespace goes with an uninstall
MODULE_SPEC: dict[str, dict[str, Any]] = {**OPERATOR_ARG_SPEC, **OLM_ARG_SPEC}
# A cluster's ``operator`` options: the operator module's, with its defaults.
OPTION_DEFAULTS: dict[str, Any] = {name: spec.get("default") for name, spec in MODULE_SPEC.items()}
FLAVOR_SPECS = {"upstream": UPSTREAM_ARG_SPEC, "volcano": VOLCANO_ARG_SPEC}
# Metadata the server or a controller keeps: never written back by a restore.
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")
STEP = "rollback"


def operator_options(given: Optional[Mapping[str, Any]], field: str) -> dict[str, Any]:
    """A cluster's options with the module's defaults; an unknown option or value is an error naming it, raised
    before any cluster is touched."""
    given = {key: value for key, value in (given or {}).items() if value is not None}
    for key in given:
        if key not in OPTION_DEFAULTS:
            raise RolloutError(f"{field}.{key}: unknown option; use one of the operator module's: "
                               f"{', '.join(OPTION_DEFAULTS)}", f"{field}.{key}", given[key])
    for flavor, spec in FLAVOR_SPECS.items():
        for key in given.get(flavor) or {}:
            if key not in spec:
                raise RolloutError(f"{field}.{flavor}.{key}: unknown option; use {', '.join(spec)}",
                                   f"{field}.{flavor}.{key}", given[flavor][key])
    options = {**OPTION_DEFAULTS, **given}
    for name, spec in MODULE_SPEC.items():
        if "choices" in spec and options[name] not in spec["choices"]:
            raise RolloutError(f"{field}.{name}: {options[name]!r} is not one of {', '.join(spec['choices'])}",
                               f"{field}.{name}", options[name])
    return options


def _flavor_options(desired: Mapping[str, Any]) -> dict[str, Any]:
    """The ``upstream`` or ``volcano`` suboptions with their defaults (as the operator runner fills them)."""
    flavor = desired["flavor"]
    given = {key: value for key, value in (desired.get(flavor) or {}).items() if value is not None}
    return {**defaults(FLAVOR_SPECS[flavor]), **given}


def olm_refs(operator_groups: list[str], subscription: Optional[str], csvs: list[str]) -> list[Ref]:
    """The olm flavor's objects in ``managed_refs``' order. The CSVs come before the Subscription, though OLM makes
    them after it: a restore must delete the Subscription first, or OLM installs the CSV again in between (the
    uninstall's order)."""
    return ([Ref("CustomResourceDefinition", KUBEDESCHEDULER_CRD), Ref("Namespace", OPERATOR_NAMESPACE)]
            + [Ref("OperatorGroup", name, OPERATOR_NAMESPACE) for name in operator_groups]
            + [Ref("ClusterServiceVersion", name, OPERATOR_NAMESPACE) for name in csvs]
            + ([Ref("Subscription", subscription, OPERATOR_NAMESPACE)] if subscription else [])
            + [Ref("KubeDescheduler", KUBEDESCHEDULER_NAME, OPERATOR_NAMESPACE)])


def managed_refs(session: ClusterSession, desired: Mapping[str, Any]) -> list[Ref]:
    """The objects the operator module manages for the cluster's flavor that may exist, in the order a restore
    writes them (it deletes in the reverse order)."""
    if desired["flavor"] == "olm":
        subscription = find_subscription(session)
        return olm_refs([group["metadata"]["name"] for group in session.list("OperatorGroup", OPERATOR_NAMESPACE)],
                        subscription["metadata"]["name"] if subscription else None, package_csvs(session))
    options = _flavor_options(desired)
    name, namespace = options["name"], options["namespace"]
    workloads = [Ref("Deployment", name, namespace)]
    if desired["flavor"] == "upstream":
        workloads.append(Ref("CronJob", name, namespace))
    return [Ref("Namespace", namespace), Ref("ServiceAccount", name, namespace), Ref("ClusterRole", name),
            Ref("ClusterRoleBinding", name), Ref("ConfigMap", name, namespace), *workloads]


def created_by_the_rollout(existing: list[Ref], recorded: Collection[str]) -> list[Ref]:
    """What a restore deletes, in that order: what exists now (``existing``, in ``managed_refs``' order) and was not
    recorded. While a recorded Subscription stays, its CSVs are OLM's: the one an upgrade installed is the only
    operator left (OLM deleted the one it replaced and never installs an older one), so it stays and the restore
    reports the version by hand instead of leaving the cluster without an operator."""
    keeps_subscription = any(key.startswith("Subscription ") for key in recorded)
    return [ref for ref in reversed(existing) if str(ref) not in recorded
            and not (keeps_subscription and ref.kind == "ClusterServiceVersion")]


def restorable(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a restore writes back: the object without its status and the server's metadata."""
    metadata = obj.get("metadata") or {}
    kept: dict[str, Any] = {"name": metadata.get("name")}
    if metadata.get("labels"):
        kept["labels"] = dict(metadata["labels"])
    annotations = {key: value for key, value in (metadata.get("annotations") or {}).items()
                   if key not in SERVER_ANNOTATIONS}
    if annotations:
        kept["annotations"] = annotations
    body = {key: copy.deepcopy(value) for key, value in obj.items() if key not in ("metadata", "status")}
    return {**body, "metadata": kept}


def _key(kind: str, name: str, namespace: Optional[str]) -> str:
    return str(Ref(kind, name, namespace))


def _ref(entry: Mapping[str, Any]) -> Ref:
    return Ref(entry["kind"], entry["name"], entry.get("namespace"))


def _with_removals(recorded: Mapping[str, Any], now: Any, kept: tuple[str, ...] = ()) -> dict[str, Any]:
    """``recorded`` with None for each key ``now`` has beyond it (but ``kept``): a merge patch removes them."""
    if not isinstance(now, dict):
        return dict(recorded)
    return {**{key: None for key in now if key not in recorded and key not in kept}, **recorded}


def _without_added_keys(body: dict[str, Any], existing: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with None for each key of its sections (``spec``, ``data``, labels, annotations) the object gained
    since: a merge patch then takes them away too (a label the install added to a namespace that was there)."""
    wanted = dict(body)
    for section, value in body.items():
        if section != "metadata" and isinstance(value, dict):
            wanted[section] = _with_removals(value, existing.get(section))
    metadata, now = dict(body.get("metadata") or {}), existing.get("metadata") or {}
    metadata["labels"] = _with_removals(metadata.get("labels") or {}, now.get("labels"))
    metadata["annotations"] = _with_removals(metadata.get("annotations") or {}, now.get("annotations"),
                                             SERVER_ANNOTATIONS)
    wanted["metadata"] = {key: value for key, value in metadata.items() if value != {}}
    return wanted


class OperatorChange:
    """The descheduler installed, upgraded or removed through the operator module's runner."""

    namespace = RECORD_NAMESPACE
    record_key = OPERATOR_RECORD_KEY
    job = "installing"  # the operator module's (cluster/rights.py)

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.wait_sleep = float(params.get("wait_sleep") or 5)
        # on what the change creates: a rollback deletes a namespace only while nothing else lives in it
        self.change_labels = {CHANGE_LABEL: str(params.get("run_id") or "") or f"rollout-{uuid4().hex[:12]}"}
        # by cluster: the marker of each object the change wrote as it left it (None: deleted); absent when the
        # change ran in another process: then a restore writes back every recorded object
        self.left_by_cluster: dict[str, dict[str, Optional[str]]] = {}

    # ---- what the cluster has -------------------------------------------------------------------------------------

    def current(self, api_client: Any, target: Target) -> Optional[dict]:
        """``flavor``, ``objects`` (kind, name, namespace and the body to restore, None for a CSV) and the
        Subscription's ``installed_csv``; None when none of the flavor's objects exists."""
        session = ClusterSession(api_client)
        if target.desired["flavor"] != "olm" and target.desired["state"] == "present":
            refuse_other_installs_objects(session, _flavor_options(target.desired)["name"], target.desired["flavor"])
        objects, installed_csv = [], None
        for ref in managed_refs(session, target.desired):
            found = session.read(ref)
            if found is None:
                continue
            if ref.kind == "Subscription":
                installed_csv = (found.get("status") or {}).get("installedCSV")
            objects.append({"kind": ref.kind, "name": ref.name, "namespace": ref.namespace,
                            "body": None if ref.kind == "ClusterServiceVersion" else restorable(found)})
        if not objects:
            return None
        return {"flavor": target.desired["flavor"], "objects": objects, "installed_csv": installed_csv}

    # ---- the change -----------------------------------------------------------------------------------------------

    def _run(self, target: Target, options: Mapping[str, Any], timeout: float, check_mode: bool) -> dict[str, Any]:
        params = {**target.params, **options, "wait": True, "wait_timeout": timeout, "wait_sleep": self.wait_sleep}
        result = self._run_module(target.name, params, check_mode)
        if result.get("failed"):
            raise RolloutError(result.get("msg") or "the operator module failed", result.get("field") or "",
                               result.get("value"))
        return result

    def _run_module(self, cluster: str, params: Mapping[str, Any], check_mode: bool) -> dict[str, Any]:
        """The operator module's runner (runner/operator.py ``run_operator``) with a session that labels what it
        creates with the change's id; what it left (succeeded or not) is remembered for a rollback."""
        api_client, identity = connect_to_intended_cluster(params)
        try:
            session = ClusterSession(api_client, check_mode=check_mode, want_diff=True,
                                     created_labels=self.change_labels)
            result = {"flavor": params["flavor"], "state": params["state"], "check_mode": check_mode,
                      "cluster_identity": identity.as_dict()}
            return run_session(session, partial(dispatch, session, params), result)
        finally:
            self.left_by_cluster[cluster] = {**self.left_by_cluster.get(cluster, {}), **session.left}
            api_client.close()

    def apply(self, target: Target, timeout: float, check_mode: bool) -> dict[str, Any]:
        self.left_by_cluster.pop(target.name, None)
        result = self._run(target, target.desired, timeout, check_mode)
        if not check_mode and target.desired["state"] == "present":
            self._wait_healthy(target, Waiter(timeout=timeout, interval=self.wait_sleep))
        changes = [action for action in result.get("actions") or [] if action.get("changed")]
        # name the cluster in --diff output: one diff per changed object
        diffs = [{**diff, "before_header": f"{target.name}: {diff.get('before_header')}",
                  "after_header": f"{target.name}: {diff.get('after_header')}"} for diff in result.get("diff") or []]
        return {"changed": bool(result.get("changed")), "changes": changes, "diff": diffs or None,
                "msg": f"descheduler ({target.desired['flavor']}) {target.desired['state']}: {len(changes)} change(s)"}

    def _wait_healthy(self, target: Target, waiter: Waiter) -> None:
        """Until the operand gate passes: the operator module's own wait ends when OLM reports the CSV Succeeded,
        before the operator's Deployment is available."""
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            waiter.until(partial(self.operand_breaches, api_client, target), lambda found: not found,
                         lambda found: WaitTimeout(f"the descheduler on {target.name} was not healthy within "
                                                   f"{waiter.timeout:g}s: {'; '.join(found)}"))
        finally:
            api_client.close()

    # ---- back to what was recorded --------------------------------------------------------------------------------

    def restore(self, target: Target, last_good: Optional[dict], timeout: float) -> dict[str, Any]:
        waiter = Waiter(timeout=timeout, interval=self.wait_sleep)
        recorded = {_key(e["kind"], e["name"], e.get("namespace")): e for e in (last_good or {}).get("objects", [])}
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            session = ClusterSession(api_client)
            left = self.left_by_cluster.get(target.name)
            not_recorded = created_by_the_rollout(managed_refs(session, target.desired), recorded)
            untouched = {str(ref): why for ref in [*not_recorded, *map(_ref, recorded.values())]
                         if (why := modified_since(session, ref, left or {}))}
            left_in_place = list(untouched.values())
            namespaces = [ref for ref in not_recorded if ref.kind == "Namespace"]
            removed = [ref for ref in not_recorded if ref.kind != "Namespace" and str(ref) not in untouched
                       and session.delete(STEP, ref)]
            gone = list(removed)
            if self._removes_the_operator(removed):
                gone.append(Ref("Deployment", OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE))  # collected with its CSV
            if gone:
                wait_gone(session, STEP, gone, waiter)
            kept = self._remove_namespaces(session, namespaces, waiter, removed)
            # what the change did not write and is still there is as recorded, or someone else's change since
            entries = [entry for key, entry in recorded.items() if key not in untouched
                       and (left is None or key in left or session.read(_ref(entry)) is None)]
            reinstalled = self._put_back(session, target, entries, timeout)
        finally:
            api_client.close()
        if last_good is not None:
            self._wait_healthy(target, waiter)
            self._check_installed_csv(target, last_good)
        return {"changed": session.changed or reinstalled, "left_in_place": left_in_place,
                "msg": "; ".join([f"removed {len(removed)} object(s) the rollout created "
                                  f"({', '.join(map(str, removed))})",
                                  f"{len(entries)} recorded object(s) as they were", *kept, *left_in_place])}

    def _remove_namespaces(self, session: ClusterSession, namespaces: list[Ref], waiter: Waiter,
                           removed: list[Ref]) -> list[str]:
        """Delete each namespace the change created unless it holds objects the change did not create (someone
        else's since the change: they stay, and so does the namespace); why each kept one stays."""
        kept = []
        for ref in namespaces:
            others = foreign_objects(session, ref.name, self.change_labels)
            if others:
                kept.append(f"{ref} kept: it holds what the change did not create ({', '.join(others)})")
            elif session.delete(STEP, ref):
                removed.append(ref)
                wait_gone(session, STEP, [ref], waiter)
        return kept

    @staticmethod
    def _removes_the_operator(removed: list[Ref]) -> bool:
        return any(ref.kind == "ClusterServiceVersion" and ref.namespace == OPERATOR_NAMESPACE for ref in removed)

    def _put_back(self, session: ClusterSession, target: Target, entries: list[dict], timeout: float) -> bool:
        """Each recorded object as it was; a missing Subscription written back as recorded (its name, its
        ``config`` for the operator's pod), then the operator module's install on it (it keeps the name, approves
        the recorded CSV and waits for it). Whether the install changed anything."""
        reinstalled = False
        for entry in entries:
            ref, body = _ref(entry), entry.get("body")
            if body is None:
                continue  # a CSV: OLM installs it from the Subscription
            existing = session.read(ref)
            if ref.kind == "Subscription" and existing is None:
                session.ensure(STEP, ref, body)  # the install alone would make one of its own name, without config
                reinstalled = self._reinstall(target, body, timeout) or reinstalled
                continue
            session.ensure(STEP, ref, body if existing is None else _without_added_keys(body, existing))
        return reinstalled

    def _reinstall(self, target: Target, subscription: Mapping[str, Any], timeout: float) -> bool:
        spec = subscription.get("spec") or {}
        options = {**target.desired, "state": "present", "flavor": "olm", "channel": spec.get("channel"),
                   "source": spec.get("source"), "source_namespace": spec.get("sourceNamespace"),
                   "starting_csv": spec.get("startingCSV"),
                   "install_plan_approval": spec.get("installPlanApproval") or "Automatic"}
        return bool(self._run(target, options, timeout, check_mode=False).get("changed"))

    def _check_installed_csv(self, target: Target, last_good: Mapping[str, Any]) -> None:
        wanted = last_good.get("installed_csv")
        if not wanted:
            return
        api_client = connect_to_intended_cluster(target.params)[0]
        try:
            subscription = find_subscription(ClusterSession(api_client))
        finally:
            api_client.close()
        installed = ((subscription or {}).get("status") or {}).get("installedCSV")
        if installed != wanted:
            raise RolloutError(f"{target.name}: the Subscription is back as recorded, but {installed or 'no CSV'} is "
                               f"installed instead of {wanted}: OLM never downgrades an operator. Delete the "
                               f"Subscription and the CSV {installed} in {OPERATOR_NAMESPACE}, then install {wanted} "
                               "(starting_csv, install_plan_approval Manual)", "last_good.installed_csv", wanted)

    # ---- the operand gate -----------------------------------------------------------------------------------------

    def operand_breaches(self, api_client: Any, target: Target) -> list[str]:
        """What is wrong with what the operator module installed (nothing to check where nothing is installed: a
        rollout that removes it wants exactly that). olm: the Subscription's CSV Succeeded, the operator Deployment
        rolled out, and the KubeDescheduler's operand as the kubedescheduler kind's gate reads it; upstream and
        volcano: the descheduler Deployment rolled out (a CronJob has nothing running to check)."""
        session = ClusterSession(api_client)
        if target.desired["flavor"] == "olm":
            return self._olm_breaches(session) + operand_breaches(api_client)
        options = _flavor_options(target.desired)
        ref = Ref("Deployment", options["name"], options["namespace"])
        deployment = session.read(ref)
        readiness = deployment_readiness(deployment)
        return [] if deployment is None or readiness.ready else [f"{ref} is not rolled out: {readiness.message}"]

    @staticmethod
    def _olm_breaches(session: ClusterSession) -> list[str]:
        subscription = find_subscription(session)
        if subscription is None:
            return []
        status = subscription.get("status") or {}
        name = status.get("installedCSV")
        if not name:
            return [f"the Subscription {OPERATOR_NAMESPACE}/{subscription['metadata']['name']} has no installed CSV "
                    f"(state {status.get('state') or '(none)'})"]
        csv_status = (session.read(Ref("ClusterServiceVersion", name, OPERATOR_NAMESPACE)) or {}).get("status") or {}
        breaches = []
        if csv_status.get("phase") != "Succeeded":
            breaches.append(f"the CSV {name} is in phase {csv_status.get('phase') or '(none)'}: "
                            f"{csv_status.get('reason') or ''} {csv_status.get('message') or ''}".rstrip())
        ref = Ref("Deployment", OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE)
        readiness = deployment_readiness(session.read(ref))
        if not readiness.ready:
            breaches.append(f"the operator {ref} is not available: {readiness.message}")
        return breaches
