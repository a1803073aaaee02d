"""Label and field selectors: the query-string grammar (k8s.io/apimachinery/pkg/labels, pkg/fields) and the
`LabelSelector` object form (matchLabels/matchExpressions) used by PDBs and workloads."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_SET_RE = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_BINARY_RE = re.compile(rf"^({_KEY})\s*(==|=|!=|>|<)\s*(.*)$")
_EXISTS_RE = re.compile(rf"^(!?)\s*({_KEY})$")
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # in | notin | exists | !exists | gt | lt
    values: frozenset[str] = frozenset()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "in":
            return present and labels[self.key] in self.values
        if self.operator == "notin":
            return not present or labels[self.key] not in self.values
        if self.operator == "exists":
            return present
        if self.operator == "!exists":
            return not present
        if not present:
            return False
        try:
            actual, bound = int(labels[self.key]), int(next(iter(self.values)))
        except ValueError:
            return False
        return actual > bound if self.operator == "gt" else actual < bound


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of requirements; `nothing=True` is the nil selector that matches no object."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        return not self.requirements and not self.nothing

    def matches(self, labels: dict[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(req.matches(labels) for req in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside a `( ... )` value set."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _checked_value(value: str, whole: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise bad_request(f"unable to parse requirement: values[0][{whole}]: Invalid value: {value!r}: a valid label "
                          "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                          "start and end with an alphanumeric character")
    return value


def _parse_requirement(chunk: str) -> Requirement:
    text = chunk.strip()
    if match := _SET_RE.match(text):
        values = frozenset(_checked_value(v.strip(), text) for v in match.group(4).split(","))
        return Requirement(match.group(1), match.group(3), values)
    if match := _BINARY_RE.match(text):
        key, operator, value = match.group(1), match.group(3), match.group(4).strip()
        if operator in (">", "<"):
            if not re.fullmatch(r"-?\d+", value):
                raise bad_request(f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an "
                                  f"integer: {text}")
            return Requirement(key, "gt" if operator == ">" else "lt", frozenset({value}))
        return Requirement(key, "notin" if operator == "!=" else "in", frozenset({_checked_value(value, text)}))
    if match := _EXISTS_RE.match(text):
        return Requirement(match.group(2), "!exists" if match.group(1) else "exists")
    raise bad_request(f"unable to parse requirement: found '{text}', expected: identifier")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse `a=b,c!=d,e in (x,y),f notin (z),g,!h,i>1`; raises a 400 `ApiError` on bad syntax."""
    if not text or not text.strip():
        return EVERYTHING
    return LabelSelector(tuple(_parse_requirement(chunk) for chunk in _split_top_level(text)))


def from_label_selector_object(selector: dict[str, Any] | None) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: nil matches nothing, `{}` matches everything."""
    if selector is None:
        return NOTHING
    requirements = [Requirement(k, "in", frozenset({str(v)})) for k, v in (selector.get("matchLabels") or {}).items()]
    operators = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
    for expression in selector.get("matchExpressions") or []:
        operator = operators.get(expression.get("operator", ""))
        if operator is None:
            raise ValueError(f"{expression.get('operator')!r} is not a valid label selector operator")
        requirements.append(Requirement(expression["key"], operator, frozenset(expression.get("values") or ())))
    return LabelSelector(tuple(requirements))


def label_selector_to_string(selector: dict[str, Any] | None) -> str:
    """The query-string form of a LabelSelector object (what `Scale.status.selector` shows)."""
    parts = [f"{k}={v}" for k, v in sorted(((selector or {}).get("matchLabels") or {}).items())]
    for expression in (selector or {}).get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = ",".join(sorted(expression.get("values", [])))
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                      "DoesNotExist": f"!{key}"}[operator])
    return ",".join(parts)


# --- field selectors -------------------------------------------------------------------------------------------

FIELD_ALIASES = {"source": "source.component"}  # events: `source` selects on source.component


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def equality_value(self, field_path: str) -> str | None:
        """The value of a `field=value` requirement, so an indexed field can narrow the candidates."""
        return next((r.value for r in self.requirements if r.field == field_path and r.equal), None)

    def matches(self, obj: dict[str, Any]) -> bool:
        return all((field_value(obj, r.field) == r.value) == r.equal for r in self.requirements)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _split_unescaped(text: str, separator: str) -> list[str]:
    return re.split(rf"(?<!\\){re.escape(separator)}", text)


def parse_field_selector(text: str | None, supported: tuple[str, ...]) -> FieldSelector:
    """Parse `a=b,c!=d`; fields other than metadata.name/metadata.namespace must be in `supported` (else 400)."""
    if not text or not text.strip():
        return FieldSelector()
    requirements = []
    for chunk in _split_unescaped(text, ","):
        match = re.match(r"^\s*([^=!\s]+)\s*(==|=|!=)(.*)$", chunk)
        if not match:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{chunk}'")
        field, operator, value = match.group(1), match.group(2), _unescape(match.group(3).strip())
        if field not in ("metadata.name", "metadata.namespace") and field not in supported:
            raise ApiError(400, "BadRequest", f'field label not supported: {field}')
        requirements.append(FieldRequirement(field, value, operator != "!="))
    return FieldSelector(tuple(requirements))


def field_value(obj: dict[str, Any], field_path: str) -> str:
    """The string a field selector compares: booleans as true/false, missing as ""."""
    node: Any = obj
    for part in FIELD_ALIASES.get(field_path, field_path).split("."):
        if not isinstance(node, dict):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def object_predicate(labels: LabelSelector, fields: FieldSelector) -> Callable[[dict[str, Any]], bool] | None:
    """One predicate for both selectors, or None when neither restricts anything (the fast path)."""
    if labels.empty and fields.empty:
        return None
    if fields.empty:
        return lambda obj: labels.matches(obj["metadata"].get("labels"))
    if labels.empty:
        return fields.matches
    return lambda obj: labels.matches(obj["metadata"].get("labels")) and fields.matches(obj)
