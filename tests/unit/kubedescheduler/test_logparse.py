"""The descheduler log parser on lines in the operand's real klog text format.

Formats: sigs.k8s.io/descheduler pkg/descheduler/evictions/evictions.go (EvictPod: InfoS "Evicted pod in dry run
mode"/"Evicted pod" with pod, reason, strategy, node, profile; ErrorS "Error evicting pod" with limit[, node]),
descheduler.go ("Number of evictions/requests" totalEvicted evictionRequests; "Skipping descheduling cycle"), klog
text output: `<severity><MMDD> <hh:mm:ss.uuuuuu> <thread> <file>:<line>] "<msg>" key="value" key=int`.
"""

from __future__ import annotations

from pathlib import Path

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import (
    parse_descheduler_log,
    parse_klog_line,
)

DRY_RUN_LINE = ('I0627 16:15:45.123456       1 evictions.go:607] "Evicted pod in dry run mode" pod="ns1/web-5d9c7" '
                'reason="" strategy="PodLifeTime" node="worker-1" profile="LifecycleAndUtilization"')

# One Predictive cycle as the operand logs it at -v=2 (three simulated evictions, two limit errors).
CYCLE_1 = (Path(__file__).parent / "fixtures" / "descheduler_logs" / "predictive_cycle.log").read_text()
# The next interval: dry run restored the pods, so the same three evictions are reported again.
CYCLE_2 = CYCLE_1.replace("I0627 16:15:4", "I0627 17:15:4").replace("E0627 16:15:4", "E0627 17:15:4")


def test_one_dry_run_line_in_the_operator_format() -> None:
    record = parse_klog_line(DRY_RUN_LINE)
    assert record is not None
    assert record.severity == "I"
    assert record.timestamp == "0627 16:15:45.123456"
    assert record.source == "evictions.go:607"
    assert record.message == "Evicted pod in dry run mode"
    assert record.values == {"pod": "ns1/web-5d9c7", "reason": "", "strategy": "PodLifeTime", "node": "worker-1",
                             "profile": "LifecycleAndUtilization"}


def test_the_brief_example_line_is_one_predictive_eviction() -> None:
    parsed = parse_descheduler_log(DRY_RUN_LINE)
    assert parsed["evictions"] == [{
        "pod": "ns1/web-5d9c7", "namespace": "ns1", "name": "web-5d9c7", "strategy": "PodLifeTime",
        "profile": "LifecycleAndUtilization", "node": "worker-1", "reason": "", "dry_run": True,
        "first_seen": "0627 16:15:45.123456", "last_seen": "0627 16:15:45.123456", "times_reported": 1,
        "cycles_seen": 1, "cycle_indices": [1],
    }]
    assert parsed["cycle_in_progress"] is True
    assert parsed["cycles_completed"] == 0


def test_evictions_repeated_every_cycle_are_counted_once() -> None:
    parsed = parse_descheduler_log(CYCLE_1 + CYCLE_2)
    assert [e["pod"] for e in parsed["evictions"]] == ["ns1/web-5d9c7", "shop/api-6c4d-9kq2w",
                                                       "shop/cart-7f8b9-x2x4q"]
    assert all(e["times_reported"] == 2 and e["cycles_seen"] == 2 and e["cycle_indices"] == [1, 2]
               for e in parsed["evictions"])
    web = parsed["evictions"][0]
    assert (web["first_seen"], web["last_seen"]) == ("0627 16:15:45.123456", "0627 17:15:45.123456")
    assert parsed["counts"] == {
        "total": 3,
        "pods": 3,
        "by_strategy": {"PodLifeTime": 1, "RemovePodsHavingTooManyRestarts": 1, "LowNodeUtilization": 1},
        "by_profile": {"LifecycleAndUtilization": 3},
        "by_namespace": {"ns1": 1, "shop": 2},
        "by_node": {"worker-1": 2, "worker-2": 1},
        "dry_run": 3,
        "real": 0,
    }


def test_cycle_totals_and_limit_errors() -> None:
    parsed = parse_descheduler_log(CYCLE_1 + CYCLE_2)
    assert parsed["cycles_completed"] == 2
    assert parsed["cycle_in_progress"] is False
    assert parsed["cycles"][0] == {"index": 1, "time": "0627 16:15:45.623456", "total_evicted": 3,
                                   "eviction_requests": 0, "evictions_reported": 3, "unique_evictions": 3}
    assert parsed["cycles"][1]["index"] == 2
    assert parsed["limit_errors_by_kind"] == {"node": 2, "total": 2}
    assert parsed["limit_errors"][0] == {"time": "0627 16:15:45.423456",
                                         "error": "maximum number of evicted pods per node reached", "cycle": 1,
                                         "pod": None, "node": "worker-1", "namespace": None, "limit": "node",
                                         "value": 2}
    assert parsed["limit_errors"][1]["limit"] == "total"
    assert parsed["limit_errors"][1]["value"] == 3


def test_lines_before_4_17_have_no_profile_key() -> None:
    line = ('I0312 08:00:01.000100       1 evictions.go:163] "Evicted pod in dry run mode" pod="batch/report-1" '
            'reason="" strategy="PodLifeTime" node="worker-3"')
    parsed = parse_descheduler_log(line)
    assert parsed["evictions"][0]["profile"] is None
    assert parsed["counts"]["by_profile"] == {"(not logged)": 1}
    assert parsed["profile_key_logged"] is False


def test_automatic_mode_lines_are_real_evictions() -> None:
    line = ('I0627 16:15:45.123456       1 evictions.go:609] "Evicted pod" pod="shop/api-6c4d-9kq2w" reason="" '
            'strategy="RemoveDuplicates" node="worker-2" profile="TopologyAndDuplicates"')
    parsed = parse_descheduler_log(line)
    assert parsed["evictions"][0]["dry_run"] is False
    assert parsed["counts"]["real"] == 1


def test_same_pod_by_two_strategies_is_two_evictions() -> None:
    text = "\n".join([
        DRY_RUN_LINE,
        DRY_RUN_LINE.replace('strategy="PodLifeTime"', 'strategy="RemovePodsHavingTooManyRestarts"'),
    ])
    parsed = parse_descheduler_log(text)
    assert parsed["counts"]["total"] == 2
    assert parsed["counts"]["pods"] == 1


def test_quoted_values_with_escapes_and_spaces() -> None:
    line = ('I0627 16:15:45.123456       1 evictions.go:607] "Evicted pod in dry run mode" pod="ns1/web-1" '
            'reason="node \\"worker-1\\" is\\tover target" strategy="LowNodeUtilization" node="worker-1" '
            'profile="LifecycleAndUtilization"')
    record = parse_klog_line(line)
    assert record is not None
    assert record.values["reason"] == 'node "worker-1" is\tover target'
    assert record.values["strategy"] == "LowNodeUtilization"


def test_kubectl_timestamps_prefix_is_accepted() -> None:
    record = parse_klog_line("2026-06-27T16:15:45.123456789Z " + DRY_RUN_LINE)
    assert record is not None and record.values["pod"] == "ns1/web-5d9c7"


def test_other_lines_are_ignored() -> None:
    text = "\n".join([
        "I0627 16:15:40.000001       1 descheduler.go:188] Setting up the pod evictor",  # printf style
        "W0627 16:15:40.000002       1 client_config.go:618] Neither --kubeconfig nor --master was specified.",
        "garbage",
        "",
        'I0627 16:15:45.000000       1 evictions.go:607] "Evicted pod in dry run mode" pod="unterminated',
        'I0627 16:15:46.000000       1 lownodeutilization.go:201] "Number of underutilized nodes" totalNumber=1',
    ])
    parsed = parse_descheduler_log(text)
    assert parsed["evictions"] == []
    assert parsed["lines_read"] == 6
    assert parsed["records_read"] == 1


def test_skipped_cycles_and_other_eviction_errors() -> None:
    text = "\n".join([
        'I0627 16:15:45.000000       1 descheduler.go:281] "Skipping descheduling cycle: requires >=2 nodes" found=1',
        'E0627 16:16:45.000000       1 evictions.go:580] "Error evicting pod" err="pods \\"web-1\\" is forbidden" '
        'pod="shop/web-1" reason=""',
    ])
    parsed = parse_descheduler_log(text)
    assert parsed["skipped_cycles"] == [{"time": "0627 16:15:45.000000", "nodes_found": 1}]
    assert parsed["eviction_errors"][0]["pod"] == "shop/web-1"
    assert parsed["eviction_errors"][0]["error"] == 'pods "web-1" is forbidden'
    assert parsed["limit_errors"] == []
