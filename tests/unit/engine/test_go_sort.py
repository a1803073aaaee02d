"""go_sort against the real Go sort.Slice.

data/go_sort_slice.json holds permutations recorded from Go 1.26.8: a small Go program (not kept in the repo) drew
598 key lists with math/rand (seed 24; lengths 2-60 and 64-200; random keys with few or many distinct values, and
sorted, reversed, all-equal and sawtooth ones), sorted a slice of indexes 0..n-1 of each with
``sort.Slice(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })`` and again with ``<=`` (a comparator
answering "less" on equal elements, as upstream's SortPodsBasedOnPriorityLowToHigh does), and printed the indexes
as JSON; the file keeps every 4th case plus some that reach pdqsort's heapsort fallback.
"""

from __future__ import annotations

import json
import random
from operator import itemgetter
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import sampling
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.go_sort import (
    MAX_INSERTION,
    sort_slice,
    sort_slice_by_key,
)

CASES = json.loads((Path(__file__).parent / "data" / "go_sort_slice.json").read_text())["cases"]


def case_id(case: dict) -> str:
    return f"{case['less']}-{len(case['keys'])}"


def ported_order(keys: list[int], equal_is_less: bool) -> list[int]:
    """sort_slice over the indexes, with the Go program's comparators."""
    if equal_is_less:
        return sort_slice(range(len(keys)), lambda a, b: keys[a] <= keys[b])
    return sort_slice(range(len(keys)), lambda a, b: keys[a] < keys[b])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_sort_slice_leaves_ties_where_go_does(case: dict) -> None:
    assert ported_order(case["keys"], case["less"] != "strict") == case["order"]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_sort_by_key_matches_go_ascending_and_descending(case: dict) -> None:
    keys = case["keys"]
    equal_is_less = case["less"] != "strict"
    assert sort_slice_by_key(range(len(keys)), keys.__getitem__, equal_is_less=equal_is_less) == case["order"]
    # Go's `a > b` on negated keys compares exactly as `a < b` on the keys: the same permutation
    negated = [-key for key in keys]
    assert sort_slice_by_key(range(len(keys)), negated.__getitem__, descending=True,
                             equal_is_less=equal_is_less) == case["order"]


def test_the_data_covers_both_algorithms() -> None:
    lengths = {len(case["keys"]) for case in CASES}
    assert min(lengths) == 2 and max(lengths) >= 200
    assert any(length <= MAX_INSERTION for length in lengths) and any(length > 50 for length in lengths)


@pytest.mark.parametrize("equal_is_less", [False, True])
def test_short_path_is_insertion_sort(equal_is_less: bool) -> None:
    """Up to 12 elements sort_slice_by_key uses Python's sort; it must equal the ported insertion sort."""
    rng = random.Random(12)
    for _round in range(300):
        keys = [rng.randrange(3) for _index in range(rng.randint(0, MAX_INSERTION))]
        expected = ported_order(keys, equal_is_less)
        assert sort_slice_by_key(range(len(keys)), keys.__getitem__, equal_is_less=equal_is_less) == expected


def test_ties_are_not_shuffled_past_twelve() -> None:
    """Equal elements come out in one fixed order for a given input order (pdqsort is deterministic)."""
    items = list(range(40))
    first = sort_slice_by_key(items, lambda item: item % 2)
    assert first == sort_slice_by_key(items, lambda item: item % 2)
    assert sorted(first) == items and [item % 2 for item in first] == [0] * 20 + [1] * 20


def test_sampled_orders_sort_as_go_and_the_deterministic_one_stays_stable() -> None:
    items = [(f"p{n}", n % 3) for n in range(20)]
    sampled = sampling.order_for_sample(1, 0)
    assert sampled.sort(items, key=itemgetter(1), ties_reversed=True) == sort_slice(items, lambda a, b: a[1] <= b[1])
    assert sampled.sort(items, key=itemgetter(1), reverse=True) == sort_slice(items, lambda a, b: a[1] > b[1])
    assert sampling.DETERMINISTIC.sort(items, key=itemgetter(1), tie_break=itemgetter(0)) == sorted(
        items, key=lambda item: (item[1], item[0]))
