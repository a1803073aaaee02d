"""Documentation of ``field_validation`` (module_utils/cluster/args.py FIELD_VALIDATION_ARG_SPEC), for the modules
that take a KubeDescheduler spec. Use it with ``extends_documentation_fragment: [descheduler.fleet.field_validation]``.
"""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  field_validation:
    description:
      - What to do with fields of a C(KubeDescheduler) spec that C(operator.openshift.io/v1) does not have (a
        misspelt C(profileCustomisations) or C(modee)), named as the API server's C(fieldValidation).
      - C(Strict) fails the task before anything is planned or written, naming each field with the closest known one.
      - C(Warn) passes them on with a warning (the API server prunes them, as it does for a structural CRD) - for
        fields of a newer operator this collection does not know yet. C(Ignore) passes them on silently.
    type: str
    choices: [Strict, Warn, Ignore]
    default: Strict
"""
