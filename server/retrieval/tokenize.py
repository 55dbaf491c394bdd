"""BM25 tokens of `bm25_v1` (docs/design.md §7): maximal runs of Unicode letters/digits, lowercased.

"Letter or digit" means exactly `str.isalnum()` per character, which is what the regular
expression `[^\\W_]+` matches on `str` patterns (Python's `\\w` is isalnum plus `_`). So `_`,
punctuation, whitespace and combining marks (category M, e.g. U+0301) split tokens; letters of
every script, decimal digits, other digits (²) and numeric characters (Ⅻ, ½) are kept. No Unicode
normalization is applied: a decomposed "é" is two runs. Lowercasing is `str.lower()` applied to
the whole token (not `casefold`, so "ß" stays "ß"). The evaluator owns an independent copy.
"""

from __future__ import annotations

import re

_RUN = re.compile(r"[^\W_]+")


def bm25_tokens(text: str) -> list[str]:
    return [run.lower() for run in _RUN.findall(text)]
