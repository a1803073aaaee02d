"""The registry of strategy plugins: one module per upstream plugin, imported statically so Ansible bundles them."""

from __future__ import annotations

from types import ModuleType

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plugins import (
    highnodeutilization,
    loadaware,
    lownodeutilization,
    nodeaffinity,
    nodetaints,
    podantiaffinity,
    podlifetime,
    removeduplicates,
    removefailedpods,
    toomanyrestarts,
    topologyspread,
)

REGISTRY: dict[str, ModuleType] = {
    module.NAME: module
    for module in (
        lownodeutilization,
        highnodeutilization,
        removeduplicates,
        podantiaffinity,
        nodeaffinity,
        nodetaints,
        topologyspread,
        toomanyrestarts,
        podlifetime,
        removefailedpods,
        loadaware,
    )
}
