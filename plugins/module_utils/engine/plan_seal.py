"""The seal of a plan: sha256 digests over what executing it uses, computed when the plan is written, so that evict
executes only the plan that was reviewed (docs/plan-format.md, "seal").

What is sealed: each eviction's ``EXECUTED_FIELDS`` (one short digest per entry, in order, so a difference can be
named), the plan's ``now``, the UID of the cluster it was made on and the sha256 of its policy. The digest detects
any edit of those; it is not a signature (whoever edits the plan can compute a new seal): the published summary and
the run store keep the digest of the plan that was reviewed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional

SEAL_VERSION = 1
ALGORITHM = "sha256"
# what the executor reads of an eviction (executor/targets.py): which pod, where, and the Eviction's reason
EXECUTED_FIELDS = ("order", "namespace", "name", "uid", "node", "owner", "plugin", "profile", "reason")
SEALED_FIELDS = ("now", "cluster_uid", "policy_sha256", "evictions")
ENTRY_DIGEST_CHARS = 16  # 64 bits per entry: enough to tell an edited entry, small at 150,000 evictions


def canonical(value: Any) -> bytes:
    """One byte string per JSON value, whatever the key order or spacing it was read with."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


def sha256(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def entry_digest(entry: Any) -> str:
    executed = {name: entry.get(name) for name in EXECUTED_FIELDS} if isinstance(entry, Mapping) else entry
    return sha256(executed)[:ENTRY_DIGEST_CHARS]


def policy_digest(policy: Any) -> Optional[str]:
    return sha256(policy) if policy is not None else None


def sealed_fields(plan: Mapping[str, Any], policy_sha256: Optional[str]) -> dict[str, Any]:
    """The plan's sealed fields as they are now (``policy_sha256`` given: a plan passed without its policy)."""
    identity = plan.get("cluster_identity")
    return {
        "now": plan.get("now"),
        "cluster_uid": identity.get("uid") if isinstance(identity, Mapping) else None,
        "policy_sha256": policy_sha256,
        "evictions": len(plan.get("evictions") or []),
    }


def seal_digest(fields: Mapping[str, Any], entries: list[str]) -> str:
    return sha256({"version": SEAL_VERSION, **{name: fields.get(name) for name in SEALED_FIELDS}, "entries": entries})


def seal_plan(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The seal of a plan as written: stored as its ``seal``."""
    entries = [entry_digest(entry) for entry in plan.get("evictions") or []]
    fields = sealed_fields(plan, policy_digest(plan.get("policy")))
    return {
        "version": SEAL_VERSION,
        "algorithm": ALGORITHM,
        **fields,
        "entries": entries,
        "digest": seal_digest(fields, entries),
    }


def compact_seal(seal: Any) -> Optional[dict[str, Any]]:
    """The seal without its per-entry digests: what summaries publish (the digest still covers every entry)."""
    if not isinstance(seal, Mapping):
        return None
    return {key: value for key, value in seal.items() if key != "entries"}
