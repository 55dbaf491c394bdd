"""Canonical response bytes, fast: orjson where its bytes are proved equal to `canonical()`.

`ground.canonical.canonical` (sorted keys, compact separators, UTF-8 without escaping,
NaN refused) stays the definition; this is only a faster way to produce the same bytes. orjson
with sorted keys writes the same structure, the same string escapes (short forms for \\b \\f \\n
\\r \\t, \\u00XX for the other control characters, nothing else escaped) and the same shortest
round-trip float digits as Python's `repr`, and the same decimal form between 1e-4 and 1e16.
Outside that it differs: orjson writes magnitudes in [1e-6, 1e-4) in decimal (`0.00001`) and
smaller ones with an unpadded exponent (`1e-7`), where Python writes `1e-05` and `1e-07`. Every
such number contains `0.0000` or a digit followed by `e-` (orjson writes large exponents as
`e+`, also checked), so `_risky` below finds all of them (and, harmlessly, look-alikes inside
strings, such as "3e-"); a page that contains one is rendered by `canonical()` instead. Integers
beyond 53 bits and anything orjson refuses also go to `canonical()`. tests/server/test_wire.py compares
both renderers on real pages of every route and on floats of every magnitude. (A regular
expression anchored on `:`, `,` or `[` was exact too but cost 0.34 ms on a 27 KB graph page,
eight times orjson itself; these byte searches cost a few microseconds.)

Left outside the proof: a non-finite float, which `canonical()` refuses and orjson writes as
`null`; no page can hold one (vectors are refused unless finite, every score is a bounded
function of them), and no value read by a parser that refuses NaN and Infinity can either (the
evaluator's page parser, evaluator/connection/client.py). So `render` is for such values only: the
lab's answers and the digests of the pages the evaluator received (`digest_finite`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

from ground.canonical import canonical

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def _risky(out: bytes) -> bool:
    """Could `out` hold a number that orjson formats unlike `repr`? (False only when it cannot.)"""
    if b"0.0000" in out:
        return True
    for marker in (b"e-", b"e+"):
        i = out.find(marker)
        while i != -1:
            if i and 48 <= out[i - 1] <= 57:  # a digit right before: an exponent
                return True
            i = out.find(marker, i + 2)
    return False


def render(value: Any) -> bytes:
    """The bytes of `canonical(value)`."""
    try:
        out = orjson.dumps(value, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return canonical(value)
    if _risky(out):
        return canonical(value)
    return out


def compact(value: Any) -> bytes:
    """The bytes of `json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`
    in UTF-8 (keys in their order, not sorted), by the same proof as `render` (a journal line)."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
    except (orjson.JSONEncodeError, TypeError):
        out = None
    if out is None or _risky(out):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    return out


def digest_finite(value: Any) -> str:
    """`ground.canonical.digest(value)` for a value that holds no NaN or infinity (see above)."""
    return hashlib.sha256(render(value)).hexdigest()
