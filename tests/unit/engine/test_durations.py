"""The one Go-duration parser. The parse tables are what Go's time.ParseDuration returns (checked against go1.26)."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import (
    format_go_duration,
    go_duration_ns,
    is_openapi_duration,
    parse_go_duration,
)

H = 3600 * 10**9


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("1h2m3.5s", 3723_500_000_000),
        ("-1.5h", -5400 * 10**9),
        (".5s", 500_000_000),
        ("1.s", 10**9),
        ("1.h", H),
        ("0", 0),
        ("+0", 0),
        ("-0", 0),
        ("0s", 0),
        ("0.0s", 0),
        ("5m", 300 * 10**9),
        ("+5m", 300 * 10**9),
        ("48h", 48 * H),
        ("1h0m0s", H),
        ("500ms", 500_000_000),
        ("1us", 1000),
        ("1\u00b5s", 1000),  # micro sign
        ("1\u03bcs", 1000),  # Greek mu
        ("1.5\u00b5s", 1500),
        ("2ns", 2),
        ("0.9ns", 0),  # fractions of a nanosecond are truncated
        ("1.9ns", 1),
        ("3.000000001s", 3_000_000_001),
        ("0.333333333333333333333h", 1_200_000_000_000),  # float64 arithmetic, exact to the ns
        ("1.00000000000000000000000001s", 10**9),  # fraction digits past uint64 precision are ignored
        ("9223372036854775807ns", 9223372036854775807),
        ("2562047h47m16.854775807s", 9223372036854775807),
        ("-9223372036854775808ns", -9223372036854775808),
        ("-9223372036.854775808s", -9223372036854775808),
        ("9223372036854775808ns9223372036854775808ns", 0),  # Go's uint64 sum wraps to 0
    ],
)
def test_valid_durations(text: str, nanoseconds: int) -> None:
    assert go_duration_ns(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("1", 'time: missing unit in duration "1"'),
        ("00", 'time: missing unit in duration "00"'),
        ("1.", 'time: missing unit in duration "1."'),
        ("1.5.5s", 'time: missing unit in duration "1.5.5s"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("1H", 'time: unknown unit "H" in duration "1H"'),
        ("1h 2m", 'time: unknown unit "h " in duration "1h 2m"'),
        ("5 m", 'time: unknown unit " m" in duration "5 m"'),
        ("5m ", 'time: unknown unit "m " in duration "5m "'),
        ("1e3s", 'time: unknown unit "e" in duration "1e3s"'),
        ("1h-2m", 'time: unknown unit "h-" in duration "1h-2m"'),
        ("1\"x", 'time: unknown unit "\\"x" in duration "1\\"x"'),
        ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
        ("  5m", 'time: invalid duration "  5m"'),
        ("+-5m", 'time: invalid duration "+-5m"'),
        ("--5m", 'time: invalid duration "--5m"'),
        ("abc", 'time: invalid duration "abc"'),
        (".s", 'time: invalid duration ".s"'),
        ("-.s", 'time: invalid duration "-.s"'),
        (".", 'time: invalid duration "."'),
        ("-", 'time: invalid duration "-"'),
        ("\u00b5s", 'time: invalid duration "\\xc2\\xb5s"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
        ("2562047h47m16.854775808s", 'time: invalid duration "2562047h47m16.854775808s"'),
        ("2562048h", 'time: invalid duration "2562048h"'),
        ("100000000000000000000ns", 'time: invalid duration "100000000000000000000ns"'),
    ],
)
def test_invalid_durations_fail_with_go_message(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        go_duration_ns(text)
    assert str(raised.value) == message


def test_seconds_wrapper_uses_the_same_grammar() -> None:
    assert parse_go_duration("1h30m") == 5400.0
    assert parse_go_duration("1.s") == 1.0
    assert parse_go_duration("250ms") == 0.25
    with pytest.raises(ValueError, match="missing unit"):
        parse_go_duration("90")


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (15 * 60 * 10**9, "15m0s"),
        (6 * H, "6h0m0s"),
        (48 * H, "48h0m0s"),
        (1_500_000_000, "1.5s"),
        (500 * 10**6, "500ms"),
        (1500, "1.5\u00b5s"),
        (1, "1ns"),
        (0, "0s"),
        (3723_500_000_000, "1h2m3.5s"),
        (-15 * 60 * 10**9, "-15m0s"),
    ],
)
def test_format_go_duration(nanoseconds: int, text: str) -> None:
    assert format_go_duration(nanoseconds) == text
    assert go_duration_ns(text) == nanoseconds  # what Go prints, Go parses back


@pytest.mark.parametrize(("text", "accepted"), [("5m", True), ("1d", True), ("2 weeks", True), ("soon", False)])
def test_the_api_servers_duration_format_is_looser_than_go(text: str, accepted: bool) -> None:
    assert is_openapi_duration(text) is accepted
