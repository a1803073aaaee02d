"""A handle on a real cluster (TEST_KUBECONFIG) with the attributes tests use on the emulator:
`.kubeconfig`, `.context`, `.load(objects)`, `.get(...)`, `.api_client()`, `.is_emulator`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class RealCluster:
    is_emulator = False

    def __init__(self, kubeconfig: str | Path, context: str | None = None) -> None:
        self.kubeconfig = Path(kubeconfig)
        self.context = context or (yaml.safe_load(self.kubeconfig.read_text()) or {}).get("current-context")

    def api_client(self) -> Any:
        from kubernetes import config

        return config.new_client_from_config(str(self.kubeconfig), context=self.context)

    def load(self, objects: list[dict[str, Any]]) -> int:
        """Create the objects through the API (namespaces first, missing ones created), then write their status."""
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.exceptions import ConflictError

        with self.api_client() as client:
            dynamic = DynamicClient(client)
            namespaces = dynamic.resources.get(api_version="v1", kind="Namespace")
            wanted = {(o.get("metadata") or {}).get("namespace") for o in objects} - {None, ""}
            for name in sorted(wanted):
                try:
                    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
                except ConflictError:
                    pass
            for obj in objects:
                resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
                namespace = (obj.get("metadata") or {}).get("namespace") if resource.namespaced else None
                created = resource.create(body=obj, namespace=namespace)
                if obj.get("status") and "status" in (resource.subresources or {}):
                    body = created.to_dict()
                    body["status"] = obj["status"]
                    resource.status.replace(body=body, namespace=namespace)
        return len(objects)

    def get(self, kind: str, namespace: str | None, name: str, api_version: str = "v1") -> dict[str, Any] | None:
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.exceptions import NotFoundError

        with self.api_client() as client:
            resource = DynamicClient(client).resources.get(api_version=api_version, kind=kind)
            try:
                return resource.get(name=name, namespace=namespace).to_dict()
            except NotFoundError:
                return None
