"""KubevirtMigrationAware (OpenShift fork, KubeVirt profile) simulated from the VMIs and VMIMs a snapshot carries.

The plugin (openshift-virtualization/kubevirt-descheduler-plugins) finds a virt-launcher pod's VMI through the pod's
``kubevirt.io/domain`` annotation and:

- Filter: blocks the pod while the VMI's ``status.migrationState`` has a ``startTimestamp`` and no ``endTimestamp``;
- PreEvictionFilter: defers it while the last migration's cooldown runs: max(migrationCooldown, its duration),
  doubled for each further completion in migrationHistoryWindow (its history is seeded from Succeeded VMIMs), capped
  at maxMigrationCooldown.

A pod without the annotation, or whose VMI is not in the snapshot, passes (the plugin fails open too). It is registered
in engine/plugins/__init__.py as a Filter and PreEvictionFilter plugin; its Filter runs with the PreEvictionFilters
(``filter_at_eviction``), at eviction time: for LowNodeUtilization, the only plugin of the profile, the result is the
same, and the pods it spares keep the reason they had.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.durations import parse_go_duration
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.errors import PolicyError
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import parse_time

NAME = "KubevirtMigrationAware"
DOMAIN_ANNOTATION = "kubevirt.io/domain"
KINDS = frozenset(["VirtualMachineInstance", "VirtualMachineInstanceMigration"])
ARG_DEFAULTS = {"migrationCooldown": 15 * 60.0, "maxMigrationCooldown": 6 * 3600.0,
                "migrationHistoryWindow": 48 * 3600.0}
R_IN_PROGRESS = "VM live migration in progress (KubevirtMigrationAware Filter)"


def durations(args: Mapping[str, Any], field: str) -> dict[str, float]:
    """The args in seconds, validated as upstream (ValidateKubevirtMigrationAwareArgs), then defaulted (0 → default)."""
    unknown = sorted(set(args) - set(ARG_DEFAULTS))
    if unknown:
        raise PolicyError(f"{field}.{unknown[0]}", args[unknown[0]],
                          f"unknown field; KubevirtMigrationAware takes {', '.join(ARG_DEFAULTS)}")
    seconds = {}
    for key in ARG_DEFAULTS:
        raw = args.get(key)
        try:
            seconds[key] = 0.0 if raw in (None, "") else parse_go_duration(str(raw))
        except ValueError as exc:
            raise PolicyError(f"{field}.{key}", raw, str(exc)) from exc
        if seconds[key] < 0:
            raise PolicyError(f"{field}.{key}", raw, f"{key} must be non-negative")
    if 0 < seconds["maxMigrationCooldown"] < seconds["migrationCooldown"]:
        # the operand refuses it too (ValidateKubevirtMigrationAwareArgs): its pod fails at start
        raise PolicyError(f"{field}.maxMigrationCooldown", args.get("maxMigrationCooldown"),
                          f"maxMigrationCooldown must be >= migrationCooldown ({args.get('migrationCooldown')}); the "
                          "descheduler refuses this policy when it starts (KubevirtMigrationAware's validation), so "
                          "it runs no cycle to plan")
    return {key: value or ARG_DEFAULTS[key] for key, value in seconds.items()}


class MigrationRecords:
    """VMIs by (namespace, name) and Succeeded VMIM completion times by VMI UID, from the snapshot."""

    def __init__(self, objects: list[Mapping[str, Any]]) -> None:
        self.vmis: dict[tuple[str, str], Mapping[str, Any]] = {}
        completions: list[tuple[str, str, float]] = []
        for obj in objects:
            meta = obj.get("metadata") or {}
            key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
            if obj.get("kind") == "VirtualMachineInstance":
                self.vmis[key] = obj
            elif (obj.get("status") or {}).get("phase") == "Succeeded":
                end = _time(((obj.get("status") or {}).get("migrationState") or {}).get("endTimestamp"))
                vmi = str((obj.get("spec") or {}).get("vmiName") or "")
                if end is not None and vmi:
                    completions.append((key[0], vmi, end))
        self.completions: dict[str, list[float]] = {}
        for namespace, vmi, end in completions:
            found = self.vmis.get((namespace, vmi))
            if found is not None:  # upstream resolves the VMI's UID through its cache; gone VMIs are skipped
                uid = str((found.get("metadata") or {}).get("uid") or f"{namespace}/{vmi}")
                self.completions.setdefault(uid, []).append(end)

    def vmi_of(self, pod: Any) -> Optional[Mapping[str, Any]]:
        name = pod.annotations.get(DOMAIN_ANNOTATION)
        return None if name is None else self.vmis.get((pod.namespace, name))


def _time(text: Any) -> Optional[float]:
    try:
        return parse_time(text) if text else None
    except ValueError:
        return None


def _migration(vmi: Mapping[str, Any]) -> tuple[Optional[float], Optional[float], bool]:
    """(start, end, in progress) of the VMI's last migration."""
    state = (vmi.get("status") or {}).get("migrationState") or {}
    start_text, end_text = state.get("startTimestamp"), state.get("endTimestamp")
    return _time(start_text), _time(end_text), bool(start_text) and not end_text


def in_progress_check(handle: Any, pod: Any, records: MigrationRecords) -> Optional[str]:
    vmi = records.vmi_of(pod)
    if vmi is None:
        return None
    return R_IN_PROGRESS if _migration(vmi)[2] else None


def cooldown_check(handle: Any, pod: Any, records: MigrationRecords, args: dict[str, float]) -> Optional[str]:
    vmi = records.vmi_of(pod)
    if vmi is None:
        return None
    start, end, _running = _migration(vmi)
    if end is None:
        return None
    cooldown = args["migrationCooldown"]
    if start is not None and end - start > cooldown:
        cooldown = end - start
    uid = str((vmi.get("metadata") or {}).get("uid") or "")
    cutoff = handle.now - args["migrationHistoryWindow"]
    count = sum(1 for t in records.completions.get(uid, ()) if t > cutoff)
    limit = args["maxMigrationCooldown"]
    # doubled for each completion beyond the first in the window, never past the cap
    cooldown = min(cooldown * 2 ** max(count - 1, 0), limit)
    elapsed = handle.now - end
    if elapsed < cooldown:
        return (f"VM migrated {int(elapsed // 60)}m ago, cooldown {int(cooldown // 60)}m after {count or 1} "
                "migration(s) (KubevirtMigrationAware PreEvictionFilter)")
    return None


def validate(args: Mapping[str, Any], field: str) -> None:
    """upstream's validation; the defaults apply when the plugin is built (the plan shows the args as given)."""
    durations(args, field)


def new(args: Mapping[str, Any], context: Any) -> KubevirtMigrationAware:
    """The profile's plugin (context: framework.BuildContext)."""
    return KubevirtMigrationAware(args, context.snapshot, context.profile.name)


class KubevirtMigrationAware:
    """Filter: a migration in progress; PreEvictionFilter: the cooldown after the last one."""

    def __init__(self, args: Mapping[str, Any], snapshot: Any, profile: str) -> None:
        self.records = MigrationRecords(snapshot.kubevirt_objects)
        self.args = durations(args or {}, f"profile {profile} {NAME}")
        self.warnings = [] if self.records.vmis else [
            f"profile {profile}: {NAME} found no VirtualMachineInstance in the snapshot: migrations in progress and "
            "cooldowns are unknown, so every VM is treated as evictable (record the VMIs and "
            "VirtualMachineInstanceMigrations with the snapshot)"]

    def filter(self, handle: Any, pod: Any) -> Optional[str]:
        return in_progress_check(handle, pod, self.records)

    def pre_eviction_filter(self, handle: Any, pod: Any) -> Optional[str]:
        return cooldown_check(handle, pod, self.records, self.args)
