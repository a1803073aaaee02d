#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: evict
short_description: Execute a reviewed eviction plan safely (PDB-aware, VM-aware, limited and resumable)
version_added: 0.1.0
description:
  - Evicts exactly the pods of a plan computed by M(descheduler.fleet.plan) (its result or its C(plan.json)), or of a
    list of pods, through the C(policy/v1) Eviction API, so PodDisruptionBudgets are always honoured.
  - "Before each eviction the pod is read again: a pod that is gone, was replaced (another UID), runs on another
    node than the plan saw, or is terminating is skipped with the reason (C(stale_*))."
  - A 429 (the PodDisruptionBudget forbids it now) is retried with exponential backoff until O(timeout), then
    reported as C(blocked_by_pdb); the pod is never forced. A 500 (several PDBs select the pod) is a hard failure for
    that pod. A 404 means the pod is already gone.
  - Caps per node, per namespace, per owner (workload) and in total count evictions that happened; at most
    O(max_in_flight) pods are disrupted at once, and at most O(max_unavailable) of a workload's replicas.
  - After an eviction, waits until the workload is back to its desired ready replicas and reports where the
    replacement landed (O(wait_for_replacements)).
  - KubeVirt virt-launcher pods are live-migrated - KubeVirt answers their eviction with a 429 "Eviction triggered
    evacuation" that means the migration started - and tracked until the VM runs on another node, within the
    migration concurrency limits. VMs whose eviction strategy would restart them are skipped unless
    O(allow_vm_restart).
  - Every request and outcome is written to O(journal) as it happens; a run given the same journal skips what is
    done and never evicts a pod twice, even after an interruption.
  - "In check mode each eviction is a server-side dry run (C(dryRun=All)): the API server answers per pod whether
    its budget allows it now, and nothing changes."
  - "Cancelling the playbook (SIGINT or SIGTERM to C(ansible-playbook), as an AWX job cancel does, or killing it) or
    sending SIGINT, SIGTERM or SIGHUP to the module process cancels the run: no eviction starts after that, requests
    under way get their answer, the journal records it, and the result has RV(stop_reason=cancelled). A rerun with
    the same journal resumes it."
  - "One run at a time: a run with a O(journal) holds an exclusive lock on C(<journal>.lock), and with O(lease) a
    C(coordination.k8s.io/v1) Lease on the cluster, so two control nodes cannot evict on one cluster at once. A
    second run fails at once naming the holder, or waits up to O(lock_timeout) seconds."
  - With O(report_dir), writes the result there as C(evict-result.json) and C(evict-result.md).
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.report
attributes:
  check_mode:
    support: full
    details: Every eviction is a server-side dry run that changes nothing. The journal is read but not written;
      report files, when asked for, are written.
  diff_mode:
    support: none
    details: Evictions have no diff.
options:
  plan:
    description:
      - The plan to execute, as returned by M(descheduler.fleet.plan) (C(evictions), C(now), C(cluster_identity),
        C(seal) and, when given, C(policy) are read).
      - Exactly one of O(plan), O(plan_file) and O(pods) is required.
      - "A plan is executed only as it was written: its C(seal) (docs/plan-format.md) is checked first, before the
        cluster is contacted, and a plan without a seal, or whose evictions, C(now), C(cluster_identity) or policy
        differ from what was sealed, is refused naming the first difference. To execute part of a plan, use
        O(select) or O(exclude)."
      - A plan that records no C(cluster_identity) is refused unless O(allow_plan_without_identity) and
        O(expected_cluster_uid) are set; a plan whose evictions carry no pod C(uid) is refused (give such pods as
        O(pods) to evict them by name on purpose).
      - "A plan whose C(now) is more than 120 seconds after the cluster's clock (the C(Date) of its API server, or
        the control node's clock when it sends none) is refused, naming both times."
    type: dict
  plan_file:
    description:
      - Path of the C(plan.json) written by M(descheduler.fleet.plan) (O(descheduler.fleet.plan#module:report_dir))
        or by the C(dry_run) role. Checked as O(plan) is.
    type: path
  plan_origin:
    description:
      - Where O(plan) was taken from (a file path, a run store key or URL), named in every refusal and in
        RV(input.source). The C(evict) role sets it. Without it the plan is named "the plan option".
    type: str
  select:
    description:
      - Execute only the plan's pods matching one of these C(namespace/name) patterns (shell wildcards, for
        example C(shop/web-*) or C(batch/*)); unset executes every planned pod. The plan's seal is checked on the
        whole plan; RV(input.selection) reports what was left out.
      - Each pattern must match a pod of the plan, or the task fails naming the closest planned pod.
    type: list
    elements: str
  exclude:
    description:
      - Leave out the plan's pods matching one of these C(namespace/name) patterns (shell wildcards), after
        O(select). Each pattern must match a pod of the plan.
    type: list
    elements: str
  allow_plan_without_identity:
    description:
      - Execute a plan that records no C(cluster_identity) (one of a snapshot without the C(kube-system)
        Namespace). Only together with O(expected_cluster_uid), which then pins the cluster the plan is executed
        on; without this option such a plan is refused.
    type: bool
    default: false
  pods:
    description:
      - Pods to evict, in order, instead of a plan.
    type: list
    elements: dict
    suboptions:
      namespace:
        description: Namespace of the pod.
        type: str
        required: true
      name:
        description: Name of the pod.
        type: str
        required: true
      uid:
        description: UID of the pod; when given, a pod of the same name with another UID is not evicted.
        type: str
      node:
        description: Node the pod is expected on; when given, a pod found elsewhere is not evicted.
        type: str
  max_plan_age:
    description:
      - Refuse a plan computed longer ago than this (its C(now)), as a Go duration (C(30m), C(2h)) or seconds.
    type: str
  max_per_node:
    description: At most this many evictions from one node in this run. Unset means no cap.
    type: int
  max_per_namespace:
    description: At most this many evictions in one namespace in this run. Unset means no cap.
    type: int
  max_per_owner:
    description: At most this many evictions of one owner (the pod's controller, such as a ReplicaSet) in this run.
    type: int
  max_total:
    description: At most this many evictions in this run. Unset means no cap.
    type: int
  max_in_flight:
    description:
      - At most this many pods between their first eviction request and their end (replaced, migrated or given up).
    type: int
    default: 5
  pause:
    description: Seconds to wait between two eviction requests (the first request of each pod; retries after a
      PodDisruptionBudget refusal follow O(retry_delay)). With a pause the requests go one at a time and the pause
      runs from the answer to the previous one, so the API server receives them at least this far apart.
    type: float
    default: 0
  max_unavailable:
    description:
      - At most this many replicas of one workload unavailable at once, as a count (C(1)) or a percentage of its
        desired replicas (C(25%), rounded down but never below 1). Before evicting more of a workload, the executor
        waits (up to O(timeout)) for its ready replicas to recover.
      - C(none) turns the check off (the PodDisruptionBudgets still apply).
    type: str
    default: 25%
  timeout:
    description:
      - Seconds a pod may wait for its workload to recover and be retried after 429 answers before it is reported
        as blocked.
    type: float
    default: 300
  retry_delay:
    description: First delay, in seconds, before retrying a 429; it doubles on each retry, up to 30 seconds.
    type: float
    default: 5
  poll_interval:
    description: Seconds between two reads while waiting for a replacement, a workload or a migration.
    type: float
    default: 2
  grace_period:
    description:
      - C(gracePeriodSeconds) of the eviction's delete options; unset uses each pod's own termination grace period.
    type: int
  failure_budget:
    description:
      - How many pods may fail (errors other than a PDB refusal) before the run stops. Pods already evicted are
        still followed to their end; pods not started are skipped; the task then fails.
    type: int
    default: 3
  journal:
    description:
      - Path of the journal (JSON lines, one fsync per record). Give the same path to resume an interrupted or
        cancelled run.
      - Without it nothing is recorded and an interrupted run cannot be resumed safely.
      - "While a run goes on it holds an exclusive lock on C(<journal>.lock) (pid, host, start time and playbook of
        the holder are written in it): another run with the same journal fails at once naming the holder, or waits
        (O(lock_timeout)). The kernel frees the lock when its holder exits, however it ends, so the lock of a killed
        run is taken over at once (RV(lock), key C(taken_over_from)). Check mode takes no lock."
    type: path
  lock_timeout:
    description:
      - Seconds to wait when another run holds the journal's lock or the O(lease). C(0) fails at once with a
        message naming the holder.
    type: float
    default: 0
  lease:
    description:
      - Hold a C(coordination.k8s.io/v1) Lease on the cluster while the run goes on, so that runs from different
        control nodes (or with different journals) cannot evict on the same cluster at once.
      - The Lease is free when it does not exist, has no holder, has expired (C(renewTime) plus
        C(leaseDurationSeconds) in the past; the control nodes' clocks must agree), or was written from this host
        by a process that no longer runs. Every write carries the C(resourceVersion) read, so of two runs taking it
        at once only one succeeds.
      - It is renewed every O(lease.duration)/4 seconds; when no renewal succeeded for O(lease.renew_deadline)
        seconds (or another run holds it), the run is cancelled (RV(stop_reason=lease_lost)) before the Lease could
        expire. It is released at the end. Check mode takes no Lease.
      - "RBAC: C(get), C(create) and C(update) on C(leases) in O(lease.namespace)."
    type: dict
    suboptions:
      namespace:
        description: Namespace of the Lease (it must exist).
        type: str
        required: true
      name:
        description: Name of the Lease.
        type: str
        default: descheduler-fleet-evict
      duration:
        description: C(leaseDurationSeconds) written into the Lease (at least 10).
        type: int
        default: 60
      renew_deadline:
        description:
          - Seconds without a successful renewal after which the run gives up the Lease and stops starting
            evictions; less than O(lease.duration). Defaults to two thirds of O(lease.duration).
        type: float
  wait_for_replacements:
    description: After each eviction, wait until the workload is back to its desired ready replicas.
    type: bool
    default: true
  replacement_timeout:
    description: Seconds to wait for a replacement; on timeout the pod is still C(evicted), with the replacement
      marked C(timeout).
    type: float
    default: 300
  kubevirt:
    description: KubeVirt live migrations.
    type: dict
    suboptions:
      max_migrations_per_cluster:
        description: At most this many live migrations started by this run at once (KubeVirt's default is 5).
        type: int
        default: 5
      max_migrations_per_node:
        description: At most this many outbound live migrations from one node at once (KubeVirt's default is 2).
        type: int
        default: 2
      migration_timeout:
        description: Seconds to follow one VM's migration (failed attempts are retried by KubeVirt meanwhile).
        type: float
        default: 900
  allow_vm_restart:
    description:
      - Evict VM pods whose effective eviction strategy is not a live migration (C(None), or C(LiveMigrateIfPossible)
        on a VM that is not live-migratable). Their VM is stopped or restarted.
    type: bool
    default: false
  expected_cluster_uid:
    description:
      - The UID of the C(kube-system) namespace of the cluster this run must act on (C(kubectl get namespace
        kube-system -o jsonpath='{.metadata.uid}')). When the connection reaches another cluster, the run fails
        before its first eviction, naming both.
      - Whatever this is set to, a plan made on another cluster (its RV(cluster_identity)) and a journal written
        on another cluster are refused the same way.
      - Required with O(allow_plan_without_identity).
    type: str
notes:
  - "Before the cluster is contacted, a plan's seal, its C(cluster_identity), its pods' UIDs and O(select)/O(exclude)
    are checked (docs/evict.md, Safety); a refusal names the plan by where it came from, the field, the value and
    the fix."
  - "Before the first eviction (in check mode too) the module reads the cluster's identity (an API server that
    cannot be reached or rejects the credentials fails the task there, with one error naming it), compares it with
    the plan's, the journal's and O(expected_cluster_uid), reads the API server's clock (the C(Date) of a
    C(GET /version)) to refuse a plan from the future, and asks the API server (SelfSubjectAccessReview)
    whether the user may create C(pods/eviction) in every namespace of the plan. Any of these failing fails the
    task with nothing evicted."
  - "RBAC: C(get) on the C(kube-system) namespace (the cluster's identity); C(create) on C(pods/eviction); C(get)
    on C(pods) and C(list) on C(pods) in the namespaces concerned;
    C(get) on C(replicasets), C(statefulsets), C(daemonsets); for KubeVirt C(get) on C(virtualmachineinstances),
    C(list) on C(virtualmachineinstancemigrations) and cluster-wide C(list) on C(kubevirts)."
  - A run can be long; use C(async)/C(poll) on the task when it may exceed the connection's timeouts.
  - The journal is keyed by pod UID. A pod recorded as requested without an outcome is read again on resume - gone
    or replaced means done - so it is never evicted a second time.
"""

EXAMPLES = r"""
- name: Preview the plan of a cluster
  descheduler.fleet.plan:
    kubeconfig: ~/.kube/prod.kubeconfig
    report_dir: /srv/reports/prod
  register: plan

- name: Check the plan against the PodDisruptionBudgets now (server-side dry run)
  descheduler.fleet.evict:
    kubeconfig: ~/.kube/prod.kubeconfig
    plan: "{{ plan }}"
  check_mode: true
  register: preview

- name: Execute it, two pods per node at most, resumable
  descheduler.fleet.evict:
    kubeconfig: ~/.kube/prod.kubeconfig
    plan_file: /srv/reports/prod/plan.json
    max_plan_age: 2h
    max_per_node: 2
    max_total: 20
    max_in_flight: 3
    journal: /srv/reports/prod/evict-journal.jsonl
    report_dir: /srv/reports/prod
  register: evicted

- name: Execute it from any of several control nodes, one run at a time per cluster, waiting up to 10 minutes
  descheduler.fleet.evict:
    kubeconfig: ~/.kube/prod.kubeconfig
    plan_file: /srv/reports/prod/plan.json
    journal: /srv/reports/prod/evict-journal.jsonl
    lease:
      namespace: kube-system
    lock_timeout: 600

- name: Evict two pods by name
  descheduler.fleet.evict:
    pods:
      - {namespace: shop, name: web-5d9c7-abcde}
      - {namespace: shop, name: web-5d9c7-fghij}
    wait_for_replacements: true
"""

RETURN = r"""
cluster_identity:
  description: The cluster the run acted on (or, in check mode, would have), read before anything else.
  returned: when the cluster was reached
  type: dict
  contains:
    uid:
      description: The UID of its C(kube-system) namespace.
      type: str
    server:
      description: The API server URL of the connection.
      type: str
  sample: {uid: 5c2f0d4e-8a1b-4b7e-9f3a-2d6c1e0b9a87, server: "https://api.prod-1.example.com:6443"}
changed:
  description: Whether a pod was evicted or a VM migration started by this run (in check mode, whether one would be).
  returned: always
  type: bool
pods:
  description: One entry per pod, in plan order.
  returned: always
  type: list
  elements: dict
  sample:
    - namespace: shop
      name: web-5d9c7-abcde
      uid: 0a1b2c3d
      node: worker-3
      owner: shop/ReplicaSet/web-5d9c7
      status: evicted
      reason_code: null
      reason: null
      error: null
      attempts: 2
      duration_seconds: 12.4
      replacement: {status: ready, pod: web-5d9c7-xyz12, node: worker-1, same_node: false, seconds: 9.8}
      migration: null
      vm: null
      resumed: false
counts:
  description: Pods by status (evicted, migrated, blocked_by_pdb, skipped, failed, would_evict, would_migrate), the
    total, and how many outcomes came from an earlier run's journal.
  returned: always
  type: dict
  sample: {evicted: 7, migrated: 2, blocked_by_pdb: 1, skipped: 2, failed: 0, would_evict: 0, would_migrate: 0,
           total: 12, resumed: 0}
skipped_by_reason:
  description: Skipped pods by reason code (stale_gone, stale_replaced, stale_moved, stale_terminating,
    limit_reached, owner_not_recovered, vm_not_migratable, vm_restart_not_allowed, vm_external, kubevirt_refused,
    already_done, pod_gone, run_stopped, cancelled, journal_inconsistent).
  returned: always
  type: dict
durations:
  description: Run seconds, and count/max/mean seconds of pod evictions, replacements and migrations.
  returned: always
  type: dict
placements:
  description: Where replacements and migrated VMs landed, how many on the same node again, and counts by node.
  returned: always
  type: dict
limits:
  description: The caps applied, which were reached (C(hit)), and the highest concurrency seen.
  returned: always
  type: dict
evicted_now:
  description: Pods evicted or migrated by this run.
  returned: always
  type: int
failures:
  description: Pods that failed.
  returned: always
  type: int
stopped:
  description: Whether the run stopped early - the failure budget was exceeded, the API server stopped answering,
    it was cancelled, or it lost its Lease (the task then fails). A run that did not stop but in which some pods
    failed and none was evicted fails too.
  returned: always
  type: bool
stop_reason:
  description: Why the run stopped early - C(failure_budget), C(unreachable) (at the first connection failure),
    C(cancelled) or C(lease_lost) - or C(null) when it did not.
  returned: always
  type: str
stop_message:
  description: The same, in a sentence.
  returned: always
  type: str
lock:
  description: The journal's lock - its path, this run's holder details, the seconds waited, and the holder of a
    dead run whose lock was taken over (C(taken_over_from)). C(null) without a journal and in check mode.
  returned: always
  type: dict
lease:
  description: The Lease held - namespace, name, identity, duration, renew deadline, seconds waited, the holder it
    was taken over from, and why it was lost. C(null) without O(lease) and in check mode.
  returned: always
  type: dict
journal:
  description: Journal path, this run's id, and how many runs wrote to the journal before.
  returned: always
  type: dict
input:
  description: Where the pods came from (C(source)), how many, the plan's time and age, the identity of the
    cluster the plan was made on (C(plan_cluster_identity); null for a pod list, or a plan that recorded none),
    the digest of its verified seal (C(plan_seal); null for a pod list) and the C(selection) (C(select),
    C(exclude), how many pods were C(planned) and C(executed), and the C(left_out) pods as namespace/name).
  returned: always
  type: dict
  contains:
    source:
      description: Where the plan came from (O(plan_origin), else the option it was given in), or the pod list.
      type: str
    plan_seal:
      description: The digest of the plan's verified seal; null for a pod list.
      type: str
    selection:
      description: >-
        O(select) and O(exclude) as given, how many pods were C(planned) and C(executed), and the C(left_out) pods
        as namespace/name.
      type: dict
report_files:
  description: Paths of the written reports.
  returned: when O(report_dir) is set
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    IDENTITY_ARG_SPEC,
    REPORT_ARG_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.result import nothing_but_failures
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.evict import run_evict

ARGUMENT_SPEC = argument_spec(
    CONNECTION_ARG_SPEC, IDENTITY_ARG_SPEC, REPORT_ARG_SPEC,
    plan=dict(type="dict"),
    plan_file=dict(type="path"),
    plan_origin=dict(type="str"),
    select=dict(type="list", elements="str"),
    exclude=dict(type="list", elements="str"),
    allow_plan_without_identity=dict(type="bool", default=False),
    pods=dict(type="list", elements="dict", options=dict(
        namespace=dict(type="str", required=True),
        name=dict(type="str", required=True),
        uid=dict(type="str"),
        node=dict(type="str"),
    )),
    max_plan_age=dict(type="str"),
    max_per_node=dict(type="int"),
    max_per_namespace=dict(type="int"),
    max_per_owner=dict(type="int"),
    max_total=dict(type="int"),
    max_in_flight=dict(type="int", default=5),
    pause=dict(type="float", default=0),
    max_unavailable=dict(type="str", default="25%"),
    timeout=dict(type="float", default=300),
    retry_delay=dict(type="float", default=5),
    poll_interval=dict(type="float", default=2),
    grace_period=dict(type="int"),
    failure_budget=dict(type="int", default=3),
    journal=dict(type="path"),
    wait_for_replacements=dict(type="bool", default=True),
    replacement_timeout=dict(type="float", default=300),
    kubevirt=dict(type="dict", options=dict(
        max_migrations_per_cluster=dict(type="int", default=5),
        max_migrations_per_node=dict(type="int", default=2),
        migration_timeout=dict(type="float", default=900),
    )),
    allow_vm_restart=dict(type="bool", default=False),
    lock_timeout=dict(type="float", default=0),
    lease=dict(type="dict", options=dict(
        namespace=dict(type="str", required=True),
        name=dict(type="str", default="descheduler-fleet-evict"),
        duration=dict(type="int", default=60),
        renew_deadline=dict(type="float"),
    )),
)


def main() -> None:
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("plan", "plan_file", "pods")],
        required_one_of=[("plan", "plan_file", "pods")],
        supports_check_mode=True,
    )
    result = run_and_report(module, run_evict, module.params, module.check_mode)
    if result["stopped"]:
        module.fail_json(msg=result["stop_message"], **result)
    if nothing_but_failures(result["counts"]):
        first = next(pod for pod in result["pods"] if pod["status"] == "failed")
        module.fail_json(msg=f"no pod was evicted: {result['counts']['failed']} failed and none succeeded; the first "
                             f"error ({first['namespace']}/{first['name']}): {first['error']}", **result)
    if result["input"]["source"] != "pods" and not (result["input"]["plan_cluster_identity"] or {}).get("uid"):
        module.warn("the plan records no cluster identity: it was executed on the cluster expected_cluster_uid pins "
                    "(allow_plan_without_identity); plan the cluster live to have the plan's own cluster checked")
    for pod in result["pods"]:
        if pod["status"] == "failed":
            module.warn(f"{pod['namespace']}/{pod['name']}: {pod['error']}")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
