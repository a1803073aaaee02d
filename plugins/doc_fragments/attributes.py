"""The meaning of the ``check_mode`` and ``diff_mode`` attributes, said once for every module of the collection.

Use it with ``extends_documentation_fragment: [descheduler.fleet.attributes]``; the module gives each attribute's
``support`` and, in ``details``, what it does in that mode. (ansible.builtin.action_common_attributes says the same
of a target host, and adds a ``platform`` attribute that means nothing for a cluster API.)"""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying the cluster.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
"""
