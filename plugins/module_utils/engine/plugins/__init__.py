"""The registry of descheduler plugins (upstream pkg/descheduler/setupplugins.go): one line per plugin.

A plugin name the policy enables or configures must be registered here; what each extension point asks of a plugin
is written down in engine/framework.py (docs/extending/add-a-descheduler-plugin.md). Plugin modules are imported
statically so that Ansible bundles them with the modules that plan.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ansible_collections.descheduler.fleet.plugins.module_utils.engine import evictor as defaultevictor
from ansible_collections.descheduler.fleet.plugins.module_utils.engine import kubevirt_migration
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.framework import (
    BALANCE,
    DESCHEDULE,
    FILTER,
    PRE_EVICTION_FILTER,
    Registration,
    Registry,
)
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

EVICTOR_POINTS = (FILTER, PRE_EVICTION_FILTER)


def strategy(module: ModuleType, *points: str, **options: Any) -> Registration:
    """A deschedule/balance plugin module: its NAME, validate(args, field), set_defaults(args) and the functions
    named after its extension points."""
    return Registration(module.NAME, points, module.validate, module.set_defaults, plugin=module, **options)


def register_default_plugins(registry: Registry) -> None:
    registry.register(Registration(defaultevictor.NAME, EVICTOR_POINTS, defaultevictor.validate_args,
                                   new=defaultevictor.new, config_warnings=defaultevictor.config_warnings,
                                   evictor_order=-1))
    registry.register(strategy(lownodeutilization, BALANCE))
    registry.register(strategy(highnodeutilization, BALANCE, validate_volcano=highnodeutilization.validate_volcano))
    registry.register(strategy(removeduplicates, BALANCE))
    registry.register(strategy(podantiaffinity, DESCHEDULE))
    registry.register(strategy(nodeaffinity, DESCHEDULE))
    registry.register(strategy(nodetaints, DESCHEDULE, order_free=True))
    registry.register(strategy(topologyspread, BALANCE))
    registry.register(strategy(toomanyrestarts, DESCHEDULE, order_free=True))
    registry.register(strategy(podlifetime, DESCHEDULE, order_free=True))
    registry.register(strategy(removefailedpods, DESCHEDULE, order_free=True))
    registry.register(strategy(loadaware, BALANCE, PRE_EVICTION_FILTER, new=loadaware.new,
                               pre_eviction_filter_with_balance=True))
    registry.register(Registration(kubevirt_migration.NAME, EVICTOR_POINTS, kubevirt_migration.validate,
                                   new=kubevirt_migration.new, filter_at_eviction=True, evictor_order=1))


REGISTRY = Registry()
register_default_plugins(REGISTRY)
