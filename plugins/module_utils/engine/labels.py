"""Label selectors: metav1.LabelSelector objects, selector strings, and node selector requirements."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

# A compiled selector is a tuple of (key, operator, values) requirements; None means "matches nothing".
Requirement = tuple[str, str, frozenset]
Selector = Optional[tuple[Requirement, ...]]

EVERYTHING: tuple[Requirement, ...] = ()


def compile_label_selector(selector: Optional[Mapping[str, Any]], field: str = "labelSelector") -> Selector:
    """metav1.LabelSelectorAsSelector: nil → nothing, {} → everything."""
    if selector is None:
        return None
    if not isinstance(selector, Mapping):
        raise ValueError(f"{field}: expected a mapping with matchLabels/matchExpressions, got {selector!r}")
    requirements: list[Requirement] = []
    for key, val in sorted((selector.get("matchLabels") or {}).items()):
        requirements.append((str(key), "In", frozenset([str(val)])))
    for index, expr in enumerate(selector.get("matchExpressions") or []):
        operator = expr.get("operator")
        values = frozenset(str(v) for v in (expr.get("values") or []))
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(
                f"{field}.matchExpressions[{index}].operator: {operator!r} is not one of "
                "In, NotIn, Exists, DoesNotExist"
            )
        if operator in ("In", "NotIn") and not values:
            raise ValueError(f"{field}.matchExpressions[{index}].values: must be non-empty for operator {operator}")
        requirements.append((str(expr.get("key", "")), operator, values))
    return tuple(requirements)


def required_values(selector: Selector) -> Optional[tuple[str, frozenset]]:
    """(key, values) of the selector's narrowest ``In`` requirement: only labels with one of those values for that
    key can match (None: no such requirement)."""
    found = [(len(values), key, values) for key, operator, values in selector or () if operator == "In"]
    if not found:
        return None
    _size, key, values = min(found, key=lambda entry: entry[0])
    return key, values


def matches(selector: Selector, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return False
    for key, operator, values in selector:
        present = key in labels
        if operator == "In":
            if not present or labels[key] not in values:
                return False
        elif operator == "NotIn":
            if present and labels[key] in values:
                return False
        elif operator == "Exists":
            if not present:
                return False
        elif operator == "DoesNotExist":
            if present:
                return False
        elif operator in ("Gt", "Lt"):
            if not present or not _compare_int(labels[key], operator, values):
                return False
    return True


def _compare_int(label_value: str, operator: str, values: frozenset) -> bool:
    try:
        left = int(label_value)
        right = int(next(iter(values)))
    except (ValueError, StopIteration):
        return False
    return left > right if operator == "Gt" else left < right


_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|[^\s!=(),]+)")


def parse_selector_string(text: str, field: str) -> Selector:
    """labels.Parse for expressions such as ``a=b,c in (x,y),!d,e!=f,g notin (h),k``. "" → everything."""
    tokens = list(_TOKEN.findall(text or ""))
    requirements: list[Requirement] = []
    position = 0

    def fail(why: str) -> ValueError:
        return ValueError(f"{field}: invalid label selector {text!r}: {why}")

    while position < len(tokens):
        token = tokens[position]
        if token == "!":
            if position + 1 >= len(tokens):
                raise fail("'!' must be followed by a key")
            requirements.append((tokens[position + 1], "DoesNotExist", frozenset()))
            position += 2
        else:
            key = token
            nxt = tokens[position + 1] if position + 1 < len(tokens) else ","
            if nxt in ("=", "==", "!="):
                if position + 2 >= len(tokens) or tokens[position + 2] in (",", "(", ")"):
                    requirements.append((key, "In" if nxt != "!=" else "NotIn", frozenset([""])))
                    position += 2
                else:
                    operator = "NotIn" if nxt == "!=" else "In"
                    requirements.append((key, operator, frozenset([tokens[position + 2]])))
                    position += 3
            elif nxt in ("in", "notin"):
                if position + 2 >= len(tokens) or tokens[position + 2] != "(":
                    raise fail(f"expected '(' after {nxt}")
                values, position = _read_set(tokens, position + 3, fail)
                requirements.append((key, "In" if nxt == "in" else "NotIn", frozenset(values)))
            elif nxt == ",":
                requirements.append((key, "Exists", frozenset()))
                position += 1
            else:
                raise fail(f"unexpected {nxt!r} after {key!r}")
        if position < len(tokens):
            if tokens[position] != ",":
                raise fail(f"expected ',' but found {tokens[position]!r}")
            position += 1
    return tuple(requirements)


def _read_set(tokens: Sequence[str], position: int, fail: Any) -> tuple[list[str], int]:
    values: list[str] = []
    while position < len(tokens) and tokens[position] != ")":
        if tokens[position] != ",":
            values.append(tokens[position])
        position += 1
    if position >= len(tokens):
        raise fail("missing ')'")
    return values, position + 1


def compile_node_selector_term(term: Mapping[str, Any]) -> Optional[tuple[Selector, Selector]]:
    """A NodeSelectorTerm → (label requirements, field requirements); None for an empty term (matches nothing)."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return None
    label_reqs = tuple(_node_requirement(e) for e in expressions)
    field_reqs = tuple(_node_requirement(f) for f in fields)
    return label_reqs, field_reqs


def _node_requirement(expr: Mapping[str, Any]) -> Requirement:
    operator = expr.get("operator", "")
    values = frozenset(str(v) for v in (expr.get("values") or []))
    if operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        operator = "Invalid"
    return (str(expr.get("key", "")), operator, values)


def node_term_matches(term: tuple[Selector, Selector], node_labels: Mapping[str, str], node_name: str) -> bool:
    label_reqs, field_reqs = term
    if any(requirement[1] == "Invalid" for requirement in label_reqs or ()):
        return False
    if label_reqs and not matches(label_reqs, node_labels):
        return False
    for key, operator, values in field_reqs or ():
        if key != "metadata.name" or operator not in ("In", "NotIn"):
            return False
        if (node_name in values) != (operator == "In"):
            return False
    return True
