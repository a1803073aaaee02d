"""Quantities as resource.Quantity reads them: exact sums, MilliValue/Value rounding up."""

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.quantity import (
    milli_value,
    parse_quantity,
    value,
)


@pytest.mark.parametrize("text, millis", [
    ("100m", 100), ("1", 1000), ("1.5", 1500), ("2k", 2_000_000), ("1e3", 1_000_000), ("1n", 1), ("0", 0),
    (2, 2000), ("1u", 1),
])
def test_milli_values_round_up(text, millis):
    assert milli_value(parse_quantity(text)) == millis


@pytest.mark.parametrize("text, units", [
    ("1Ki", 1024), ("64718848Ki", 64718848 * 1024), ("1Gi", 2**30), ("1.5Gi", 3 * 2**29), ("1M", 10**6),
    ("500m", 1), ("1Ei", 2**60), ("128974848", 128974848),
])
def test_values_round_up(text, units):
    assert value(parse_quantity(text)) == units


@pytest.mark.parametrize("bad", ["", "abc", "1Qi", "1i", "--1", "1.2.3x", True])
def test_invalid_quantities_are_rejected_with_the_value(bad):
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(bad)
