"""What the upstream and Volcano flavors share (operator/descheduler_config.py): the same refusal of --dry-run in
automatic mode, naming each flavor's own option, and the same labels, with each flavor's app name."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.operator import upstream, volcano
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.args import (
    UPSTREAM_ARG_SPEC,
    VOLCANO_ARG_SPEC,
    defaults,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.operator.errors import LifecycleError

FLAVORS = [
    ("upstream", upstream, upstream.UpstreamRequest, UPSTREAM_ARG_SPEC),
    ("volcano", volcano, volcano.VolcanoRequest, VOLCANO_ARG_SPEC),
]


@pytest.mark.parametrize("option, flavor, request_type, spec", FLAVORS)
def test_dry_run_in_extra_args_is_refused_in_automatic_mode(option, flavor, request_type, spec) -> None:
    request = request_type(**dict(defaults(spec), mode="automatic", extra_args=["--dry-run=true"]))
    with pytest.raises(LifecycleError) as caught:
        flavor.validate(None, request)  # refused before the session is used
    assert caught.value.details["field"] == f"{option}.extra_args"
    assert str(caught.value) == (f"{option}.extra_args holds --dry-run while {option}.mode is automatic; set "
                                 f"{option}.mode: predictive instead")


@pytest.mark.parametrize("option, flavor, request_type, spec", FLAVORS)
def test_labels_name_the_flavor_and_the_instance(option, flavor, request_type, spec) -> None:
    request = request_type(**dict(defaults(spec), name="mine", version="v9"))
    assert flavor.selector_labels(request) == {"app.kubernetes.io/name": flavor.APP_NAME,
                                               "app.kubernetes.io/instance": "mine"}
    assert flavor.labels(request) == {"app.kubernetes.io/name": flavor.APP_NAME, "app.kubernetes.io/instance": "mine",
                                      "app.kubernetes.io/version": "v9",
                                      "app.kubernetes.io/managed-by": "descheduler.fleet"}
