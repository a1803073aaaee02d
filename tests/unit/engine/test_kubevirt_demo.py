"""The example OpenShift Virtualization cluster (examples/snapshots/kubevirt.yaml) plans as the demo shows it, and
examples/kubevirt_cluster.py still writes exactly the committed files."""

import json
import sys
from pathlib import Path

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import run_plan

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
sys.path.insert(0, str(EXAMPLES))
import kubevirt_cluster  # noqa: E402


def demo_plan() -> dict:
    spec = yaml.safe_load((EXAMPLES / "policies" / "kubevirt-kubedescheduler.yaml").read_text())
    return run_plan({"snapshot": str(EXAMPLES / "snapshots" / "kubevirt.yaml"), "kubedescheduler": spec,
                     "now": "2026-11-22T12:00:00Z", "policy_source": "auto", "page_size": 500, "verify": "none",
                     "prometheus_result": str(EXAMPLES / "snapshots" / "kubevirt-prometheus.json")})


def test_demo_migrates_vms_off_the_pressured_workers():
    plan = demo_plan()
    assert plan["errors"] == [] and plan["warnings"] == []
    assert plan["summary"]["by_node"] == {"worker-0": 2, "worker-1": 2}  # 2 per node, 5 in total at most
    assert plan["summary"]["vms_to_migrate"] == 4
    # vm-01 (migrated 5 minutes ago) and vm-09 (migrating now) are the first candidates of their nodes: skipped
    assert {"vm-01", "vm-09"}.isdisjoint(e["vm"]["name"] for e in plan["evictions"])
    assert plan["cycle"]["nodes"] == [f"worker-{i}" for i in range(6)]  # masters lack kubevirt.io/schedulable
    taints = {name: len(wanted) for name, wanted in plan["soft_taints"]["nodes"].items()}
    assert taints == {"worker-0": 2, "worker-1": 2, "worker-2": 0, "worker-3": 0, "worker-4": 0, "worker-5": 0}


def test_generator_writes_the_committed_files(tmp_path: Path):
    out, answers = tmp_path / "kubevirt.yaml", tmp_path / "prometheus.json"
    assert kubevirt_cluster.main(["--out", str(out), "--prometheus-out", str(answers)]) == 0
    assert out.read_text() == (EXAMPLES / "snapshots" / "kubevirt.yaml").read_text()
    assert json.loads(answers.read_text()) == json.loads((EXAMPLES / "snapshots" / "kubevirt-prometheus.json")
                                                         .read_text())
