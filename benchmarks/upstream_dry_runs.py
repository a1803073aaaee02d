"""Measure the real descheduler's spread: run it as a one-shot ``--dry-run`` process many times on one cluster.

    python benchmarks/upstream_dry_runs.py DESCHEDULER_BINARY OBJECTS.json POLICY.yaml RUNS EXPECTED

DESCHEDULER_BINARY is kubernetes-sigs/descheduler built from source (``go build ./cmd/descheduler`` in a checkout);
OBJECTS.json a JSON list of Nodes and Pods (uids are dropped; ownerReferences kept); EXPECTED the number of evictions
of a run that saw every pod. The script starts the test control plane of ``tests/controlplane`` (kube-apiserver and
etcd; no controller-manager, so no garbage collector removes pods whose owners do not exist, and no kubelet: pods
stay Pending on their node, which the descheduler lists like running ones), creates the objects, runs the binary
RUNS times with ``--descheduling-interval 0`` and prints, over the runs with EXPECTED evictions, how often each pod
and each set of pods was evicted. The figures in tests/unit/engine/test_sampling.py (UPSTREAM_*) come from it.

A run that evicts fewer pods started its cycle before the dry-run sandbox had mirrored every pod; they are counted
in ``totals`` and left out of the frequencies.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EVICTED = re.compile(r'Evicted pod in dry run mode" pod="([^"]+)"')


def start_control_plane(workdir: Path) -> Any:
    sys.path.insert(0, str(REPO / "tests"))
    from controlplane.launcher import ControlPlane, build_binaries

    class WithoutControllers(ControlPlane):
        def _start_controller_manager(self) -> None:  # owner references stay as written, no pod is replaced
            return None

    return WithoutControllers(build_binaries(), workdir).start()


def create_objects(kubeconfig: Path, objects: list[dict]) -> None:
    import kubernetes

    core = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(str(kubeconfig)))
    for obj in objects:
        if obj["kind"] == "Node":
            status = obj.pop("status")
            core.create_node(obj)
            core.patch_node_status(obj["metadata"]["name"], {"status": status})
    for namespace in sorted({o["metadata"].get("namespace", "default") for o in objects if o["kind"] == "Pod"}):
        if namespace != "default":
            core.create_namespace({"metadata": {"name": namespace}})
        # no controller-manager: the ServiceAccount admission needs the account to exist
        core.create_namespaced_service_account(namespace, {"metadata": {"name": "default"}})
    for obj in objects:
        if obj["kind"] == "Pod":
            obj["metadata"].pop("uid", None)
            for container in obj["spec"]["containers"]:
                container["image"] = container.get("image") or "registry.k8s.io/pause:3.10"
            core.create_namespaced_pod(obj["metadata"].get("namespace", "default"), obj)


def measure(binary: str, kubeconfig: Path, policy: str, runs: int, expected: int) -> dict:
    totals: collections.Counter = collections.Counter()
    pods: collections.Counter = collections.Counter()
    sets: collections.Counter = collections.Counter()
    for _run in range(runs):
        done = subprocess.run([binary, "--kubeconfig", str(kubeconfig), "--policy-config-file", policy, "--dry-run",
                               "--descheduling-interval", "0", "--v", "1"], capture_output=True, text=True,
                              timeout=120, check=False)
        names = EVICTED.findall(done.stdout + done.stderr)
        totals[len(names)] += 1
        if len(names) == expected:
            pods.update(set(names))
            sets[",".join(sorted(set(names)))] += 1
    complete = totals[expected]
    return {"runs": runs, "totals": dict(totals), "complete": complete, "sets": dict(sets),
            "frequency": {name: round(count / max(complete, 1), 3) for name, count in sorted(pods.items())}}


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__)
        return 2
    binary, objects_path, policy, runs, expected = argv
    objects = json.loads(Path(objects_path).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="upstream-dry-runs-") as workdir:
        plane = start_control_plane(Path(workdir))
        try:
            create_objects(plane.kubeconfig, objects)
            print(json.dumps(measure(binary, plane.kubeconfig, policy, int(runs), int(expected)), indent=1))
        finally:
            plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
