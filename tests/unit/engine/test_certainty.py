"""certain, likely and possible: the 95% Wilson bound of a sampled frequency, and when a plan needs no evidence."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import certainty
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from builders import build_node, build_pod, policy, set_creation, set_rs_owner

NOW = "2026-11-22T12:00:00Z"

# The Wilson score interval at 95% (z = 1.959964) is the set of p the score test accepts: (k/n - p)² ≤ z² p(1-p)/n.
# These ends were found by bisection on that inequality, independently of the engine's closed form.
WILSON = {
    (10, 10): (0.7225, 1.0),
    (40, 40): (0.9124, 1.0),
    (39, 40): (0.8712, 0.9956),
    (1, 40): (0.0044, 0.1288),
    (20, 40): (0.3520, 0.6480),
    (0, 5): (0.0, 0.4345),
}


@pytest.mark.parametrize(("evicted", "cycles"), sorted(WILSON))
def test_wilson_interval_matches_the_published_formula(evicted: int, cycles: int) -> None:
    lower, upper = certainty.wilson_interval(evicted, cycles)
    assert (round(lower, 4), round(upper, 4)) == WILSON[(evicted, cycles)]


def test_every_cycle_is_certain_only_from_35_samples() -> None:
    assert certainty.samples_for_certain() == 35
    assert certainty.judge(34, 34, exact=False)["likelihood"] == "likely"
    assert certainty.judge(35, 35, exact=False)["likelihood"] == "certain"


def test_a_frequent_but_not_constant_eviction_is_certain_once_its_bound_clears_90_percent() -> None:
    assert certainty.judge(950, 1000, exact=False)["likelihood"] == "certain"  # lower bound 0.935
    assert certainty.judge(38, 40, exact=False)["likelihood"] == "likely"  # 95%, but lower bound 0.835


def test_words_split_at_half_the_cycles() -> None:
    assert certainty.judge(20, 40, exact=False)["likelihood"] == "likely"
    assert certainty.judge(19, 40, exact=False)["likelihood"] == "possible"


def test_an_exact_frequency_has_no_interval() -> None:
    judged = certainty.judge(3, 3, exact=True)
    assert judged == {"frequency": 1.0, "frequency_bounds": {"lower": 1.0, "upper": 1.0}, "likelihood": "certain",
                      "certain": True}


# --- through the planner ---

def aged_pods(count: int) -> list[dict]:
    """``count`` pods on two nodes, created a month apart, all older than a day."""
    objects = [build_node("n1", 4000, 10**9, 20), build_node("n2", 4000, 10**9, 20)]
    for index in range(count):
        pod = build_pod(f"old-{index}", 100, 0, f"n{index % 2 + 1}",
                        lambda p, i=index: set_rs_owner(p, f"rs{i}", f"rs{i}-uid"))
        set_creation(pod, f"2026-0{index + 1}-01T00:00:00Z")
        objects.append(pod)
    return objects


def lifetime_policy(**top_level: object) -> dict:
    return policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400}), **top_level)


def test_an_order_free_plan_is_certain_with_few_samples() -> None:
    """Every pod past its lifetime goes in any order: 3 samples are as good as 1,000."""
    plan = compute_plan(aged_pods(3), lifetime_policy(), NOW, samples=3)
    assert [(e["name"], e["likelihood"], e["frequency_bounds"]["lower"]) for e in plan["evictions"]] == [
        ("old-0", "certain", 1.0), ("old-1", "certain", 1.0), ("old-2", "certain", 1.0)]
    confidence = plan["sampling"]["confidence"]
    assert confidence["order_free"] is True and confidence["samples_for_certain"] == 1
    assert (plan["sampling"]["certain"], plan["sampling"]["likely"], plan["sampling"]["possible"]) == (3, 0, 0)


def test_a_cap_makes_the_same_plan_need_evidence() -> None:
    """A total cap of 2 refuses the third pod: which pods the cap leaves depends on the order in general, so 10
    cycles that all evict the two oldest only make them likely (lower bound 72%)."""
    plan = compute_plan(aged_pods(3), lifetime_policy(maxNoOfPodsToEvictTotal=2), NOW, samples=10)
    assert [(e["name"], e["frequency"], e["likelihood"]) for e in plan["evictions"]] == [
        ("old-0", 1.0, "likely"), ("old-1", 1.0, "likely")]
    assert plan["evictions"][0]["frequency_bounds"] == {"lower": 0.7225, "upper": 1.0}
    assert plan["evictions"][0]["certain"] is False
    assert (plan["sampling"]["certain"], plan["sampling"]["likely"], plan["sampling"]["possible"]) == (0, 2, 2)
    assert plan["sampling"]["confidence"] == {"method": "wilson", "level": 0.95, "certain_from": 0.9,
                                              "likely_from": 0.5, "samples_for_certain": 35, "order_free": False}


@pytest.mark.parametrize("evictor_args", [{"minReplicas": 2}, {"nodeFit": True}])
def test_evictor_checks_that_read_the_cycles_evictions_need_evidence(evictor_args: dict) -> None:
    document = policy(("PodLifeTime", "deschedule", {"maxPodLifeTimeSeconds": 86400}), evictor_args=evictor_args)
    plan = compute_plan(aged_pods(2), document, NOW, samples=5)
    assert plan["sampling"]["confidence"]["order_free"] is False


def test_a_balance_plugin_needs_evidence() -> None:
    plan = compute_plan(aged_pods(2), policy(("RemoveDuplicates", "balance", {})), NOW, samples=5)
    assert plan["sampling"]["confidence"]["order_free"] is False
