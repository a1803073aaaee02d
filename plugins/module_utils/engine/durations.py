"""Go duration strings ("1h30m", "90s", "500ms"): the one parser, with exactly Go's ``time.ParseDuration`` grammar.

The descheduler reads its args, and the operator its KubeDescheduler fields, with ``time.ParseDuration``: what it
accepts (and the error it gives) is what we accept and say. Callers that want seconds or a formatted duration use the
thin wrappers below, never a second parser. Also here: Go's ``Duration.String`` and the API server's looser
``format: duration`` check (kube-openapi strfmt), which accepts strings Go refuses ("1d").
"""

from __future__ import annotations

import re

NANOSECOND = 1
SECOND = 1_000_000_000  # nanoseconds
_UNITS = {
    "ns": NANOSECOND,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek small letter mu
    "ms": 1_000_000,
    "s": SECOND,
    "m": 60 * SECOND,
    "h": 3600 * SECOND,
}
_UINT63 = 1 << 63
_UINT64_MASK = (1 << 64) - 1


def _quote(text: str) -> str:
    """Go's time.quote: non-ASCII and control characters as \\x escapes of their UTF-8 bytes."""
    out = ['"']
    for char in text:
        if char >= "\x80" or char < " ":
            out += [f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass")]
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


def _invalid(original: str) -> ValueError:
    return ValueError(f"time: invalid duration {_quote(original)}")


def _leading_int(text: str) -> tuple[int, str]:
    """The leading [0-9]*; OverflowError past 1<<63 (the caller words it as Go)."""
    value, index = 0, 0
    while index < len(text) and "0" <= text[index] <= "9":
        if value > _UINT63 // 10:
            raise OverflowError
        value = value * 10 + int(text[index])
        if value > _UINT63:
            raise OverflowError
        index += 1
    return value, text[index:]


def _leading_fraction(text: str) -> tuple[int, float, str]:
    """The digits after the point; as Go, digits beyond uint64 precision are consumed but ignored."""
    value, scale, index, overflow = 0, 1.0, 0, False
    while index < len(text) and "0" <= text[index] <= "9":
        if not overflow:
            candidate = value * 10 + int(text[index])
            if value > (_UINT63 - 1) // 10 or candidate > _UINT63:
                overflow = True
            else:
                value, scale = candidate, scale * 10
        index += 1
    return value, scale, text[index:]


def _component(rest: str, original: str) -> tuple[int, str]:
    """One ``[0-9]*(\\.[0-9]*)?unit`` of the duration, in nanoseconds, and what follows it."""
    if not (rest[0] == "." or "0" <= rest[0] <= "9"):
        raise _invalid(original)
    before = len(rest)
    try:
        whole, rest = _leading_int(rest)
    except OverflowError:
        raise _invalid(original) from None
    has_whole = before != len(rest)
    fraction, scale, has_fraction = 0, 1.0, False
    if rest[:1] == ".":
        rest = rest[1:]
        before = len(rest)
        fraction, scale, rest = _leading_fraction(rest)
        has_fraction = before != len(rest)
    if not has_whole and not has_fraction:
        raise _invalid(original)  # no digits: ".s"
    length = 0
    while length < len(rest) and not (rest[length] == "." or "0" <= rest[length] <= "9"):
        length += 1
    if length == 0:
        raise ValueError(f"time: missing unit in duration {_quote(original)}")
    name, rest = rest[:length], rest[length:]
    if name not in _UNITS:
        raise ValueError(f"time: unknown unit {_quote(name)} in duration {_quote(original)}")
    unit = _UNITS[name]
    if whole > _UINT63 // unit:
        raise _invalid(original)
    value = whole * unit
    if fraction > 0:
        value += int(float(fraction) * (float(unit) / scale))  # float64, as Go: exact to the ns for fractions of h
        if value > _UINT63:
            raise _invalid(original)
    return value, rest


def go_duration_ns(text: str) -> int:
    """Nanoseconds in a Go duration, exactly as ``time.ParseDuration``: an optional sign, then one or more decimal
    numbers (optional fraction) each with a unit among ns, us, \\u00b5s, \\u03bcs, ms, s, m, h; "0" alone needs no
    unit. ValueError with Go's message otherwise (empty, no unit, unknown unit, overflow)."""
    original, rest, negative = text, text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise _invalid(original)
    total = 0
    while rest:
        value, rest = _component(rest, original)
        total = (total + value) & _UINT64_MASK  # Go adds in uint64: a sum of exactly 2**64 wraps to 0
        if total > _UINT63:
            raise _invalid(original)
    if negative:
        return -total
    if total > _UINT63 - 1:
        raise _invalid(original)
    return total


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration (see ``go_duration_ns``)."""
    return go_duration_ns(text) / SECOND


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
    if remaining < SECOND:
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


def is_openapi_duration(text: str) -> bool:
    """Whether the API server's ``format: duration`` accepts ``text`` (a Go duration, or strfmt's own forms)."""
    try:
        go_duration_ns(text)
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
