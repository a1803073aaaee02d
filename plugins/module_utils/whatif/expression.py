"""A JMESPath objective checked before anything is planned: it parses, and every field it names is a documented
candidate figure (figures.py), so a typo such as ``evictionz`` fails naming the field and the closest figure instead of
ending green with "no candidate meets the objective".

The check reads the expression's syntax tree: a field must be a figure, a key inside a figure (a spread state, a
resource, a threshold) or a key the expression itself builds (``{a: ...}.a``); the field right after ``by_plugin``,
``by_namespace`` or ``by_owner`` is the cluster's own name (a plugin, a namespace, a workload) and is not checked.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError, nearest_name
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.figures import (
    DOCUMENTED_FIGURES,
    NESTED_FIGURES,
    OPEN_MAPS,
)

ROOT = "candidates"
KNOWN_FIELDS = frozenset((ROOT, *DOCUMENTED_FIGURES, *NESTED_FIGURES))


class ExpressionError(FleetError, ValueError):
    """An objective expression that cannot be evaluated (names the field, the value and the fix)."""

    def __init__(self, message: str, value: Any) -> None:
        super().__init__(message)
        self.field = "objective.expression"
        self.value = value


def parse_expression(expression: str) -> Mapping[str, Any]:
    """The expression's syntax tree; a syntax error names the option."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expression).parsed
    except JMESPathError as error:
        raise ExpressionError(
            f"objective.expression: {expression!r} is not a valid JMESPath expression: {error}", expression
        ) from error


def fields_named(expression: str) -> set[str]:
    """The fields the expression reads, keys of by_plugin, by_namespace and by_owner left out."""
    tree = parse_expression(expression)
    return set(_fields(tree)) - set(_built_keys(tree))


def check_fields(expression: str) -> None:
    """Every field the expression names is a documented figure, or it fails naming the closest one."""
    unknown = sorted(fields_named(expression) - KNOWN_FIELDS)
    if not unknown:
        return
    field = unknown[0]
    closest = nearest_name(field, KNOWN_FIELDS, cutoff=0.5)
    hint = f"did you mean {closest!r}? " if closest else ""
    raise ExpressionError(
        f"objective.expression: {expression!r} reads {field!r}, which is not a candidate figure; "
        f"{hint}use one of {', '.join(DOCUMENTED_FIGURES)} (the module's candidates return value)",
        field,
    )


def _fields(node: Mapping[str, Any]) -> Iterator[str]:
    children = node.get("children") or []
    if node.get("type") == "field":
        yield node["value"]
        return
    for index, child in enumerate(children):
        if not isinstance(child, Mapping):
            continue
        after_open_map = (
            node.get("type") == "subexpression" and index > 0 and _last_field(children[index - 1]) in OPEN_MAPS
        )
        if after_open_map and child.get("type") == "field":
            continue  # a plugin, namespace or workload name: the cluster's, not ours
        yield from _fields(child)


def _last_field(node: Any) -> str | None:
    if not isinstance(node, Mapping):
        return None
    if node.get("type") == "field":
        return node["value"]
    if node.get("type") == "subexpression" and node.get("children"):
        return _last_field(node["children"][-1])
    return None


def _built_keys(node: Mapping[str, Any]) -> Iterator[str]:
    if node.get("type") == "key_val_pair":
        yield node["value"]
    for child in node.get("children") or []:
        if isinstance(child, Mapping):
            yield from _built_keys(child)
