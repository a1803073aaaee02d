"""The names OLM gives the operator's objects, as the API server accepts them."""

from __future__ import annotations

import re

from ansible_collections.descheduler.fleet.plugins.module_utils.operator.names import (
    OLM_OWNER_LABEL,
    OPERATOR_NAMESPACE,
    PACKAGE,
)

# a qualified label key: optional DNS-subdomain prefix, a name of at most 63 characters (validation.IsQualifiedName)
LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def test_the_olm_component_label_is_a_valid_key_cut_to_63_characters() -> None:
    prefix, name = OLM_OWNER_LABEL.split("/")
    assert prefix == "operators.coreos.com"
    assert LABEL_NAME.match(name), name  # the API server would refuse a longer one: OLM cuts it
    assert name == f"{PACKAGE}.{OPERATOR_NAMESPACE}"[:63] and len(f"{PACKAGE}.{OPERATOR_NAMESPACE}") > 63
