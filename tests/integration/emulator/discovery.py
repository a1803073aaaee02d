"""Discovery documents as kube-apiserver serves them: /version, /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>."""

from __future__ import annotations

from typing import Any

from .resources import Registry


def version_info(version: str) -> dict[str, Any]:
    major, minor, *_rest = version.split(".")
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "gitVersion": f"v{version}",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-08-13T07:28:49Z",
        "goVersion": "go1.22.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_entry(name: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": listed, "preferredVersion": listed[0]}


def group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_entry(name, versions) for name, versions in registry.groups() if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group(registry: Registry, name: str) -> dict[str, Any] | None:
    versions = dict(registry.groups()).get(name)
    if not name or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(name, versions)}


def resource_list(registry: Registry, group_name: str, version: str) -> dict[str, Any] | None:
    types = registry.resources_in(group_name, version)
    if not types:
        return None
    group_version = f"{group_name}/{version}" if group_name else version
    resources = [entry for rt in sorted(types, key=lambda t: t.plural) for entry in rt.discovery_entries()]
    body: dict[str, Any] = {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}
    if group_name:
        body = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
    return body
