"""Kubernetes resource quantities, kept exactly as integers of nano-units.

Upstream compares CPU in millis (``MilliValue``) and everything else with ``Value()``, both rounding up; keeping
nano-units makes sums exact and lets us round the way upstream does at the point of use.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

NANO = 10**9
_SUFFIX_NANO = {
    "n": 1,
    "u": 10**3,
    "m": 10**6,
    "": NANO,
    "k": 10**3 * NANO,
    "M": 10**6 * NANO,
    "G": 10**9 * NANO,
    "T": 10**12 * NANO,
    "P": 10**15 * NANO,
    "E": 10**18 * NANO,
    "Ki": 2**10 * NANO,
    "Mi": 2**20 * NANO,
    "Gi": 2**30 * NANO,
    "Ti": 2**40 * NANO,
    "Pi": 2**50 * NANO,
    "Ei": 2**60 * NANO,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]|)$")
_cache: dict[str, int] = {}


def parse_quantity(value: object) -> int:
    """Parse a quantity ("100m", "1.5Gi", 2, "1e3") into nano-units, rounding up like resource.Quantity."""
    if isinstance(value, str):  # the usual case, one lookup (every pod's requests pass here)
        cached = _cache.get(value)
        if cached is not None:
            return cached
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        return _ceil(Decimal(repr(value)) * NANO)
    text = str(value).strip()
    cached = _cache.get(text)
    if cached is not None:
        return cached
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"invalid quantity {value!r}: expected a number with an optional suffix such as m, Ki, Mi, Gi")
    number, suffix = match.groups()
    try:
        amount = Decimal(number)
    except InvalidOperation as exc:
        raise ValueError(f"invalid quantity {value!r}") from exc
    if suffix not in _SUFFIX_NANO:  # an exponent such as e3 or E-2 ("E" and "Ei" alone are suffixes)
        nano = _ceil(amount * (Decimal(10) ** int(suffix[1:])) * NANO)
    else:
        nano = _ceil(amount * _SUFFIX_NANO[suffix])
    if len(_cache) < 100_000:
        _cache[text] = nano
    return nano


def _ceil(amount: Decimal) -> int:
    integral = int(amount)
    return integral + 1 if amount > integral else integral


def milli_value(nano: int) -> int:
    """``Quantity.MilliValue()``: millis, rounded up."""
    return -((-nano) // 10**6)


def value(nano: int) -> int:
    """``Quantity.Value()``: units, rounded up."""
    return -((-nano) // NANO)


def scaled(resource: str, nano: int) -> int:
    """The unit upstream uses for utilization: CPU in millis, everything else via Value()."""
    return milli_value(nano) if resource == "cpu" else value(nano)
