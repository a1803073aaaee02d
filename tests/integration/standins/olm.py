"""OLM (Operator Lifecycle Manager) as a stand-in controller: as much of it as installing the Kube Descheduler Operator
needs, acting on any API server through HTTP.

    olm = Olm(api_client).install()                    # CRDs, a catalog with the descheduler package, the loop
    olm = Olm(api_client, packages=[]).install()       # a catalog without the package
    olm = Olm(api_client, failing={"5.4.0": ("InstallComponentFailed", "...")}).install()
    olm = Olm(api_client, auto_complete=False).install()   # CSVs wait in Pending; each olm.step() advances one phase
    olm.publish("5.5.0")                               # a new channel head: upgrade InstallPlans appear
    olm.uninstall()                                    # stop, delete what install() created

What it does (operator-framework/operator-lifecycle-manager, simplified), one level-triggered pass at a time:
- a CatalogSource (default `redhat-operators` in `openshift-marketplace`) with one PackageManifest per package
  (channels, their head `currentCSV` and entries);
- a Subscription without an InstallPlan is resolved against the catalog: an unknown catalog, package, channel or
  startingCSV sets ResolutionFailed (ConstraintsNotSatisfiable, OLM's resolver wording); else an InstallPlan for
  startingCSV or the channel head is created, owned by the Subscription, approved when the approval is Automatic,
  RequiresApproval when Manual;
- an approved InstallPlan creates the CSV (Pending; `replaces` the installed one), is Complete, and the Subscription
  gets installedCSV/currentCSV; the CSV goes Pending -> InstallReady -> Installing -> Succeeded (at once, or one phase
  per `step()`). At Installing the package bundle's CRD (kubedeschedulers.operator.openshift.io) and operator
  Deployment (`descheduler-operator`, owned by the CSV: garbage collection removes it with the CSV) are created.
  Each CatalogPackage carries its `Bundle` (olm_types.py), so other operators' packages install the same way.
  A version in `failing` ends in phase Failed with the given reason and message.
- an installed Subscription below its channel head gets one InstallPlan for the head: Automatic approval upgrades on
  its own; Manual leaves it waiting (state UpgradePending). A Succeeded CSV deletes the CSV it replaces.

`on_succeeded` holds callables `(csv)` run when a CSV reaches Succeeded (e.g. start the operator stand-in).
Simplifications: one CSV per plan, no bundle unpacking, no dependency resolution, no OperatorGroup checks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .loop import StandIn
from .olm_types import (
    DESCHEDULER_BUNDLE,
    OLM_API,
    OLM_CRDS,
    PACKAGE,
    PACKAGES_API,
    Bundle,
    CatalogPackage,
    csv_name,
    descheduler_package,
    package_manifest,
)
from .rest import install_crds, path, remove_crds

OPERATOR_NAMESPACE = DESCHEDULER_BUNDLE.suggested_namespace
OPERATOR_DEPLOYMENT = DESCHEDULER_BUNDLE.deployment
OPERATOR_SERVICE_ACCOUNT = DESCHEDULER_BUNDLE.service_account
CSV_PHASES = ("Pending", "InstallReady", "Installing", "Succeeded")
CSV_PHASE_REASONS = {"Pending": "RequirementsUnknown", "InstallReady": "AllRequirementsMet",
                     "Installing": "InstallSucceeded", "Succeeded": "InstallSucceeded"}


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def operator_label(package: str, namespace: str) -> str:
    """OLM's operator label key, `operators.coreos.com/<package>.<namespace>`; a label name holds at most 63
    characters, so a longer one is cut there (the API server refuses longer keys)."""
    return "operators.coreos.com/" + f"{package}.{namespace}"[:63]


def olm_path(plural: str, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
    return path(OLM_API, plural, namespace, name, sub)


class Olm(StandIn):
    name = "olm-stand-in"
    watches = (olm_path("subscriptions"), olm_path("installplans"), olm_path("clusterserviceversions"))
    idle_interval = 5.0  # a catalog changed by the test (no API object) is seen within it

    def __init__(self, api_client: Any, *, source: str = "redhat-operators",
                 source_namespace: str = "openshift-marketplace", packages: list[CatalogPackage] | None = None,
                 auto_complete: bool = True, failing: dict[str, tuple[str, str]] | None = None,
                 on_succeeded: list[Callable[[dict[str, Any]], None]] | None = None) -> None:
        super().__init__(api_client)
        self.source, self.source_namespace = source, source_namespace
        self.catalog = {p.name: p for p in (packages if packages is not None else [descheduler_package()])}
        self.auto_complete = auto_complete
        self.failing = dict(failing or {})
        self.on_succeeded = list(on_succeeded or [])
        self.created_crds: list[str] = []

    # ---- setup and teardown ------------------------------------------------------------------------------------

    def install(self) -> Olm:
        self.created_crds = install_crds(self.rest, OLM_CRDS)
        self.rest.create_if_absent(path("v1", "namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.source_namespace}})
        catalog = self.rest.create_if_absent(olm_path("catalogsources", self.source_namespace), {
            "apiVersion": OLM_API, "kind": "CatalogSource",
            "metadata": {"name": self.source, "namespace": self.source_namespace},
            "spec": {"sourceType": "grpc", "image": "registry.redhat.io/redhat/redhat-operator-index:v4.22",
                     "displayName": "Red Hat Operators", "publisher": "Red Hat"}})
        if catalog is not None:
            self._merge_status(olm_path("catalogsources", self.source_namespace, self.source),
                               {"connectionState": {"lastObservedState": "READY", "lastConnect": now()}})
        self._write_manifests()
        self.start()
        return self

    def uninstall(self) -> None:
        """Stop the loop; delete the CRDs it created (their objects go with them) and the catalog namespace."""
        self.stop()
        remove_crds(self.rest, self.created_crds)
        self.rest.delete(path("v1", "namespaces", name=self.source_namespace))

    def _write_manifests(self) -> None:
        for package in self.catalog.values():
            manifest = package_manifest(package, self.source, self.source_namespace)
            url = path(PACKAGES_API, "packagemanifests", self.source_namespace, package.name)
            if self.rest.create_if_absent(path(PACKAGES_API, "packagemanifests", self.source_namespace),
                                          manifest) is None:
                self.rest.change(url, lambda current, m=manifest: current.update(status=m["status"]))

    # ---- test controls -----------------------------------------------------------------------------------------

    def publish(self, version: str, channel: str = "stable", package: str = PACKAGE) -> None:
        """A new head for the channel (a catalog update); subscriptions on it get an upgrade InstallPlan."""
        with self.lock:
            self.catalog[package].channels[channel].append(version)
            self._write_manifests()
            self.reconcile()

    def step(self) -> int:
        """Advance every CSV that is still installing by one phase; returns how many moved."""
        with self.lock:
            moving = [c for c in self.rest.list(olm_path("clusterserviceversions"))
                      if (c.get("status") or {}).get("phase") in CSV_PHASES[:-1]]
            for csv in moving:
                self._advance(csv)
            return len(moving)

    # ---- the loop ----------------------------------------------------------------------------------------------

    def reconcile(self) -> None:
        for subscription in self.rest.list(olm_path("subscriptions")):
            self._sync_subscription(subscription)
        for plan in self.rest.list(olm_path("installplans")):
            spec, status = plan.get("spec") or {}, plan.get("status") or {}
            if spec.get("approved") and status.get("phase") != "Complete":
                self._execute(plan)
        if self.auto_complete:
            for csv in self.rest.list(olm_path("clusterserviceversions")):
                while csv is not None and (csv.get("status") or {}).get("phase") in CSV_PHASES[:-1]:
                    csv = self._advance(csv)

    def _sync_subscription(self, subscription: dict[str, Any]) -> None:
        status = subscription.get("status") or {}
        if status.get("installedCSV"):
            self._offer_upgrade(subscription)
            return
        if status.get("installPlanRef"):
            return  # resolved; its InstallPlan is pending
        target, failure = self._target(subscription)
        if failure:
            previous = [c.get("message") for c in status.get("conditions") or [] if c["type"] == "ResolutionFailed"]
            if previous != [failure]:
                self._merge_status(self._url(subscription, "subscriptions"), {
                    "state": "", "lastUpdated": now(),
                    "conditions": [{"type": "ResolutionFailed", "status": "True",
                                    "reason": "ConstraintsNotSatisfiable", "message": failure,
                                    "lastTransitionTime": now()}]})
            return
        self._create_plan(subscription, target)

    # ---- resolution --------------------------------------------------------------------------------------------

    def _target(self, subscription: dict[str, Any]) -> tuple[str, str]:
        """The CSV to install, or a resolution failure message (OLM's resolver wording)."""
        spec = subscription.get("spec") or {}
        name = subscription["metadata"]["name"]
        package, channel = spec.get("name", ""), spec.get("channel") or ""
        tail = f"referenced by subscription {name}, subscription {name} exists"
        if (spec.get("source"), spec.get("sourceNamespace")) != (self.source, self.source_namespace):
            return "", (f"constraints not satisfiable: no operators found from catalog {spec.get('source')} in "
                        f"namespace {spec.get('sourceNamespace')} {tail}")
        found = self.catalog.get(package)
        if found is None:
            return "", f"constraints not satisfiable: no operators found in package {package} in the catalog {tail}"
        channel = channel or found.default_channel
        if channel not in found.channels:
            return "", (f"constraints not satisfiable: no operators found in channel {channel} of package {package} "
                        f"in the catalog {tail}")
        starting = spec.get("startingCSV")
        if starting and found.bundle.version_of(starting) not in found.channels[channel]:
            return "", (f"constraints not satisfiable: no operators found with name {starting} in channel {channel} "
                        f"of package {package} in the catalog {tail}")
        return starting or found.head(channel), ""

    def _head_of(self, subscription: dict[str, Any]) -> str:
        spec = subscription.get("spec") or {}
        found = self.catalog.get(spec.get("name", ""))
        channel = spec.get("channel") or (found.default_channel if found else "")
        return found.head(channel) if found is not None and channel in found.channels else ""

    def _offer_upgrade(self, subscription: dict[str, Any]) -> None:
        """An installed subscription below its channel head gets one InstallPlan for the head."""
        installed = (subscription.get("status") or {}).get("installedCSV")
        head = self._head_of(subscription)
        if not head or head == installed or self._plan_for(subscription, head) is not None:
            return
        self._create_plan(subscription, head)

    def _plan_for(self, subscription: dict[str, Any], csv: str) -> dict[str, Any] | None:
        plans = self.rest.list(olm_path("installplans", subscription["metadata"]["namespace"]))
        return next((p for p in plans if csv in (p.get("spec") or {}).get("clusterServiceVersionNames", [])), None)

    def _create_plan(self, subscription: dict[str, Any], target: str) -> None:
        spec, metadata = subscription.get("spec") or {}, subscription["metadata"]
        namespace = metadata["namespace"]
        automatic = spec.get("installPlanApproval", "Automatic") == "Automatic"
        generation = int((subscription.get("status") or {}).get("installPlanGeneration") or 0) + 1
        plan = self.rest.create(olm_path("installplans", namespace), {
            "apiVersion": OLM_API, "kind": "InstallPlan",
            "metadata": {"generateName": "install-", "namespace": namespace,
                         "labels": {operator_label(spec.get("name", ""), namespace): ""},
                         "ownerReferences": [{"apiVersion": OLM_API, "kind": "Subscription", "name": metadata["name"],
                                              "uid": metadata["uid"], "blockOwnerDeletion": False,
                                              "controller": False}]},
            "spec": {"approval": "Automatic" if automatic else "Manual", "approved": automatic,
                     "clusterServiceVersionNames": [target], "generation": generation},
        })
        plan = self._merge_status(self._url(plan, "installplans"), {
            "phase": "Installing" if automatic else "RequiresApproval", "catalogSources": [self.source],
            "bundleLookups": []}) or plan
        pending = [] if automatic else [{"type": "InstallPlanPending", "status": "True", "reason": "RequiresApproval",
                                         "lastTransitionTime": now()}]
        self._merge_status(self._url(subscription, "subscriptions"), {
            "state": "UpgradePending", "currentCSV": target, "installPlanGeneration": generation,
            "installPlanRef": {"apiVersion": OLM_API, "kind": "InstallPlan", "name": plan["metadata"]["name"],
                               "namespace": namespace, "uid": plan["metadata"]["uid"],
                               "resourceVersion": plan["metadata"]["resourceVersion"]},
            "installplan": {"apiVersion": OLM_API, "kind": "InstallPlan", "name": plan["metadata"]["name"],
                            "uuid": plan["metadata"]["uid"]},
            "conditions": pending, "lastUpdated": now()})

    # ---- installing --------------------------------------------------------------------------------------------

    def _execute(self, plan: dict[str, Any]) -> None:
        namespace = plan["metadata"]["namespace"]
        subscription = self._owner_subscription(plan)
        previous = ((subscription or {}).get("status") or {}).get("installedCSV")
        names = (plan.get("spec") or {}).get("clusterServiceVersionNames") or []
        for name in names:
            self._create_csv(namespace, name, replaces=previous if previous != name else None)
        self._merge_status(self._url(plan, "installplans"), {"phase": "Complete"})
        if subscription is not None and names:
            head = self._head_of(subscription)
            self._merge_status(self._url(subscription, "subscriptions"), {
                "installedCSV": names[0], "currentCSV": names[0], "conditions": [], "lastUpdated": now(),
                "state": "AtLatestKnown" if names[0] == head else "UpgradePending"})

    def _owner_subscription(self, plan: dict[str, Any]) -> dict[str, Any] | None:
        for ref in plan["metadata"].get("ownerReferences") or ():
            if ref.get("kind") == "Subscription":
                return self.rest.get(olm_path("subscriptions", plan["metadata"]["namespace"], ref.get("name")))
        return None

    def _package_of(self, csv: str) -> CatalogPackage:
        """The catalog package a CSV name belongs to (by its bundle's CSV prefix; the longest prefix wins)."""
        matching = [p for p in self.catalog.values() if csv.startswith(p.bundle.csv_prefix)]
        return max(matching, key=lambda p: len(p.bundle.csv_prefix), default=descheduler_package())

    def _create_csv(self, namespace: str, name: str, replaces: str | None) -> None:
        package = self._package_of(name)
        bundle = package.bundle
        created = self.rest.create_if_absent(olm_path("clusterserviceversions", namespace), {
            "apiVersion": OLM_API, "kind": "ClusterServiceVersion",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {operator_label(package.name, namespace): ""},
                         "annotations": {"olm.skipRange": "",
                                         "operatorframework.io/suggested-namespace": bundle.suggested_namespace,
                                         "operatorframework.io/cluster-monitoring": "true"}},
            "spec": {
                "displayName": bundle.display_name, "version": bundle.version_of(name),
                **({"replaces": replaces} if replaces else {}),
                "installModes": [{"type": t, "supported": t in ("OwnNamespace", "SingleNamespace")}
                                 for t in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")],
                "customresourcedefinitions": {"owned": [{"name": bundle.owned_crd["metadata"]["name"],
                                                         "kind": bundle.owned_kind, "version": "v1"}]},
                "install": {"strategy": "deployment", "spec": {"deployments": [{"name": bundle.deployment}]}},
            },
        })
        if created is not None:
            self._set_phase(created, "Pending")

    def _advance(self, csv: dict[str, Any]) -> dict[str, Any] | None:
        phase = (csv.get("status") or {}).get("phase")
        following = CSV_PHASES[CSV_PHASES.index(phase) + 1]
        version = self._package_of(csv["metadata"]["name"]).bundle.version_of(csv["metadata"]["name"])
        if following == "Installing":
            self._install_components(csv)
        if following == "Succeeded" and version in self.failing:
            reason, message = self.failing[version]
            self._merge_status(self._url(csv, "clusterserviceversions"), {
                "phase": "Failed", "reason": reason, "message": message, "lastUpdateTime": now()})
            return None
        csv = self._set_phase(csv, following)
        if csv is not None and following == "Succeeded":
            replaced = (csv.get("spec") or {}).get("replaces")
            if replaced:
                self.rest.delete(olm_path("clusterserviceversions", csv["metadata"]["namespace"], replaced))
            for hook in list(self.on_succeeded):
                hook(csv)
        return csv

    def _set_phase(self, csv: dict[str, Any], phase: str) -> dict[str, Any] | None:
        crd_name = self._package_of(csv["metadata"]["name"]).bundle.owned_crd["metadata"]["name"]
        return self._merge_status(self._url(csv, "clusterserviceversions"), {
            "phase": phase, "reason": CSV_PHASE_REASONS[phase], "message": f"csv is {phase.lower()}",
            "lastUpdateTime": now(), "lastTransitionTime": now(),
            "requirementStatus": [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                                   "name": crd_name, "status": "Present", "version": "v1"}]})

    def _install_components(self, csv: dict[str, Any]) -> None:
        """The owned CRD and the operator Deployment (adopted by the newer CSV on an upgrade)."""
        bundle = self._package_of(csv["metadata"]["name"]).bundle
        self.created_crds += install_crds(self.rest, [bundle.owned_crd])
        namespace = csv["metadata"]["namespace"]
        self.rest.create_if_absent(path("v1", "serviceaccounts", namespace), {  # the CSV's permissions[].serviceAccount
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": bundle.service_account, "namespace": namespace}})
        desired = operator_deployment(namespace, csv, bundle)
        if self.rest.create_if_absent(path("apps/v1", "deployments", namespace), desired) is None:
            def adopt(current: dict[str, Any]) -> None:
                current["metadata"]["ownerReferences"] = desired["metadata"]["ownerReferences"]
                current["metadata"]["labels"] = desired["metadata"]["labels"]
                current["spec"] = desired["spec"]

            self.rest.change(path("apps/v1", "deployments", namespace, bundle.deployment), adopt)

    # ---- writes ------------------------------------------------------------------------------------------------

    @staticmethod
    def _url(obj: dict[str, Any], plural: str) -> str:
        return olm_path(plural, obj["metadata"]["namespace"], obj["metadata"]["name"])

    def _merge_status(self, url: str, changes: dict[str, Any]) -> dict[str, Any] | None:
        """Merge `changes` into the object's status (read fresh, written through the status subresource)."""
        return self.rest.change(url + "/status", lambda current: current.update(
            status={**(current.get("status") or {}), **changes}))


def operator_deployment(namespace: str, csv: dict[str, Any], bundle: Bundle = DESCHEDULER_BUNDLE) -> dict[str, Any]:
    """The CSV's install strategy deployment (operator.md §0, §3 for the descheduler's)."""
    version = bundle.version_of(csv["metadata"]["name"])
    name = bundle.deployment
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": namespace,
            "labels": {"name": name, "olm.owner": csv["metadata"]["name"],
                       "olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": namespace},
            "ownerReferences": [{"apiVersion": OLM_API, "kind": "ClusterServiceVersion",
                                 "name": csv["metadata"]["name"], "uid": csv["metadata"]["uid"],
                                 "controller": False, "blockOwnerDeletion": False}],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"name": name}},
            "template": {
                "metadata": {"labels": {"name": name}},
                "spec": {"serviceAccountName": bundle.service_account, "containers": [{
                    "name": name, "image": f"{bundle.image}:v{version}",
                    "ports": [{"containerPort": 60000, "name": "metrics"}],
                    "env": [{"name": key, "value": value.format(version=version)} for key, value in bundle.env],
                }]},
            },
        },
    }


__all__ = ["Olm", "csv_name", "CatalogPackage", "descheduler_package", "operator_deployment"]
