"""Installing (and upgrading) an operator through OLM (reference operator.md §3): the Kube Descheduler Operator by
default, or another package described by an ``OlmPackage`` (the Secondary Scheduler Operator).

Namespace (with the monitoring label) -> OperatorGroup targeting it -> Subscription -> with Manual approval, approve
only the InstallPlan that installs the requested CSV -> wait until the Subscription's installed CSV is Succeeded
and the KubeDescheduler CRD is established.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.wait import Waiter, crd_readiness
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.catalog import (
    CatalogChoice,
    csv_version,
    plan_csvs,
    resolve_channel,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError, WaitTimeout
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import DESCHEDULER_OLM, OlmPackage
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.objects import ClusterSession, Ref


@dataclass
class OlmRequest:
    channel: str
    source: str
    source_namespace: str
    starting_csv: Optional[str]
    install_plan_approval: str  # Automatic | Manual
    wait: bool
    waiter: Waiter
    target: OlmPackage = field(default=DESCHEDULER_OLM)


@dataclass
class InstallState:
    """What the cluster says about the install, read in one go."""

    subscription: dict
    csv_name: Optional[str]
    csv: Optional[dict]
    crd_established: bool
    crd_name: str = DESCHEDULER_OLM.crd

    @property
    def phase(self) -> Optional[str]:
        return ((self.csv or {}).get("status") or {}).get("phase")

    @property
    def installed_csv(self) -> Optional[str]:
        return (self.subscription.get("status") or {}).get("installedCSV")

    def describe(self) -> str:
        status = self.subscription.get("status") or {}
        return (f"Subscription state {status.get('state') or '(none)'}, installedCSV "
                f"{self.installed_csv or '(none)'}, currentCSV {status.get('currentCSV') or '(none)'}, CSV phase "
                f"{self.phase or '(none)'}, CRD {self.crd_name} "
                f"{'established' if self.crd_established else 'not established'}")


def install(session: ClusterSession, request: OlmRequest) -> dict:
    target = request.target
    choice = resolve_channel(session, target.package, request.source, request.source_namespace, request.channel,
                             request.starting_csv)
    if request.starting_csv and request.install_plan_approval == "Automatic":
        session.warnings.append(
            f"starting_csv {request.starting_csv} with Automatic approval only sets the first version: OLM upgrades "
            f"to the channel head ({choice.head_csv}) on its own. Use install_plan_approval: Manual to pin a version")
    ensure_namespace(session, target)
    ensure_operator_group(session, target)
    subscription = ensure_subscription(session, request, choice)
    expected = expected_csv(request, choice, subscription)
    if session.check_mode or not request.wait:
        if request.install_plan_approval == "Manual":
            approve_expected_plans(session, expected, target)
        return report(session, read_state(session, subscription, target), choice, expected, request)
    state = wait_installed(session, request, subscription, expected)
    return report(session, state, choice, expected, request)


# ---- the objects ----------------------------------------------------------------------------------------------------

def ensure_namespace(session: ClusterSession, target: OlmPackage = DESCHEDULER_OLM) -> dict:
    # The descheduler's label lets the cluster monitoring stack scrape the operand; the operator refuses
    # Prometheus-based profiles without it (operator.md §1.5), and the console would set it during a UI install.
    labels = dict(target.namespace_labels)
    return session.ensure("namespace", Ref("Namespace", target.namespace),
                          {"metadata": {"labels": labels} if labels else {}})


def ensure_operator_group(session: ClusterSession, target: OlmPackage = DESCHEDULER_OLM) -> dict:
    namespace = target.namespace
    groups = session.list("OperatorGroup", namespace)
    if len(groups) > 1:
        names = ", ".join(g["metadata"]["name"] for g in groups)
        raise LifecycleError(f"namespace {namespace} has {len(groups)} OperatorGroups ({names}); OLM installs "
                             "nothing while there is more than one (TooManyOperatorGroups). Delete all but one")
    name = groups[0]["metadata"]["name"] if groups else target.operator_group_name
    # The CSV supports OwnNamespace/SingleNamespace only, so the group must target the operator's namespace.
    return session.ensure("operator_group", Ref("OperatorGroup", name, namespace),
                          {"spec": {"targetNamespaces": [namespace]}})


def find_subscription(session: ClusterSession, target: OlmPackage = DESCHEDULER_OLM) -> Optional[dict]:
    """The namespace's Subscription to the package, whatever its name (a console install may have named it)."""
    for subscription in session.list("Subscription", target.namespace):
        if (subscription.get("spec") or {}).get("name") == target.package:
            return subscription
    return None


def ensure_subscription(session: ClusterSession, request: OlmRequest, choice: CatalogChoice) -> dict:
    target = request.target
    existing = find_subscription(session, target)
    name = existing["metadata"]["name"] if existing else target.subscription_name
    spec = {
        "name": target.package,
        "channel": choice.channel,
        "source": choice.source,
        "sourceNamespace": choice.source_namespace,
        "installPlanApproval": request.install_plan_approval,
    }
    if request.starting_csv:
        spec["startingCSV"] = request.starting_csv
    return session.ensure("subscription", Ref("Subscription", name, target.namespace), {"spec": spec})


def expected_csv(request: OlmRequest, choice: CatalogChoice, subscription: dict) -> Optional[str]:
    """The only CSV a Manual InstallPlan may be approved for: the pin, else the channel head for a first install,
    else none (an upgrade that was not asked for)."""
    if request.starting_csv:
        return request.starting_csv
    if (subscription.get("status") or {}).get("installedCSV"):
        return None
    return choice.head_csv or None


# ---- InstallPlans ---------------------------------------------------------------------------------------------------

def our_plans(session: ClusterSession, target: OlmPackage = DESCHEDULER_OLM) -> list[dict]:
    return [plan for plan in session.list("InstallPlan", target.namespace)
            if any(str(name).startswith(target.csv_prefix) for name in plan_csvs(plan))]


def approve_expected_plans(session: ClusterSession, expected: Optional[str],
                           target: OlmPackage = DESCHEDULER_OLM) -> list[str]:
    """Approve the waiting InstallPlans that install ``expected``; the others stay waiting. Returns the approved."""
    approved = []
    for plan in our_plans(session, target):
        if (plan.get("spec") or {}).get("approved") or not expected or expected not in plan_csvs(plan):
            continue
        ref = Ref("InstallPlan", plan["metadata"]["name"], target.namespace)
        session.patch("install_plan_approval", ref, plan, {"spec": {"approved": True}}, "approve",
                      f"approved (installs {', '.join(plan_csvs(plan))})")
        approved.append(ref.name)
    return approved


# ---- waiting --------------------------------------------------------------------------------------------------------

def read_state(session: ClusterSession, subscription: dict, target: OlmPackage = DESCHEDULER_OLM) -> InstallState:
    name = subscription["metadata"]["name"]
    current = session.read(Ref("Subscription", name, target.namespace)) or subscription
    status = current.get("status") or {}
    csv_name = status.get("installedCSV") or status.get("currentCSV")
    csv = session.read(Ref("ClusterServiceVersion", csv_name, target.namespace)) if csv_name else None
    return InstallState(current, csv_name, csv, crd_established(session, target.crd), target.crd)


def crd_established(session: ClusterSession, crd_name: str = DESCHEDULER_OLM.crd) -> bool:
    return crd_readiness(session.read(Ref("CustomResourceDefinition", crd_name))).ready


def wait_installed(session: ClusterSession, request: OlmRequest, subscription: dict,
                   expected: Optional[str]) -> InstallState:
    target = request.target

    def observe() -> InstallState:
        if request.install_plan_approval == "Manual":
            approve_expected_plans(session, expected, target)  # OLM acts on it asynchronously: the next reads tell
        state = read_state(session, subscription, target)
        fail_fast(session, state, request, expected)
        return state

    def timed_out(last: InstallState) -> WaitTimeout:
        return WaitTimeout(f"the operator was not installed within {request.waiter.timeout:g}s: {last.describe()}",
                           observed=observed(last))

    waited = request.waiter.until(observe, lambda state: is_installed(state, request), timed_out)
    state = waited.value
    session.record("wait", f"ClusterServiceVersion {target.namespace}/{state.installed_csv}", "wait", False,
                   f"CSV Succeeded and CRD {target.crd} established after {waited.seconds:g}s",
                   seconds=waited.seconds)
    return state


def is_installed(state: InstallState, request: OlmRequest) -> bool:
    if not state.installed_csv or state.phase != "Succeeded" or not state.crd_established:
        return False
    if request.install_plan_approval == "Manual" and request.starting_csv:
        return state.installed_csv == request.starting_csv and state.csv_name == request.starting_csv
    return state.csv_name == state.installed_csv


def fail_fast(session: ClusterSession, state: InstallState, request: OlmRequest, expected: Optional[str]) -> None:
    """Stop waiting when the outcome is already known: a failed CSV, a resolution failure, or (Manual) a plan that
    proposes another CSV than the one asked for while nothing is installed."""
    csv_status = (state.csv or {}).get("status") or {}
    if state.phase == "Failed":
        raise LifecycleError(
            f"ClusterServiceVersion {state.csv_name} failed: {csv_status.get('reason') or '(no reason)'}: "
            f"{csv_status.get('message') or '(no message)'}",
            csv=state.csv_name, csv_phase="Failed", csv_reason=csv_status.get("reason"),
            csv_message=csv_status.get("message"))
    for condition in (state.subscription.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "ResolutionFailed" and condition.get("status") == "True":
            raise LifecycleError(f"OLM cannot resolve the Subscription: {condition.get('message')}",
                                 subscription_condition=condition)
    if request.install_plan_approval == "Manual" and not state.installed_csv:
        plans = our_plans(session, request.target)
        refused = [plan for plan in plans if not (plan.get("spec") or {}).get("approved")
                   and expected not in plan_csvs(plan)]
        if refused and not any(expected in plan_csvs(p) for p in plans):
            plan = refused[0]
            raise LifecycleError(
                f"InstallPlan {plan['metadata']['name']} proposes {', '.join(plan_csvs(plan))}, not the requested "
                f"{expected}; it was left unapproved. Set starting_csv to the version you want (it must be in the "
                f"channel), or approve the plan yourself", install_plan=plan["metadata"]["name"],
                proposed_csvs=plan_csvs(plan), requested_csv=expected)


# ---- the result -----------------------------------------------------------------------------------------------------

def observed(state: InstallState) -> dict:
    status = state.subscription.get("status") or {}
    return {"subscription_state": status.get("state"), "installed_csv": state.installed_csv,
            "current_csv": status.get("currentCSV"), "csv_phase": state.phase,
            "crd_established": state.crd_established}


def report(session: ClusterSession, state: InstallState, choice: CatalogChoice, expected: Optional[str],
           request: OlmRequest) -> dict:
    plans = [{"name": p["metadata"]["name"], "csvs": plan_csvs(p), "approved": bool((p.get("spec") or {}).get(
        "approved")), "phase": (p.get("status") or {}).get("phase")} for p in our_plans(session, request.target)]
    pending = [p for p in plans if not p["approved"] and (not expected or expected not in p["csvs"])]
    for plan in pending:
        session.warnings.append(
            f"InstallPlan {plan['name']} ({', '.join(plan['csvs'])}) waits for manual approval and was not approved: "
            "it is not the requested version. Set starting_csv to it to upgrade")
    spec = state.subscription.get("spec") or {}
    status = state.subscription.get("status") or {}
    return {
        "namespace": request.target.namespace,
        "catalog": choice.as_dict(),
        "subscription": {
            "name": state.subscription["metadata"]["name"], "channel": spec.get("channel"),
            "source": spec.get("source"), "source_namespace": spec.get("sourceNamespace"),
            "install_plan_approval": spec.get("installPlanApproval"), "starting_csv": spec.get("startingCSV"),
            "state": status.get("state"), "installed_csv": status.get("installedCSV"),
            "current_csv": status.get("currentCSV"),
        },
        "requested_csv": expected if request.install_plan_approval == "Manual" else None,
        "installed_csv": state.installed_csv,
        "installed_version": csv_version(state.csv, state.installed_csv, request.target.csv_prefix)
        if state.installed_csv else None,
        "csv_phase": state.phase,
        "crd_established": state.crd_established,
        "install_plans": plans,
        "pending_upgrade": pending[0] if pending and state.installed_csv else None,
    }
