"""The claims and PersistentVolumes the volume filters read (VolumeBinding, VolumeZone), from the snapshot.

Only the snapshot's view exists here: no StorageClasses (so an unbound claim's binding mode is unknown), no CSINode
limits, no capacity. A running pod's claims are bound, so its replacement's are too: the bound case is the one that
decides where a replacement can go.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.model import (
    PersistentVolume,
    PersistentVolumeClaim,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.engine.snapshot import Snapshot


class Storage:
    __slots__ = ("claims", "volumes")

    def __init__(self, claims: Mapping[tuple[str, str], PersistentVolumeClaim],
                 volumes: Mapping[str, PersistentVolume]) -> None:
        self.claims = claims
        self.volumes = volumes

    @classmethod
    def from_snapshot(cls, snapshot: Any) -> Optional[Storage]:
        """None when the snapshot holds no PersistentVolumes list: the volume filters then pass every node (a
        profile note says so) rather than call every bound claim's volume missing."""
        if not getattr(snapshot, "volumes_listed", False):
            return None
        return cls(snapshot.claims, snapshot.persistent_volumes)

    @classmethod
    def from_objects(cls, objects: list[Mapping[str, Any]]) -> Storage:
        """From raw PersistentVolumeClaim and PersistentVolume objects, read as a snapshot reads them (tests,
        callers without a Snapshot); the volumes count as listed even when there are none."""
        snapshot = Snapshot(objects)
        return cls(snapshot.claims, snapshot.persistent_volumes)

    def claim(self, namespace: str, name: str) -> Optional[PersistentVolumeClaim]:
        return self.claims.get((namespace, name))
