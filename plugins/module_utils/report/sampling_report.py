"""The "how sure" section of a plan report: certain vs possible evictions when the plan was sampled (``samples``).

Reads only the plan's ``evictions`` (with ``frequency``/``certain``) and ``sampling`` block (docs/plan-format.md);
a plan without them (one cycle, or trimmed) renders nothing. Tolerates missing keys and odd types like plan_report.
The templates plan_sampling.html and .md lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.report.readers import as_count, dicts_in

INTRO = ("The descheduler walks nodes, pods and its internal maps in no fixed order, so on an unchanged cluster "
         "it may evict different pods from one cycle to the next. {samples} cycles were simulated (seed {seed}): "
         "a certain eviction happened in every one, a possible eviction in some.")


@dataclass
class SampledPod:
    pod: str
    node: str
    plugin: str
    frequency: float
    planned: bool  # part of the deterministic plan (the evictions table)

    @property
    def certain(self) -> bool:
        return self.frequency >= 1.0


@dataclass
class SamplingView:
    samples: int
    seed: Any
    per_cycle: dict
    by_plugin: list[tuple[str, dict]]
    certain: list[SampledPod]
    possible: list[SampledPod]


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
    return SampledPod(pod, str(item.get("node") or ""), plugin, float(frequency), planned)


def share(frequency: float) -> str:
    return f"{frequency * 100:.0f}%"


def _range(spread: dict) -> str:
    return f"{spread['min']}–{spread['max']} (mean {spread['mean']})"


def _possible_rows(view: SamplingView) -> list[tuple]:
    return [(p.pod, p.node, p.plugin, share(p.frequency), "yes" if p.planned else "no") for p in view.possible]


POSSIBLE_HEADERS = ("Pod", "Node", "Plugin", "Cycles evicting it", "In this plan")


def section(plan: Any) -> Optional[dict[str, Any]]:
    """What the sampling templates show, or None for a plan of one cycle."""
    view = read_sampling(plan)
    if view is None:
        return None
    return {
        "samples": view.samples, "intro": INTRO.format(samples=view.samples, seed=view.seed),
        "certain": view.certain, "possible": view.possible, "per_cycle_text": _range(view.per_cycle),
        "plugin_ranges": [(name, _range(spread)) for name, spread in view.by_plugin],
        "plugin_rows": [(n, s["min"], s["max"], s["mean"]) for n, s in view.by_plugin],
        "certain_rows": [(p.pod, p.node, p.plugin) for p in view.certain],
        "possible_headers": POSSIBLE_HEADERS, "possible_rows": _possible_rows(view),
    }
