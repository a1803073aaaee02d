"""Go duration strings ("1h30m", "90s", "500ms") as used by descheduler args and KubeDescheduler fields."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration; raises ValueError naming the syntax on bad input."""
    raw = str(text).strip()
    sign = -1.0 if raw.startswith("-") else 1.0
    body = raw.lstrip("+-")
    if body == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(body):
        match = _PART.match(body, position)
        if not match:
            raise ValueError(f"invalid duration {text!r}: expected Go duration syntax such as 90s, 5m, 1h30m, 48h")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not body:
        raise ValueError(f"invalid duration {text!r}: empty")
    return sign * total
