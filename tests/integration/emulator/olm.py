"""OLM (Operator Lifecycle Manager) for the emulator, as much of it as installing the Kube Descheduler Operator needs.

    olm = Olm().install(emulator)                      # CRDs, a catalog with the descheduler package, the controller
    olm = Olm(packages=[]).install(emulator)           # a catalog without the package
    olm = Olm(failing={"5.4.0": ("InstallComponentFailed", "...")}).install(emulator)
    olm = Olm(auto_complete=False).install(emulator)   # CSVs wait in Pending; each olm.step() advances one phase
    olm.publish("5.5.0")                               # a new channel head: upgrade InstallPlans appear

What it emulates (operator-framework/operator-lifecycle-manager, simplified):
- types: the CRDs Subscription, InstallPlan, ClusterServiceVersion, CatalogSource (operators.coreos.com/v1alpha1)
  and OperatorGroup (v1); PackageManifest (packages.operators.coreos.com/v1), namespaced and read-only, as the
  packageserver serves it; ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1), which the
  operator's soft-tainter creates on a real cluster.
- a CatalogSource (default `redhat-operators` in `openshift-marketplace`) whose PackageManifests list each package's
  channels with their head (`currentCSV`) and entries.
- a Subscription is resolved against the catalog: unknown catalog, package, channel or startingCSV sets the
  condition ResolutionFailed (ConstraintsNotSatisfiable); else an InstallPlan for startingCSV or the channel head
  is created (owned by the Subscription), approved when the approval is Automatic, RequiresApproval when Manual.
- an approved InstallPlan creates the CSV `clusterkubedescheduleroperator.v<version>` (Pending), sets the
  Subscription's installedCSV/currentCSV, and the CSV goes Pending -> InstallReady -> Installing -> Succeeded (at
  once, or one phase per `step()`). At Installing the CRD kubedeschedulers.operator.openshift.io (v1, namespaced,
  status subresource) and the operator Deployment `descheduler-operator` (owned by the CSV: deleting the CSV
  removes it) appear. A version in `failing` ends in phase Failed with the given reason and message.
- once installed below the channel head (a startingCSV, or after `publish`), an upgrade InstallPlan for the head
  is created: Automatic approval upgrades on its own; Manual leaves it waiting (Subscription state
  UpgradePending). A Succeeded CSV that replaces another deletes the old one, as OLM does.

Hooks: `olm.on_succeeded` holds callables `(emulator, csv)` run when a CSV reaches Succeeded (the operand emulation
can start reconciling KubeDescheduler objects then).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .api import DeleteOptions
from .controllers import Controller
from .resources import STATUS, ResourceType
from .store import GroupResource, clone, now_rfc3339

if TYPE_CHECKING:
    from .emulator import Emulator

OLM_GROUP = "operators.coreos.com"
PACKAGES_GROUP = "packages.operators.coreos.com"
SUBSCRIPTIONS: GroupResource = (OLM_GROUP, "subscriptions")
INSTALLPLANS: GroupResource = (OLM_GROUP, "installplans")
CSVS: GroupResource = (OLM_GROUP, "clusterserviceversions")
DEPLOYMENTS: GroupResource = ("apps", "deployments")
CRDS: GroupResource = ("apiextensions.k8s.io", "customresourcedefinitions")

PACKAGE = "cluster-kube-descheduler-operator"
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
CSV_PREFIX = "clusterkubedescheduleroperator.v"
OPERATOR_DEPLOYMENT = "descheduler-operator"
OPERATOR_IMAGE = "registry.redhat.io/kube-descheduler-operator/kube-descheduler-rhel9-operator"
OPERAND_IMAGE = "registry.redhat.io/kube-descheduler-operator/descheduler-rhel9"
CSV_PHASES = ("Pending", "InstallReady", "Installing", "Succeeded")
CSV_PHASE_REASONS = {"Pending": "RequirementsUnknown", "InstallReady": "AllRequirementsMet",
                     "Installing": "InstallSucceeded", "Succeeded": "InstallSucceeded", "Failed": "InstallCheckFailed"}
PRESERVE_UNKNOWN = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def csv_name(version: str) -> str:
    return f"{CSV_PREFIX}{version}"


def version_of(name: str) -> str:
    return name[len(CSV_PREFIX):] if name.startswith(CSV_PREFIX) else name


def crd(group: str, kind: str, plural: str, versions: tuple[str, ...], scope: str = "Namespaced",
        short_names: tuple[str, ...] = (), status: bool = True) -> dict[str, Any]:
    """A CustomResourceDefinition with an open schema; the last version is the storage one."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List",
                      **({"shortNames": list(short_names)} if short_names else {})},
            "versions": [{"name": v, "served": True, "storage": v == versions[-1], "schema": PRESERVE_UNKNOWN,
                          **({"subresources": {"status": {}}} if status else {})} for v in versions],
        },
    }


OLM_CRDS = [
    crd(OLM_GROUP, "Subscription", "subscriptions", ("v1alpha1",), short_names=("sub", "subs")),
    crd(OLM_GROUP, "InstallPlan", "installplans", ("v1alpha1",), short_names=("ip",)),
    crd(OLM_GROUP, "ClusterServiceVersion", "clusterserviceversions", ("v1alpha1",), short_names=("csv", "csvs")),
    crd(OLM_GROUP, "CatalogSource", "catalogsources", ("v1alpha1",), short_names=("catsrc",)),
    crd(OLM_GROUP, "OperatorGroup", "operatorgroups", ("v1",), short_names=("og",)),
]
# What the operator's CSV owns (repo manifests/kube-descheduler-operator.crd.yaml, schema left open here).
KUBEDESCHEDULER_CRD = crd("operator.openshift.io", "KubeDescheduler", "kubedeschedulers", ("v1",))


def extra_types() -> list[ResourceType]:
    """Types that are not CRDs: the packageserver's PackageManifest (read-only) and the admission policy kinds."""
    return [
        ResourceType(PACKAGES_GROUP, "v1", "PackageManifest", "packagemanifests", True,
                     verbs=("get", "list", "watch")),
        ResourceType("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy",
                     "validatingadmissionpolicies", False, subresources=(STATUS,), tracks_generation=True),
        ResourceType("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
                     "validatingadmissionpolicybindings", False, tracks_generation=True),
    ]


# --- the catalog ---------------------------------------------------------------------------------------------------

@dataclass
class CatalogPackage:
    """A package: channels name -> versions, oldest first (the last one is the channel head)."""

    name: str
    default_channel: str
    channels: dict[str, list[str]]

    def head(self, channel: str) -> str:
        return csv_name(self.channels[channel][-1])


def descheduler_package() -> CatalogPackage:
    """The v4.22 Red Hat catalog's view of the package (operator.md §3), trimmed to two versions."""
    return CatalogPackage(PACKAGE, "stable", {"stable": ["5.3.2", "5.4.0"]})


def package_manifest(package: CatalogPackage, source: str, source_namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{PACKAGES_GROUP}/v1",
        "kind": "PackageManifest",
        "metadata": {"name": package.name, "namespace": source_namespace,
                     "labels": {"catalog": source, "catalog-namespace": source_namespace,
                                "provider": "Red Hat", "operatorframework.io/arch.amd64": "supported"}},
        "spec": {},
        "status": {
            "catalogSource": source,
            "catalogSourceNamespace": source_namespace,
            "catalogSourceDisplayName": "Red Hat Operators",
            "packageName": package.name,
            "defaultChannel": package.default_channel,
            "channels": [{
                "name": channel,
                "currentCSV": csv_name(versions[-1]),
                "currentCSVDesc": {"version": versions[-1], "displayName": "Kube Descheduler Operator"},
                "entries": [{"name": csv_name(v), "version": v} for v in reversed(versions)],
            } for channel, versions in package.channels.items()],
        },
    }


# --- the controller ------------------------------------------------------------------------------------------------

@dataclass
class Olm(Controller):
    source: str = "redhat-operators"
    source_namespace: str = "openshift-marketplace"
    packages: list[CatalogPackage] | None = None
    auto_complete: bool = True
    failing: dict[str, tuple[str, str]] = field(default_factory=dict)
    on_succeeded: list[Callable[[Emulator, dict[str, Any]], None]] = field(default_factory=list)

    name = "olm"
    watches = (SUBSCRIPTIONS, INSTALLPLANS, CSVS)

    def __post_init__(self) -> None:
        self.catalog = {p.name: p for p in (self.packages if self.packages is not None else [descheduler_package()])}
        self.emulator: Emulator | None = None

    # ---- setup -----------------------------------------------------------------------------------------------------

    def install(self, emulator: Emulator) -> Olm:
        self.emulator = emulator
        for resource_type in extra_types():
            emulator.register_type(resource_type)
        emulator.load(OLM_CRDS)
        emulator.load([{
            "apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": self.source, "namespace": self.source_namespace},
            "spec": {"sourceType": "grpc", "image": "registry.redhat.io/redhat/redhat-operator-index:v4.22",
                     "displayName": "Red Hat Operators", "publisher": "Red Hat"},
            "status": {"connectionState": {"lastObservedState": "READY"}},
        }])
        self._write_manifests()
        emulator.add_controller(self)
        return self

    def _write_manifests(self) -> None:
        assert self.emulator is not None
        self.emulator.load([package_manifest(p, self.source, self.source_namespace) for p in self.catalog.values()])

    # ---- test controls -------------------------------------------------------------------------------------------

    def publish(self, version: str, channel: str = "stable", package: str = PACKAGE) -> None:
        """A new head for the channel (a catalog update); subscriptions on it get an upgrade InstallPlan."""
        emulator = self._emulator()
        with emulator.store.lock:
            self.catalog[package].channels[channel].append(version)
            self._write_manifests()
            for subscription in list(emulator.store.table(SUBSCRIPTIONS).objects.values()):
                spec = subscription.get("spec") or {}
                if spec.get("name") == package and spec.get("channel") == channel:
                    self._offer_upgrade(emulator, subscription)

    def step(self) -> int:
        """Advance every CSV that is still installing by one phase; returns how many moved."""
        emulator = self._emulator()
        with emulator.store.lock:
            moving = [c for c in emulator.store.table(CSVS).objects.values()
                      if (c.get("status") or {}).get("phase") in CSV_PHASES[:-1]]
            for csv in moving:
                self._advance(emulator, csv)
        return len(moving)

    def _emulator(self) -> Emulator:
        if self.emulator is None:
            raise RuntimeError("call Olm.install(emulator) first")
        return self.emulator

    # ---- hooks -----------------------------------------------------------------------------------------------------

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        if resource_type.group_resource == SUBSCRIPTIONS:
            self._resolve(emulator, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        if resource_type.group_resource == INSTALLPLANS:
            if (new.get("spec") or {}).get("approved") and not (old.get("spec") or {}).get("approved"):
                self._execute(emulator, new)
        elif resource_type.group_resource == SUBSCRIPTIONS and old.get("spec") != new.get("spec"):
            self._offer_upgrade(emulator, new)  # e.g. a channel switch

    # ---- resolution ------------------------------------------------------------------------------------------------

    def _resolve(self, emulator: Emulator, subscription: dict[str, Any]) -> None:
        target, failure = self._target(subscription)
        if failure:
            self._set_status(emulator, SUBSCRIPTIONS, subscription, {
                "state": "", "lastUpdated": now_rfc3339(),
                "conditions": [{"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable",
                                "message": failure, "lastTransitionTime": now_rfc3339()}]})
            return
        assert target is not None
        self._create_plan(emulator, subscription, target)

    def _target(self, subscription: dict[str, Any]) -> tuple[str | None, str]:
        """The CSV to install, or a resolution failure message (OLM's resolver wording)."""
        spec = subscription.get("spec") or {}
        name = subscription["metadata"]["name"]
        package, channel = spec.get("name", ""), spec.get("channel") or ""
        if (spec.get("source"), spec.get("sourceNamespace")) != (self.source, self.source_namespace):
            return None, (f"constraints not satisfiable: no operators found from catalog {spec.get('source')} in "
                          f"namespace {spec.get('sourceNamespace')} referenced by subscription {name}, subscription "
                          f"{name} exists")
        found = self.catalog.get(package)
        if found is None:
            return None, (f"constraints not satisfiable: no operators found in package {package} in the catalog "
                          f"referenced by subscription {name}, subscription {name} exists")
        channel = channel or found.default_channel
        if channel not in found.channels:
            return None, (f"constraints not satisfiable: no operators found in channel {channel} of package {package} "
                          f"in the catalog referenced by subscription {name}, subscription {name} exists")
        starting = spec.get("startingCSV")
        if starting and version_of(starting) not in found.channels[channel]:
            return None, (f"constraints not satisfiable: no operators found with name {starting} in channel {channel} "
                          f"of package {package} in the catalog referenced by subscription {name}, subscription "
                          f"{name} exists")
        return starting or found.head(channel), ""

    def _offer_upgrade(self, emulator: Emulator, subscription: dict[str, Any]) -> None:
        """An installed subscription below its channel head gets one InstallPlan for the head."""
        current = emulator.store.get(SUBSCRIPTIONS, subscription["metadata"]["namespace"],
                                     subscription["metadata"]["name"])
        if current is None:
            return
        installed = (current.get("status") or {}).get("installedCSV")
        head, failure = self._head_of(current)
        if failure or not installed or head == installed or self._plan_for(emulator, current, head) is not None:
            return
        self._create_plan(emulator, current, head)

    def _head_of(self, subscription: dict[str, Any]) -> tuple[str, str]:
        spec = subscription.get("spec") or {}
        found = self.catalog.get(spec.get("name", ""))
        channel = spec.get("channel") or (found.default_channel if found else "")
        if found is None or channel not in found.channels:
            return "", "unresolvable"
        return found.head(channel), ""

    def _plan_for(self, emulator: Emulator, subscription: dict[str, Any], csv: str) -> dict[str, Any] | None:
        namespace = subscription["metadata"]["namespace"]
        table = emulator.store.table(INSTALLPLANS)
        for key in table.keys(namespace):
            plan = table.objects[key]
            if csv in (plan.get("spec") or {}).get("clusterServiceVersionNames", []):
                return plan
        return None

    def _create_plan(self, emulator: Emulator, subscription: dict[str, Any], target: str) -> None:
        spec, metadata = subscription.get("spec") or {}, subscription["metadata"]
        automatic = spec.get("installPlanApproval", "Automatic") == "Automatic"
        generation = int((subscription.get("status") or {}).get("installPlanGeneration") or 0) + 1
        plan_type = emulator.storage_type(INSTALLPLANS)
        assert plan_type is not None
        plan = emulator.api.create(plan_type, metadata["namespace"], {
            "apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "InstallPlan",
            "metadata": {"generateName": "install-", "namespace": metadata["namespace"],
                         "labels": {"operators.coreos.com/" + f"{spec.get('name')}.{metadata['namespace']}"[:63]: ""},
                         "ownerReferences": [{"apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "Subscription",
                                              "name": metadata["name"], "uid": metadata.get("uid", ""),
                                              "blockOwnerDeletion": False, "controller": False}]},
            "spec": {"approval": "Automatic" if automatic else "Manual", "approved": automatic,
                     "clusterServiceVersionNames": [target], "generation": generation},
        })
        plan = self._set_status(emulator, INSTALLPLANS, plan, {
            "phase": "Installing" if automatic else "RequiresApproval",
            "catalogSources": [self.source], "bundleLookups": []})
        installed = (subscription.get("status") or {}).get("installedCSV")
        pending = [] if automatic else [{"type": "InstallPlanPending", "status": "True", "reason": "RequiresApproval",
                                         "lastTransitionTime": now_rfc3339()}]
        self._set_status(emulator, SUBSCRIPTIONS, subscription, {
            "state": "UpgradePending", "currentCSV": target, "installPlanGeneration": generation,
            "installPlanRef": {"apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "InstallPlan",
                               "name": plan["metadata"]["name"], "namespace": metadata["namespace"],
                               "uid": plan["metadata"]["uid"],
                               "resourceVersion": plan["metadata"]["resourceVersion"]},
            "installplan": {"apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "InstallPlan",
                            "name": plan["metadata"]["name"], "uuid": plan["metadata"]["uid"]},
            "conditions": pending, "lastUpdated": now_rfc3339(),
            **({"installedCSV": installed} if installed else {})})
        if automatic:
            self._execute(emulator, plan)

    # ---- installing ------------------------------------------------------------------------------------------------

    def _execute(self, emulator: Emulator, plan: dict[str, Any]) -> None:
        namespace = plan["metadata"]["namespace"]
        plan = emulator.store.get(INSTALLPLANS, namespace, plan["metadata"]["name"]) or plan
        if (plan.get("status") or {}).get("phase") == "Complete":
            return
        subscription = self._owner_subscription(emulator, plan)
        previous = ((subscription or {}).get("status") or {}).get("installedCSV")
        for name in (plan.get("spec") or {}).get("clusterServiceVersionNames") or []:
            self._create_csv(emulator, namespace, name, replaces=previous if previous != name else None)
        self._set_status(emulator, INSTALLPLANS, plan, {"phase": "Complete"})
        if subscription is not None:
            target = ((plan.get("spec") or {}).get("clusterServiceVersionNames") or [None])[0]
            head = self._head_of(subscription)[0]
            self._set_status(emulator, SUBSCRIPTIONS, subscription, {
                "installedCSV": target, "currentCSV": target, "conditions": [], "lastUpdated": now_rfc3339(),
                "state": "AtLatestKnown" if target == head else "UpgradePending"})
        if self.auto_complete:
            for name in (plan.get("spec") or {}).get("clusterServiceVersionNames") or []:
                self._complete(emulator, emulator.store.get(CSVS, namespace, name))
        if subscription is not None:
            self._offer_upgrade(emulator, subscription)

    def _complete(self, emulator: Emulator, csv: dict[str, Any] | None) -> None:
        while csv is not None and (csv.get("status") or {}).get("phase") in CSV_PHASES[:-1]:
            csv = self._advance(emulator, csv)

    def _owner_subscription(self, emulator: Emulator, plan: dict[str, Any]) -> dict[str, Any] | None:
        for ref in plan["metadata"].get("ownerReferences") or ():
            if ref.get("kind") == "Subscription":
                return emulator.store.get(SUBSCRIPTIONS, plan["metadata"]["namespace"], ref.get("name", ""))
        return None

    def _create_csv(self, emulator: Emulator, namespace: str, name: str, replaces: str | None) -> None:
        if emulator.store.get(CSVS, namespace, name) is not None:
            return
        version = version_of(name)
        csv_type = emulator.storage_type(CSVS)
        assert csv_type is not None
        created = emulator.api.create(csv_type, namespace, {
            "apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"operators.coreos.com/" + f"{PACKAGE}.{namespace}"[:63]: ""},
                         "annotations": {"olm.skipRange": "", "operatorframework.io/suggested-namespace":
                                         OPERATOR_NAMESPACE, "operatorframework.io/cluster-monitoring": "true"}},
            "spec": {
                "displayName": "Kube Descheduler Operator", "version": version,
                **({"replaces": replaces} if replaces else {}),
                "installModes": [{"type": t, "supported": t in ("OwnNamespace", "SingleNamespace")}
                                 for t in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")],
                "customresourcedefinitions": {"owned": [{"name": KUBEDESCHEDULER_CRD["metadata"]["name"],
                                                         "kind": "KubeDescheduler", "version": "v1"}]},
                "install": {"strategy": "deployment", "spec": {"deployments": [{"name": OPERATOR_DEPLOYMENT}]}},
            },
        })
        self._set_phase(emulator, created, "Pending")

    def _advance(self, emulator: Emulator, csv: dict[str, Any]) -> dict[str, Any]:
        phase = (csv.get("status") or {}).get("phase")
        following = CSV_PHASES[CSV_PHASES.index(phase) + 1]
        version = version_of(csv["metadata"]["name"])
        if following == "Installing":
            self._install_components(emulator, csv)
        if following == "Succeeded" and version in self.failing:
            reason, message = self.failing[version]
            return self._set_status(emulator, CSVS, csv, {"phase": "Failed", "reason": reason, "message": message,
                                                          "lastUpdateTime": now_rfc3339()})
        csv = self._set_phase(emulator, csv, following)
        if following == "Succeeded":
            self._retire_replaced(emulator, csv)
            for hook in list(self.on_succeeded):
                hook(emulator, csv)
        return csv

    def _set_phase(self, emulator: Emulator, csv: dict[str, Any], phase: str) -> dict[str, Any]:
        return self._set_status(emulator, CSVS, csv, {
            "phase": phase, "reason": CSV_PHASE_REASONS[phase], "message": f"csv is {phase.lower()}",
            "lastUpdateTime": now_rfc3339(), "lastTransitionTime": now_rfc3339(),
            "requirementStatus": [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                                   "name": KUBEDESCHEDULER_CRD["metadata"]["name"], "status": "Present",
                                   "version": "v1"}]})

    def _install_components(self, emulator: Emulator, csv: dict[str, Any]) -> None:
        """The owned CRD and the operator Deployment (adopted by the newer CSV on an upgrade)."""
        crd_type = emulator.storage_type(CRDS)
        assert crd_type is not None
        if emulator.store.get(CRDS, "", KUBEDESCHEDULER_CRD["metadata"]["name"]) is None:
            emulator.api.create(crd_type, "", clone(KUBEDESCHEDULER_CRD))
        namespace = csv["metadata"]["namespace"]
        deployment_type = emulator.storage_type(DEPLOYMENTS)
        assert deployment_type is not None
        desired = operator_deployment(namespace, csv)
        existing = emulator.store.get(DEPLOYMENTS, namespace, OPERATOR_DEPLOYMENT)
        if existing is None:
            created = emulator.api.create(deployment_type, namespace, desired)
        else:
            updated = clone(existing)
            updated["metadata"]["ownerReferences"] = desired["metadata"]["ownerReferences"]
            updated["metadata"]["labels"] = desired["metadata"]["labels"]
            updated["spec"] = desired["spec"]
            updated["metadata"]["generation"] = existing["metadata"].get("generation", 1) + 1
            created = emulator.api.write(deployment_type, updated, existing)
        self._set_status(emulator, DEPLOYMENTS, created, {
            "observedGeneration": created["metadata"].get("generation", 1), "replicas": 1, "updatedReplicas": 1,
            "readyReplicas": 1, "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]})

    def _retire_replaced(self, emulator: Emulator, csv: dict[str, Any]) -> None:
        replaced = (csv.get("spec") or {}).get("replaces")
        old = emulator.store.get(CSVS, csv["metadata"]["namespace"], replaced) if replaced else None
        csv_type = emulator.storage_type(CSVS)
        if old is not None and csv_type is not None:
            emulator.api.delete_object(csv_type, old, DeleteOptions())

    # ---- writes ----------------------------------------------------------------------------------------------------

    @staticmethod
    def _set_status(emulator: Emulator, group_resource: GroupResource, obj: dict[str, Any],
                    changes: dict[str, Any]) -> dict[str, Any]:
        """Merge ``changes`` into the stored object's status (read fresh: hooks may have written in between)."""
        resource_type = emulator.storage_type(group_resource)
        current = emulator.store.get(group_resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if resource_type is None or current is None:
            return obj
        updated = clone(current)
        updated["status"] = {**(current.get("status") or {}), **changes}
        return emulator.api.write(resource_type, updated, current)


def operator_deployment(namespace: str, csv: dict[str, Any]) -> dict[str, Any]:
    """The CSV's install strategy deployment (operator.md §0, §3)."""
    version = version_of(csv["metadata"]["name"])
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": OPERATOR_DEPLOYMENT, "namespace": namespace,
            "labels": {"name": OPERATOR_DEPLOYMENT, "olm.owner": csv["metadata"]["name"],
                       "olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": namespace},
            "ownerReferences": [{"apiVersion": f"{OLM_GROUP}/v1alpha1", "kind": "ClusterServiceVersion",
                                 "name": csv["metadata"]["name"], "uid": csv["metadata"].get("uid", ""),
                                 "controller": False, "blockOwnerDeletion": False}],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"name": OPERATOR_DEPLOYMENT}},
            "template": {
                "metadata": {"labels": {"name": OPERATOR_DEPLOYMENT}},
                "spec": {"serviceAccountName": "openshift-descheduler", "containers": [{
                    "name": OPERATOR_DEPLOYMENT, "image": f"{OPERATOR_IMAGE}:v{version}",
                    "ports": [{"containerPort": 60000, "name": "metrics"}],
                    "env": [{"name": "RELATED_IMAGE_OPERAND_IMAGE", "value": f"{OPERAND_IMAGE}:v{version}"},
                            {"name": "OPERAND_VERSION", "value": version}],
                }]},
            },
        },
    }
