"""When a held Lease expires (cluster/lease.py): renewTime + leaseDurationSeconds, to the microsecond."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.lease import _expiry


def test_the_fraction_of_the_renewal_counts() -> None:
    """A Lease renewed at .9 s is not free at .0 s of its last second (taken early, two runs would overlap)."""
    spec = {"renewTime": "2026-11-26T17:31:49.907838Z", "leaseDurationSeconds": 10}
    assert _expiry(spec) == datetime(2026, 11, 26, 17, 31, 59, 907838, tzinfo=UTC)


@pytest.mark.parametrize("spec, expected", [
    ({"acquireTime": "2026-11-26T17:31:49.000000Z", "leaseDurationSeconds": 15},
     datetime(2026, 11, 26, 17, 32, 4, tzinfo=UTC)),
    ({"renewTime": "2026-11-26T18:31:49.5+01:00", "leaseDurationSeconds": 1},
     datetime(2026, 11, 26, 17, 31, 50, 500000, tzinfo=UTC)),
    ({"renewTime": "2026-11-26T17:31:49Z"}, datetime(2026, 11, 26, 17, 31, 49, tzinfo=UTC)),
    ({"renewTime": "yesterday", "leaseDurationSeconds": 10}, None),
    ({"leaseDurationSeconds": 10}, None),
])
def test_expiry_of_each_shape_of_lease(spec: dict, expected: datetime) -> None:
    assert _expiry(spec) == expected
