"""The "how sure" section of a plan report: certain, likely and possible evictions when the plan was sampled
(``samples``), each with its frequency and that frequency's 95% interval (engine/certainty.py).

Reads only the plan's ``evictions`` (with ``frequency``, ``frequency_bounds``, ``likelihood``) and ``sampling`` block
(docs/plan-format.md);
a plan without them (one cycle, or trimmed) renders nothing. Tolerates missing keys and odd types like plan_report.
The templates plan_sampling.html and .md lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import (
    as_count,
    as_dict,
    as_number,
    dicts_in,
)

INTRO = ("The descheduler walks nodes, pods and its internal maps in no fixed order, so on an unchanged cluster "
         "it may evict different pods from one cycle to the next. {samples} cycles were simulated (seed {seed}); a "
         "pod's frequency is the share of them that evict it.")
WORDS = ("Certain: the lower end of the frequency's 95% interval ({method}) is at least {certain_from}; likely: not "
         "certain, in at least {likely_from} of the cycles; possible: in fewer.")
EXACT = ("Nothing in this policy's cycle depends on an order upstream leaves open (its plugins decide per pod and no "
         "limit refused a pod): every cycle evicts the same pods, so the frequencies are exact.")
TOO_FEW = ("With fewer than {needed} samples no eviction can be certain: even one that every cycle makes could be "
           "one upstream makes less than {certain_from} of the time. Plan with samples: {needed} or more.")


@dataclass
class SampledPod:
    pod: str
    node: str
    plugin: str
    frequency: float
    planned: bool  # part of the deterministic plan (the evictions table)
    lower: Optional[float] = None  # the frequency's 95% interval; None in a plan from before it was recorded
    upper: Optional[float] = None
    likelihood: str = ""

    @property
    def certain(self) -> bool:
        return self.likelihood == "certain"


@dataclass
class SamplingView:
    samples: int
    seed: Any
    per_cycle: dict
    by_plugin: list[tuple[str, dict]]
    certain: list[SampledPod]
    possible: list[SampledPod]
    confidence: dict


def read_sampling(plan: Any) -> Optional[SamplingView]:
    block = plan.get("sampling") if isinstance(plan, dict) else None
    if not isinstance(block, dict):
        return None
    pods = [_pod(e, True) for e in dicts_in(plan.get("evictions"))]
    pods += [_pod(e, False) for e in dicts_in(block.get("other_possible_evictions"))]
    pods = [p for p in pods if p is not None]
    by_plugin = block.get("by_plugin") if isinstance(block.get("by_plugin"), dict) else {}
    return SamplingView(
        samples=as_count(block.get("samples")),
        seed=block.get("seed"),
        per_cycle=_spread(block.get("evictions_per_cycle")),
        by_plugin=[(str(name), _spread(value)) for name, value in by_plugin.items()],
        certain=[p for p in pods if p.certain],
        possible=sorted((p for p in pods if not p.certain), key=lambda p: (-p.frequency, p.pod)),
        confidence=as_dict(block.get("confidence")),
    )


def _spread(value: Any) -> dict:
    value = value if isinstance(value, dict) else {}
    return {key: value.get(key, "—") for key in ("min", "max", "mean")}


def _pod(item: dict, planned: bool) -> Optional[SampledPod]:
    frequency = item.get("frequency")
    if isinstance(frequency, bool) or not isinstance(frequency, (int, float)):
        return None
    namespace = str(item.get("namespace") or "")
    pod = f"{namespace}/{item.get('name', '')}" if namespace else str(item.get("name", ""))
    profile = item.get("profile")
    plugin = f"{profile}/{item.get('plugin', '')}" if profile else str(item.get("plugin") or "")
    bounds = as_dict(item.get("frequency_bounds"))
    word = item.get("likelihood")
    if word not in ("certain", "likely", "possible"):  # a plan from before the words: certain meant every cycle
        word = "certain" if frequency >= 1.0 else "possible"
    return SampledPod(pod, str(item.get("node") or ""), plugin, float(frequency), planned,
                      as_number(bounds.get("lower")), as_number(bounds.get("upper")), word)


def share(frequency: float) -> str:
    return f"{frequency * 100:.0f}%"


def _range(spread: dict) -> str:
    return f"{spread['min']}–{spread['max']} (mean {spread['mean']})"


def interval_text(pod: SampledPod) -> str:
    if pod.lower is None or pod.upper is None:
        return "—"
    if pod.lower == pod.upper:
        return "exact"
    return f"{share(pod.lower)}–{share(pod.upper)}"


def _possible_rows(view: SamplingView) -> list[tuple]:
    return [(p.pod, p.node, p.plugin, p.likelihood, share(p.frequency), interval_text(p),
             "yes" if p.planned else "no") for p in view.possible]


POSSIBLE_HEADERS = ("Pod", "Node", "Plugin", "Likelihood", "Cycles evicting it", "95% interval", "In this plan")
CERTAIN_HEADERS = ("Pod", "Node", "Plugin", "Cycles evicting it", "95% interval")


def _notes(view: SamplingView) -> list[str]:
    """How the words were decided (none for a plan from before they were recorded)."""
    confidence = view.confidence
    if not confidence:
        return []
    if confidence.get("order_free"):
        return [EXACT]
    notes = [WORDS.format(method=str(confidence.get("method", "wilson")).capitalize() + " score interval",
                          certain_from=share(as_number(confidence.get("certain_from")) or 0.0),
                          likely_from=share(as_number(confidence.get("likely_from")) or 0.0))]
    needed = as_count(confidence.get("samples_for_certain"))
    if view.samples < needed:
        notes.append(TOO_FEW.format(needed=needed, certain_from=share(as_number(confidence.get("certain_from")) or 0)))
    return notes


def section(plan: Any) -> Optional[dict[str, Any]]:
    """What the sampling templates show, or None for a plan of one cycle."""
    view = read_sampling(plan)
    if view is None:
        return None
    return {
        "samples": view.samples, "intro": INTRO.format(samples=view.samples, seed=view.seed), "notes": _notes(view),
        "certain": view.certain, "possible": view.possible, "per_cycle_text": _range(view.per_cycle),
        "likely": [p for p in view.possible if p.likelihood == "likely"],
        "plugin_ranges": [(name, _range(spread)) for name, spread in view.by_plugin],
        "plugin_rows": [(n, s["min"], s["max"], s["mean"]) for n, s in view.by_plugin],
        "certain_headers": CERTAIN_HEADERS,
        "certain_rows": [(p.pod, p.node, p.plugin, share(p.frequency), interval_text(p)) for p in view.certain],
        "possible_headers": POSSIBLE_HEADERS, "possible_rows": _possible_rows(view),
    }
