"""The health gates polled during a soak, each answering "breached, because ..." or nothing.

- operand: the descheduler runs (its Deployment rolled out, not scaled to 0) and the operator reports no Degraded
  condition;
- workloads: no PodDisruptionBudget has fewer healthy pods than it wants, and no Deployment or StatefulSet fewer
  ready replicas than desired, by more than ``workload_tolerance`` pods beyond what it already lacked before the
  change (a workload broken before the rollout is not blamed on it);
- eviction storm: the evictions the operand logged in any one minute (klog ``"Evicted pod"`` lines, dry-run ones
  excluded: Predictive mode evicts nothing) over ``max_evictions_per_minute``;
- expected evictions: the evictions logged since the change within what the cluster's plan predicted
  (rollout/expected_evictions.py).

The pure parts (shortfalls, breaches, the peak per minute) take plain objects; the readers list them from a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_text, list_raw, resource_path
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.logparse import (
    EVICTION,
    parse_klog_line,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    OPERAND_CONTAINER,
    OPERAND_LABEL_SELECTOR,
    OPERATOR_NAMESPACE,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.rollout import (
    condition_text,
    operand_rolled_out,
    read_operand_state,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.expected_evictions import (
    check_plan_cluster,
    log_since,
    unexpected_eviction_breaches,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.options import GateOptions

OPERAND_LOG_LINES = 10000
_KLOG_TIME = "%m%d %H:%M:%S.%f"


# ---- workloads ----------------------------------------------------------------------------------------------------

def _name(obj: dict) -> str:
    metadata = obj.get("metadata") or {}
    return f"{obj.get('kind', '?')} {metadata.get('namespace')}/{metadata.get('name')}"


def workload_shortfalls(pdbs: Iterable[dict], workloads: Iterable[dict]) -> dict[str, int]:
    """Pods each protected or replicated workload lacks now: a PDB's desiredHealthy - currentHealthy (once its
    controller observed it), a Deployment's or StatefulSet's desired replicas - ready replicas."""
    shortfalls: dict[str, int] = {}
    for pdb in pdbs:
        status = pdb.get("status") or {}
        if "observedGeneration" in status:
            wanted, healthy = int(status.get("desiredHealthy", 0)), int(status.get("currentHealthy", 0))
            shortfalls[_name(pdb)] = max(0, wanted - healthy)
    for workload in workloads:
        wanted = (workload.get("spec") or {}).get("replicas")
        wanted = 1 if wanted is None else int(wanted)
        ready = int((workload.get("status") or {}).get("readyReplicas", 0) or 0)
        shortfalls[_name(workload)] = max(0, wanted - ready)
    return shortfalls


def workload_breaches(before: dict[str, int], now: dict[str, int], tolerance: int) -> list[str]:
    """A sentence per workload that lacks more than ``tolerance`` pods beyond what it lacked before."""
    breaches = []
    for name, lacking in sorted(now.items()):
        allowed = before.get(name, 0) + tolerance
        if lacking > allowed:
            breaches.append(f"{name} lacks {lacking} pod(s) (before the change {before.get(name, 0)}, "
                            f"tolerance {tolerance})")
    return breaches


def read_workload_shortfalls(api_client: Any) -> dict[str, int]:
    def every(api_version: str, plural: str, kind: str) -> list[dict]:
        return list_raw(api_client, resource_path(api_version, plural), kind=kind)[0]

    return workload_shortfalls(every("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget"),
                               every("apps/v1", "deployments", "Deployment")
                               + every("apps/v1", "statefulsets", "StatefulSet"))


# ---- eviction storm -----------------------------------------------------------------------------------------------

def peak_evictions_per_minute(lines: Iterable[str]) -> tuple[int, Optional[str]]:
    """The most real evictions logged within any 60 seconds, and the klog time the busiest minute starts at (klog
    prints no year: a log across New Year counts the two ends apart)."""
    times = []
    for line in lines:
        record = parse_klog_line(line)
        if record is not None and record.message == EVICTION:
            times.append((datetime.strptime(record.timestamp, _KLOG_TIME), record.timestamp))
    times.sort()
    peak, start, first = 0, None, 0
    for last in range(len(times)):
        while (times[last][0] - times[first][0]).total_seconds() >= 60:
            first += 1
        if last - first + 1 > peak:
            peak, start = last - first + 1, times[first][1]
    return peak, start


def _running(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")


def read_operand_log(api_client: Any, since: Optional[str] = None) -> list[str]:
    """The log lines of every running operand pod (those logged from ``since``, an RFC 3339 time, when given). Best
    effort, pod by pod: a pod going away or whose kubelet does not answer gives no lines (the operand gate says
    whether the descheduler runs), never a breach by itself."""
    pods = list_raw(api_client, resource_path("v1", "pods", OPERATOR_NAMESPACE), label_selector=OPERAND_LABEL_SELECTOR,
                    kind="Pod")[0]
    lines: list[str] = []
    for pod in filter(_running, pods):
        path = resource_path("v1", "pods", OPERATOR_NAMESPACE, pod["metadata"]["name"], "log")
        query: list[tuple[str, Any]] = [("tailLines", OPERAND_LOG_LINES), ("container", OPERAND_CONTAINER)]
        if since:
            query.append(("sinceTime", since))
        try:
            lines += get_text(api_client, path, query=query, kind="Pod").splitlines()
        except ClusterApiError as error:
            if error.status == 0:  # the API server itself is unreachable: the gates cannot be read
                raise
    return lines


# ---- the operand --------------------------------------------------------------------------------------------------

def operand_breaches(api_client: Any) -> list[str]:
    """The KubeDescheduler's operand: rolled out and not Degraded (nothing to check when there is no
    KubeDescheduler: a rollout that removes it wants exactly that)."""
    state = read_operand_state(api_client)
    if state.kubedescheduler is None:
        return []
    breaches = [f"the operator reports {c.get('type')}: {condition_text(c)}" for c in state.degraded]
    if not operand_rolled_out(state.deployment):
        summary = state.summary()
        breaches.append(f"the descheduler is not available ({summary['ready_replicas']}/{summary['replicas']} "
                        "ready)" if state.deployment else "the descheduler Deployment does not exist")
    return breaches


# ---- all gates of one cluster -------------------------------------------------------------------------------------

@dataclass
class ClusterGates:
    """The gates of one cluster, with what its workloads lacked before the change (``take_baseline``). ``operand``
    says what is wrong with the thing the rollout changes (the Change's ``operand_breaches``); ``cluster`` is its
    name, which picks its plan for the expected evictions gate."""

    options: GateOptions
    operand: Callable[[Any], list[str]]
    baseline: dict[str, int] = field(default_factory=dict)
    cluster: str = ""
    log_since: Optional[str] = None  # the change's start: the operand's log lines read by the expected evictions gate
    operand_before: list = field(default_factory=list)  # what the operand gate found before the change

    @property
    def plan(self) -> Optional[dict]:
        return self.options.expected_evictions.plans.get(self.cluster)

    def take_baseline(self, api_client: Any) -> None:
        """Before the change: the plan is this cluster's (else a ClusterIdentityError, nothing changed yet)."""
        if self.plan is not None:
            check_plan_cluster(api_client, self.plan, self.cluster)
            self.log_since = log_since()
        if self.options.workloads:
            self.baseline = read_workload_shortfalls(api_client)
        if self.options.operand:
            self.operand_before = self.operand(api_client)

    def new_since_the_change(self, operand_breaches: list[str]) -> list[str]:
        """After a rollback: what the operand gate finds that it did not find before the change (a configuration put
        back as it was may be refused by the operator as it was then: not a failed rollback)."""
        return [breach for breach in operand_breaches if breach not in self.operand_before]

    def breaches(self, api_client: Any) -> list[str]:
        found: list[str] = []
        if self.options.operand:
            found += self.operand(api_client)
        if self.options.workloads:
            found += workload_breaches(self.baseline, read_workload_shortfalls(api_client),
                                       self.options.workload_tolerance)
        if self.options.max_evictions_per_minute:
            peak, start = peak_evictions_per_minute(read_operand_log(api_client))
            if peak > self.options.max_evictions_per_minute:
                found.append(f"eviction storm: the descheduler logged {peak} eviction(s) within a minute from "
                             f"{start} (at most {self.options.max_evictions_per_minute} allowed)")
        if self.plan is not None:
            found += unexpected_eviction_breaches(self.plan, read_operand_log(api_client, self.log_since),
                                                  self.options.expected_evictions)
        return found
