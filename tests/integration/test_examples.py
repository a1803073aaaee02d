"""Every task of every module's EXAMPLES block runs (#47): users start from them, so a broken example fails here,
under its own test id `<module>:<task name>`.

Each example runs as written by a real ansible-playbook on the `kube` fixture, with only its connection details and
absolute paths changed (examples_support.py says how), after the earlier tasks of its block it depends on. What an
example assumes a user already has comes from a precondition below, made as a user would make it: the cluster's
workloads, the Kube Descheduler Operator (stand-in) with its KubeDescheduler, the OLM stand-in serving the operator's
catalog, the files it names (a snapshot taken with kubectl is any list of objects: the collection's own example
snapshots are copied), the variables it reads. The examples that cannot run here are listed in `CANNOT_RUN`, each
with the reason, and skipped under their id.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from evict_helpers import bare_pod, create, namespace_object, node, ready_replicas, replicaset
from examples_support import Example, all_examples, run_example
from operator_support import descheduler_operator, operand_started, predictive_log
from playbook import REPO
from standins.descheduler_operator import OPERATOR_NAMESPACE
from standins.kubedescheduler_types import API_VERSION
from standins.olm import Olm
from standins.rest import Rest, path
from test_operator_volcano import SCHEDULER_CONF
from test_secondary_scheduler import secondary_scheduler_catalog

EXAMPLES = all_examples()
SNAPSHOTS = REPO / "examples" / "snapshots"
POLICIES = REPO / "examples" / "policies"
KD_SPEC = {
    "managementState": "Managed",
    "mode": "Predictive",
    "deschedulingIntervalSeconds": 3600,
    "profiles": ["AffinityAndTaints"],
}
# A v1beta1 spec of OKD 4.6, as its documentation showed it (tests/unit/kubedescheduler/test_legacy.py).
LEGACY_SPEC = {
    "apiVersion": "operator.openshift.io/v1beta1",
    "kind": "KubeDescheduler",
    "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE},
    "spec": {
        "deschedulingIntervalSeconds": 3600,
        "strategies": [
            {
                "name": "LowNodeUtilization",
                "params": [{"name": "CPUThreshold", "value": "10"}, {"name": "CPUTargetThreshold", "value": "50"}],
            },
            {"name": "RemoveDuplicates"},
            {"name": "RemovePodsHavingTooManyRestarts", "params": [{"name": "PodRestartThreshold", "value": "10"}]},
        ],
    },
}

PREDICTIVE_LOG = (REPO / "tests/unit/kubedescheduler/fixtures/descheduler_logs/predictive_cycle.log").read_text()
# Files an example reads that an earlier task of its block writes (prerequisites by register are found alone).
NEEDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("evict", "Execute it, two pods per node at most, resumable"): ("Preview the plan of a cluster",),
    (
        "evict",
        "Execute it from any of several control nodes, one run at a time per cluster, waiting up to 10 minutes",
    ): ("Preview the plan of a cluster",),
    ("operator", "Uninstall the operator and everything it left behind, the CRD too"): (
        "Install the operator from the stable channel and wait for it",
    ),
    ("kubedescheduler", "Remove the descheduler configuration"): ("Predictive descheduling, one cycle an hour",),
    ("secondary_scheduler", "Remove it"): ("Any profile, version pinned with manual approval",),
}

PROMETHEUS_ROUTE = (
    "reads Prometheus at the cluster's openshift-monitoring route, whose host "
    "(*.apps.<cluster domain>) does not resolve on the test machine"
)
CANNOT_RUN: dict[tuple[str, str], str] = {
    ("metrics_record", "Record metrics next to the snapshot of the cluster"): PROMETHEUS_ROUTE,
    ("metrics_record", "Plan offline from the recorded state"): "needs the files the example before it records "
    + "("
    + PROMETHEUS_ROUTE
    + ")",
    ("plan", "Record the cluster's metrics once, for load-aware plans that can be replayed offline"): PROMETHEUS_ROUTE,
    (
        "plan",
        "Replay a load-aware plan from the recorded metrics (the same plan on every run)",
    ): "needs the files the example before it records (" + PROMETHEUS_ROUTE + ")",
    (
        "secondary_scheduler",
        "Trimaran TargetLoadPacking with the cluster's Prometheus, checked first",
    ): "checks Prometheus at the in-cluster Service address prometheus-k8s.openshift-monitoring.svc, which does "
    "not resolve outside a cluster",
}
# Examples written as a task of a role ("As the first task of a role"): they run in a role of that name.
IN_ROLE = {"preflight": "dry_run"}
# Examples known to be wrong, fixed by another change of #47: strict, so the test fails once they run.
KNOWN_BROKEN: dict[tuple[str, str], str] = {}
# Examples whose preconditions this file does not build yet: skipped under their id until it does (#47 item 8).
NOT_YET = {
    "fleet_report": "needs a multi-host play whose hosts ran the dry_run or whatif role (or an S3 run store)",
    "rollout": "needs several clusters (fleet_clusters) each running the operator or OLM stand-in",
    "run_store": "needs an S3 endpoint (tests/integration/s3server.py) and an AWX job's variables",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The play's directory: the user's working directory, with the files the examples name."""
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


def copy_snapshot(source: Path, target: Path) -> None:
    """A snapshot file under the name an example uses (as JSON when the name says so)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".json" and source.suffix != ".json":
        target.write_text(json.dumps(yaml.safe_load(source.read_text())))
    else:
        shutil.copyfile(source, target)


def seed_workloads(kube: Any) -> None:
    """Three workers running two ReplicaSets in `shop`, and worker-1 then tainted NoSchedule: the AffinityAndTaints
    profile evicts what runs there, and the replacements can run elsewhere."""
    kube.load([node(f"worker-{index}") for index in range(1, 4)] + [namespace_object("shop")])
    create(kube, replicaset("shop", "web", 4), replicaset("shop", "api", 3))
    ready_replicas(kube, "shop", "web", 4)
    ready_replicas(kube, "shop", "api", 3)
    with kube.api_client() as client:
        Rest(client).change(
            path("v1", "nodes", name="worker-1"),
            lambda n: n["spec"].update(taints=[{"key": "maintenance", "value": "soon", "effect": "NoSchedule"}]),
        )


def named_pods(kube: Any) -> None:
    """The two pods the evict example names, owned by their ReplicaSet (it adopts them), so they are replaced."""
    kube.load([node("worker-1"), node("worker-2"), namespace_object("shop")])
    labels = {"app": "web-5d9c7"}
    create(
        kube,
        bare_pod("shop", "web-5d9c7-abcde", "worker-1", labels=labels),
        bare_pod("shop", "web-5d9c7-fghij", "worker-2", labels=labels),
    )
    create(kube, replicaset("shop", "web-5d9c7", 2))
    ready_replicas(kube, "shop", "web-5d9c7", 2)


@contextmanager
def operator_with_kubedescheduler(kube: Any) -> Iterator[Any]:
    """The operator (stand-in) running the KubeDescheduler a user wrote before, its operand having logged a
    Predictive cycle (in the real klog format)."""
    with descheduler_operator(kube) as operator, kube.api_client() as client:
        operator.set_operand_log(PREDICTIVE_LOG)
        Rest(client).create(
            path(API_VERSION, "kubedeschedulers", OPERATOR_NAMESPACE),
            {
                "apiVersion": API_VERSION,
                "kind": "KubeDescheduler",
                "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE},
                "spec": KD_SPEC,
            },
        )
        yield operator


def log_the_seeded_evictions(kube: Any, operator: Any) -> None:
    """The operand's Predictive log on the seeded cluster since its start: a first cycle on part of the pods (what a
    large cluster shows, #47), then one evicting every `shop` pod on the tainted worker-1, as AffinityAndTaints's
    RemovePodsViolatingNodeTaints does."""
    with kube.api_client() as client:
        pods = Rest(client).list(path("v1", "pods", "shop"))
    evictions = [{"namespace": "shop", "name": pod["metadata"]["name"], "plugin": "RemovePodsViolatingNodeTaints",
                  "node": "worker-1", "profile": "AffinityAndTaints"}
                 for pod in pods if pod["spec"].get("nodeName") == "worker-1"]
    assert evictions, "the seeded workload runs on worker-1"
    operator.set_operand_log(predictive_log([evictions[:1], evictions], operand_started(kube)))


@contextmanager
def olm_catalog(kube: Any) -> Iterator[None]:
    """OLM (stand-in) serving the operator's catalog, and a node for the operator's pod."""
    kube.load([node("worker-1")])
    with kube.api_client() as client:
        olm = Olm(client).install()
        try:
            yield
        finally:
            olm.uninstall()


def needs_operator(example: Example) -> bool:
    """Examples reading the KubeDescheduler the cluster runs (no policy of their own)."""
    live_plans = {
        "Preview what the operator's current config would evict",
        "Show the evictions",
        "A 150,000-pod cluster - the evictions only in the report, the counts in the result",
    }
    plans_first = example.module == "evict" and example.name != "Evict two pods by name"
    return (
        example.module in ("info", "predictive_gate")
        or plans_first
        or (example.module == "plan" and example.name in live_plans)
    )


def reads_the_cluster(example: Example) -> bool:
    """Whether the example, or an example before it in its block, plans a live cluster (no snapshot)."""
    tasks = example.block[: example.index + 1]
    return (
        any(
            not task.get(module, {}).get("snapshot")
            for task in tasks
            for module in ("descheduler.fleet.plan", "descheduler.fleet.whatif")
            if module in task
        )
        or example.module == "evict"
    )


@contextmanager
def precondition(example: Example, kube: Any, root: Path) -> Iterator[dict[str, Any]]:
    """What the example assumes the user has; yields the play's variables."""
    play_vars: dict[str, Any] = {}
    with ExitStack() as stack:
        if example.module in ("plan", "evict", "whatif", "predictive_gate") and reads_the_cluster(example):
            seed_workloads(kube)
        if example.module == "evict" and example.name == "Evict two pods by name":
            named_pods(kube)
        if example.module == "kubedescheduler":
            stack.enter_context(descheduler_operator(kube))  # the examples write the KubeDescheduler
        elif needs_operator(example):
            operator = stack.enter_context(operator_with_kubedescheduler(kube))
            if example.module == "predictive_gate" and reads_the_cluster(example):
                log_the_seeded_evictions(kube, operator)
        if example.module == "operator" and "flavor" not in example.task["descheduler.fleet.operator"]:
            stack.enter_context(olm_catalog(kube))
        if example.module == "secondary_scheduler":
            stack.enter_context(secondary_scheduler_catalog(kube))
        if example.module == "operator":
            kube.load([node("worker-1")])
            (root / "volcano-scheduler.conf").write_text(SCHEDULER_CONF)
        copy_snapshot(SNAPSHOTS / "openshift-prod.yaml", root / "snapshots" / "prod.yaml")
        copy_snapshot(SNAPSHOTS / "plain-k8s.yaml", root / "snapshots" / "dev.json")
        (root / "policies").mkdir()
        shutil.copyfile(POLICIES / "plain-k8s-policy.yaml", root / "policies" / "lnu.yaml")
        (root / "kubedescheduler-4.6.yaml").write_text(yaml.safe_dump(LEGACY_SPEC))
        if example.module == "access":  # the namespace its ServiceAccount goes to (the module requires it)
            kube.load([namespace_object("descheduler-fleet")])
        if example.module == "preflight":  # the host's variables, as an inventory sets them
            play_vars.update(descheduler_fleet_connection={"kubeconfig": str(kube.kubeconfig), "context": kube.context})
        yield play_vars


def marked(example: Example) -> Any:
    """The example's test: in one of two xdist groups (`--dist loadgroup`), so the examples share two workers'
    control planes and stand-ins' CRDs instead of spreading over every worker; strict xfail when KNOWN_BROKEN."""
    group = (
        "examples-1" if example.module in ("plan", "evict", "whatif", "preflight", "metrics_record") else "examples-2"
    )
    broken = KNOWN_BROKEN.get((example.module, example.name))
    marks = [pytest.mark.xdist_group(group)] + ([pytest.mark.xfail(strict=True, reason=broken)] if broken else [])
    return pytest.param(example, id=example.test_id, marks=marks)


@pytest.mark.parametrize("example", [marked(example) for example in EXAMPLES])
def test_example_runs(example: Example, kube: Any, root: Path) -> None:
    reason = CANNOT_RUN.get((example.module, example.name)) or NOT_YET.get(example.module)
    if reason:
        pytest.skip(reason)
    connection = {"kubeconfig": str(kube.kubeconfig), "context": kube.context}
    with precondition(example, kube, root) as play_vars:
        process, result = run_example(
            example, root, connection, needs=NEEDS, play_vars=play_vars, in_role=IN_ROLE.get(example.module)
        )
    output = process.stdout[-6000:] + process.stderr[-3000:]
    assert result is not None, f"the example was not reached: a task before it failed\n{output}"
    assert not result.get("failed"), f"{result.get('msg')}\n{output}"
    assert process.returncode == 0, output
