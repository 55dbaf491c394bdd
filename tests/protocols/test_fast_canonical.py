"""ground/fast_canonical.py's `compact` and `digest_finite` give the bytes and digests of their
Python definitions on values of every shape a journal line or a page holds (the page renderer
`render` is compared on real pages of every route in tests/server/test_wire.py)."""

from __future__ import annotations

import json
import random
import struct

from ground.canonical import digest
from ground.fast_canonical import compact, digest_finite


def plain(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def values(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        bits = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        return bits if bits == bits and abs(bits) != float("inf") else 0.5
    if kind == 1:
        return rng.random() * 10 ** rng.randint(-9, 17) * rng.choice([-1, 1])
    if kind == 2:
        return rng.choice([0, -1, 2**53 + 1, 2**63 - 1, -2**63, 2**64, 10**30, rng.randint(-10**6, 10**6)])
    if kind == 3:
        return "".join(rng.choice(["a", "é", "\n", "\"", "\\", "\u2028", "\x01", "3e-", "0.0000", "😀", "\t"])
                       for _ in range(rng.randrange(8)))
    if kind == 4:
        return rng.choice([None, True, False])
    if kind == 5:
        return rng.choice([1e-5, 1e-7, 1.5e16, 1e22, 0.0001, 123456789.125, -0.0])
    if kind in (6, 7):
        return {f"k{rng.randrange(50)}{rng.choice(['', 'é', 'Z'])}": values(rng, depth + 1) for _ in range(rng.randrange(6))}
    return [values(rng, depth + 1) for _ in range(rng.randrange(6))]


def test_compact_and_digest_finite_are_their_definitions():
    rng = random.Random(5)
    for _ in range(4000):
        value = values(rng)
        assert compact(value) == plain(value)
        assert digest_finite(value) == digest(value)


def test_a_journal_entry_keeps_its_key_order():
    entry = {"order": 3, "job": {"z": 1, "a": 0.1, "http_ms": 1e-05}, "row": None}
    assert compact(entry) == plain(entry) == b'{"order":3,"job":{"z":1,"a":0.1,"http_ms":1e-05},"row":null}'
