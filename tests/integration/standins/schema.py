"""Small builders for the structural OpenAPI schemas of the stand-ins' CRDs (a real API server requires structural
schemas: typed properties, `x-kubernetes-preserve-unknown-fields` only where the upstream type is open)."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def string(*enum: str, default: str | None = None) -> Schema:
    schema: Schema = {"type": "string"}
    if enum:
        schema["enum"] = list(enum)
    if default is not None:
        schema["default"] = default
    return schema


def integer(minimum: int | None = None) -> Schema:
    return {"type": "integer", **({"minimum": minimum} if minimum is not None else {})}


def boolean() -> Schema:
    return {"type": "boolean"}


def array(items: Schema, max_items: int | None = None) -> Schema:
    return {"type": "array", "items": items, **({"maxItems": max_items} if max_items is not None else {})}


def obj(properties: dict[str, Schema] | None = None, required: tuple[str, ...] = (), open_ended: bool = False,
        **extra: Any) -> Schema:
    """An object; `open_ended` keeps fields the schema does not list (upstream's free-form parts)."""
    schema: Schema = {"type": "object", **extra}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = list(required)
    if open_ended:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    return schema


def open_object() -> Schema:
    return obj(open_ended=True)


CONDITION = obj({"type": string(), "status": string(), "reason": string(), "message": string(),
                 "lastTransitionTime": string(), "lastUpdateTime": string(), "lastHeartbeatTime": string()},
                required=("type", "status"))
CONDITIONS = array(CONDITION)


def crd(group: str, kind: str, plural: str, version: str, spec: Schema, status: Schema, *,
        scope: str = "Namespaced", short_names: tuple[str, ...] = (), status_subresource: bool = True,
        extra_root: dict[str, Schema] | None = None, validations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A CustomResourceDefinition (apiextensions.k8s.io/v1) with one served, stored version."""
    root = obj({"apiVersion": string(), "kind": string(), "metadata": {"type": "object"}, "spec": spec,
                "status": status, **(extra_root or {})})
    if validations:
        root["x-kubernetes-validations"] = validations
    names = {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()}
    if short_names:
        names["shortNames"] = list(short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": scope, "names": names,
            "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": root},
                          **({"subresources": {"status": {}}} if status_subresource else {})}],
        },
    }
