"""Reports of a plan that read actual utilization: requested and actual side by side, thresholds on the actual
scale, VMs to live-migrate, soft taints; the fleet summary counts the VMs."""

import sys
from pathlib import Path

from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import (
    render_fleet_markdown,
    summarize_fleet,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import render_html, render_markdown
from ansible_collections.descheduler.fleet.plugins.module_utils.report.usage_report import read_actual

sys.path.insert(0, str(Path(__file__).parent / "engine"))
from test_kubevirt_profile import cluster, plan_of  # noqa: E402


def kubevirt_plan() -> dict:
    return plan_of(cluster({"w1": 3, "w2": 1, "w3": 1, "w4": 1}), {"w1": 0.9, "w2": 0.5, "w3": 0.3, "w4": 0.2})


def test_nodes_show_actual_next_to_requested():
    view = read_actual(kubevirt_plan())
    reading = view.readings[0]
    assert reading.mode == "Prometheus"
    first = reading.nodes[0]
    assert first.name == "w1" and first.actual == {"MetricResource": 90.0}
    # three 1-CPU VMs on 16 CPUs: 18.75% requested, far from the 90% the query reports
    assert first.requested["cpu"] == 18.75
    assert first.node_class == "overutilized" and first.vms == 2
    assert first.taints == ["appropriate", "overutilized"]
    assert [vm for vm, _pod, _node in view.vms] == ["w1-vm0", "w1-vm1"]


def test_markdown_section():
    text = render_markdown(kubevirt_plan())
    assert "## Actual utilization" in text
    assert "Thresholds (MetricResource): under ≤ 47.5%, over > 57.5% (average 47.5%)" in text
    assert "| w1 | 90.0% | 18.8% |" in text
    assert "### VMs to live-migrate (2)" in text
    assert "does not apply them (not Automatic)" in text


def test_html_section():
    html = render_html(kubevirt_plan())
    assert 'id="actual"' in html and "VMs to live-migrate" in html and "w1-vm0" in html


def test_plan_without_metrics_has_no_section():
    plan = kubevirt_plan()
    plan["actual_utilization"] = None
    for entry in plan["evictions"]:
        entry.pop("vm")
    assert read_actual(plan) is None
    assert "Actual utilization" not in render_markdown(plan)


def test_fleet_summary_counts_vms_to_migrate():
    fleet = summarize_fleet([{"cluster": "virt", "ok": True, "plan": kubevirt_plan()},
                             {"cluster": "down", "ok": False, "error": "unreachable"}])
    assert fleet["vms_to_migrate_total"] == 2
    assert [row["vms_to_migrate"] for row in fleet["clusters"]] == [2, None]
    assert "2 of them are VMs that will live-migrate" in render_fleet_markdown(fleet)
