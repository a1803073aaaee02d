"""Deployments that roll out at once: what the deployment controller and the kubelets would report, without pods.

    emulator.add_controller(DeploymentRollout())

Every Deployment written with a new generation gets a status of a finished rollout (all replicas updated, ready
and available, observedGeneration current), so code that waits for a rollout can be tested. Opt-in: without it a
Deployment keeps the status it was written with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .controllers import Controller
from .resources import ResourceType
from .store import GroupResource, clone

if TYPE_CHECKING:
    from .emulator import Emulator

DEPLOYMENTS: GroupResource = ("apps", "deployments")


def rolled_out_status(deployment: dict[str, Any]) -> dict[str, Any]:
    replicas = int((deployment.get("spec") or {}).get("replicas", 1))
    return {
        **(deployment.get("status") or {}),
        "observedGeneration": deployment["metadata"].get("generation", 1),
        "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
        ],
    }


class DeploymentRollout(Controller):
    name = "deployment-rollout"
    watches = (DEPLOYMENTS,)

    def on_create(self, emulator: Emulator, resource_type: ResourceType, obj: dict[str, Any]) -> None:
        self._roll_out(emulator, resource_type, obj)

    def on_update(self, emulator: Emulator, resource_type: ResourceType, old: dict[str, Any],
                  new: dict[str, Any]) -> None:
        self._roll_out(emulator, resource_type, new)

    @staticmethod
    def _roll_out(emulator: Emulator, resource_type: ResourceType, deployment: dict[str, Any]) -> None:
        if deployment["metadata"].get("deletionTimestamp"):
            return
        status = rolled_out_status(deployment)
        if status == deployment.get("status"):
            return
        current = emulator.store.get(DEPLOYMENTS, deployment["metadata"]["namespace"], deployment["metadata"]["name"])
        if current is None:
            return
        updated = clone(current)
        updated["status"] = rolled_out_status(current)
        emulator.api.write(resource_type, updated, current)
