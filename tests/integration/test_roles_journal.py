"""The record a rollout keeps (rollout/record.py) and the roles without rollout controls, and the KubeDescheduler
restore, through ansible-playbook on the session's control plane with the operator stand-in (#45):

- the tune role, on a cluster whose record shows a change an earlier rollout did not finish, fails with the record
  shown and writes nothing (``tune_on_interrupted: fail``, the default); ``rollback`` puts the recorded last good spec
  back first, then tunes; a rerun converges. The earlier rollout's record is written with the collection's own
  journal writer, as a cancelled rollout leaves it (test_rollout_transaction makes one by SIGTERM).
- a rollout's rollback writes back a KubeDescheduler spec that had no managementState exactly as it was (the rule
  that refuses such a spec is for specs users give), and the operator's refusal of it, as before the change, is not
  a failed rollback. The change fails on its operand's progress deadline, written by the test once the operator
  rendered the change (`deadline_passed`): no timing decides the order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.rollout.record import write_record
from operator_support import descheduler_operator
from playbook import REPO, run_playbook, run_tasks
from standins.descheduler_operator import GENERATION_ANNOTATION, OPERAND, OPERATOR_NAMESPACE
from standins.rest import Rest, path, wait_until
from test_rollout_ownership import deadline_passed, in_thread, join_checked

KD = path("operator.openshift.io/v1", "kubedeschedulers", OPERATOR_NAMESPACE, "cluster")
KDS = path("operator.openshift.io/v1", "kubedeschedulers", OPERATOR_NAMESPACE)
RECORD = path("v1", "configmaps", OPERATOR_NAMESPACE, "descheduler-fleet-last-good")
OPERAND_DEPLOYMENT = path("apps/v1", "deployments", OPERATOR_NAMESPACE, OPERAND)
KEY = "kubedescheduler.json"
GOOD = {"managementState": "Managed", "mode": "Predictive", "deschedulingIntervalSeconds": 3600,
        "profiles": ["AffinityAndTaints"]}
LEFT = {**GOOD, "deschedulingIntervalSeconds": 1800}  # what the unfinished change wrote
TUNED = {**GOOD, "deschedulingIntervalSeconds": 600}  # what the tune role is given


def connection(kube: Any) -> dict[str, str]:
    return {"kubeconfig": str(kube.kubeconfig), "context": kube.context}


def recorded(rest: Rest) -> dict[str, Any]:
    return json.loads(rest.get(RECORD)["data"][KEY])


def rendered(rest: Rest) -> str | None:
    """The KubeDescheduler generation the operator rendered into the operand."""
    template = ((rest.get(OPERAND_DEPLOYMENT) or {}).get("spec") or {}).get("template") or {}
    return ((template.get("metadata") or {}).get("annotations") or {}).get(GENERATION_ANNOTATION)


def tune(kube: Any, tmp_path: Path, *extra: str) -> Any:
    host = {"ansible_connection": "local", "tune_wait_sleep": 1, "tune_wait_timeout": 120,
            "descheduler_fleet_connection": connection(kube), "tune_spec": TUNED}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"clusters": {"hosts": {"c1": host}}}))
    return run_playbook(REPO / "playbooks" / "tune.yml", "-i", str(inventory), *extra)


def test_tune_role_resolves_an_unfinished_rollout_per_on_interrupted(kube: Any, tmp_path: Path) -> None:
    with descheduler_operator(kube) as operator:
        rest = operator.rest
        rest.create(KDS, {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                          "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE}, "spec": LEFT})
        client = kube.api_client()
        try:  # a rollout from GOOD to LEFT, cancelled and not rolled back within its grace period
            write_record(client, OPERATOR_NAMESPACE, KEY, GOOD, run_id="earlier-run", state="interrupted",
                         change_id="0123456789ab", intended={"state": "present", "spec": LEFT})
        finally:
            client.close()
        kd_before, record_before = rest.get(KD), rest.get(RECORD)

        for args in ((), ("--check",)):  # fail (the default), in check mode too: the record shown, nothing written
            refused = tune(kube, tmp_path, *args)
            assert refused.returncode != 0, refused.stdout[-5000:]
            assert f"the record {OPERATOR_NAMESPACE}/descheduler-fleet-last-good shows a change that did not finish" \
                in refused.stdout, refused.stdout[-5000:]
            assert "interrupted" in refused.stdout and "earlier-run" in refused.stdout
            assert "c1: FAILED" in refused.stdout
            kd = rest.get(KD)  # its status is the operator's: the spec and its generation are what a change moves
            assert kd["spec"] == kd_before["spec"]
            assert kd["metadata"]["generation"] == kd_before["metadata"]["generation"]
            assert rest.get(RECORD)["metadata"]["resourceVersion"] == record_before["metadata"]["resourceVersion"]

        # rollback: GOOD back first (a spec change: one generation), then the tune's own (another one)
        rolled = tune(kube, tmp_path, "-e", "tune_on_interrupted=rollback")
        assert rolled.returncode == 0, rolled.stdout[-5000:]
        kd = rest.get(KD)
        assert kd["spec"]["deschedulingIntervalSeconds"] == TUNED["deschedulingIntervalSeconds"]
        assert kd["metadata"]["generation"] == kd_before["metadata"]["generation"] + 2
        record = recorded(rest)
        assert (record["state"], record["present"], record["spec"]["deschedulingIntervalSeconds"]) == (
            "rolled-back", True, GOOD["deschedulingIntervalSeconds"])

        again = tune(kube, tmp_path)  # the record is settled: the default (fail) runs, and nothing changes
        assert again.returncode == 0, again.stdout[-5000:]
        assert "c1: already tuned" in again.stdout
        assert rest.get(KD)["metadata"]["generation"] == kd["metadata"]["generation"]
        assert recorded(rest) == record


def test_a_spec_without_management_state_is_restored_as_it_was(kube: Any, tmp_path: Path) -> None:
    """The cluster's KubeDescheduler lacks managementState (an older operator's or a user's): the operator degrades
    and scales the descheduler to 0. A rollout to a Managed spec fails on its operand's progress deadline and rolls
    back: the old spec is written back exactly, and the operator refuses it as before the change."""
    with descheduler_operator(kube) as operator:
        rest = operator.rest
        rest.create(KDS, {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
                          "metadata": {"name": "cluster", "namespace": OPERATOR_NAMESPACE}, "spec": GOOD})
        wait_until(lambda: rendered(rest) == "1" and (rest.get(OPERAND_DEPLOYMENT).get("status") or {}).get(
            "readyReplicas") == 1, 120, 0.2, "the operand of the Managed spec to run")
        older = {key: value for key, value in GOOD.items() if key != "managementState"}
        rest.change(KD, lambda kd: kd.update(spec=older))  # as an older tool wrote it: the API server admits it

        def refused_and_settled() -> bool:
            deployment, kd = rest.get(OPERAND_DEPLOYMENT), rest.get(KD)
            status = deployment.get("status") or {}
            degraded = [c for c in (kd.get("status") or {}).get("conditions") or []
                        if c["type"].endswith("Degraded") and c["status"] == "True"]
            return bool(degraded) and deployment["spec"]["replicas"] == 0 and not status.get("replicas") \
                and status.get("observedGeneration") == deployment["metadata"]["generation"]

        wait_until(refused_and_settled, 120, 0.2, "the operator to degrade and scale the descheduler to 0")
        before = rest.get(KD)
        operator.operand_ready = False  # the change's operand never becomes ready
        task = {"descheduler.fleet.rollout": {
            "clusters": [{"name": "c1", "connection": connection(kube), "spec": TUNED}],
            "progress_deadline": 900, "min_success_time": 2, "gate_interval": 1, "wait_sleep": 1,
            "run_id": "restore-unmanaged"}, "register": "rollout", "ignore_errors": True}
        outcome: dict[str, Any] = {}
        thread = in_thread(lambda: outcome.update(zip(("process", "results"), run_tasks(tmp_path, [task]),
                                                      strict=True)))
        change = str(before["metadata"]["generation"] + 1)
        wait_until(lambda: rendered(rest) == change, 120, 0.2, f"the operator to render generation {change}")
        deadline_passed(rest, OPERAND_DEPLOYMENT, lambda d: (d.get("status") or {}).get("updatedReplicas") == 1)
        join_checked(thread)

        cluster = outcome["results"]["rollout"]["clusters"]["c1"]
        assert cluster["status"] == "rolled_back", cluster
        assert f"Deployment {OPERAND} exceeded its progress deadline" in cluster["error"], cluster["error"]
        assert cluster["rollback"]["ok"] and cluster["rollback"]["breaches_after"] == []
        assert cluster["rollback"]["as_before_the_change"], cluster["rollback"]  # refused, as before the change
        assert "the spec restored has no managementState, as before the change" in cluster["rollback"]["msg"]
        after = rest.get(KD)
        assert after["spec"] == before["spec"] and "managementState" not in after["spec"]
        assert after["metadata"]["generation"] == before["metadata"]["generation"] + 2
        record = recorded(rest)
        assert record["state"] == "rolled-back" and record["spec"] == cluster["last_good"]["spec"]
        assert "managementState" not in record["spec"]
        assert rest.get(OPERAND_DEPLOYMENT)["spec"]["replicas"] == 0
