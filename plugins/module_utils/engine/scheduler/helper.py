"""Shared scoring arithmetic of the kube-scheduler framework (integer math, as upstream)."""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any, Callable, Iterable, Iterator, NamedTuple

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
# returned by pre_filter/pre_score when a plugin has nothing to do for this pod (upstream framework.Skip)
SKIP = object()


def default_normalize_score(scores: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """helper.DefaultNormalizeScore: scale to [0, max] by the highest score; ``reverse`` flips it."""
    highest = max(scores, default=0)
    if highest == 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for i, score in enumerate(scores):
        scores[i] = default_normalized(score, highest, reverse, max_priority)


def default_normalized(score: int, highest: int, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> int:
    """One score as default_normalize_score scales it, given the highest score (above 0)."""
    scaled = max_priority * score // highest
    return max_priority - scaled if reverse else scaled


def go_round(number: float) -> int:
    """math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.floor(number + 0.5)) if number >= 0 else -int(math.floor(-number + 0.5))


def go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


class SparseScores(NamedTuple):
    """A window's scores when most nodes share one: ``base`` everywhere except ``others`` (window position → score)."""

    base: int
    others: dict[int, int]


class Memo(dict):
    """A dict that computes a missing value once (a window's scores take few distinct values)."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.compute(key)
        return value


def window_positions(window: list[int], indexes: Iterable[int]) -> Iterator[tuple[int, int]]:
    """(node index, position in ``window``) for those of ``indexes`` in the window. A window lists node indexes
    ascending from where the scan started, wrapping around once, so each lookup is a binary search of one run."""
    if not window:
        return
    first = window[0]
    wrap = bisect_left(window, True, key=first.__gt__)  # where the run below the start begins
    for index in indexes:
        low, high = (0, wrap) if index >= first else (wrap, len(window))
        j = bisect_left(window, index, low, high)
        if j < high and window[j] == index:
            yield index, j


def in_window_range(ordered: list[int], window: list[int]) -> list[int]:
    """Those of ``ordered`` (ascending node indexes) between the window's first and last node, wrapping around as
    the window does: a superset of the ones in the window, found without reading the window."""
    if not window:
        return []
    first, last = window[0], window[-1]
    if first <= last:
        return ordered[bisect_left(ordered, first):bisect_left(ordered, last + 1)]
    return ordered[bisect_left(ordered, first):] + ordered[:bisect_left(ordered, last + 1)]


class Unresolvable:
    """What a PreFilter returns when no node can take the pod (upstream UnschedulableAndUnresolvable at PreFilter):
    the scheduler stops before looking at any node and reports ``message``."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message
