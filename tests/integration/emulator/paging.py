"""Continue tokens shaped like kube-apiserver's (base64url JSON `{"v","rv","start"}`), plus the page number and
issue time the emulator needs for fault injection and TTL expiry."""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass, field

from .errors import bad_request
from .store import ObjectKey

TOKEN_VERSION = "meta.k8s.io/v1"
INCONSISTENT = -1  # a token that continues at the current revision (handed out with 410 Expired)


@dataclass(frozen=True)
class ContinueToken:
    revision: int
    last_key: ObjectKey  # the next page starts after this key
    page: int  # pages served before this token's page
    issued_at: float = field(default_factory=time.time)

    def encode(self) -> str:
        namespace, name = self.last_key
        start = f"{namespace}/{name}\x00" if namespace else f"{name}\x00"
        payload = {"v": TOKEN_VERSION, "rv": self.revision, "start": start, "page": self.page,
                   "issued": round(self.issued_at, 3)}
        raw = json.dumps(payload, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    def inconsistent(self) -> ContinueToken:
        return ContinueToken(INCONSISTENT, self.last_key, self.page)


def decode(token: str) -> ContinueToken:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        payload = json.loads(raw)
        if payload.get("v") != TOKEN_VERSION:
            raise ValueError(f"unsupported continue version {payload.get('v')!r}")
        start = payload["start"].rstrip("\x00")
        namespace, _slash, name = start.rpartition("/")
        return ContinueToken(int(payload["rv"]), (namespace, name), int(payload.get("page", 1)),
                             float(payload.get("issued", time.time())))
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
        raise bad_request(f"continue key is not valid: {exc}") from None
