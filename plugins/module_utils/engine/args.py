"""Strict decoding of plugin args, as upstream decodes pluginConfig args (unknown fields are errors)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.labels import Selector, compile_label_selector


class ArgsReader:
    """Reads typed fields of one args mapping; every error names ``<field>.<key>``."""

    def __init__(self, args: Any, field: str, allowed: Iterable[str]) -> None:
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise PolicyError(field, args, "expected a mapping")
        allowed = tuple(allowed)
        for key in args:
            if key not in allowed:
                raise PolicyError(f"{field}.{key}", args[key], "unknown field; allowed fields: " + ", ".join(allowed))
        self.args = args
        self.field = field

    def _where(self, key: str) -> str:
        return f"{self.field}.{key}"

    def mapping(self, key: str) -> Optional[Mapping[str, Any]]:
        value = self.args.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise PolicyError(self._where(key), value, "expected a mapping")
        return value

    def boolean(self, key: str) -> bool:
        value = self.args.get(key)
        if value is not None and not isinstance(value, bool):
            raise PolicyError(self._where(key), value, "expected true or false")
        return bool(value)

    def integer(self, key: str, minimum: Optional[int] = None) -> Optional[int]:
        value = self.args.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise PolicyError(self._where(key), value, "expected an integer")
        if minimum is not None and value < minimum:
            raise PolicyError(self._where(key), value, f"must be ≥ {minimum}")
        return value

    def uint(self, key: str) -> Optional[int]:
        return self.integer(key, minimum=0)

    def number(self, key: str) -> Optional[float]:
        value = self.args.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PolicyError(self._where(key), value, "expected a number")
        return float(value)

    def string(self, key: str) -> str:
        value = self.args.get(key)
        if value is not None and not isinstance(value, str):
            raise PolicyError(self._where(key), value, "expected a string")
        return value or ""

    def string_list(self, key: str, allowed: Optional[Iterable[str]] = None) -> Optional[list[str]]:
        value = self.args.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PolicyError(self._where(key), value, "expected a list of strings")
        if allowed is not None:
            allowed = tuple(allowed)
            for item in value:
                if item not in allowed:
                    raise PolicyError(self._where(key), item, "must be one of " + ", ".join(allowed))
        return list(value)

    def int_list(self, key: str) -> Optional[list[int]]:
        value = self.args.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise PolicyError(self._where(key), value, "expected a list of integers")
        return list(value)

    def namespaces(self, key: str = "namespaces", include_allowed: bool = True) -> tuple[frozenset, frozenset]:
        value = self.mapping(key)
        if value is None:
            return frozenset(), frozenset()
        ArgsReader(value, self._where(key), ("include", "exclude"))
        sub = ArgsReader(value, self._where(key), ("include", "exclude"))
        include = sub.string_list("include") or []
        exclude = sub.string_list("exclude") or []
        if include and exclude:
            raise PolicyError(self._where(key), value, "only one of include and exclude can be set")
        if include and not include_allowed:
            raise PolicyError(self._where(key) + ".include", include,
                              "this plugin supports only evictableNamespaces.exclude")
        return frozenset(include), frozenset(exclude)

    def label_selector(self, key: str = "labelSelector") -> Selector:
        value = self.mapping(key)
        if value is None:
            return None
        try:
            return compile_label_selector(value, self._where(key))
        except ValueError as exc:
            raise PolicyError(self._where(key), value, str(exc)) from exc


def namespace_allowed(namespace: str, include: frozenset, exclude: frozenset) -> bool:
    if include and namespace not in include:
        return False
    return not (exclude and namespace in exclude)
