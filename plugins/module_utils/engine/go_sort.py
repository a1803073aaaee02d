"""The order Go's ``sort.Slice`` leaves a slice in: pdqsort as Go 1.19 to 1.26 implement it (src/sort/zsortfunc.go).

``sort.Slice`` is not stable, but it is deterministic: the same input order and comparator always give the same
output, ties included (its only "random" step, breakPatterns, is an xorshift generator seeded with the length).
Up to 12 elements it is an insertion sort, which keeps equal elements in input order for a strict ``less`` and
reverses them for a comparator answering "less" on equal elements (upstream's SortPodsBasedOnPriorityLowToHigh).
Past 12, pdqsort's pivots and partitions move equal elements around; the sampled orders of engine/sampling.py feed
it the Go map orders they draw, so the ties come out as upstream's do.

``sort_slice`` is a line-by-line port (same comparisons, same swaps); ``sort_slice_by_key`` is the common case of a
key compared with ``<`` (or ``<=``), kept fast for sampled plans, which sort every node's pods in every cycle:
Python's sort where insertion sort is exactly a stable one (12 elements or fewer) or where no keys tie, else the
port's permutation, remembered per pattern of key ranks (every comparison depends on nothing else).
tests/unit/engine/test_go_sort.py checks both against permutations recorded from the real Go sort.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, TypeVar

T = TypeVar("T")
Less = Callable[[Any, Any], bool]

MAX_INSERTION = 12  # pdqsort insertion-sorts ranges up to this length
SHORTEST_NINTHER = 50  # ranges this long choose their pivot by Tukey's ninther
MAX_SWAPS = 4 * 3  # choosePivot's swap count when the sampled elements were all decreasing
SHORTEST_SHIFTING = 50  # partialInsertionSort shifts elements only in ranges this long
MAX_STEPS = 5  # partialInsertionSort's out-of-order pairs before it gives up
UINT64 = (1 << 64) - 1
UNKNOWN, INCREASING, DECREASING = 0, 1, 2
MAX_REMEMBERED = 4096  # permutations kept by rank pattern
_PERMUTATIONS: dict[tuple[tuple[int, ...], bool], list[int]] = {}


def sort_slice(items: Iterable[T], less: Less) -> list[T]:
    """``items`` in the order ``sort.Slice(items, less)`` leaves them; ``less(a, b)`` as Go's, on the elements."""
    data = list(items)
    _Pdqsort(data, lambda i, j: less(data[i], data[j])).run(0, len(data), len(data).bit_length())
    return data


def sort_slice_by_key(items: Iterable[T], key: Callable[[T], Any], descending: bool = False,
                      equal_is_less: bool = False) -> list[T]:
    """sort.Slice with ``less(a, b) = key(a) < key(b)`` (``>`` when ``descending``); ``equal_is_less`` for
    comparators answering true on equal keys (``<=``, ``>=``)."""
    listed = list(items)
    if len(listed) <= MAX_INSERTION:
        # insertion sort: stable for a strict comparator; a non-strict one moves each element before its equals
        if equal_is_less:
            listed.reverse()
        return sorted(listed, key=key, reverse=descending)
    ranks = _dense_ranks([key(item) for item in listed], descending)
    if ranks is None:  # no ties: the sorted order is the only one
        return sorted(listed, key=key, reverse=descending)
    return [listed[index] for index in _permutation(ranks, equal_is_less)]


def _dense_ranks(keys: list, descending: bool) -> Optional[tuple[int, ...]]:
    """Each key's rank among the distinct keys (the comparisons only depend on these), or None without ties."""
    by_key = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = [0] * len(keys)
    rank = 0
    for position in range(1, len(by_key)):
        if keys[by_key[position - 1]] < keys[by_key[position]]:
            rank += 1
        ranks[by_key[position]] = rank
    if rank == len(keys) - 1:
        return None
    if descending:  # key(a) > key(b) is the ascending comparison of the reversed ranks
        return tuple(rank - value for value in ranks)
    return tuple(ranks)


def _permutation(ranks: tuple[int, ...], equal_is_less: bool) -> list[int]:
    """Where sort.Slice moves each index, for keys with these ranks; remembered, as nodes repeat the same patterns
    (most often: every pod of a node ties on the priority sort)."""
    cached = _PERMUTATIONS.get((ranks, equal_is_less))
    if cached is None:
        if len(_PERMUTATIONS) >= MAX_REMEMBERED:
            _PERMUTATIONS.clear()
        cached = list(range(len(ranks)))
        _Pdqsort(cached, _position_less(cached, ranks, equal_is_less)).run(0, len(ranks), len(ranks).bit_length())
        _PERMUTATIONS[(ranks, equal_is_less)] = cached
    return cached


def _position_less(data: list[int], ranks: tuple[int, ...], equal_is_less: bool) -> Callable[[int, int], bool]:
    """Go's ``less(i, j)`` on positions of ``data`` (indexes sorted by rank): one call per comparison."""
    if equal_is_less:
        return lambda i, j: ranks[data[i]] <= ranks[data[j]]
    return lambda i, j: ranks[data[i]] < ranks[data[j]]


class _Pdqsort:
    """pdqsort_func and its helpers over ``data`` (absolute indices, as Go's ``a``/``b``); ``lt(i, j)`` is Go's
    ``data.Less(i, j)``, on positions. The inner loops bind ``lt`` and ``data`` locally: they run for every sampled
    cycle's sorts."""

    def __init__(self, data: list, lt: Callable[[int, int], bool]) -> None:
        self.data = data
        self.lt = lt
        self.swaps = 0  # choosePivot's counter

    def swap(self, i: int, j: int) -> None:
        data = self.data
        data[i], data[j] = data[j], data[i]

    def run(self, a: int, b: int, limit: int) -> None:
        was_balanced = True  # whether the last partitioning was reasonably balanced
        was_partitioned = True  # whether the slice was already partitioned
        while True:
            length = b - a
            if length <= MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == DECREASING:
                self.data[a:b] = self.data[a:b][::-1]
                pivot = (b - 1) - (pivot - a)
                hint = INCREASING
            if was_balanced and was_partitioned and hint == INCREASING and self.partial_insertion_sort(a, b):
                return
            # Go tests a > 0 on the whole slice: the element before the range is the previous pivot
            if a > 0 and not self.lt(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            balance_threshold = length // 8
            if left < right:
                was_balanced = left >= balance_threshold
                self.run(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= balance_threshold
                self.run(mid + 1, b, limit)
                b = mid

    def insertion_sort(self, a: int, b: int) -> None:
        data, lt = self.data, self.lt
        for i in range(a + 1, b):
            j = i
            while j > a and lt(j, j - 1):
                data[j], data[j - 1] = data[j - 1], data[j]
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.lt(first + child, first + child + 1):
                child += 1
            if not self.lt(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        data, lt = self.data, self.lt
        data[a], data[pivot] = data[pivot], data[a]
        i, j = a + 1, b - 1
        while i <= j and lt(i, a):
            i += 1
        while i <= j and not lt(j, a):
            j -= 1
        if i > j:
            data[j], data[a] = data[a], data[j]
            return j, True
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
        while True:
            while i <= j and lt(i, a):
                i += 1
            while i <= j and not lt(j, a):
                j -= 1
            if i > j:
                break
            data[i], data[j] = data[j], data[i]
            i += 1
            j -= 1
        data[j], data[a] = data[a], data[j]
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        data, lt = self.data, self.lt
        data[a], data[pivot] = data[pivot], data[a]
        i, j = a + 1, b - 1
        while True:
            while i <= j and not lt(a, i):
                i += 1
            while i <= j and lt(a, j):
                j -= 1
            if i > j:
                return i
            data[i], data[j] = data[j], data[i]
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _step in range(MAX_STEPS):
            while i < b and not self.lt(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:  # shift the smaller one left (Go's loop runs down to index 1, not to a)
                for j in range(i - 1, 0, -1):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:  # shift the greater one right
                for j in range(i + 1, b):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length  # xorshift seeded with the length: the same scatter every time
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & UINT64
            state ^= state >> 7
            state ^= (state << 17) & UINT64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        self.swaps = 0
        length = b - a
        i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
        if length >= 8:
            if length >= SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1)
                j = self.median(j - 1, j, j + 1)
                k = self.median(k - 1, k, k + 1)
            j = self.median(i, j, k)
        if self.swaps == 0:
            return j, INCREASING
        if self.swaps == MAX_SWAPS:
            return j, DECREASING
        return j, UNKNOWN

    def median(self, a: int, b: int, c: int) -> int:
        a, b = self.order2(a, b)
        b, c = self.order2(b, c)
        a, b = self.order2(a, b)
        return b

    def order2(self, a: int, b: int) -> tuple[int, int]:
        if self.lt(b, a):
            self.swaps += 1
            return b, a
        return a, b
