"""The running digest of a scope's content: a homomorphic set hash over every stored value.

The lab keeps one per scope and updates it in the same RocksDB WriteBatch as the values it
covers (server/store/store.py); the evaluator recomputes it from the frozen inputs alone
(evaluator/evaluate/snapshot.py). Equal digests mean the lab holds exactly the values the
fixture, the graph and the prepare state prescribe, without reading them back (docs/design.md §6;
the argument and its limits: docs/full-scale.md, "Proving the store did not change").

The content is the set of (family, value) pairs of four column families: `memories` (each
memory's current value), `memory_revisions` (every revision), `bindings` and `relations`, each
value in its stored canonical JSON bytes (the values carry their own ids and revisions, so the
keys add nothing). The journal, the idempotency entries and the credentials are bookkeeping, not
content: the fence covers the journal.

The hash is LtHash (Bellare and Micciancio's lattice hash, in the lthash16 parametrisation of
Lewi, Kim, Maykov and Weis, "Securing Update Propagation with Homomorphic Hashing", 2019: 1,024
lanes of 16 bits, about 200 bits of collision resistance under the short-integer-solution
problem), with SHAKE-256 (hashlib) expanding each element to its 2,048 bytes. Adding a value adds
its lanes mod 2^16, removing one subtracts them, so the digest depends on the set and not on the
order of the writes: the evaluator can recompute it without knowing in which batches, or after
how many crashes and replays, prepare wrote the content. XOR of SHA-256 would be cheaper and is
not a set hash an attacker cannot steer: with a few hundred chosen values, linear algebra over
GF(2) hits any target.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable

import numpy as np

SCHEME = "lthash16-1024-shake256-v1"
FAMILIES = ("memories", "memory_revisions", "bindings", "relations")
LANES = 1024
_DOMAIN = b"graph-retrieval-lab running digest v1\x00"
_EMPTY = {family: 0 for family in FAMILIES}


def element(family: str, value: bytes) -> bytes:
    """The 2,048 bytes (1,024 little-endian uint16 lanes) of one stored value. Canonical JSON never
    holds a raw NUL (it escapes control characters), so family and value cannot run together."""
    return hashlib.shake_256(_DOMAIN + family.encode("ascii") + b"\x00" + value).digest(2 * LANES)


def _lanes(elements: list[bytes]) -> np.ndarray:
    """The lane-wise sum mod 2^16 of some elements."""
    if not elements:
        return np.zeros(LANES, dtype=np.uint16)
    stacked = np.frombuffer(b"".join(elements), dtype="<u2").reshape(len(elements), LANES)
    return (stacked.sum(axis=0, dtype=np.uint64) & 0xFFFF).astype(np.uint16)


class RunningDigest:
    """A scope's running digest: the lanes and the number of values per family."""

    def __init__(self, lanes: np.ndarray | None = None, counts: dict | None = None):
        self.lanes = np.zeros(LANES, dtype=np.uint16) if lanes is None else lanes.astype(np.uint16, copy=True)
        self.counts = dict(_EMPTY) if counts is None else {family: int(counts[family]) for family in FAMILIES}

    def copy(self) -> RunningDigest:
        return RunningDigest(self.lanes, self.counts)

    def add(self, family: str, values: Iterable[bytes]) -> None:
        elements = [element(family, v) for v in values]
        self.lanes += _lanes(elements)  # uint16 arithmetic wraps: mod 2^16 per lane
        self.counts[family] += len(elements)

    def remove(self, family: str, values: Iterable[bytes]) -> None:
        elements = [element(family, v) for v in values]
        self.lanes -= _lanes(elements)
        self.counts[family] -= len(elements)

    def hexdigest(self) -> str:
        """SHA-256 of the scheme name and the lanes: what a route answers and a check compares."""
        return hashlib.sha256(SCHEME.encode("ascii") + b"\x00" + self.lanes.astype("<u2").tobytes()).hexdigest()

    def summary(self) -> dict:
        return {"scheme": SCHEME, "digest": self.hexdigest(), "counts": dict(self.counts)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunningDigest) and self.counts == other.counts \
            and bool(np.array_equal(self.lanes, other.lanes))

    # ------------------------------------------------------------ persisted form (plain JSON)

    def to_json(self) -> dict:
        return {"scheme": SCHEME, "counts": dict(self.counts),
                "lanes_base64": base64.b64encode(self.lanes.astype("<u2").tobytes()).decode("ascii")}

    @classmethod
    def from_json(cls, value: dict) -> RunningDigest:
        if value.get("scheme") != SCHEME:
            raise ValueError(f"running digest scheme {value.get('scheme')!r}, this code reads {SCHEME}")
        lanes = np.frombuffer(base64.b64decode(value["lanes_base64"]), dtype="<u2")
        if lanes.shape != (LANES,):
            raise ValueError(f"running digest holds {lanes.size} lanes, not {LANES}")
        return cls(lanes, value["counts"])
