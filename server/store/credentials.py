"""Bearer credentials: random tokens from `secrets`, stored only as SHA-256, bound to one scope.

The store keeps the hashes (so a leaked DBDIR leaks no usable token); this class keeps the same
map in memory for the per-request check. A restart with --reopen revokes every earlier token and
issues a fresh one in the new access file: the access file is the only way in.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import datetime, timezone

from server.errors import ApiError
from server.store.store import Store

DEFAULT_TTL_SECONDS = 24 * 3600


def iso_utc(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Credentials:
    def __init__(self, store: Store):
        self._store = store
        self._known = dict(store.credentials())

    def mint(self, scope: str, ttl_seconds: int, now: float | None = None, may_mint: bool = False) -> dict:
        """A new token for `scope`. Only the lab's own credential (the access file's, minted at
        start with may_mint) can mint others; a minted token cannot, or any holder of any scope's
        token could give itself a token for every other scope and the 403 boundary would be moot."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(32)
        value = {"scope": scope, "issued_at": iso_utc(now), "expires_at": iso_utc(now + ttl_seconds),
                 "expires_epoch": int(now) + ttl_seconds, "may_mint": may_mint}
        self._store.put_credential(_hash(token), value)
        self._known[_hash(token)] = value
        return {"token": token, "scope": scope, "issued_at": value["issued_at"], "expires_at": value["expires_at"]}

    def revoke_all(self) -> None:
        self._store.revoke_credentials()
        self._known.clear()

    def check(self, authorization: str | None, scope: str | None = None) -> dict:
        """The credential behind an Authorization header; 401 if absent/wrong/expired, 403 off-scope."""
        if not authorization:
            raise ApiError(401, "missing_token", "Authorization: Bearer <token> is required")
        kind, _, token = authorization.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise ApiError(401, "missing_token", "the Authorization header must be 'Bearer <token>'")
        value = self._known.get(_hash(token.strip()))
        if value is None:
            raise ApiError(401, "invalid_token", "the bearer token is not known to this lab")
        if time.time() >= value["expires_epoch"]:
            raise ApiError(401, "expired_token", f"the bearer token expired at {value['expires_at']}")
        if scope is not None and scope != value["scope"]:
            raise ApiError(403, "wrong_scope", f"this token is bound to scope {value['scope']!r}, not {scope[:80]!r}")
        return value
