"""Exact rationals for rank-derived scores, and an exact order that stays fast.

Scores are kept as unreduced integer pairs (numerator, denominator). Sorting uses the correctly
rounded float `numerator / denominator` (Python's int true division rounds correctly, and
rounding is monotone), then re-sorts each run of equal floats by the exact value, so two
mathematically equal scores are always equal and order by record id, and two different ones can
never swap because of rounding.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd
from operator import itemgetter

import numpy as np


@lru_cache(maxsize=256)  # a handful of catalog constants, asked for on every step and channel
def rational(value: float | int) -> tuple[int, int]:
    """A catalog parameter as an exact rational, read as the decimal it is written as."""
    fraction = Fraction(str(value))
    return fraction.numerator, fraction.denominator


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] * b[1] + b[0] * a[1], a[1] * b[1]


def to_float(value: tuple[int, int]) -> float:
    return value[0] / value[1]


def to_text(value: tuple[int, int] | Fraction) -> str:
    """The one form in which a page carries an exact rational (every `*_exact` field): "n/d" in
    lowest terms with a positive denominator, `str(Fraction(num, den))` always written with its
    denominator. A pair is reduced by `math.gcd` directly, since a page writes hundreds of these
    and building a Fraction costs more than the reduction (tests/server/test_exact.py compares both);
    a Fraction is already reduced."""
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    num, den = value
    if den == 0:
        raise ZeroDivisionError(f"Fraction({num}, 0)")
    if den < 0:
        num, den = -num, -den
    common = gcd(num, den)
    return f"{num // common}/{den // common}"


def exact_order(items: list, value, rest) -> list:
    """`items` by value(item) desc (exact), then rest(item) asc; value returns (num, den).

    One stable sort on (-float, rest), then only the runs of equal floats are checked exactly;
    finding those runs with numpy instead of `itertools.groupby` over every item cut the final
    graph order from 0.142 to 0.089 ms (~200 candidates, in-process, sample; docs/retrieval.md).
    """
    keyed = []
    for item in items:
        num, den = value(item)
        keyed.append((-(num / den), rest(item), num, den, item))
    keyed.sort(key=_FLOAT_THEN_REST)
    ordered = [k[4] for k in keyed]
    if len(keyed) < 2:
        return ordered
    floats = np.array([k[0] for k in keyed], dtype=np.float64)  # a list first: fromiter's generator cost more
    for start, stop in _equal_runs(floats):
        run = keyed[start:stop]
        n0, d0 = run[0][2], run[0][3]
        if not all(k[2] * d0 == n0 * k[3] for k in run):
            run.sort(key=lambda k: (-Fraction(k[2], k[3]), k[1]))
            ordered[start:stop] = [k[4] for k in run]
        # else: an exact tie, already ordered by the rest of the key (the id)
    return ordered


_FLOAT_THEN_REST = itemgetter(0, 1)  # the sort key (-float, rest), read in C


def _equal_runs(floats: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of every run of two or more equal values in a sorted float array."""
    same = floats[1:] == floats[:-1]
    if not same.any():
        return []
    edges = np.diff(np.concatenate(([0], same.view(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) + 1
    return list(zip(starts.tolist(), stops.tolist()))
