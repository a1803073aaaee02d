"""Documentation of the OLM Subscription options (module_utils/cluster/args.py OLM_ARG_SPEC), for the modules that
install an operator through OLM. Use it with ``extends_documentation_fragment: [descheduler.fleet.olm]``; the module's
description names the package and its namespace."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  channel:
    description: The package channel to subscribe to.
    type: str
    default: stable
  source:
    description: The CatalogSource offering the package.
    type: str
    default: redhat-operators
  source_namespace:
    description: The namespace of O(source).
    type: str
    default: openshift-marketplace
  starting_csv:
    description:
      - The CSV to install, for example C(clusterkubedescheduleroperator.v5.3.2) (Kube Descheduler Operator) or
        C(secondaryscheduleroperator.v1.4.0) (Secondary Scheduler Operator); it must be in O(channel).
      - With O(install_plan_approval=Manual) it is a version pin; only the InstallPlan for this CSV is approved, and
        changing it to a newer CSV of the channel approves that upgrade.
      - With C(Automatic) approval OLM upgrades past it on its own (a warning says so).
    type: str
  install_plan_approval:
    description:
      - The Subscription's C(installPlanApproval).
      - With C(Manual), only the InstallPlan that installs the requested CSV is approved (O(starting_csv), else the
        channel head for a first install); an InstallPlan for any other version, such as an upgrade that was not
        asked for, is left waiting and reported in RV(pending_upgrade).
    type: str
    choices: [Automatic, Manual]
    default: Automatic
"""
