"""The three patch formats kube-apiserver accepts.

- JSON merge patch (RFC 7386): `merge_patch`.
- JSON patch (RFC 6902): `json_patch`.
- Strategic merge patch: `strategic_merge_patch`, with list merge keys from the built-in types' struct tags
  (`patchMergeKey`), `$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<f>` and
  `$setElementOrder/<f>`. Lists without a merge key (e.g. `tolerations`, node `taints`) are replaced, as upstream.

All functions treat their inputs as private working copies: pass a clone of the stored object.
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """A patch that cannot be applied; the API answers it with 422 (JSON patch) or 400."""


# --- RFC 7386 --------------------------------------------------------------------------------------------------

def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- RFC 6902 --------------------------------------------------------------------------------------------------

def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer must start with '/': {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, allow_end: bool) -> int:
    if allow_end and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in {path}")
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise PatchError(f"array index {index} out of bounds in {path}")
    return index


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for token in parts[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"doc is missing path: {path}: missing value")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, allow_end=False)]
        else:
            raise PatchError(f"doc is missing path: {path}: missing value")
    return node


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, token = _parent(doc, parts, path), parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"doc is missing key: {path}: missing value")
        return parent[token]
    if isinstance(parent, list):
        return parent[_index(parent, token, path, allow_end=False)]
    raise PatchError(f"doc is missing path: {path}: missing value")


def _add(doc: Any, path: str, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, token = _parent(doc, parts, path), parts[-1]
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, path, allow_end=True), value)
    else:
        raise PatchError(f"add operation does not apply: doc is missing path: {path}: missing value")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    parts = _pointer(path)
    if not parts:
        raise PatchError("remove operation does not apply to the whole document")
    parent, token = _parent(doc, parts, path), parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"remove operation does not apply: doc is missing path: {path}: missing value")
        return doc, parent.pop(token)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, token, path, allow_end=False))
    raise PatchError(f"remove operation does not apply: doc is missing path: {path}: missing value")


def json_patch(doc: Any, operations: Any) -> Any:
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations")
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or not isinstance(operation.get("path"), str):
            raise PatchError(f"invalid json patch operation: {operation!r}")
        op, path = operation["op"], operation["path"]
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation.get("value")))
        elif op == "remove":
            doc, _removed = _remove(doc, path)
        elif op == "replace":
            _get(doc, path)  # the target must exist, unlike for "add"
            if _pointer(path):
                doc, _removed = _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(operation.get("value")))
        elif op == "move":
            doc, value = _remove(doc, operation["from"])
            doc = _add(doc, path, value)
        elif op == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, operation["from"])))
        elif op == "test":
            if _get(doc, path) != operation.get("value"):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {op}")
    return doc


# --- strategic merge patch -------------------------------------------------------------------------------------

# patchMergeKey of list fields, by field name (the built-in types use each name consistently).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "ports": "containerPort",
    "secrets": "name",
}
# Exact paths whose merge key differs from the by-name table.
MERGE_KEYS_BY_PATH: dict[tuple[str, ...], str] = {
    ("spec", "ports"): "port",  # Service ports
    ("status", "addresses"): "type",  # Node addresses
}
# Lists of scalars merged as sets (patchStrategy:"merge" without a key).
PRIMITIVE_MERGE_PATHS = {("metadata", "finalizers"), ("spec", "podCIDRs")}

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER = "$setElementOrder/"


def list_merge_key(path: tuple[str, ...]) -> str | None:
    if path in MERGE_KEYS_BY_PATH:
        return MERGE_KEYS_BY_PATH[path]
    return MERGE_KEYS.get(path[-1]) if path else None


def strategic_merge_patch(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    result = _merge_map(original, patch, ())
    return result if result is not None else {}


def _merge_map(original: Any, patch: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    directive = patch.get(DIRECTIVE)
    if directive == "delete":
        return None
    if directive == "replace":
        return _strip_directives(patch)
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive} in map: {patch}")
    result = dict(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if key.startswith(DELETE_FROM_PRIMITIVE):
            field = key[len(DELETE_FROM_PRIMITIVE):]
            result[field] = [item for item in result.get(field) or [] if item not in value]
            continue
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = _merge_map(result.get(key), value, path + (key,))
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, path + (key,))
        else:
            result[key] = value
    for key, value in patch.items():
        if key.startswith(SET_ELEMENT_ORDER):
            field = key[len(SET_ELEMENT_ORDER):]
            if isinstance(result.get(field), list):
                result[field] = _apply_order(result[field], value, list_merge_key(path + (field,)))
    if RETAIN_KEYS in patch:
        retained = set(patch[RETAIN_KEYS] or [])
        result = {key: value for key, value in result.items() if key in retained}
    return result


def _merge_list(original: Any, patch: list[Any], path: tuple[str, ...]) -> list[Any]:
    if any(isinstance(item, dict) and item.get(DIRECTIVE) == "replace" for item in patch):
        return [_strip_directives(i) for i in patch if not (isinstance(i, dict) and i.get(DIRECTIVE) == "replace")]
    current = list(original) if isinstance(original, list) else []
    if path in PRIMITIVE_MERGE_PATHS:
        return current + [item for item in patch if item not in current]
    merge_key = list_merge_key(path)
    if merge_key is None or not all(isinstance(item, dict) for item in patch):
        return [_strip_directives(item) for item in patch]
    for item in patch:
        if merge_key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {merge_key}")
        position = next((i for i, elem in enumerate(current)
                         if isinstance(elem, dict) and elem.get(merge_key) == item[merge_key]), None)
        if item.get(DIRECTIVE) == "delete":
            current = [e for e in current if not (isinstance(e, dict) and e.get(merge_key) == item[merge_key])]
        elif position is None:
            current.append(_strip_directives(item))
        else:
            merged = _merge_map(current[position], item, path)
            current[position] = merged if merged is not None else current[position]
    return current


def _apply_order(items: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    def identity(item: Any) -> Any:
        return item.get(merge_key) if merge_key and isinstance(item, dict) else item

    wanted = [identity(entry) for entry in order]
    ranked = [(wanted.index(identity(item)) if identity(item) in wanted else len(wanted), i, item)
              for i, item in enumerate(items)]
    return [item for _rank, _index, item in sorted(ranked, key=lambda entry: (entry[0], entry[1]))]


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(item) for item in value]
    return value
