"""What the OLM catalog offers, checked before anything is written (PackageManifest, packages.operators.coreos.com/v1).

A Subscription to a package, channel or CSV the catalog does not have is accepted by the API and then fails quietly
in OLM's resolver ("constraints not satisfiable"); reading the PackageManifest first turns that into a precise error
that lists what the catalog does offer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import CSV_PREFIX, PACKAGES_V1
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref


@dataclass
class CatalogChoice:
    """The package channel a Subscription will follow, as the catalog describes it."""

    package: str
    source: str
    source_namespace: str
    channel: str
    default_channel: str
    head_csv: str
    csvs: list[str] = field(default_factory=list)  # the channel's entries, when the catalog lists them

    def as_dict(self) -> dict:
        return {"package": self.package, "source": self.source, "source_namespace": self.source_namespace,
                "channel": self.channel, "default_channel": self.default_channel, "head_csv": self.head_csv,
                "channel_csvs": self.csvs}


def channel_summary(manifest: dict) -> list[str]:
    """``stable (default, head clusterkubedescheduleroperator.v5.4.0)`` for each channel of a package."""
    status = manifest.get("status") or {}
    default = status.get("defaultChannel")
    return [f"{c.get('name')} ({'default, ' if c.get('name') == default else ''}head {c.get('currentCSV')})"
            for c in status.get("channels") or []]


def resolve_channel(session: ClusterSession, package: str, source: str, source_namespace: str, channel: str,
                    starting_csv: Optional[str]) -> CatalogChoice:
    """The channel to subscribe to; LifecycleError when the catalog, package, channel or CSV is not there."""
    manifest = find_package(session, package, source, source_namespace)
    status = manifest.get("status") or {}
    channels = {c.get("name"): c for c in status.get("channels") or []}
    if channel not in channels:
        raise LifecycleError(
            f"channel {channel!r} is not in package {package} of catalog {source} ({source_namespace}); the package's "
            f"channels: {', '.join(channel_summary(manifest)) or '(none)'}. Set channel to one of them",
            available_channels=sorted(channels), default_channel=status.get("defaultChannel"))
    entries = [e.get("name") for e in channels[channel].get("entries") or [] if e.get("name")]
    choice = CatalogChoice(package, source, source_namespace, channel, status.get("defaultChannel") or "",
                           channels[channel].get("currentCSV") or "", entries)
    if starting_csv and entries and starting_csv not in entries:
        raise LifecycleError(
            f"starting_csv {starting_csv!r} is not in channel {channel} of package {package}; the channel holds: "
            f"{', '.join(entries)}", available_csvs=entries)
    return choice


def find_package(session: ClusterSession, package: str, source: str, source_namespace: str) -> dict:
    by_name = session.read(Ref("PackageManifest", package, source_namespace))
    if by_name is not None and _catalog_of(by_name) in (source, None):
        return by_name
    # The name may belong to another catalog of the namespace: look in the requested one only.
    listed = session.list("PackageManifest", source_namespace, label_selector=f"catalog={source}")
    for manifest in listed:
        if manifest["metadata"].get("name") == package and _catalog_of(manifest) in (source, None):
            return manifest
    raise _package_missing(session, package, source, source_namespace, by_name, listed)


def _catalog_of(manifest: dict) -> Optional[str]:
    return (manifest.get("status") or {}).get("catalogSource") or (manifest["metadata"].get("labels") or {}).get(
        "catalog")


def _package_missing(session: ClusterSession, package: str, source: str, source_namespace: str,
                     by_name: Optional[dict], listed: list[dict]) -> LifecycleError:
    if not _olm_served(session):
        return LifecycleError(
            "OLM is not installed on this cluster: packages.operators.coreos.com/v1 PackageManifest is not served. "
            "Use flavor: upstream to deploy the upstream descheduler on plain Kubernetes")
    catalogs = [c["metadata"]["name"] for c in session.list("CatalogSource", source_namespace)]
    if catalogs and source not in catalogs:
        return LifecycleError(
            f"catalog source {source!r} not found in namespace {source_namespace}; catalog sources there: "
            f"{', '.join(catalogs)}. Set source (and source_namespace) to a catalog that has package {package}",
            available_sources=catalogs)
    elsewhere = f"; it is offered by catalog {_catalog_of(by_name)}" if by_name is not None else ""
    hint = ("On OKD, enable the Red Hat operators catalog or the OKDerators catalog (channel alpha)"
            if source == "redhat-operators" else "Check the catalog's image and its health")
    return LifecycleError(
        f"package {package} is not in catalog {source} (namespace {source_namespace}); that catalog offers "
        f"{len(listed)} package(s){elsewhere}. {hint}",
        catalog_packages=len(listed), other_catalog=_catalog_of(by_name) if by_name is not None else None)


def _olm_served(session: ClusterSession) -> bool:
    return get_raw(session.api, "/apis/" + PACKAGES_V1) is not None


def csv_version(csv: Optional[dict], name: Optional[str] = None, prefix: str = CSV_PREFIX) -> Optional[str]:
    """The CSV's spec.version, else the version in its name (clusterkubedescheduleroperator.v5.4.0 -> 5.4.0)."""
    version = ((csv or {}).get("spec") or {}).get("version")
    if version:
        return str(version)
    name = name or ((csv or {}).get("metadata") or {}).get("name") or ""
    if name.startswith(prefix):
        return name[len(prefix):].lstrip("v") or None
    return None


def plan_csvs(plan: dict) -> list[Any]:
    return list((plan.get("spec") or {}).get("clusterServiceVersionNames") or [])
