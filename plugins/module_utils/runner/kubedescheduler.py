"""The ``cluster`` KubeDescheduler, declaratively: validate against the cluster, write only if it differs, wait.

Order of one call: read the object (and tell a missing object from a missing CRD); build the desired spec (options,
``spec`` or a translated ``legacy_spec``); read the cluster facts and validate every rule of the reference; fail
before any write on an error; compare with what is stored (CRD defaults applied, operator-owned fields ignored);
create, replace or delete; wait for the operand to run the new generation; return the rendered policy.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.identity import connect_to_intended_cluster
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import (
    delete_raw,
    get_raw,
    post_raw,
    request_raw,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.rights import require_rights
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.cluster_facts import (
    ClusterFacts,
    finding_dict,
    gather_facts,
    validate_against_cluster,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.errors import KdoError, SpecRejected
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.names import (
    KUBEDESCHEDULER_API,
    KUBEDESCHEDULER_CRD,
    KUBEDESCHEDULER_KIND,
    KUBEDESCHEDULER_NAME,
    KUBEDESCHEDULER_PATH,
    KUBEDESCHEDULERS_PATH,
    OPERAND_CONTAINER,
    OPERAND_DEPLOYMENT_PATH,
    OPERATOR_NAMESPACE,
    OPERATOR_OWNED_SPEC_FIELDS,
    POLICY_CONFIGMAP_PATH,
    POLICY_KEY,
    SOFTTAINTER_CONTAINER,
    SOFTTAINTER_DEPLOYMENT_PATH,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operand import (
    decided_fields,
    leftover_soft_taints,
    render_operand,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.operator_profiles import (
    ERROR,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import render_policy
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.rollout import (
    read_operand_state,
    wait_for_refusal,
    wait_for_removal,
    wait_for_rollout,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.spec import (
    comparable,
    describe_changes,
    desired_spec,
    spec_changes,
    with_defaults,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import apply_field_validation

OBJECT_NAME = f"KubeDescheduler {OPERATOR_NAMESPACE}/{KUBEDESCHEDULER_NAME}"
MAX_CONFLICT_RETRIES = 3


def read_kubedescheduler(api_client: Any) -> Optional[dict]:
    """The object, None when absent; a clear error when the cluster does not serve the KubeDescheduler API."""
    try:
        return request_raw(api_client, "GET", KUBEDESCHEDULER_PATH, kind=KUBEDESCHEDULER_KIND)
    except ClusterApiError as error:
        if error.status != 404:
            raise
        if error.details.get("name"):
            return None
        raise KdoError(f"the cluster does not serve {KUBEDESCHEDULER_API} kubedeschedulers (CRD "
                       f"{KUBEDESCHEDULER_CRD} not installed): install the Kube Descheduler Operator first "
                       "(descheduler.fleet.operator or the install role)") from error


def read_policy(api_client: Any) -> Optional[dict]:
    """The DeschedulerPolicy the operator rendered (ConfigMap cluster, key policy.yaml), parsed."""
    import yaml

    configmap = get_raw(api_client, POLICY_CONFIGMAP_PATH, kind="ConfigMap")
    text = ((configmap or {}).get("data") or {}).get(POLICY_KEY)
    if not text:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise KdoError(f"ConfigMap {OPERATOR_NAMESPACE}/cluster key {POLICY_KEY} is not valid YAML: {error}") from error


# --- validation ----------------------------------------------------------------------------------------------------


def _validate(api_client: Any, spec: dict, params: Mapping[str, Any],
              restoring: bool = False) -> tuple[list[dict], ClusterFacts]:
    """Warnings (finding dicts) and the facts read; raises SpecRejected on any error, before anything is written.
    ``restoring``: the spec is one this cluster had (a rollback), so a missing managementState is written back as it
    was, never refused (the rule is for specs users give)."""
    facts = gather_facts(api_client)
    if not facts.operator_namespace_exists:
        raise KdoError(f"namespace {OPERATOR_NAMESPACE} does not exist: install the Kube Descheduler Operator first "
                       "(descheduler.fleet.operator or the install role)")
    findings = apply_field_validation(validate_against_cluster(spec, facts, management_state_required=not restoring),
                                      params.get("field_validation") or "Strict")
    errors = [finding_dict(f) for f in findings if f.severity == ERROR]
    warnings = [finding_dict(f) for f in findings if f.severity != ERROR]
    if errors or (params.get("fail_on_warnings") and warnings):
        rejected = errors or warnings
        numbered = " ".join(f"({index}) {item['message']}" for index, item in enumerate(rejected, 1))
        what = f"{len(errors)} error(s)" if errors else f"{len(warnings)} warning(s) and fail_on_warnings is set"
        raise SpecRejected(f"{OBJECT_NAME} not changed: the spec has {what}. {numbered}",
                           validation_errors=errors, validation_warnings=warnings, notes=facts.notes,
                           spec=spec)
    return warnings, facts


# --- writes --------------------------------------------------------------------------------------------------------


def _new_object(spec: dict) -> dict:
    return {
        "apiVersion": KUBEDESCHEDULER_API,
        "kind": KUBEDESCHEDULER_KIND,
        "metadata": {"name": KUBEDESCHEDULER_NAME, "namespace": OPERATOR_NAMESPACE},
        "spec": spec,
    }


def _replacement(existing: dict, spec: dict) -> dict:
    updated = copy.deepcopy(existing)
    kept = {key: value for key, value in (existing.get("spec") or {}).items() if key in OPERATOR_OWNED_SPEC_FIELDS}
    updated["spec"] = {**spec, **kept}
    updated.pop("status", None)
    return updated


def _write(api_client: Any, existing: Optional[dict], spec: dict) -> dict:
    """Create, or replace the spec (PUT with resourceVersion; re-read and retry on a conflict)."""
    if existing is None:
        return post_raw(api_client, KUBEDESCHEDULERS_PATH, _new_object(spec), kind=KUBEDESCHEDULER_KIND)
    for attempt in range(MAX_CONFLICT_RETRIES):
        try:
            return request_raw(api_client, "PUT", KUBEDESCHEDULER_PATH, body=_replacement(existing, spec),
                               kind=KUBEDESCHEDULER_KIND)
        except ClusterApiError as error:
            if error.status != 409 or attempt == MAX_CONFLICT_RETRIES - 1:
                raise
            existing = read_kubedescheduler(api_client) or existing
    raise AssertionError("unreachable")


# --- the task ------------------------------------------------------------------------------------------------------


def _diff(before: Optional[dict], after: Optional[dict], operand: Optional[tuple[dict, dict]] = None) -> dict:
    """The spec before and after; with ``operand`` (live, rendered), also what the spec decides on the operator's
    Deployments, so a preview shows the arguments the descheduler will run with."""
    diff = {"before": {"spec": before} if before is not None else {},
            "after": {"spec": after} if after is not None else {},
            "before_header": OBJECT_NAME, "after_header": OBJECT_NAME}
    if operand is not None:
        diff["before"]["operand"], diff["after"]["operand"] = operand
    return diff


def _live_operand(api_client: Any) -> dict[str, Optional[dict]]:
    return {"descheduler": get_raw(api_client, OPERAND_DEPLOYMENT_PATH, kind="Deployment"),
            "softtainter": get_raw(api_client, SOFTTAINTER_DEPLOYMENT_PATH, kind="Deployment")}


def _rendered_operand(stored: dict, existing: Optional[dict], facts: ClusterFacts) -> dict:
    """The Deployments the operator will write for ``stored``, with the TLS settings it observed (kept in the spec)
    and the soft taints left on the nodes (it keeps the soft-tainter to clean them)."""
    observed = ((existing or {}).get("spec") or {}).get("observedConfig")
    tainted = leftover_soft_taints(facts.kubevirt_nodes or [])
    return render_operand(stored, observed_config=observed, tainted_nodes=tainted,
                          policy=render_policy(stored, validate=False))


def _operand_diff(live: dict[str, Optional[dict]], rendered: dict) -> tuple[dict, dict]:
    containers = {"descheduler": OPERAND_CONTAINER, "softtainter": SOFTTAINTER_CONTAINER}
    return ({name: decided_fields(live[name], container) for name, container in containers.items()},
            {name: decided_fields(rendered[name], container) for name, container in containers.items()})


def _absent(api_client: Any, existing: Optional[dict], params: Mapping[str, Any], check_mode: bool) -> dict:
    before = comparable((existing or {}).get("spec")) if existing else None
    result: dict[str, Any] = {"changed": existing is not None, "diff": _diff(before, None), "kubedescheduler": None,
                              "spec": None, "policy": None, "changes": [], "validation_warnings": [],
                              "notes": []}
    if existing is None:
        result["msg"] = f"{OBJECT_NAME} is absent"
        return result
    result["changes"] = [{"field": "spec", "before": before, "after": None}]
    if check_mode:
        result["msg"] = f"would delete {OBJECT_NAME} (the operator's ConfigMap and Deployment go with it)"
        return result
    try:
        delete_raw(api_client, KUBEDESCHEDULER_PATH, kind=KUBEDESCHEDULER_KIND)
    except ClusterApiError as error:
        if error.status != 404:
            raise
    if params.get("wait"):
        wait_for_removal(api_client, timeout=params["wait_timeout"], sleep=params["wait_sleep"])
    result["msg"] = f"deleted {OBJECT_NAME}"
    return result


def _present(api_client: Any, existing: Optional[dict], params: Mapping[str, Any], check_mode: bool,
             restoring: bool = False) -> dict:
    spec, translation = desired_spec(params)
    warnings, facts = _validate(api_client, spec, params, restoring)
    stored = with_defaults(spec)
    before = comparable((existing or {}).get("spec")) if existing else None
    after = comparable(stored)
    changes = spec_changes(before, after) if existing else [{"field": "spec", "before": None, "after": after}]
    changed = existing is None or before != after
    rendered = _rendered_operand(stored, existing, facts)
    result: dict[str, Any] = {"changed": changed, "changes": changes, "rendered_operand": rendered,
                              "diff": _diff(before, after, _operand_diff(_live_operand(api_client), rendered)),
                              "validation_warnings": warnings, "notes": facts.notes, "spec": after}
    if translation is not None:
        result["legacy_translation"] = translation
    obj = existing
    if changed and not check_mode:
        obj = _write(api_client, existing, stored)
    result["msg"] = _message(existing, changed, check_mode, changes)
    if params.get("wait") and not check_mode:
        generation = int((obj or {}).get("metadata", {}).get("generation") or 1)
        # without managementState the operator refuses the spec, as it did before the change: its answer is awaited
        wait = wait_for_refusal if restoring and "managementState" not in stored else wait_for_rollout
        state = wait(api_client, generation, timeout=params["wait_timeout"], sleep=params["wait_sleep"])
        result["operand"] = state.summary()
        obj = state.kubedescheduler or obj
    else:
        result["operand"] = read_operand_state(api_client).summary()
    result["kubedescheduler"] = obj
    result["conditions"] = ((obj or {}).get("status") or {}).get("conditions") or []
    result["policy"] = read_policy(api_client)
    return result


def _message(existing: Optional[dict], changed: bool, check_mode: bool, changes: list[dict]) -> str:
    if not changed:
        return f"{OBJECT_NAME} already has this spec"
    verb = ("would create" if check_mode else "created") if existing is None else (
        "would update" if check_mode else "updated")
    return f"{verb} {OBJECT_NAME}: {describe_changes(changes)}" if existing else f"{verb} {OBJECT_NAME}"


def run_kubedescheduler(params: Mapping[str, Any], check_mode: bool, restoring: bool = False) -> dict:
    """One call of the kubedescheduler module; ``restoring``: a rollback writing back a spec the cluster had."""
    api_client, identity = connect_to_intended_cluster(params)
    require_rights(api_client, "kubedescheduler")
    existing = read_kubedescheduler(api_client)
    if params.get("state") == "absent":
        result = _absent(api_client, existing, params, check_mode)
    else:
        result = _present(api_client, existing, params, check_mode, restoring)
    return {**result, "cluster_identity": identity.as_dict()}
