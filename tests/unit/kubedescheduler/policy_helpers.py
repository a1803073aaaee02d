"""What the KubeDescheduler policy tests share: the operator's test namespaces, spec builders and finding
filters (test_policy.py renders, test_policy_validation.py validates)."""

from __future__ import annotations

from pathlib import Path

import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.policy import (
    render_policy,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.kubedescheduler.validation_findings import (
    Finding,
)

FIXTURES = Path(__file__).parent / "fixtures" / "kubedescheduler"
# The namespaces the operator's unit tests create; openshift-* ones become protected.
NAMESPACES = ["openshift-kube-scheduler", "kube-system", "openshift-kube-descheduler-operator"]
PROTECTED = [
    "kube-system",
    "hypershift",
    "openshift",
    "openshift-kube-descheduler-operator",
    "openshift-kube-scheduler",
]
PROMETHEUS_URL = "https://prometheus-k8s-openshift-monitoring.apps.example.com"
KUBEVIRT_NODES = [
    {"metadata": {"name": "node1", "labels": {"kubevirt.io/schedulable": "true"}}},
    {"metadata": {"name": "node2", "labels": {"kubevirt.io/schedulable": "true"}}},
]


def make_spec(profiles: list[str] | None = None, customizations: dict | None = None, **extra) -> dict:
    spec: dict = {"deschedulingIntervalSeconds": 3600, "mode": "Predictive", "managementState": "Managed"}
    if profiles is not None:
        spec["profiles"] = profiles
    if customizations is not None:
        spec["profileCustomizations"] = customizations
    spec.update(extra)
    return spec


def load_fixture(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())


def render(spec: dict, **kwargs) -> dict:
    kwargs.setdefault("namespaces", NAMESPACES)
    kwargs.setdefault("prometheus_url", PROMETHEUS_URL)
    return render_policy(spec, **kwargs)


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def warnings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "warning"]


def only(findings: list[Finding], field_prefix: str, severity: str) -> Finding:
    matching = [f for f in findings if f.severity == severity and f.field.startswith(field_prefix)]
    assert len(matching) == 1, [f.message for f in findings]
    return matching[0]


def profile_named(policy: dict, name: str) -> dict:
    return next(p for p in policy["profiles"] if p["name"] == name)


def plugin_args(profile: dict, plugin: str) -> dict:
    return next(c["args"] for c in profile["pluginConfig"] if c["name"] == plugin)


def assert_names_field_and_fix(finding: Finding) -> None:
    assert finding.message.startswith(finding.field + "=")
    assert "Fix: " in finding.message
    assert finding.fix and finding.fix in finding.message


KUBEVIRT = ["DevKubeVirtRelieveAndMigrate"]
