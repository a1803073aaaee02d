"""Start a real Kubernetes control plane on 127.0.0.1 for the integration tests.

    binaries = build_binaries()                  # tests/controlplane/build.sh: cached, built once per machine
    with ControlPlane(binaries, workdir) as plane:
        plane.kubeconfig                         # admin (system:masters) client certificate, context "controlplane"

What runs: etcd (embedded, etcd/main.go), kube-apiserver (RBAC on, `Node,RBAC` authorization, service-account
tokens) and kube-controller-manager with every default controller except node lifecycle, which would mark the
nodes NotReady and evict their pods because no kubelet sends heartbeats. kube-scheduler is started only when
asked (`scheduler=True`); by default the kubelet stand-in places pods (tests/integration/kubelet_standin.py).
Every process logs to a file in `workdir`; `log_tail()` returns the end of each for failure reports.

A fleet of clusters (tests/integration/conftest.py `fleet_clusters`) adds planes that share the first one's etcd:
    ControlPlane(binaries, workdir2, etcd_url=plane.etcd_url, etcd_prefix="/fleet-2/registry")
has its own certificates, kube-apiserver (storing under that prefix: a separate cluster) and
kube-controller-manager, and no etcd of its own; stop it before the plane that runs the etcd.
"""

from __future__ import annotations

import os
import random
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from .certs import CertificateAuthority, Pair, service_account_keys

HERE = Path(__file__).resolve().parent
CONTEXT = "controlplane"
SERVICE_CIDR = "10.96.0.0/16"
START_TIMEOUT = 120.0


class ControlPlaneError(RuntimeError):
    pass


def build_binaries() -> Path:
    """The directory holding the four binaries; builds them first when the cache has none for these sources."""
    completed = subprocess.run(["bash", str(HERE / "build.sh")], stdout=subprocess.PIPE, stderr=None, text=True,
                               check=False)
    if completed.returncode != 0:
        raise ControlPlaneError(f"tests/controlplane/build.sh failed (exit {completed.returncode}); see its "
                                "output above. TEST_KUBECONFIG runs the suite on a cluster of yours instead.")
    return Path(completed.stdout.strip().splitlines()[-1])


# Ports for the servers a test session starts, below Linux's ephemeral range (32768-60999 by default), so no client
# connection of this or another process can take one between the probe and the server's bind; each pytest-xdist
# worker (PYTEST_XDIST_WORKER=gw<N>) probes its own block, so parallel workers never pick the same port. A second
# session started beside them (make test runs compat beside integration) moves to other blocks with
# TEST_PORT_BLOCK_OFFSET.
PORT_BLOCK_BASE, PORT_BLOCK_SIZE, PORT_BLOCKS = 20000, 1500, 8
_next_port: list[int] = []


def _port_block() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    offset = int(os.environ.get("TEST_PORT_BLOCK_OFFSET", "0"))
    index = ((int(worker[2:]) if worker[2:].isdigit() else 0) + offset) % PORT_BLOCKS
    start = PORT_BLOCK_BASE + index * PORT_BLOCK_SIZE
    return range(start, start + PORT_BLOCK_SIZE)


def free_port() -> int:
    """A port of this worker's block that nothing holds, handed out in turn (a stopped server's port is not
    offered again until the block wraps). Starts at a random place in the block, so two sessions on one machine
    rarely probe the same ports."""
    block = _port_block()
    if not _next_port:
        _next_port.append(block.start + random.randrange(block.stop - block.start))
    for _attempt in range(len(block)):
        port = _next_port[0]
        _next_port[0] = block.start + (port + 1 - block.start) % len(block)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise ControlPlaneError(f"no free port in {block.start}-{block.stop - 1}")


def write_kubeconfig(path: Path, server: str, ca: Path | None, client: Pair | None, context: str = CONTEXT) -> Path:
    """A kubeconfig with one context; no CA and no client for a plain-HTTP server (the fault proxy)."""
    cluster: dict[str, str] = {"server": server}
    if ca:
        cluster["certificate-authority"] = str(ca)
    user = {"client-certificate": str(client.cert), "client-key": str(client.key)} if client else {}
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": user}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
    }
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    log: Path

    def tail(self, lines: int = 60) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class ControlPlane:
    binaries: Path
    workdir: Path
    scheduler: bool = False
    processes: list[Process] = field(default_factory=list)
    kubelet: Any = None  # the KubeletStandIn the test fixture attaches
    etcd_url: str | None = None  # another plane's etcd: this plane then starts none (a fleet's extra cluster)
    etcd_prefix: str | None = None  # kube-apiserver's --etcd-prefix; each cluster sharing an etcd needs its own

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.kubeconfig = self.workdir / "admin.kubeconfig"
        self.context = CONTEXT

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        try:
            self._write_credentials()
            if self.etcd_url is None:
                self._start_etcd()
            self._start_apiserver()
            self._start_controller_manager()
            if self.scheduler:
                self._start_scheduler()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.popen.poll() is None:
                process.popen.terminate()
        for process in reversed(self.processes):
            try:
                # The state is thrown away: no reason to wait for kube-apiserver's graceful drain of watches.
                process.popen.wait(timeout=3)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait()
        self.processes.clear()

    def kill_apiserver(self) -> None:
        """SIGKILL kube-apiserver alone (a crash): etcd and the other components stay; clients are refused until
        `start_apiserver()` serves the same port again."""
        process = next(p for p in self.processes if p.name == "kube-apiserver")
        process.popen.kill()
        process.popen.wait()
        self.processes.remove(process)

    def start_apiserver(self) -> None:
        """kube-apiserver again, on the same port, certificates and etcd prefix (its log appended to)."""
        self._start_apiserver()

    def log_tail(self, lines: int = 60) -> str:
        return "\n\n".join(f"==== {p.name} ({p.log}) ====\n{p.tail(lines)}" for p in self.processes)

    def check_alive(self) -> None:
        """Raise with the logs when a component exited (a crash would otherwise look like a test failure)."""
        dead = [p for p in self.processes if p.popen.poll() is not None]
        if dead:
            raise ControlPlaneError(f"{', '.join(p.name for p in dead)} exited:\n{self.log_tail()}")

    # ---- components --------------------------------------------------------------------------------------------

    def _write_credentials(self) -> None:
        pki = self.workdir / "pki"
        pki.mkdir(exist_ok=True)
        self.ca = CertificateAuthority(pki)
        self.serving = self.ca.issue("apiserver", "kube-apiserver", server_names=(
            "127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local", "10.96.0.1"))
        self.service_account = service_account_keys(pki)
        admin = self.ca.issue("admin", "test-admin", organization="system:masters")
        write_kubeconfig(self.kubeconfig, self.url, self.ca.pair.cert, admin)
        self.admin = admin
        for component in ("kube-controller-manager", "kube-scheduler"):
            client = self.ca.issue(component, f"system:{component}")
            write_kubeconfig(self.workdir / f"{component}.kubeconfig", self.url, self.ca.pair.cert, client)

    def _spawn(self, name: str, *args: str) -> Process:
        log = self.workdir / f"{name}.log"
        with log.open("ab") as sink:
            popen = subprocess.Popen([str(self.binaries / name), *args], stdout=sink, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir, start_new_session=True)
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def _start_etcd(self) -> None:
        self.etcd_url = f"http://127.0.0.1:{free_port()}"
        etcd = self._spawn("etcd", f"--data-dir={self.workdir / 'etcd'}", f"--client-url={self.etcd_url}",
                           f"--peer-url=http://127.0.0.1:{free_port()}")
        self._wait(lambda: "etcd ready" in etcd.log.read_text(errors="replace"), "etcd to be ready")

    def _start_apiserver(self) -> None:
        pki = self.workdir / "pki"
        self._spawn(
            "kube-apiserver",
            f"--etcd-servers={self.etcd_url}",
            *([f"--etcd-prefix={self.etcd_prefix}"] if self.etcd_prefix else []),
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={self.serving.cert}", f"--tls-private-key-file={self.serving.key}",
            f"--client-ca-file={self.ca.pair.cert}",
            f"--service-account-key-file={self.service_account.cert}",
            f"--service-account-signing-key-file={self.service_account.key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            # Tests create nodes already Ready; without the node lifecycle controller nobody would lift the
            # not-ready taint this admission plugin puts on every new node.
            "--disable-admission-plugins=TaintNodesByCondition",
            "--profiling=false", "--v=1",
        )
        self._wait(self._apiserver_ready, "kube-apiserver /readyz")

    def _start_controller_manager(self) -> None:
        kubeconfig = self.workdir / "kube-controller-manager.kubeconfig"
        self._spawn(
            "kube-controller-manager",
            f"--kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
            f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
            # No kubelet heartbeats here: node lifecycle would taint every node and evict its pods. Nothing here
            # attaches volumes, autoscales or sets quotas, and only kubelets read the TTL controller's node
            # annotation; those four controllers' loops (attach-detach every 100 ms, the autoscaler every 15 s,
            # quota's informers on every resource) are a fifth to a third of an idle controller-manager's CPU.
            "--controllers=*,-node-lifecycle-controller,-persistentvolume-attach-detach-controller,"
            "-horizontal-pod-autoscaler-controller,-resourcequota-controller,-ttl-controller",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={self.service_account.key}",
            f"--root-ca-file={self.ca.pair.cert}",
            f"--cluster-signing-cert-file={self.ca.pair.cert}", f"--cluster-signing-key-file={self.ca.pair.key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--leader-elect=false", "--profiling=false", "--v=1",
        )
        # The serviceaccount and token controllers working is the sign that the controllers run.
        self._wait(lambda: self._get("/api/v1/namespaces/default/serviceaccounts/default") == 200,
                   "kube-controller-manager to create the default ServiceAccount")

    def _start_scheduler(self) -> None:
        kubeconfig = self.workdir / "kube-scheduler.kubeconfig"
        self._spawn("kube-scheduler", f"--kubeconfig={kubeconfig}", "--bind-address=127.0.0.1",
                    f"--secure-port={free_port()}", f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=false", "--v=1")

    # ---- probes ------------------------------------------------------------------------------------------------

    def admin_ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca.pair.cert))
        context.load_cert_chain(str(self.admin.cert), str(self.admin.key))
        return context

    def _get(self, path: str) -> int:
        try:
            with urllib.request.urlopen(self.url + path, context=self.admin_ssl_context(), timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except (urllib.error.URLError, OSError):
            return 0

    def _apiserver_ready(self) -> bool:
        return self._get("/readyz") == 200

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            if ready():
                return
            time.sleep(0.25)
        raise ControlPlaneError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.log_tail()}")
