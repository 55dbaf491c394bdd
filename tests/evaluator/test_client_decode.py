"""The evaluator's page parser (evaluator/connection/client.py `decode`) gives exactly what
`json.loads` gives: same values and same types, on canonical pages and on every document where
orjson alone would differ or refuse."""

from __future__ import annotations

import json
import random
import struct

import pytest

from evaluator.connection.client import decode
from ground.canonical import canonical


def same(a, b) -> bool:
    """Equal values of equal types, all the way down (1 is not 1.0, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


@pytest.mark.parametrize("text", [
    b'{"a": 1, "a": 2}', b"123456789012345678901234567890", b"[18446744073709551615, 18446744073709551616]",
    b"-9223372036854775809", b'"\\ud800"', b"-0.0", b"0.1e-320", b"1e308", b"-1.7976931348623157e308",
    b'{"k": 1.0, "j": 1, "i": 10000000000000000000.5}', '\ufeff{"bom": true}'.encode("utf-8"),
    '{"utf16": [1, 2.5]}'.encode("utf-16"), b'"caf\\u00e9 \\n \xc3\xa9"',
])
def test_documents_where_orjson_alone_differs(text):
    assert same(decode(text), json.loads(text))


@pytest.mark.parametrize("text", [b"NaN", b"[1, Infinity]", b"-Infinity", b"1e400", b'{"a": [-1e309]}',
                                  b"123456789012345678901234567890.5e400"])
def test_non_finite_numbers_are_refused(text):
    with pytest.raises(ValueError, match="non-finite|overflows"):
        decode(text)


def test_bad_json_is_refused_like_json_loads():
    for text in (b"{", b"[1,]", b"", b"\xff"):
        with pytest.raises(ValueError):
            json.loads(text)
        with pytest.raises(ValueError):
            decode(text)


@pytest.mark.heavy  # a sweep of floats of every magnitude
def test_floats_of_every_magnitude_and_canonical_pages():
    rng = random.Random(3)
    floats = []
    while len(floats) < 20000:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            floats.append(x)
    floats += [rng.random() * 10 ** rng.randint(-8, 8) for _ in range(20000)]
    page = {"hits": [{"id": f"m-{i:05d}", "score": x, "rank": i, "payload": None, "exact": f"{i}/7",
                      "channels": {"bm25": {"score": -x, "rank": i + 1}}} for i, x in enumerate(floats)],
            "fence": 123456789, "text": "naïve \u2028 \t \"quoted\""}
    text = canonical(page)
    assert same(decode(text), json.loads(text))
    for x in floats[:5000]:
        for written in (repr(x), f"{x:.17g}", f"{x:.15e}"):
            assert same(decode(written.encode()), json.loads(written))
