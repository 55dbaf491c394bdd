"""Canonical JSON and the digests built on it (docs/design.md §3).

The definition is frozen: it reproduces the published reference cohort, so changing a single
separator would silently change every id and selection in the system.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def digest(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical form of a parsed JSON value."""
    return hashlib.sha256(canonical(value)).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Raw-byte SHA-256 of a file, streamed (source data files are hashed as bytes, not values)."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()
