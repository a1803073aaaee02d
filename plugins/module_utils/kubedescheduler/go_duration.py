"""Go's time.ParseDuration and Duration.String, for the operator's duration fields."""

from __future__ import annotations

import re

_NANOSECOND = 1
_SECOND = 1_000_000_000
_GO_DURATION_UNITS = {
    "ns": _NANOSECOND,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": _SECOND,
    "m": 60 * _SECOND,
    "h": 3600 * _SECOND,
}
_UINT63 = 1 << 63


def _is_ascii_digit(char: str) -> bool:
    return "0" <= char <= "9"


def _leading_int(text: str, original: str) -> tuple[int, str]:
    value, index = 0, 0
    while index < len(text) and _is_ascii_digit(text[index]):
        if value > _UINT63 // 10:
            raise ValueError(f'time: invalid duration "{original}"')
        value = value * 10 + int(text[index])
        if value > _UINT63:
            raise ValueError(f'time: invalid duration "{original}"')
        index += 1
    return value, text[index:]


def _leading_fraction(text: str) -> tuple[int, float, str]:
    # Like Go: digits beyond int64 precision are consumed but ignored.
    value, scale, index, overflow = 0, 1.0, 0, False
    while index < len(text) and _is_ascii_digit(text[index]):
        if not overflow:
            candidate = value * 10 + int(text[index])
            if value > (_UINT63 - 1) // 10 or candidate > _UINT63:
                overflow = True
            else:
                value, scale = candidate, scale * 10
        index += 1
    return value, scale, text[index:]


def parse_go_duration(text: str) -> int:
    """Nanoseconds for a Go ``time.ParseDuration`` string ("5m", "1h30m", "1.5h", "-90s"); ValueError worded as Go."""
    original, rest, negative = text, text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise ValueError(f'time: invalid duration "{original}"')
    total = 0
    while rest:
        if not (rest[0] == "." or _is_ascii_digit(rest[0])):
            raise ValueError(f'time: invalid duration "{original}"')
        length_before = len(rest)
        whole, rest = _leading_int(rest, original)
        has_whole = length_before != len(rest)
        fraction, scale, has_fraction = 0, 1.0, False
        if rest[:1] == ".":
            rest = rest[1:]
            length_before = len(rest)
            fraction, scale, rest = _leading_fraction(rest)
            has_fraction = length_before != len(rest)
        if not has_whole and not has_fraction:
            raise ValueError(f'time: invalid duration "{original}"')
        unit_length = 0
        while unit_length < len(rest) and not (rest[unit_length] == "." or _is_ascii_digit(rest[unit_length])):
            unit_length += 1
        if unit_length == 0:
            raise ValueError(f'time: missing unit in duration "{original}"')
        unit_name, rest = rest[:unit_length], rest[unit_length:]
        if unit_name not in _GO_DURATION_UNITS:
            raise ValueError(f'time: unknown unit "{unit_name}" in duration "{original}"')
        unit = _GO_DURATION_UNITS[unit_name]
        if whole > _UINT63 // unit:
            raise ValueError(f'time: invalid duration "{original}"')
        component = whole * unit
        if fraction > 0:
            component += int(float(fraction) * (float(unit) / scale))
            if component > _UINT63:
                raise ValueError(f'time: invalid duration "{original}"')
        total += component
        if total > _UINT63:
            raise ValueError(f'time: invalid duration "{original}"')
    if negative:
        return -total
    if total > _UINT63 - 1:
        raise ValueError(f'time: invalid duration "{original}"')
    return total


def _go_fraction(value: int, precision: int) -> tuple[str, int]:
    digits: list[str] = []
    printing = False
    for _position in range(precision):
        digit = value % 10
        printing = printing or digit != 0
        if printing:
            digits.append(str(digit))
        value //= 10
    return ("." + "".join(reversed(digits)) if printing else ""), value


def format_go_duration(nanoseconds: int) -> str:
    """Go's ``time.Duration.String()``: 15m -> "15m0s", 48h -> "48h0m0s", 1.5s -> "1.5s", 0 -> "0s"."""
    sign = "-" if nanoseconds < 0 else ""
    remaining = abs(nanoseconds)
    if remaining == 0:
        return "0s"
    if remaining < _SECOND:
        precision, unit = (0, "ns") if remaining < 1_000 else (3, "\u00b5s") if remaining < 1_000_000 else (6, "ms")
        fraction, whole = _go_fraction(remaining, precision)
        return f"{sign}{whole}{fraction}{unit}"
    fraction, seconds = _go_fraction(remaining, 9)
    text = f"{seconds % 60}{fraction}s"
    minutes = seconds // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        hours = minutes // 60
        if hours:
            text = f"{hours}h{text}"
    return sign + text


# The API server validates `format: duration` with kube-openapi's strfmt, which also accepts "1d", "2 weeks"...
_OPENAPI_DURATION_MATCHER = re.compile(r"((\d+)\s*([A-Za-z\u00b5]+))")
_OPENAPI_DURATION_UNITS = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)


def _is_openapi_duration(text: str) -> bool:
    try:
        parse_go_duration(text)
        return True
    except ValueError:
        pass
    for match in _OPENAPI_DURATION_MATCHER.finditer(text):
        unit = match.group(3).strip().lower()
        for variants in _OPENAPI_DURATION_UNITS:
            last = len(variants) - 1
            if any((i == last and unit.startswith(v)) or unit == v.lower() for i, v in enumerate(variants)):
                return True
    return False
