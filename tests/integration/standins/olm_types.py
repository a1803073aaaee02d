"""The OLM types the operator module reads and writes, as CRDs with their schemas (operator-framework/api,
pkg/operators/v1alpha1 and v1), and PackageManifest – on OpenShift served read-only by the packageserver aggregated
API – as a CRD of the same group, version and shape, so a test API server without OLM can serve it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kubedescheduler_types import KUBEDESCHEDULER_CRD
from .schema import CONDITIONS, array, boolean, crd, integer, obj, open_object, string

OLM_GROUP = "operators.coreos.com"
OLM_API = f"{OLM_GROUP}/v1alpha1"
PACKAGES_GROUP = "packages.operators.coreos.com"
PACKAGES_API = f"{PACKAGES_GROUP}/v1"
PACKAGE = "cluster-kube-descheduler-operator"
CSV_PREFIX = "clusterkubedescheduleroperator.v"

OBJECT_REFERENCE = obj({"apiVersion": string(), "kind": string(), "name": string(), "namespace": string(),
                        "uid": string(), "resourceVersion": string()})

SUBSCRIPTION_CRD = crd(
    OLM_GROUP, "Subscription", "subscriptions", "v1alpha1",
    spec=obj({"source": string(), "sourceNamespace": string(), "name": string(), "channel": string(),
              "startingCSV": string(), "installPlanApproval": string("Automatic", "Manual"),
              "config": open_object()}, required=("name", "source", "sourceNamespace")),
    status=obj({"state": string(), "reason": string(), "currentCSV": string(), "installedCSV": string(),
                "installPlanGeneration": integer(), "installPlanRef": OBJECT_REFERENCE,
                "installplan": obj({"apiVersion": string(), "kind": string(), "name": string(), "uuid": string()}),
                "conditions": CONDITIONS, "lastUpdated": string(), "catalogHealth": array(open_object())}),
    short_names=("sub", "subs"))

INSTALLPLAN_CRD = crd(
    OLM_GROUP, "InstallPlan", "installplans", "v1alpha1",
    spec=obj({"approval": string("Automatic", "Manual"), "approved": boolean(),
              "clusterServiceVersionNames": array(string()), "generation": integer(), "source": string(),
              "sourceNamespace": string()}, required=("approval", "approved", "clusterServiceVersionNames")),
    status=obj({"phase": string("", "Planning", "RequiresApproval", "Installing", "Complete", "Failed"),
                "catalogSources": array(string()), "bundleLookups": array(open_object()), "conditions": CONDITIONS,
                "message": string()}),
    short_names=("ip",))

CSV_CRD = crd(
    OLM_GROUP, "ClusterServiceVersion", "clusterserviceversions", "v1alpha1",
    spec=obj({"displayName": string(), "version": string(), "replaces": string(), "skips": array(string()),
              "installModes": array(obj({"type": string(), "supported": boolean()}, required=("type", "supported"))),
              "customresourcedefinitions": open_object(), "install": open_object()},
             required=("displayName", "install")),
    status=obj({"phase": string("", "Pending", "InstallReady", "Installing", "Succeeded", "Failed", "Unknown",
                                "Replacing", "Deleting"),
                "reason": string(), "message": string(), "lastUpdateTime": string(), "lastTransitionTime": string(),
                "requirementStatus": array(open_object()), "conditions": array(open_object())}),
    short_names=("csv", "csvs"))

CATALOGSOURCE_CRD = crd(
    OLM_GROUP, "CatalogSource", "catalogsources", "v1alpha1",
    spec=obj({"sourceType": string("grpc", "internal", "configmap"), "image": string(), "displayName": string(),
              "publisher": string(), "priority": integer()}, required=("sourceType",)),
    status=obj({"connectionState": obj({"lastObservedState": string(), "address": string(),
                                        "lastConnect": string()})}),
    short_names=("catsrc",))

OPERATORGROUP_CRD = crd(
    OLM_GROUP, "OperatorGroup", "operatorgroups", "v1",
    spec=obj({"targetNamespaces": array(string()), "selector": open_object(),
              "upgradeStrategy": obj({"name": string("Default", "TechPreviewUnsafeFailForward")})}),
    status=obj({"namespaces": array(string()), "lastUpdated": string(), "conditions": CONDITIONS}),
    short_names=("og",))

PACKAGEMANIFEST_CRD = crd(
    PACKAGES_GROUP, "PackageManifest", "packagemanifests", "v1",
    spec=obj(),
    status=obj({"catalogSource": string(), "catalogSourceNamespace": string(), "catalogSourceDisplayName": string(),
                "catalogSourcePublisher": string(), "provider": open_object(), "packageName": string(),
                "defaultChannel": string(),
                "channels": array(obj({"name": string(), "currentCSV": string(), "currentCSVDesc": open_object(),
                                       "entries": array(obj({"name": string(), "version": string()}))}))}),
    status_subresource=False)  # the packageserver serves it whole, read-only: no status subresource

OLM_CRDS = [SUBSCRIPTION_CRD, INSTALLPLAN_CRD, CSV_CRD, CATALOGSOURCE_CRD, OPERATORGROUP_CRD, PACKAGEMANIFEST_CRD]


def csv_name(version: str) -> str:
    return f"{CSV_PREFIX}{version}"


def version_of(name: str) -> str:
    return name[len(CSV_PREFIX):] if name.startswith(CSV_PREFIX) else name


@dataclass(frozen=True)
class Bundle:
    """What OLM reads from an operator's bundle: how its CSVs are named, the CRD it owns, and the Deployment (with
    its ServiceAccount) its install strategy runs. `env` values may hold `{version}`, the CSV's version."""

    csv_prefix: str
    display_name: str
    suggested_namespace: str
    owned_crd: dict[str, Any]
    deployment: str
    service_account: str
    image: str  # the operator image, tagged v<version>
    env: tuple[tuple[str, str], ...] = ()

    def csv_name(self, version: str) -> str:
        return f"{self.csv_prefix}{version}"

    def version_of(self, name: str) -> str:
        return name[len(self.csv_prefix):] if name.startswith(self.csv_prefix) else name

    @property
    def owned_kind(self) -> str:
        return self.owned_crd["spec"]["names"]["kind"]


# The Kube Descheduler Operator's bundle (operator.md §0, §3).
DESCHEDULER_BUNDLE = Bundle(
    csv_prefix=CSV_PREFIX, display_name="Kube Descheduler Operator",
    suggested_namespace="openshift-kube-descheduler-operator", owned_crd=KUBEDESCHEDULER_CRD,
    deployment="descheduler-operator", service_account="openshift-descheduler",
    image="registry.redhat.io/kube-descheduler-operator/kube-descheduler-rhel9-operator",
    env=(("RELATED_IMAGE_OPERAND_IMAGE", "registry.redhat.io/kube-descheduler-operator/descheduler-rhel9:v{version}"),
         ("OPERAND_VERSION", "{version}")))


@dataclass
class CatalogPackage:
    """A package: channel name -> versions, oldest first (the last one is the channel head), and its bundle."""

    name: str
    default_channel: str
    channels: dict[str, list[str]]
    bundle: Bundle = DESCHEDULER_BUNDLE

    def head(self, channel: str) -> str:
        return self.bundle.csv_name(self.channels[channel][-1])


def descheduler_package() -> CatalogPackage:
    """The v4.22 Red Hat catalog's view of the package (operator.md §3), trimmed to two versions."""
    return CatalogPackage(PACKAGE, "stable", {"stable": ["5.3.2", "5.4.0"]})


def package_manifest(package: CatalogPackage, source: str, source_namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": PACKAGES_API,
        "kind": "PackageManifest",
        "metadata": {"name": package.name, "namespace": source_namespace,
                     "labels": {"catalog": source, "catalog-namespace": source_namespace,
                                "provider": "Red-Hat", "operatorframework.io/arch.amd64": "supported"}},
        "spec": {},
        "status": {
            "catalogSource": source,
            "catalogSourceNamespace": source_namespace,
            "catalogSourceDisplayName": "Red Hat Operators",
            "packageName": package.name,
            "defaultChannel": package.default_channel,
            "channels": [{
                "name": channel,
                "currentCSV": package.bundle.csv_name(versions[-1]),
                "currentCSVDesc": {"version": versions[-1], "displayName": package.bundle.display_name},
                "entries": [{"name": package.bundle.csv_name(v), "version": v} for v in reversed(versions)],
            } for channel, versions in package.channels.items()],
        },
    }
