"""Which cluster a client talks to: the UID of its ``kube-system`` namespace (created once with the cluster, never
renamed, different on every cluster, also after a restore into a new cluster) and the API server URL it was reached
at (the same cluster may be reached at several URLs, and a URL may point at a new cluster: the UID decides).

Plans and journals record the identity of the cluster they were made on; ``evict`` compares it before its first
eviction, and an inventory can pin the UID a host must have (``expected_cluster_uid``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import build_api_client
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError, ClusterError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw

IDENTITY_NAMESPACE = "kube-system"
IDENTITY_PATH = f"/api/v1/namespaces/{IDENTITY_NAMESPACE}"


class ClusterIdentityError(ClusterError):
    """The cluster is not the one expected, or cannot tell who it is."""


@dataclass(frozen=True)
class ClusterIdentity:
    uid: Optional[str]
    server: Optional[str]

    def as_dict(self) -> dict[str, Optional[str]]:
        return {"uid": self.uid, "server": self.server}

    def describe(self) -> str:
        return f"kube-system UID {self.uid or '(unknown)'} at {self.server or '(no server: a snapshot file)'}"

    @classmethod
    def from_dict(cls, value: Optional[Mapping[str, Any]]) -> Optional[ClusterIdentity]:
        if not isinstance(value, Mapping) or not value.get("uid"):
            return None
        return cls(uid=str(value["uid"]), server=value.get("server"))


def read_cluster_identity(api_client: Any) -> ClusterIdentity:
    """GET the kube-system namespace. The first call of a run: an API server that cannot be reached, or rejects
    the credentials, fails here with one message naming the server, before anything else is tried."""
    server = getattr(getattr(api_client, "configuration", None), "host", None)
    try:
        namespace = get_raw(api_client, IDENTITY_PATH, kind="Namespace")
    except ClusterApiError as error:
        if error.status == 403:
            raise ClusterIdentityError(
                f"cannot tell which cluster {server} is: {error.describe()}. The collection reads the UID of the "
                f"kube-system namespace to make sure it acts on the intended cluster: grant get on namespaces "
                f"(resourceNames [kube-system])") from error
        raise
    uid = ((namespace or {}).get("metadata") or {}).get("uid")
    if not uid:
        raise ClusterIdentityError(f"cannot tell which cluster {server} is: it has no kube-system namespace")
    return ClusterIdentity(uid=uid, server=server)


def connect_to_intended_cluster(params: Mapping[str, Any],
                                pinned_by: str = "expected_cluster_uid") -> tuple[Any, ClusterIdentity]:
    """The client of the connection options in ``params`` and the identity of the cluster it reaches, checked
    against the UID ``params[pinned_by]`` before anything else is read or written. Every module that talks to a
    cluster starts here and returns the identity as ``cluster_identity``; the roles' preflight too, with the
    inventory's ``descheduler_fleet_cluster_uid``."""
    api_client = build_api_client(params)
    try:
        identity = read_cluster_identity(api_client)
        check_expected_uid(identity, params.get(pinned_by), pinned_by)
    except BaseException:
        api_client.close()
        raise
    return api_client, identity


def identity_from_namespaces(namespaces: Iterable[Mapping[str, Any]], server: Optional[str]) -> ClusterIdentity:
    """The identity from listed (or snapshot) Namespace objects; uid None when kube-system is not among them."""
    for namespace in namespaces:
        metadata = namespace.get("metadata") or {}
        if metadata.get("name") == IDENTITY_NAMESPACE and metadata.get("uid"):
            return ClusterIdentity(uid=metadata["uid"], server=server)
    return ClusterIdentity(uid=None, server=server)


def check_expected_uid(identity: ClusterIdentity, expected_uid: Optional[str], option: str) -> None:
    """Raise when ``expected_uid`` (the option named ``option``) is set and is not this cluster's."""
    if not expected_uid or identity.uid == expected_uid:
        return
    raise ClusterIdentityError(
        f"{option}: this is not the intended cluster. Expected kube-system UID {expected_uid}, but the cluster "
        f"reached is {identity.describe()}. Check the connection (kubeconfig, context, host) of this inventory "
        f"host, or correct {option} if the cluster was rebuilt")


def check_same_cluster(recorded: Optional[Mapping[str, Any]], current: ClusterIdentity, what: str,
                       fix: str) -> None:
    """Raise when ``what`` (a plan, a journal) recorded another cluster's identity than ``current``'s.

    A record without an identity (made before identities were recorded, or from a snapshot without kube-system)
    is not refused here: callers say so in their result."""
    made_on = ClusterIdentity.from_dict(recorded)
    if made_on is None or current.uid is None or made_on.uid == current.uid:
        return
    raise ClusterIdentityError(
        f"{what} was made on another cluster ({made_on.describe()}) than the one reached ({current.describe()}); "
        f"nothing was done. {fix}")
