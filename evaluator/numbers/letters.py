"""The compact letter display of a leaderboard: methods sharing a letter are not separable.

Insert-and-absorb (Piepho 2004, "An algorithm for a letter-based representation of all-pairwise
comparisons"): start from one column holding every method; for each separated pair (a, b), every
column holding both is replaced by two, one without a and one without b; then every column
contained in another is dropped. What is left has the defining property: two methods share a
column exactly when no test separated them. Columns are lettered a, b, c, ... in the order of the
best-ranked method each holds, so the leader's letter is always "a".

Deterministic: the pairs are applied in rank order and the columns are kept as sorted tuples of
rank positions, so the same separations always give the same letters.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def letter(column: int) -> str:
    """a..z, A..Z, then a2..Z2, ...: enough letters for any board."""
    cycle, position = divmod(column, len(ALPHABET))
    return ALPHABET[position] + (str(cycle + 1) if cycle else "")


def _absorbed(columns: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Drop every column that another column contains (duplicates kept once)."""
    unique = sorted(set(columns))
    sets = [frozenset(c) for c in unique]
    return [c for i, c in enumerate(unique) if not any(j != i and sets[i] < sets[j] for j in range(len(unique)))]


def columns(count: int, separated: Iterable[tuple[int, int]]) -> list[tuple[int, ...]]:
    """The letter columns over rank positions 0..count-1 given the separated pairs (positions)."""
    current: list[tuple[int, ...]] = [tuple(range(count))] if count else []
    for a, b in sorted((min(p), max(p)) for p in separated):
        split: list[tuple[int, ...]] = []
        for column in current:
            if a in column and b in column:
                split.append(tuple(i for i in column if i != a))
                split.append(tuple(i for i in column if i != b))
            else:
                split.append(column)
        current = _absorbed(split)
    return sorted(current, key=lambda c: (c[0], c))


def letters(ranked: Sequence[str], separated: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Method -> its letters (e.g. "ab"), given the methods best first and the separated pairs."""
    position = {name: i for i, name in enumerate(ranked)}
    cols = columns(len(ranked), ((position[a], position[b]) for a, b in separated))
    out = {name: "" for name in ranked}
    for index, column in enumerate(cols):
        for i in column:
            out[ranked[i]] += letter(index)
    return out


def share_a_letter(first: str, second: str) -> bool:
    """Whether two methods' letter strings share a letter (letters past z carry a digit suffix)."""
    return bool(set(split_letters(first)) & set(split_letters(second)))


def split_letters(text: str) -> list[str]:
    out: list[str] = []
    for char in text:
        if char.isdigit() and out:
            out[-1] += char
        else:
            out.append(char)
    return out
