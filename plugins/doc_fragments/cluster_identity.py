"""Documentation of ``expected_cluster_uid`` (module_utils/cluster/args.py IDENTITY_ARG_SPEC), the option with which
an inventory pins the cluster a module must reach. Use it with
``extends_documentation_fragment: [descheduler.fleet.cluster_identity]``."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  expected_cluster_uid:
    description:
      - The UID of the C(kube-system) namespace of the cluster this task must act on (C(kubectl get namespace
        kube-system -o jsonpath='{.metadata.uid}')).
      - The module reads the identity of the cluster it reaches before anything else and returns it as
        RV(cluster_identity). When this is set and the connection reaches another cluster, the task fails naming
        both, before anything is read or written.
      - The roles pass the inventory variable C(descheduler_fleet_cluster_uid) here.
    type: str
"""
