"""Which candidate the objective names: lowest spread under an eviction cap, fewest evictions reaching a spread, and
no candidate when none meets it (a skipped cycle never wins)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif.objective import Objective, choose


def figures_of(evictions: int, final_cpu: float, skipped: bool = False) -> dict[str, Any]:
    return {"evictions": evictions, "cycle_skipped": skipped,
            "spread": {"before": {"cpu": 30.0}, "after_evictions": {"cpu": final_cpu}, "after_placement": None}}


@pytest.mark.parametrize(("objective", "best"), [
    ({"type": "lowest_spread"}, "wide"),
    ({"type": "lowest_spread", "max_evictions": 10}, "narrow"),
    ({"type": "fewest_evictions", "target_spread": 15}, "narrow"),
    ({"type": "fewest_evictions", "target_spread": 1}, None),
])
def test_the_objective_names_the_best_candidate(objective: dict[str, Any], best: str | None) -> None:
    candidates = [{"name": "none", **figures_of(0, 30.0)}, {"name": "narrow", **figures_of(8, 14.0)},
                  {"name": "wide", **figures_of(40, 5.0)}, {"name": "skipped", **figures_of(0, 0.0, skipped=True)}]
    name, reason = choose(Objective.from_options(objective), candidates)
    assert name == best, reason
    assert (f"{name} (" in reason) if best else reason.startswith("no candidate meets the objective")
