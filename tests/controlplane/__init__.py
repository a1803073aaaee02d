"""A real Kubernetes control plane (kube-apiserver, kube-controller-manager, etcd, optional kube-scheduler) for the
integration tests, built from Go sources pinned in go.mod. See README.md here."""

from .launcher import ControlPlane, ControlPlaneError, build_binaries, free_port, write_kubeconfig

__all__ = ["ControlPlane", "ControlPlaneError", "build_binaries", "free_port", "write_kubeconfig"]
