"""The placement section of the plan reports: verdict, each replacement's node and the three utilization states."""

from __future__ import annotations

import copy

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import PlacementRequest
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    render_html,
    render_markdown,
)
from test_placement import NOW, TAINT, TAINTS, app_pod, worker


def _plan(placement: bool) -> dict:
    objects = [worker("n1", taints=[TAINT]), worker("n2"), worker("n3", cpu="1"), app_pod("victim", "n1", cpu="2"),
               app_pod("stuck", "n1", cpu="3")]
    return compute_plan(copy.deepcopy(objects), TAINTS, NOW, placement=PlacementRequest() if placement else None)


def test_markdown_shows_where_pods_land_and_the_three_states() -> None:
    text = render_markdown(_plan(True))
    assert "## Where the evicted pods land" in text
    # eviction order: stuck (3 cpu) takes n2, then victim (2 cpu) fits nowhere
    assert "| default/stuck | n1 | n2 | no | n2 | placed | the only feasible node |" in text
    assert ("| default/victim | n1 | — | no |   | unplaced | 0/3 nodes are available: "
            "1 node(s) had untolerated taint(s), 2 Insufficient cpu. |") in text
    assert "| n2 | 0% → 0% → 75% | 0% → 0% → 6.2% |" in text
    assert "1 cannot be placed" in text


def test_html_draws_three_bars_per_resource() -> None:
    html = render_html(_plan(True))
    assert 'id="placement"' in html
    for kind in ("before", "after", "after_placement"):
        assert f'data-kind="{kind}"' in html
    assert "back to the same node" in html


def test_no_placement_section_without_the_option() -> None:
    assert "Where the evicted pods land" not in render_markdown(_plan(False))
    assert 'id="placement"' not in render_html(_plan(False))
