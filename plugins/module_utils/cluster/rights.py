"""The RBAC each job of the collection needs, as data: the one source the shipped manifests (``rbac/``), the README's
"Permissions" table, the ``access`` module and every module's rights check derive from.

The rules list what the code calls (``cluster/``, ``operator/``, ``kubedescheduler/``, ``rollout/``, the runners),
nothing more. A job's ServiceAccount is bound to its own ClusterRole and to those of the jobs it ``includes`` (a tune
run plans first, so it reads like a plan). Rules with ``namespaced=True`` go to a Role in the namespace the user
chooses for the job's Lease or record (``lease`` of evict, ``rollout.record_namespace``), not to the ClusterRole.
A ClusterRole rule the code only uses in one fixed namespace (``used_in``: the change Lease in kube-system, the
KubeDescheduler in the operator's namespace) is checked in that namespace, so a Role granting it there passes too.

Left out on purpose: ``get`` on a Secret holding a Prometheus token (the plan's ``prometheus.token_secret``): it names
one Secret in one namespace, so grant that one (``resourceNames``) where it is used instead of every Secret here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.access import (
    MissingRights,
    Permission,
    lacking,
    user_name,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.change_lease import (
    NAMESPACE as CHANGE_LEASE_NAMESPACE,
)

ROLE_PREFIX = "descheduler-fleet-"
READ = ("get", "list", "watch")
LIST = ("list", "watch")
WRITE = ("get", "list", "create", "patch", "delete")
PART_OF = {"app.kubernetes.io/part-of": "descheduler-fleet"}
# operator/names.py's OPERATOR_NAMESPACE (that layer is above this one; tests/unit/cluster/test_rights.py compares)
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"


@dataclass(frozen=True)
class Rule:
    """One RBAC PolicyRule (one API group) with why the collection needs it."""

    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str
    namespaced: bool = False
    used_in: str = ""  # the one namespace a ClusterRole rule is used in: checked there (a Role there passes too)

    def as_policy_rule(self) -> dict:
        return {"apiGroups": [self.group], "resources": list(self.resources), "verbs": list(self.verbs)}

    def describe(self) -> str:
        group = self.group or "core"
        return f"{','.join(self.verbs)} on {','.join(self.resources)} ({group})"

    def scope(self, role_namespace: Optional[str] = None) -> Optional[str]:
        """Where a run uses the rule: the job's Role namespace, the fixed ``used_in`` or the cluster (None)."""
        return role_namespace if self.namespaced else (self.used_in or None)


@dataclass(frozen=True)
class Job:
    name: str
    summary: str
    modules: tuple[str, ...]
    roles: tuple[str, ...]
    rules: tuple[Rule, ...]
    includes: tuple[str, ...] = ()
    namespace_use: str = ""

    @property
    def cluster_role(self) -> str:
        return ROLE_PREFIX + self.name

    @property
    def cluster_rules(self) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if not rule.namespaced)

    @property
    def namespaced_rules(self) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.namespaced)


PLANNING = Job(
    name="planning",
    summary="read-only: plan, what-if, recorded metrics, what is installed",
    modules=("plan", "whatif", "metrics_record", "info", "predictive_gate"),
    roles=("dry_run", "whatif"),
    rules=(
        Rule("", ("namespaces",), READ, "the cluster identity (kube-system's UID), the snapshot, protected namespaces"),
        Rule(
            "",
            ("nodes", "pods", "persistentvolumeclaims", "persistentvolumes"),
            LIST,
            "the snapshot (one streamed or paged list per kind)",
        ),
        Rule("", ("pods/log",), ("get",), "the operand's log (info, promotion gate, rollout health gates)"),
        Rule("", ("configmaps",), ("get",), "the policy in the cluster (rendered, upstream ConfigMap)"),
        Rule("scheduling.k8s.io", ("priorityclasses",), LIST, "the snapshot; thresholdPriorityClassName checks"),
        Rule("policy", ("poddisruptionbudgets",), LIST, "the snapshot (PDBs the evictions must respect)"),
        Rule(
            "apps",
            ("deployments", "replicasets", "statefulsets", "daemonsets"),
            READ,
            "pods' owners in the snapshot; the descheduler's own Deployment",
        ),
        Rule("batch", ("jobs",), LIST, "pods' owners in the snapshot"),
        Rule("batch", ("cronjobs",), ("get",), "the upstream descheduler run as a CronJob (info)"),
        Rule("metrics.k8s.io", ("nodes", "pods"), ("list",), "actual utilization from the metrics API"),
        Rule(
            "kubevirt.io",
            ("virtualmachineinstances", "virtualmachineinstancemigrations"),
            ("list",),
            "KubevirtMigrationAware (VMs treated as evictable without them)",
        ),
        Rule(
            "operator.openshift.io",
            ("kubedeschedulers", "secondaryschedulers"),
            ("get",),
            "the operator's configuration (policy, info, tune's preview)",
        ),
        Rule(
            "operators.coreos.com",
            ("subscriptions", "clusterserviceversions"),
            ("get", "list"),
            "which operator version is installed (info)",
        ),
        Rule("config.openshift.io", ("schedulers",), ("get",), "the scheduler profile the validation checks"),
        Rule("route.openshift.io", ("routes",), ("get",), "the in-cluster Prometheus route"),
    ),
)

# One change at a time per cluster (cluster/change_lease.py): the change Lease lives in kube-system, a namespace no
# user chooses, so it is a ClusterRole rule (a Role would need a binding in kube-system, which the access module
# does not make).
CHANGE_LEASE_RULE = Rule(
    "coordination.k8s.io",
    ("leases",),
    ("get", "create", "update"),
    "the change Lease kube-system/descheduler-fleet-change (one change at a time per cluster)",
    used_in=CHANGE_LEASE_NAMESPACE,
)

EXECUTING = Job(
    name="executing",
    summary="evict a plan's pods (Eviction API, KubeVirt migrations) under a Lease",
    modules=("evict",),
    roles=("evict",),
    includes=("planning",),
    namespace_use="the evict module's lease.namespace",
    rules=(
        Rule("", ("pods",), ("get", "list"), "re-read each pod before and after its eviction, find replacements"),
        Rule("", ("pods/eviction",), ("create",), "the eviction itself (and server-side dry runs)"),
        Rule("", ("replicationcontrollers",), ("get",), "a pod's owner, to wait for its replacement"),
        Rule(
            "apps",
            ("replicasets", "statefulsets", "daemonsets", "deployments"),
            ("get",),
            "a pod's owner, to wait for its replacement",
        ),
        Rule("kubevirt.io", ("virtualmachineinstances",), ("get",), "a VM's pod: wait for its migration"),
        Rule(
            "kubevirt.io",
            ("virtualmachineinstancemigrations", "kubevirts"),
            ("list",),
            "migrations in flight and the KubeVirt limits",
        ),
        Rule(
            "coordination.k8s.io",
            ("leases",),
            ("get", "create", "update"),
            "the run's Lease (one evict run per cluster)",
            namespaced=True,
        ),
        Rule(
            "coordination.k8s.io",
            ("leases",),
            ("get",),
            "see a change holding kube-system/descheduler-fleet-change",
            used_in=CHANGE_LEASE_NAMESPACE,
        ),
    ),
)

CONFIGURING = Job(
    name="configuring",
    summary="change the operator's KubeDescheduler and keep the rollout record",
    modules=("kubedescheduler", "rollout"),
    roles=("tune",),
    includes=("planning",),
    namespace_use="the rollout record's namespace",
    rules=(
        Rule(
            "operator.openshift.io",
            ("kubedeschedulers",),
            ("get", "create", "update", "delete"),
            "the cluster KubeDescheduler (tune)",
            used_in=OPERATOR_NAMESPACE,
        ),
        Rule(
            "",
            ("configmaps",),
            ("get", "create", "update"),
            "the rollout record (the last good configuration)",
            namespaced=True,
        ),
        CHANGE_LEASE_RULE,
    ),
)

INSTALLING = Job(
    name="installing",
    summary="install and remove the descheduler (OLM, upstream, Volcano), the secondary scheduler",
    modules=("operator", "secondary_scheduler"),
    roles=("install", "uninstall", "secondary_scheduler"),
    includes=("planning",),
    rules=(
        Rule("", ("namespaces", "configmaps", "serviceaccounts"), WRITE, "the operand's namespace and objects"),
        Rule("", ("nodes",), ("get", "list", "patch"), "uninstall removes the soft tainter's taints"),
        Rule(
            "",
            ("secrets", "services"),
            ("list",),
            "a rollback keeps a namespace it created while it holds another team's objects (operator/ownership.py)",
        ),
        Rule(
            "rbac.authorization.k8s.io",
            ("roles", "rolebindings"),
            ("list",),
            "a rollback keeps a namespace it created while it holds another team's objects (operator/ownership.py)",
        ),
        Rule("apps", ("deployments",), WRITE, "the upstream descheduler, Volcano's descheduler"),
        Rule("batch", ("cronjobs",), WRITE, "the upstream descheduler as a CronJob"),
        Rule(
            "rbac.authorization.k8s.io",
            ("clusterroles", "clusterrolebindings"),
            (*WRITE, "bind", "escalate"),
            "the descheduler's own ClusterRole (it may evict everywhere, so granting it needs escalate and bind)",
        ),
        Rule(
            "admissionregistration.k8s.io",
            ("validatingadmissionpolicies", "validatingadmissionpolicybindings"),
            WRITE,
            "the upstream chart's admission policy",
        ),
        Rule(
            "apiextensions.k8s.io",
            ("customresourcedefinitions",),
            ("get", "list", "delete"),
            "wait for the operator's CRD; uninstall removes it",
        ),
        Rule(
            "operator.openshift.io",
            ("kubedeschedulers", "secondaryschedulers"),
            WRITE,
            "the operators' configuration objects",
        ),
        Rule("operators.coreos.com", ("operatorgroups", "subscriptions"), WRITE, "the OLM install"),
        Rule("operators.coreos.com", ("installplans",), ("get", "list", "patch"), "approve a manual InstallPlan"),
        Rule(
            "operators.coreos.com",
            ("clusterserviceversions",),
            ("get", "list", "delete"),
            "wait for the CSV; uninstall removes it",
        ),
        Rule("operators.coreos.com", ("catalogsources",), ("list",), "name the catalogs when a package is missing"),
        Rule("packages.operators.coreos.com", ("packagemanifests",), ("get", "list"), "the channel's current CSV"),
        CHANGE_LEASE_RULE,
    ),
)

JOBS: dict[str, Job] = {job.name: job for job in (PLANNING, EXECUTING, CONFIGURING, INSTALLING)}


def job_of_module(module: str) -> Job:
    """The job a module (short name) does."""
    for job in JOBS.values():
        if module in job.modules:
            return job
    raise KeyError(f"module {module!r} is in no job of cluster/rights.py")


def job_rules(job: Job, namespace: Optional[str] = None) -> list[tuple[Rule, Optional[str]]]:
    """(rule, namespace) pairs a run of ``job`` needs: its ClusterRole's rules where they are used (the cluster
    scope, or their ``used_in`` namespace) and, when ``namespace`` is given, its Role's rules there (without one,
    the job uses no Lease or record)."""
    return [(rule, rule.scope(namespace)) for rule in job.rules if not rule.namespaced or namespace]


def cluster_role(job: Job) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": job.cluster_role, "labels": PART_OF},
        "rules": [rule.as_policy_rule() for rule in job.cluster_rules],
    }


def namespaced_role(job: Job, namespace: Optional[str] = None) -> Optional[dict]:
    """The job's Role (None when it has no namespaced rules); without ``namespace`` it goes where it is applied."""
    if not job.namespaced_rules:
        return None
    metadata = {"name": job.cluster_role, **({"namespace": namespace} if namespace else {}), "labels": PART_OF}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": metadata,
        "rules": [rule.as_policy_rule() for rule in job.namespaced_rules],
    }


def manifests(job: Job) -> list[dict]:
    """What ``rbac/<job>.yml`` holds: the ClusterRole, then the Role if any."""
    role = namespaced_role(job)
    return [cluster_role(job), *([role] if role else [])]


def permissions_table() -> str:
    """The README's "Permissions" table, one row per rule."""
    lines = [
        "| job (ClusterRole) | modules, roles | API group | resources | verbs | scope | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for job in JOBS.values():
        users = ", ".join([*job.modules, *(f"role {role}" for role in job.roles)])
        includes = f"; also bound to {', '.join(ROLE_PREFIX + name for name in job.includes)}" if job.includes else ""
        for index, rule in enumerate(job.rules):
            first = index == 0
            lines.append(
                f"| {f'`{job.cluster_role}`' if first else ''} | {users + includes if first else ''} "
                f"| `{rule.group or 'core'}` | {', '.join(rule.resources)} | {', '.join(rule.verbs)} "
                f"| {_table_scope(job, rule)} | {rule.why} |"
            )
    return "\n".join(lines) + "\n"


def _table_scope(job: Job, rule: Rule) -> str:
    if rule.namespaced:
        return "Role in " + job.namespace_use
    return f"cluster (used and checked in {rule.used_in}: a Role there is enough)" if rule.used_in else "cluster"


def bound_jobs(job: Job) -> list[Job]:
    """The job and those it includes: every ClusterRole its ServiceAccount is bound to."""
    return [*(JOBS[name] for name in job.includes), job]


def permissions(job: Job, namespace: Optional[str] = None) -> list[Permission]:
    """Every (verb, resource) a run of ``job`` needs, each a Permission at its scope."""
    return _permissions(job_rules(job, namespace))


def _permissions(pairs: list[tuple[Rule, Optional[str]]]) -> list[Permission]:
    return [
        Permission(verb, base, rule.group, sub, scope)
        for rule, scope in pairs
        for resource in rule.resources
        for base, _slash, sub in [resource.partition("/")]
        for verb in rule.verbs
    ]


def bound_permissions(job: Job, namespace: Optional[str] = None) -> list[Permission]:
    """What the job's ServiceAccount is granted (its ClusterRoles and those it includes, its Role in
    ``namespace``), each right once: all a run may use, so all a run checks first."""
    unique: dict[Permission, None] = {}
    for bound in bound_jobs(job):
        unique.update(dict.fromkeys(permissions(bound, namespace)))
    return list(unique)


def require_rights(api_client: Any, module: str, namespace: Optional[str] = None) -> None:
    """Fail, before the module's first write (and before a read that would fail late), when the user lacks any
    right of the module's job, naming every missing verb and resource in one message. ``namespace``: where the
    job keeps its Lease or record, if it does (its Role's rules are checked there)."""
    job = job_of_module(module)
    require_permissions(api_client, job, bound_permissions(job, namespace), namespace)


def require_rollout_rights(api_client: Any, job_name: str, record_namespace: str) -> None:
    """The rights of a rollout whose change runs ``job_name``'s module (configuring: the KubeDescheduler;
    installing: the operator or the secondary scheduler): that job's, the change Lease, and the rollout record
    (configuring's Role rules) in ``record_namespace``."""
    job = JOBS[job_name]
    record = _permissions([(rule, record_namespace) for rule in CONFIGURING.namespaced_rules])
    lease = _permissions([(CHANGE_LEASE_RULE, CHANGE_LEASE_RULE.used_in)])
    wanted = dict.fromkeys([*bound_permissions(job), *record, *lease])
    require_permissions(api_client, job, list(wanted), record_namespace, record_rule=job is not CONFIGURING)


def require_permissions(
    api_client: Any, job: Job, wanted: list[Permission], namespace: Optional[str], record_rule: bool = False
) -> None:
    """Fail naming every permission of ``wanted`` the user lacks, and the shipped roles that grant them."""
    missing = [permission.describe() for permission in lacking(api_client, wanted)]
    if not missing:
        return
    server = getattr(getattr(api_client, "configuration", None), "host", None) or "this cluster"
    roles = ", ".join(bound.cluster_role for bound in bound_jobs(job))
    where = f"ClusterRole(s) {roles}" + (
        f" and the Role {job.cluster_role} in namespace {namespace}" if namespace and job.namespaced_rules else ""
    )
    if record_rule:
        where += f" and the Role {CONFIGURING.cluster_role} (the rollout record) in namespace {namespace}"
    raise MissingRights(
        f"the user of this connection ({user_name(api_client) or 'unknown'}) lacks {len(missing)} right(s) of the "
        f"{job.name} job on {server}: "
        f"{'; '.join(missing)}. Grant the shipped {where} (rbac/{job.name}.yml, the "
        "descheduler.fleet.access module; README, Permissions); "
        "nothing was changed",
        missing,
    )
