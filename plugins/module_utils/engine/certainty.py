"""How sure a sampled plan is of each eviction: the words certain, likely and possible, and their evidence.

A pod's frequency is the share of the sampled cycles (engine/sampling.py) that evict it: an estimate of how often
upstream evicts it on an unchanged cluster. ``k`` of ``n`` cycles is evidence, and how much depends on ``n``: 10 of 10
is compatible with a pod upstream evicts in 75% of its cycles. So each frequency carries its 95% Wilson score
interval, and the words follow from it (docs/choosing-a-policy.md):

- certain: the interval's lower end is at least ``CERTAIN_FROM`` (0.9). Evicted in every one of n cycles, that takes
  n ≥ 35 (``samples_for_certain``); fewer samples can never make an eviction certain by evidence;
- likely: not certain, and evicted in at least half of the cycles (``LIKELY_FROM``);
- possible: evicted in some cycle, less often than that.

Wilson rather than Clopper-Pearson: a closed form (no inverse incomplete beta function, no new dependency), and at the
edge that matters here (k = n) the two agree within one sample: the exact Clopper-Pearson bound needs n ≥ 36 for 0.9,
Wilson n ≥ 35, while the normal approximation (Wald) gives the meaningless interval [1, 1] for k = n.

When nothing in the cycle depends on an order upstream leaves open (engine/order_free.py), every cycle upstream can
run evicts the same pods as the deterministic one: frequencies are exactly 1 or 0 and certain needs no sample count.
"""

from __future__ import annotations

import math

CONFIDENCE = 0.95
Z = 1.959963984540054  # the standard normal quantile of 0.975: a two-sided 95% interval
CERTAIN_FROM = 0.9  # lower end of the interval from which an eviction is called certain
LIKELY_FROM = 0.5  # frequency from which an eviction that is not certain is called likely
METHOD = "wilson"
CERTAIN, LIKELY, POSSIBLE = "certain", "likely", "possible"


def wilson_interval(evicted: int, cycles: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a frequency of ``evicted`` in ``cycles`` (Wilson 1927)."""
    if cycles <= 0 or not 0 <= evicted <= cycles:
        raise ValueError(f"{evicted} evictions in {cycles} cycles")
    share = evicted / cycles
    z2 = Z * Z
    centre = share + z2 / (2 * cycles)
    margin = Z * math.sqrt(share * (1 - share) / cycles + z2 / (4 * cycles * cycles))
    scale = 1 + z2 / cycles
    # at k = 0 or k = n one end is exactly 0 or 1, which floating point misses by an ulp
    lower = 0.0 if evicted == 0 else (centre - margin) / scale
    upper = 1.0 if evicted == cycles else (centre + margin) / scale
    return lower, upper


def samples_for_certain() -> int:
    """The fewest cycles in which a pod evicted in every one is certain (35 for 0.9 at 95%)."""
    # lower end at k = n is n / (n + z²): at least CERTAIN_FROM from n = z² · c / (1 - c)
    cycles = math.ceil(Z * Z * CERTAIN_FROM / (1 - CERTAIN_FROM))
    while wilson_interval(cycles, cycles)[0] < CERTAIN_FROM:  # the formula's rounding, checked
        cycles += 1
    return cycles


def judge(evicted: int, cycles: int, exact: bool) -> dict:
    """A pod's ``frequency``, ``frequency_bounds`` and ``likelihood`` word from ``evicted`` of ``cycles``;
    ``exact``: the cycle is order-free, so the frequency is the true one."""
    frequency = evicted / cycles
    lower, upper = (frequency, frequency) if exact else wilson_interval(evicted, cycles)
    if lower >= CERTAIN_FROM:
        word = CERTAIN
    elif frequency >= LIKELY_FROM:
        word = LIKELY
    else:
        word = POSSIBLE
    return {"frequency": round(frequency, 4), "frequency_bounds": {"lower": round(lower, 4), "upper": round(upper, 4)},
            "likelihood": word, "certain": word == CERTAIN}


def describe(exact: bool) -> dict:
    """The plan's ``sampling.confidence``: how the words were decided."""
    return {"method": METHOD, "level": CONFIDENCE, "certain_from": CERTAIN_FROM, "likely_from": LIKELY_FROM,
            "samples_for_certain": 1 if exact else samples_for_certain(), "order_free": exact}
