"""The flow one call of the plan module follows: load the cluster, choose the policy, simulate, write reports.

Kept apart from the module so the module stays thin (argument spec, call, result) and this stays testable.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import build_api_client
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.eviction import verify_evictions
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import (
    ClusterIdentity,
    check_expected_uid,
    identity_from_namespaces,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.prometheus import monitoring_route_url
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.snapshot_source import (
    DEFAULT_KINDS,
    PLACEMENT_KINDS,
    list_cluster_objects,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import EngineError, PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.gc_pause import gc_paused, keep_until_exit
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan_seal import compact_seal, seal_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.config import read_scheduler_config
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.scheduler.placement import PlacementRequest
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.shared_cycle import SharedCycles
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import (
    Snapshot,
    iter_snapshot_file,
    model_listed_object,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    KUBEDESCHEDULER_PATH,
    OPERATOR_NAMESPACE,
    POLICY_KEY,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    POLICY_CONFIGMAP_PATH as RENDERED_POLICY_PATH,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import ERROR
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_view import (
    late_namespaces_why,
    namespaces_created,
    operator_view,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.planning import (
    descheduler_policy,
    operator_mode,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.spec import spec_of
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    apply_field_validation,
    unknown_field_findings,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    needs_prometheus,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_diff import diff_plans
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import write_plan_report
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan_metrics import MetricsReads, attach_metrics

DEFAULT_POLICY_CONFIGMAP = {"namespace": "kube-system", "name": "descheduler", "key": "policy.yaml"}


class PlanRequestError(FleetError):
    """A bad combination of module options (names the options and the fix)."""

    def __init__(self, message: str, field: Optional[str] = None, value: Any = None) -> None:
        super().__init__(message)
        if field is not None:  # returned beside msg (errors.FleetError.user_details)
            self.field, self.value = field, value


def run_plan(params: Mapping[str, Any], process_exits_after: bool = False) -> dict:
    """The plan module's work. ``process_exits_after``: the caller is a module process, which exits once the result
    is written, so what the plan no longer needs is left to the operating system (engine/gc_pause.py
    keep_until_exit) instead of being freed object by object."""
    if params.get("policy") is not None and params.get("kubedescheduler") is not None:
        raise PlanRequestError("policy and kubedescheduler are mutually exclusive: give one policy source")
    placement = placement_request(params)
    # bad input fails before any read
    bound = returned_evictions_bound(params.get("return_evictions"))
    spec_warnings = kubedescheduler_field_warnings(params.get("kubedescheduler"), params.get("field_validation"))
    snapshot, warnings, source, identity, api_client = read_input(params, placement)
    warnings.extend(spec_warnings)
    policy, kind, policy_origin = _policy(params, api_client)
    params = with_operator_prometheus_url(params, policy, kind, api_client)
    operator_namespaces = running_operator_namespaces(kind, api_client, warnings)
    plan = plan_policy(snapshot, policy, kind, params.get("now"), params, placement, api_client,
                       operator_namespaces=operator_namespaces)
    if process_exits_after:
        keep_until_exit(snapshot)
    del snapshot  # not read after the plan: freed here unless kept until the process exits
    plan["source"] = source
    plan["cluster_identity"] = identity.as_dict()
    plan["policy_origin"] = policy_origin
    no_op = why_nothing_may_be_evicted(plan)
    plan["warnings"] = warnings + plan["warnings"] + [w for found in no_op.values() for w in found]
    plan["fail_on_matched"] = _matched(params.get("fail_on") or [], no_op, plan["warnings"])
    if params.get("verify") == "server":
        # a dryRun=All eviction per planned pod: the API server says whether its PDB allows it now
        plan["verification"] = verify_evictions(api_client or api_client_for(params), plan["evictions"])
    if params.get("cluster_name"):
        plan["cluster"] = params["cluster_name"]
    # sealed once everything evict reads is final: evict executes only this plan as written (docs/plan-format.md)
    plan["seal"] = seal_plan(plan)
    # a full collection walks everything still tracked (the plan's evictions alone are a million objects at 150,000
    # pods), and reading the previous plan and writing the reports only make acyclic data that would trigger them
    with gc_paused():
        if params.get("previous_plan"):  # read before the report of this run replaces it
            plan["since_previous"] = _since_previous(params["previous_plan"], plan)
        if params.get("report_dir"):
            plan["report_files"] = write_plan_report(plan, params["report_dir"], cluster=params.get("cluster_name"),
                                                     template_dir=params.get("report_template_dir"))
    bound_returned_evictions(plan, bound)
    return plan


# How many evictions the plan module's result holds unless return_evictions says otherwise: a result is copied,
# scrubbed and encoded by Ansible value by value (82,207 evictions: about 2.7 s), and no playbook needs a large
# cluster's whole list in a registered variable when plan.json holds it.
DEFAULT_RETURNED_EVICTIONS = 1000
_ALL = ("all", "true", "yes", "on")
_NONE = ("none", "false", "no", "off")


def returned_evictions_bound(value: Any) -> Optional[int]:
    """return_evictions as the most evictions the result holds: None for all, 0 for none (unset: the default)."""
    if value is None:
        return DEFAULT_RETURNED_EVICTIONS
    if isinstance(value, bool):
        return None if value else 0
    if isinstance(value, str) and value.strip().lower() in _ALL + _NONE:
        return None if value.strip().lower() in _ALL else 0
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and value >= 0:
        return value
    raise PlanRequestError(f"return_evictions: {value!r} is not all, none or a number of evictions; give all (the "
                           f"whole list), none (counts only) or how many to return at most (default "
                           f"{DEFAULT_RETURNED_EVICTIONS})", field="return_evictions", value=value)


def bound_returned_evictions(plan: dict, bound: Optional[int]) -> None:
    """Keep at most ``bound`` evictions in the result (the reports already hold them all) and say how many were
    left out and which file has the whole list. A result short of some evictions carries the compact seal: its
    per-eviction digests grow with the evictions too, and evict refuses a list the seal does not match."""
    evictions = plan["evictions"]
    kept = len(evictions) if bound is None else min(bound, len(evictions))
    plan["evictions_left_out"] = len(evictions) - kept
    plan["evictions_file"] = (plan.get("report_files") or {}).get("json")
    if kept == len(evictions):
        return
    plan["seal"] = compact_seal(plan["seal"])
    if bound == 0:  # return_evictions: none
        del plan["evictions"]
        return
    plan["evictions"] = evictions[:kept]
    if plan["evictions_file"] is None:
        plan["warnings"].append(
            f"return_evictions: the result holds the first {kept} of {len(evictions)} evictions and no plan.json "
            "was written; set report_dir for the whole list in a file, or return_evictions: all")


# What fail_on can name: a cycle the descheduler skips, a plugin that reported an error, any warning of the plan.
FAIL_ON_CHOICES = ("cycle_skipped", "plugin_error", "warning")


def why_nothing_may_be_evicted(plan: Mapping[str, Any]) -> dict[str, list[str]]:
    """The warnings a plan needs when it evicts nothing, or less than the policy asks for, for a reason of its input:
    the descheduler skips a cycle with fewer than 2 ready nodes (of those its nodeSelector picks), and a plugin that
    reports an error (a load-aware plugin without its metrics, say) evicts nothing while the cycle goes on."""
    found: dict[str, list[str]] = {"cycle_skipped": [], "plugin_error": []}
    reason = (plan.get("cycle") or {}).get("skip_reason")
    if reason:
        nodes = (plan.get("snapshot") or {}).get("nodes", 0)
        found["cycle_skipped"].append(
            f"the descheduler skips this cycle and evicts nothing: it {reason} ready node(s) its nodeSelector picks "
            f"(of {nodes} node(s) in the input)")
    for error in plan.get("errors") or []:
        found["plugin_error"].append(
            f"profile {error.get('profile')}, plugin {error.get('plugin')}: {error.get('message')}; the plugin "
            "evicts nothing in this plan")
    return found


def _matched(fail_on: list[str], no_op: Mapping[str, list[str]], warnings: list[str]) -> list[str]:
    """The warnings that fail the task under ``fail_on``, in the plan's order."""
    if "warning" in fail_on:
        return list(warnings)
    return [w for reason in FAIL_ON_CHOICES if reason in fail_on for w in no_op.get(reason, [])]


def read_input(params: Mapping[str, Any],
               placement: Any = None) -> tuple[Snapshot, list[str], dict[str, Any], ClusterIdentity, Any]:
    """The one read of a plan's cluster: the snapshot file, or the live cluster (each kind listed once), checked
    against expected_cluster_uid. Returns the snapshot, the read's warnings, the source, the cluster's identity and
    the API client (None for a file)."""
    if params.get("snapshot"):
        snapshot, identity = _snapshot_from_file(params["snapshot"], placement)
        source: dict[str, Any] = {"type": "snapshot", "path": params["snapshot"]}
        warnings: list[str] = []
        api_client = None
    else:
        api_client = api_client_for(params)
        require_rights(api_client, "plan")
        snapshot, warnings, source, identity = _snapshot_from_cluster(api_client, params, placement)
    _check_identity(identity, params, warnings)
    return snapshot, warnings, source, identity, api_client


def _since_previous(path: str, plan: Mapping[str, Any]) -> Any:
    """The changes since the plan at ``path`` (a previous run's plan.json); None when there is none yet."""
    import json

    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            previous = json.load(handle)
    except (OSError, ValueError) as error:
        raise PlanRequestError(f"previous_plan: cannot read {path!r} as a plan ({error}); give a plan.json this "
                               "module wrote, or remove the file") from error
    return diff_plans(previous, plan)


def samples_of(params: Mapping[str, Any]) -> Any:
    """1 when unset; any other value (0 too) goes to the engine, which names the option when it is wrong."""
    return 1 if params.get("samples") is None else params["samples"]


def placement_request(params: Mapping[str, Any]) -> Any:
    """placement=true: where the replacements land (engine/scheduler/placement.py), with scheduler_config."""
    if not params.get("placement"):
        if params.get("scheduler_config") is not None:
            raise PlanRequestError("scheduler_config is only read for the placement preview: set placement: true")
        return None
    return PlacementRequest(read_scheduler_config(params.get("scheduler_config")))


def _snapshot_from_file(path: str, placement: Any = None) -> tuple[Snapshot, ClusterIdentity]:
    if not os.path.exists(path):
        raise EngineError(f"snapshot: file {path!r} does not exist; give the path of a JSON or YAML file of objects")
    # a file's objects come in any order: with placement, every pod's images are kept (its nodes may come last)
    model = model_listed_object if placement is None else placement.recording(model_listed_object, nodes_first=False)
    namespaces: list[dict] = []

    def modelled() -> Iterator[Any]:
        # each object is modelled as soon as it is parsed, as a live listing's are, so a snapshot of 150,000 pods is
        # never held whole
        for obj in iter_snapshot_file(path):
            if obj.get("kind") == "Namespace":
                namespaces.append(obj)
            yield model(obj)

    with gc_paused():
        snapshot = Snapshot(modelled())
    return snapshot, identity_from_namespaces(iter(namespaces), server=None)


def _namespaces(objects: list[Any]) -> Iterator[dict]:
    """The Namespace objects, lazily: identity_from_namespaces stops at kube-system instead of copying them all.
    (Listed pods are already the engine's models, not dicts.)"""
    return (obj for obj in objects if isinstance(obj, dict) and obj.get("kind") == "Namespace")


def _check_identity(identity: ClusterIdentity, params: Mapping[str, Any], warnings: list[str]) -> None:
    """expected_cluster_uid is this cluster's, or the plan fails; a plan without identity says what that means."""
    expected = params.get("expected_cluster_uid")
    if expected and identity.uid is None:
        where = "the snapshot file holds no kube-system Namespace" if params.get("snapshot") else (
            "the kube-system namespace was not listed (see the other warnings)")
        raise PlanRequestError(f"expected_cluster_uid: cannot check it, {where}; include the cluster's namespaces "
                               "or leave expected_cluster_uid unset")
    check_expected_uid(identity, expected, "expected_cluster_uid")
    if identity.uid is None and not params.get("snapshot"):
        warnings.append("the kube-system namespace was not listed: the plan records no cluster identity, so evict "
                        "cannot check that it runs on this cluster")


def api_client_for(params: Mapping[str, Any]) -> Any:
    return build_api_client(params)


def _snapshot_from_cluster(api_client: Any, params: Mapping[str, Any],
                           placement: Any = None) -> tuple[Snapshot, list[str], dict, ClusterIdentity]:
    with gc_paused():
        slim = model_listed_object if placement is None else placement.recording(model_listed_object)
        kinds = DEFAULT_KINDS if placement is None else PLACEMENT_KINDS
        listed = list_cluster_objects(api_client, kinds, page_size=params.get("page_size") or 500, slim=slim,
                                      watch_list=params.get("watch_list", True))
        identity = identity_from_namespaces(_namespaces(listed.objects),
                                            server=getattr(api_client.configuration, "host", None))
        snapshot = Snapshot(listed.objects)
        snapshot.volumes_listed = "PersistentVolume" in listed.resource_versions
    source = {"type": "cluster", "resource_versions": listed.resource_versions, "read_as": listed.read_as}
    return snapshot, list(listed.warnings), source, identity


def kubedescheduler_field_warnings(spec: Any, field_validation: Any, option: str = "kubedescheduler") -> list[str]:
    """Fields the KubeDescheduler spec given as ``option`` has that KubeDescheduler v1 does not (a misspelt
    profileCustomizations, mode...): an error under field_validation Strict, naming each with the closest field;
    warnings under Warn; nothing under Ignore."""
    if spec is None:
        return []
    judged = apply_field_validation(unknown_field_findings(spec_of(spec)), field_validation or "Strict")
    errors = [f.message for f in judged if f.severity == ERROR]
    if errors:
        raise PlanRequestError(f"{option}: {len(errors)} unknown field(s), nothing was planned: "
                               + " ".join(f"({index}) {message}" for index, message in enumerate(errors, 1)))
    return [f"{option}: {f.message}" for f in judged]


def plan_policy(snapshot: Snapshot, policy: Mapping[str, Any], kind: str, now: Any, params: Mapping[str, Any],
                placement: Any, api_client: Any, shared: Optional[SharedCycles] = None,
                reads: Optional[MetricsReads] = None, operator_namespaces: Optional[list[str]] = None) -> dict:
    """The plan of one policy (a DeschedulerPolicy, or a KubeDescheduler rendered as the operator would), with the
    metrics it needs read: what the plan and whatif modules compute for each policy. ``shared`` and ``reads``: what
    the plans of other policies on this read of the cluster computed or read that this one needs too (the whatif
    module's candidates). ``operator_namespaces``: what the running operator built its protected list from."""
    document = rendered_policy(snapshot, policy, kind, params, operator_namespaces)
    attach_metrics(snapshot, params, document, api_client, lambda: api_client_for(params), reads)
    return compute_plan(snapshot, document, now, samples=samples_of(params), seed=params.get("seed"),
                        placement=placement, policy_source=kind, operator_mode=operator_mode(policy, kind),
                        shared=shared)


def with_operator_prometheus_url(params: Mapping[str, Any], policy: Mapping[str, Any], kind: str,
                                 api_client: Any) -> Mapping[str, Any]:
    """``params`` with prometheus_url set as the operator sets it for a live cluster's KubeDescheduler that needs
    Prometheus: https://<admitted host of route openshift-monitoring/prometheus-k8s>. Unchanged when prometheus_url is
    given, the plan is offline, or the route is missing (the policy then names a placeholder URL)."""
    if params.get("prometheus_url") or api_client is None or kind != "KubeDescheduler":
        return params
    spec = spec_of(policy)
    if not isinstance(spec, Mapping) or not needs_prometheus(dict(spec)):
        return params
    url = monitoring_route_url(api_client)
    return {**params, "prometheus_url": url} if url else params


def running_operator_namespaces(kind: str, api_client: Any, warnings: list[str]) -> Optional[list[str]]:
    """For a KubeDescheduler planned on a live cluster: the namespaces the running operator's protected list was
    built from (kubedescheduler/operator_view.py), with a warning naming the openshift-* namespaces it does not
    protect; None (the snapshot's namespaces) offline, for a DeschedulerPolicy, or when unreadable."""
    if kind != "KubeDescheduler" or api_client is None:
        return None
    try:
        view = operator_view(api_client, namespaces_created(api_client))
    except ClusterApiError:
        return None
    if view.late:
        warnings.append(f"kubedescheduler: {', '.join(view.late)}: {late_namespaces_why(view)}")
    return view.namespaces


def rendered_policy(snapshot: Snapshot, policy: Mapping[str, Any], kind: str, params: Mapping[str, Any],
                    operator_namespaces: Optional[list[str]] = None) -> Mapping[str, Any]:
    """The DeschedulerPolicy a policy of ``kind`` runs as (a KubeDescheduler rendered as the operator would)."""
    return descheduler_policy(policy, kind, snapshot, params.get("prometheus_url"), operator_namespaces)


def _policy(params: Mapping[str, Any], api_client: Any) -> tuple[Mapping[str, Any], str, dict]:
    if params.get("policy") is not None:
        return params["policy"], "DeschedulerPolicy", {"type": "parameter", "option": "policy"}
    if params.get("kubedescheduler") is not None:
        return params["kubedescheduler"], "KubeDescheduler", {"type": "parameter", "option": "kubedescheduler"}
    if api_client is None:
        raise PlanRequestError("no policy: with snapshot, give policy (a DeschedulerPolicy) or kubedescheduler "
                               "(a KubeDescheduler spec)")
    return _policy_from_cluster(api_client, params)


def _policy_from_cluster(api_client: Any, params: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, dict]:
    wanted = params.get("policy_source") or "auto"
    if wanted in ("auto", "kubedescheduler"):
        rendered = get_raw(api_client, RENDERED_POLICY_PATH, kind="ConfigMap") if wanted == "auto" else None
        if rendered and (rendered.get("data") or {}).get(POLICY_KEY):
            # the policy the operator actually rendered for its operand is the most faithful source
            return (_parse_policy_text(rendered["data"][POLICY_KEY], RENDERED_POLICY_PATH), "DeschedulerPolicy",
                    {"type": "cluster", "object": f"ConfigMap {OPERATOR_NAMESPACE}/cluster", "key": POLICY_KEY})
        resource = get_raw(api_client, KUBEDESCHEDULER_PATH, kind="KubeDescheduler")  # None when absent (404)
        if resource is not None:
            return (resource.get("spec") or {}, "KubeDescheduler",
                    {"type": "cluster", "object": f"KubeDescheduler {OPERATOR_NAMESPACE}/cluster"})
        if wanted == "kubedescheduler":
            raise PlanRequestError(f"policy_source=kubedescheduler but {KUBEDESCHEDULER_PATH} does not exist")
    location = {**DEFAULT_POLICY_CONFIGMAP, **{k: v for k, v in (params.get("policy_configmap") or {}).items() if v}}
    path = f"/api/v1/namespaces/{location['namespace']}/configmaps/{location['name']}"
    configmap = get_raw(api_client, path, kind="ConfigMap")
    text = ((configmap or {}).get("data") or {}).get(location["key"])
    if not text:
        raise PlanRequestError(
            f"no descheduler policy found in the cluster: no KubeDescheduler {OPERATOR_NAMESPACE}/cluster and no key "
            f"{location['key']!r} in ConfigMap {location['namespace']}/{location['name']}; set policy_configmap to "
            "where your upstream deployment keeps its policy, or pass policy/kubedescheduler")
    return (_parse_policy_text(text, path), "DeschedulerPolicy",
            {"type": "cluster", "object": f"ConfigMap {location['namespace']}/{location['name']}",
             "key": location["key"]})


def _parse_policy_text(text: str, where: str) -> Mapping[str, Any]:
    import yaml  # YAML is a superset of JSON, so this reads both

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError(where, text[:80], f"the policy is not valid YAML: {exc}") from exc
    if not isinstance(document, Mapping):
        raise PolicyError(where, text[:80], "expected a DeschedulerPolicy document")
    return document
