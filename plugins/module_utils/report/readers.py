"""Tolerant readers for the report modules: a plan may come from anywhere (a skipped cycle, a plan trimmed to its
summary, hand-edited JSON), a report must still be written. Pure stdlib."""

from __future__ import annotations

import contextlib
from typing import Any, Iterable, Optional


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def dicts_in(value: Any) -> list[dict]:
    """The mappings of a list (anything else in it is skipped)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value.strip().rstrip("%"))
    return None


def as_count(value: Any) -> int:
    number = as_number(value)
    return int(number) if number is not None and number >= 0 else 0


def as_text(value: Any) -> str:
    return "" if value is None else str(value)


def as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1", "y")
    return bool(value)


def as_text_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [as_text(item) for item in as_list(value) if item is not None]


def ranked(counts: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Largest first, then by name, so equal counts always come out in the same order."""
    return sorted(counts, key=lambda item: (-item[1], item[0]))
