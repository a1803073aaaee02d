"""What a real API server does on its own and the emulator does not, filled in for the stand-ins' sake.

Only used when the backend is the emulator; on a real kube-apiserver these come with the server:
- the KubeDescheduler CRD's structural schema at admission (defaults, pruning of unknown fields, the enum/minimum/CEL
  rejections): the emulator stores custom resources as they come, so an admission hook applies the same rules;
- the admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy(Binding) types (built in since Kubernetes 1.30);
- Deployments rolled out to pods (kube-controller-manager + kubelets): `workloads.Workloads`;
- pod logs (kubelets): `log_sink` writes them into the emulator's log buffers.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation import (
    validate_kubedescheduler_spec,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.vocabulary import (
    ADMISSION_REJECTED,
    ERROR,
)
from emulator import errors
from emulator.api import AdmissionRequest
from emulator.resources import STATUS, ResourceType

from .descheduler_operator import OPERATOR_NAMESPACE
from .workloads import Workloads

KUBEDESCHEDULERS = ("operator.openshift.io", "kubedeschedulers")
CRD_DEFAULTS = {"mode": "Predictive", "logLevel": "Normal", "operatorLogLevel": "Normal"}
SPEC_FIELDS = ("managementState", "logLevel", "operatorLogLevel", "observedConfig", "unsupportedConfigOverrides",
               "deschedulingIntervalSeconds", "profiles", "mode", "evictionLimits", "profileCustomizations")


def admit_kubedescheduler(request: AdmissionRequest) -> None:
    """The KubeDescheduler CRD's schema and CEL rules, as the API server applies them (kubedescheduler_types.py)."""
    if request.resource_type.group_resource != KUBEDESCHEDULERS or request.object is None or request.subresource:
        return
    obj = request.object
    name = obj["metadata"].get("name", "")
    if name != "cluster":
        raise errors.invalid("KubeDescheduler", KUBEDESCHEDULERS[0], name, [{
            "reason": "FieldValueInvalid", "field": "<nil>",
            "message": "Invalid value: \"object\": kubedescheduler is a singleton, .metadata.name must be 'cluster'"}])
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        for key in [k for k in spec if k not in SPEC_FIELDS]:
            del spec[key]  # structural schema: unknown fields are pruned
        for key, value in CRD_DEFAULTS.items():
            spec.setdefault(key, value)
    rejected = [f for f in validate_kubedescheduler_spec(spec) if f.severity == ERROR
                and f.operator_behaviour == ADMISSION_REJECTED]
    if rejected:
        raise errors.invalid("KubeDescheduler", KUBEDESCHEDULERS[0], name, [
            {"reason": "FieldValueInvalid", "field": f.field, "message": f.operator_message or f.message}
            for f in rejected])


def serve_admission_policy_types(emulator: Any) -> None:
    for kind, plural, subresources in (("ValidatingAdmissionPolicy", "validatingadmissionpolicies", (STATUS,)),
                                       ("ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", ())):
        if not emulator.registry.versions_of("admissionregistration.k8s.io", plural):
            emulator.register_type(ResourceType("admissionregistration.k8s.io", "v1", kind, plural, False,
                                                subresources=subresources, tracks_generation=True))


def fill_in(emulator: Any) -> Workloads:
    """Everything above for one emulator; returns the started Workloads stand-in (stop it at the end)."""
    if admit_kubedescheduler not in emulator.admission_hooks:
        emulator.add_admission(admit_kubedescheduler)
    serve_admission_policy_types(emulator)
    return Workloads(emulator.api_client(), [OPERATOR_NAMESPACE]).start()


def log_sink(emulator: Any) -> Any:
    def write(namespace: str, pod: str, container: str | None, text: str) -> None:
        emulator.set_pod_log(namespace, pod, text, container)

    return write
