"""An in-process Kubernetes API emulator for the integration tests (see emulator.py for the tour)."""

from .api import AdmissionRequest, DeleteOptions, ListOptions, ObjectApi
from .auth import Auth
from .controllers import Controller, FewestPodsScheduler, ReplicaSetController, Scheduler
from .disruption import DisruptionController, compute_status, evict_pod
from .emulator import Emulator
from .errors import ApiError
from .faults import FaultRule, Faults
from .real_cluster import RealCluster
from .resources import Registry, ResourceType, Subresource
from .router import ResourceRequest
from .server import Request, Response, json_response, text_response
from .store import Store

__all__ = [
    "AdmissionRequest",
    "ApiError",
    "Auth",
    "Controller",
    "DeleteOptions",
    "DisruptionController",
    "Emulator",
    "FaultRule",
    "Faults",
    "FewestPodsScheduler",
    "ListOptions",
    "ObjectApi",
    "RealCluster",
    "Registry",
    "ReplicaSetController",
    "Request",
    "ResourceRequest",
    "ResourceType",
    "Response",
    "Scheduler",
    "Store",
    "Subresource",
    "compute_status",
    "evict_pod",
    "json_response",
    "text_response",
]
