"""The Kube Descheduler Operator's profiles: names, presets, queries and limits (CRD + reconciler)."""

from __future__ import annotations

import re

ADMISSION_REJECTED = "admission-rejected"
DEGRADED_SCALE_TO_ZERO = "degraded-scale-to-0"
LOG_ONLY_IGNORED = "log-only-ignored"
# Two outcomes beyond the operator's own: it renders the policy, but the descheduler pod cannot run it, or Go's
# behaviour depends on the CPU architecture (so no faithful rendering exists).
OPERAND_FAILS = "operand-fails"
PLATFORM_DEPENDENT = "platform-dependent"
NOT_APPLICABLE = "n/a"
# A field the structural CRD does not have: the API server drops it, the operator never sees it.
PRUNED_BY_API_SERVER = "pruned-by-api-server"

ERROR = "error"
WARNING = "warning"

POLICY_API_VERSION = "descheduler/v1alpha2"
POLICY_KIND = "DeschedulerPolicy"
DEFAULT_PROMETHEUS_URL = "https://prometheus-k8s-openshift-monitoring.apps.cluster.invalid"
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
MONITORING_LABEL = ("openshift.io/cluster-monitoring", "true")
KUBEVIRT_SCHEDULABLE_LABEL = ("kubevirt.io/schedulable", "true")
KUBEVIRT_NODE_SELECTOR = "kubevirt.io/schedulable=true"
STATIC_PROTECTED_NAMESPACES = ("kube-system", "hypershift", "openshift")
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

# CRD enum order (type DeschedulerProfile).
PROFILES = (
    "AffinityAndTaints",
    "TopologyAndDuplicates",
    "LifecycleAndUtilization",
    "DevPreviewLongLifecycle",
    "LongLifecycle",
    "SoftTopologyAndDuplicates",
    "EvictPodsWithLocalStorage",
    "EvictPodsWithPVC",
    "CompactAndScale",
    "DevKubeVirtRelieveAndMigrate",
    "KubeVirtRelieveAndMigrate",
)
DEPRECATED_PROFILES = {
    "DevPreviewLongLifecycle": "LongLifecycle",
    "DevKubeVirtRelieveAndMigrate": "KubeVirtRelieveAndMigrate",
}
MODIFIER_PROFILES = ("EvictPodsWithPVC", "EvictPodsWithLocalStorage")
KUBEVIRT_PROFILES = ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate")
LIFECYCLE_PROFILES = ("LifecycleAndUtilization", "LongLifecycle", "DevPreviewLongLifecycle")
LOW_NODE_UTILIZATION_PROFILES = LIFECYCLE_PROFILES + KUBEVIRT_PROFILES
MAX_PROFILES = 11

# The CEL rules on spec.profiles, in CRD order (each pair may not be declared together).
CONFLICTING_PROFILES = (
    ("DevPreviewLongLifecycle", "LifecycleAndUtilization"),
    ("LongLifecycle", "LifecycleAndUtilization"),
    ("DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("LongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"),
    ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"),
    ("DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("LongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"),
    ("SoftTopologyAndDuplicates", "TopologyAndDuplicates"),
    ("CompactAndScale", "LifecycleAndUtilization"),
    ("CompactAndScale", "LongLifecycle"),
    ("CompactAndScale", "DevPreviewLongLifecycle"),
    ("CompactAndScale", "DevKubeVirtRelieveAndMigrate"),
    ("CompactAndScale", "KubeVirtRelieveAndMigrate"),
    ("CompactAndScale", "TopologyAndDuplicates"),
)

# Presets: (thresholds, targetThresholds) in percent. "" is a legal enum value with the default meaning.
LOW_NODE_UTILIZATION_PRESETS = {"Low": (10, 30), "Medium": (20, 50), "": (20, 50), "High": (40, 70)}
DEVIATION_PRESETS = {
    "Low": (10, 10),
    "Medium": (20, 20),
    "High": (30, 30),
    "AsymmetricLow": (0, 10),
    "AsymmetricMedium": (0, 20),
    "AsymmetricHigh": (0, 30),
}
HIGH_NODE_UTILIZATION_PRESETS = {"Minimal": 10, "Modest": 20, "": 20, "Moderate": 30}

PROMETHEUS_QUERIES = {
    "PrometheusCPUUsage": "instance:node_cpu:rate:sum",
    "PrometheusCPUPSIPressure": "rate(node_pressure_cpu_waiting_seconds_total[1m])",
    "PrometheusCPUPSIPressureByUtilization": (
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and "
        '(1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m]))) > 0.7 or '
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0"
    ),
    "PrometheusMemoryPSIPressure": "rate(node_pressure_memory_waiting_seconds_total[1m])",
    "PrometheusIOPSIPressure": "rate(node_pressure_io_waiting_seconds_total[1m])",
    "PrometheusCPUCombined": "descheduler:combined_utilization_and_pressure:avg1m",
    "PrometheusCPUMemoryCombinedProfile": "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m",
}
RAW_QUERY_PREFIX = "query:"
KUBEVIRT_DEFAULT_UTILIZATION_PROFILE = "PrometheusCPUMemoryCombinedProfile"
KUBEVIRT_DEFAULT_EVICTIONS_TOTAL = 5
KUBEVIRT_DEFAULT_EVICTIONS_PER_NODE = 2
DEFAULT_POD_LIFETIME_SECONDS = 86400
POD_RESTART_THRESHOLD = 100

LOG_LEVELS = ("", "Normal", "Debug", "Trace", "TraceAll")
# the operand's -v for each logLevel (manageDeployment; anything else is 2)
LOG_LEVEL_VERBOSITY = {"Normal": 2, "Debug": 4, "Trace": 6, "TraceAll": 8}
# (key, effect) of the soft-tainter's taints (pkg/softtainter/softtainter.go; their value is "true"). The operator
# finds them with taints.TaintExists, which matches on key and effect only, whatever the value.
SOFT_TAINTS = (("nodeutilization.descheduler.openshift.io/overutilized", "PreferNoSchedule"),
               ("nodeutilization.descheduler.openshift.io/appropriate", "PreferNoSchedule"))
MODES = ("Automatic", "Predictive")
MANAGEMENT_STATE_PATTERN = re.compile(r"^(Managed|Unmanaged|Force|Removed)$")
KUBEVIRT_MIGRATION_ARGS = (
    ("devMigrationCooldown", "migrationCooldown"),
    ("devMaxMigrationCooldown", "maxMigrationCooldown"),
    ("devMigrationHistoryWindow", "migrationHistoryWindow"),
)
EXTENSION_POINTS = ("balance", "deschedule", "filter", "preevictionfilter", "presort", "sort")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
UINT64_MODULUS = 2**64
