"""Documentation of ``page_size`` (module_utils/cluster/args.py LISTING_ARG_SPEC), for the modules that list a
live cluster. Use it with ``extends_documentation_fragment: [descheduler.fleet.listing]``."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  page_size:
    description: Objects per page when listing a live cluster (C(limit)/C(continue) paging).
    type: int
    default: 500
"""
