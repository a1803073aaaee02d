"""Documentation of the report options (module_utils/cluster/args.py REPORT_ARG_SPEC), for the modules that write
their result as report files. Use it with ``extends_documentation_fragment: [descheduler.fleet.report]``; the
module's description names the files."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  report_dir:
    description:
      - When set, write the result there as the report files the module's description names, and return their
        paths in RV(report_files). The directory is created if needed.
      - The files are written in check mode too; they change no cluster.
    type: path
  cluster_name:
    description: Name of the cluster, returned in C(cluster) and shown in the reports.
    type: str
  report_template_dir:
    description:
      - A directory of Jinja2 templates that replace the shipped report templates of the same name (for example
        C(plan.html), C(plan_evictions.html), C(plan.md), C(style.css), C(macros.html)); the others stay as shipped.
        HTML templates are autoescaped. See docs/reports.md for the names and how to print a shipped template.
      - A template that does not render fails the task before any report file is written.
    type: path
"""
