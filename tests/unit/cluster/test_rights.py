"""The RBAC data of cluster/rights.py: the shipped manifests and the README table are generated from it, its rules
cover what the code reads and writes, and the rules-review matching follows RBAC."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster import rights
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.access import Permission, grants
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.eviction import OWNER_RESOURCES
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import (
    EXECUTING,
    INSTALLING,
    JOBS,
    PLANNING,
    job_of_module,
    manifests,
    permissions,
    permissions_table,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.snapshot_source import KIND_RESOURCES
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import KINDS

ROOT = Path(__file__).resolve().parents[3]


def _tool():
    spec = importlib.util.spec_from_file_location("rbac_generate", ROOT / "tools" / "rbac_generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("job", list(JOBS))
def test_shipped_manifest_is_the_data(job: str) -> None:
    shipped = ROOT / "rbac" / f"{job}.yml"
    assert shipped.read_text() == _tool().manifest_text(job), "run tools/rbac_generate.py"
    assert yaml.safe_load(shipped.read_text())["items"] == manifests(JOBS[job])


def test_readme_permissions_table_is_the_data() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "## Permissions" in readme
    assert _tool().readme_with_table(readme) == readme, "run tools/rbac_generate.py"
    assert permissions_table() in readme


def test_every_job_names_real_modules_and_roles() -> None:
    for job in JOBS.values():
        for module in job.modules:
            assert (ROOT / "plugins" / "modules" / f"{module}.py").is_file(), module
            assert job_of_module(module) is job
        for role in job.roles:
            assert (ROOT / "roles" / role / "meta" / "argument_specs.yml").is_file(), role
        assert set(job.includes) <= set(JOBS)


def _allowed(job, verb: str, api_version: str, plural: str) -> bool:
    group = api_version.rpartition("/")[0]
    return any(p.verb == verb and p.group == group and p.resource == plural for p in permissions(job, "ns"))


def test_planning_lists_every_kind_the_snapshot_reads() -> None:
    for api_version, plural in KIND_RESOURCES.values():
        assert _allowed(PLANNING, "list", api_version, plural) and _allowed(PLANNING, "watch", api_version, plural)


def test_executing_reads_every_owner_it_waits_on() -> None:
    for api_version, plural in OWNER_RESOURCES.values():
        assert _allowed(EXECUTING, "get", api_version, plural), plural


def test_installing_may_write_every_kind_the_lifecycle_writes() -> None:
    # the lifecycle reads and writes through ClusterSession (operator/objects.py): get, list, create, patch, delete on
    # its KINDS, but these, which it only reads or removes (grep session.<verb> in operator/, secondary_scheduler/)
    verbs_of = {
        "Node": ("get", "list", "patch"),
        "PriorityClass": ("list",),
        "ClusterServiceVersion": ("get", "list", "delete"),
        "InstallPlan": ("list", "patch"),
        "CatalogSource": ("list",),
        "PackageManifest": ("get", "list"),
        "CustomResourceDefinition": ("get", "delete"),
        # only listed: a rollback keeps a namespace it created while it holds another team's objects (ownership.py)
        "Secret": ("list",),
        "Service": ("list",),
        "Pod": ("list",),
        "PersistentVolumeClaim": ("list",),
        "StatefulSet": ("list",),
        "DaemonSet": ("list",),
        "Job": ("list",),
        # written only by the access module, which an administrator runs; listed by a rollback, as above
        "Role": ("list",),
        "RoleBinding": ("list",),
    }
    for kind, (api_version, plural, _namespaced) in KINDS.items():
        for verb in verbs_of.get(kind, ("get", "list", "create", "patch", "delete")):
            assert _allowed(INSTALLING, verb, api_version, plural) or _allowed(PLANNING, verb, api_version, plural), (
                verb,
                kind,
            )


def test_no_job_but_installing_writes_cluster_wide_rbac_or_lists_secrets_and_none_reads_one() -> None:
    for job in JOBS.values():
        every = permissions(job, "ns")
        # listing them is how an install's rollback sees another team's Secret in a namespace it created
        secret_verbs = {p.verb for p in every if p.resource == "secrets"}
        assert secret_verbs == ({"list"} if job is INSTALLING else set()), (job.name, secret_verbs)
        if job is not INSTALLING:
            assert not any(p.group == "rbac.authorization.k8s.io" for p in every), job.name
    assert all(p.verb in ("get", "list", "watch") for p in permissions(PLANNING))


@pytest.mark.parametrize(
    ("rule", "permission", "expected"),
    [
        ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, Permission("create", "pods", "", "eviction"), True),
        (
            {"verbs": ["create"], "apiGroups": [""], "resources": ["pods/eviction"]},
            Permission("create", "pods", "", "eviction"),
            True,
        ),
        (
            {"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]},
            Permission("create", "pods", "", "eviction"),
            False,
        ),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}, Permission("get", "pods", "", "log"), True),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}, Permission("get", "pods", "", "log"), True),
        ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, Permission("get", "pods"), False),
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["kube-system"]},
            Permission("get", "namespaces"),
            False,
        ),
    ],
)
def test_rules_review_matching_follows_rbac(rule: dict, permission: Permission, expected: bool) -> None:
    assert grants([rule], permission) is expected


def test_rules_used_in_one_namespace_are_checked_there() -> None:
    from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.change_lease import CHANGE_LEASE
    from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import OPERATOR_NAMESPACE

    assert rights.OPERATOR_NAMESPACE == OPERATOR_NAMESPACE
    scopes = {(p.verb, p.resource): p.namespace for p in permissions(rights.CONFIGURING, "records")}
    assert scopes[("update", "leases")] == CHANGE_LEASE.namespace  # the change Lease: a Role in kube-system passes
    assert scopes[("create", "kubedeschedulers")] == OPERATOR_NAMESPACE
    assert scopes[("update", "configmaps")] == "records"  # the rollout record: the job's Role
    assert {p.namespace for p in permissions(PLANNING)} == {None}  # the snapshot reads every namespace
    # what the access module ships is unchanged: these rules stay in the ClusterRole
    assert all(
        rule.as_policy_rule() in manifests(rights.CONFIGURING)[0]["rules"]
        for rule in rights.CONFIGURING.rules
        if not rule.namespaced
    )


def test_a_job_checks_the_rights_of_the_jobs_it_includes_each_once() -> None:
    every = rights.bound_permissions(EXECUTING, "ns")
    assert set(permissions(PLANNING)) <= set(every) and set(permissions(EXECUTING, "ns")) <= set(every)
    assert len(every) == len(set(every))
