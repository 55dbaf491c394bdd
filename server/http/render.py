"""Canonical response bytes, fast: orjson where its bytes are proved equal to `canonical()`.

`protocols.canonical.canonical` (sorted keys, compact separators, UTF-8 without escaping,
NaN refused) stays the definition; this is only a faster way to produce the same bytes. orjson
with sorted keys writes the same structure, the same string escapes (short forms for \\b \\f \\n
\\r \\t, \\u00XX for the other control characters, nothing else escaped) and the same shortest
round-trip float digits as Python's `repr`. It formats floats differently in two ranges only:
exponent notation (`1e-7` against `1e-07`) and magnitudes in [1e-6, 1e-4), which Python writes
with an exponent and orjson as `0.0000...`. Every such number appears in compact JSON right after
`:`, `,` or `[`, so `_RISKY` below finds all of them (and, harmlessly, look-alikes inside strings);
a page that contains one is rendered by `canonical()` instead. Integers beyond 53 bits and
anything orjson refuses also go to `canonical()`. tests/test_wire.py compares both renderers on
real pages of every method and on adversarial values.

Left outside the proof: a non-finite float, which `canonical()` refuses and orjson writes as
`null`; no page can hold one (vectors are refused unless finite, every score is a bounded
function of them).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from protocols.canonical import canonical

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_RISKY = re.compile(rb"[:,\[]-?(?:[0-9]+(?:\.[0-9]+)?e|0\.0000)")


def render(value: Any) -> bytes:
    """The bytes of `canonical(value)`."""
    try:
        out = orjson.dumps(value, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return canonical(value)
    if _RISKY.search(out):
        return canonical(value)
    return out
